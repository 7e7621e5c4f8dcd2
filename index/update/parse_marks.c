#include "update_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* <index dir>/parsing: a record of PARSE_MARK_BYTES per preparing thread,
 * its first byte PARSE_MARK_POOL or PARSE_MARK_ALONE while the thread
 * prepares the file whose path follows (NUL-terminated), 0 otherwise. Only
 * a full update writes it (under update.lock: one at a time). Not synced: a
 * process that dies leaves its writes in the page cache; a machine that
 * does loses a mark, and the file is parsed again. */
#define PARSE_MARK_BYTES 4096
#define PARSE_MARK_SLOTS 64
#define PARSE_MARK_POOL 'P'
#define PARSE_MARK_ALONE 'A'

static void marks__add(char ***v, size_t *n, const char *path)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = xstrdup(path);
}

void idx_marks_open(const IdxStore *st, ParseMarks *m)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    int fd = idx_index_file_open(st, "parsing");
    if (fd < 0) return; /* a read-only index dir: nothing parsed is written either */
    char *rec = xmalloc(PARSE_MARK_BYTES);
    for (int k = 0; k < PARSE_MARK_SLOTS; k++) {
        ssize_t got = pread(fd, rec, PARSE_MARK_BYTES, (off_t)k * PARSE_MARK_BYTES);
        if (got < 2) break;
        if (rec[0] != PARSE_MARK_POOL && rec[0] != PARSE_MARK_ALONE) continue;
        if (!memchr(rec + 1, '\0', (size_t)got - 1)) continue; /* cut: not ours */
        if (rec[0] == PARSE_MARK_ALONE)
            marks__add(&m->convicted, &m->n_convicted, rec + 1);
        else
            marks__add(&m->suspects, &m->n_suspects, rec + 1);
    }
    free(rec);
    if (m->n_convicted || m->n_suspects)
        log_msg(LOG_WARN,
                "the last update of the index at %s stopped while parsing %zu file(s): %s",
                st->index_real, m->n_convicted + m->n_suspects,
                m->n_convicted ? "skipped from now on (`coderag status --skipped`)"
                               : "parsed again one at a time first");
    if (ftruncate(fd, 0) != 0) { /* marks that cannot be cleared would convict the innocent */
        close(fd);
        return;
    }
    m->fd = fd;
}

int idx_marks_has(char *const *paths, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(paths[i], path)) return 1;
    return 0;
}

void idx_marks_set(const ParseMarks *m, int slot, int alone, const char *path)
{
    if (!m || m->fd < 0 || slot < 0 || slot >= PARSE_MARK_SLOTS) return;
    off_t at = (off_t)slot * PARSE_MARK_BYTES;
    if (!path) {
        char none = 0;
        if (pwrite(m->fd, &none, 1, at) != 1) return; /* at worst a file parsed again alone */
        return;
    }
    size_t n = strlen(path);
    if (n + 2 > PARSE_MARK_BYTES) return; /* past PATH_MAX: never read (scan.c) */
    char rec[PARSE_MARK_BYTES];
    rec[0] = alone ? PARSE_MARK_ALONE : PARSE_MARK_POOL;
    memcpy(rec + 1, path, n + 1);
    if (pwrite(m->fd, rec, n + 2, at) != (ssize_t)(n + 2)) return;
}

void idx_marks_close(ParseMarks *m)
{
    for (size_t i = 0; i < m->n_suspects; i++)
        free(m->suspects[i]);
    for (size_t i = 0; i < m->n_convicted; i++)
        free(m->convicted[i]);
    free(m->suspects);
    free(m->convicted);
    if (m->fd >= 0) {
        if (ftruncate(m->fd, 0) != 0) { /* every mark was cleared one by one anyway */
        }
        close(m->fd);
    }
    memset(m, 0, sizeof *m);
    m->fd = -1;
}
