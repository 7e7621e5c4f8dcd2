/* integrity.c - whether index.db is whole: a mark of the state it was last
 * closed in (index.db.clean: device, inode, size and mtime of the file), a
 * mark that SQLite once found it damaged (index.db.damaged), and PRAGMA
 * quick_check when neither tells (an unclean close, a file changed from
 * outside since). A damaged database is never read from: a writer rebuilds
 * it, a reader reports it and names `coderag index`. */
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void mark_path(const IdxStore *st, const char *what, StrBuf *out)
{
    sb_init(out);
    sb_addf(out, "%s.%s", st->db_path, what);
}

/* The database file's identity and state, as the clean mark holds it. */
static int db_state(const IdxStore *st, char *out, size_t cap)
{
    struct stat sb;
    if (stat(st->db_path, &sb) != 0) return -1;
    snprintf(out, cap, "%llu %llu %lld %lld.%09ld\n", (unsigned long long)sb.st_dev,
             (unsigned long long)sb.st_ino, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
             (long)sb.st_mtim.tv_nsec);
    return 0;
}

int idx_store_code_damaged(int code)
{
    code &= 0xff;
    return code == SQLITE_CORRUPT || code == SQLITE_NOTADB;
}

/* Replaces the clean mark with the damaged one. */
static void write_damaged_mark(IdxStore *st)
{
    StrBuf p;
    mark_path(st, "clean", &p);
    unlink(p.buf);
    sb_reset(&p);
    sb_addf(&p, "%s.damaged", st->db_path);
    int fd = open(p.buf, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) close(fd);
    sb_release(&p);
}

void idx_store_note_damaged(IdxStore *st)
{
    if (!st || st->damaged) return;
    st->damaged = 1;
    if (st->readonly || !st->db_path) return; /* writes nothing; a writer's check finds it */
    log_msg(LOG_WARN, "%s/index.db is damaged; `coderag index` rebuilds it", st->index_real);
    write_damaged_mark(st);
}

void idx_store_record_damaged(IdxStore *st)
{
    if (!st || !st->db_path) return;
    int had = st->damaged;
    st->damaged = 1;
    /* a reader that noted it earlier wrote nothing then */
    if (!had || st->readonly) write_damaged_mark(st);
}

void idx_store_mark_clean(IdxStore *st)
{
    if (st->readonly || st->damaged || !st->db_path) return;
    char state[128];
    if (db_state(st, state, sizeof state) != 0) return;
    StrBuf p, tmp;
    mark_path(st, "clean", &p);
    sb_init(&tmp);
    sb_addf(&tmp, "%s.%ld", p.buf, (long)getpid());
    int fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        size_t n = strlen(state);
        int ok = write(fd, state, n) == (ssize_t)n;
        close(fd);
        if (!ok || rename(tmp.buf, p.buf) != 0) unlink(tmp.buf);
    }
    sb_release(&tmp);
    sb_release(&p);
}

void idx_store_integrity_forget(const IdxStore *st)
{
    StrBuf p;
    mark_path(st, "clean", &p);
    unlink(p.buf);
    sb_reset(&p);
    sb_addf(&p, "%s.damaged", st->db_path);
    unlink(p.buf);
    sb_release(&p);
}

/* Whether the clean mark describes the file as it is now. */
static int clean_mark_holds(const IdxStore *st)
{
    char state[128], mark[160];
    if (db_state(st, state, sizeof state) != 0) return 0;
    StrBuf p;
    mark_path(st, "clean", &p);
    int fd = open(p.buf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    sb_release(&p);
    if (fd < 0) return 0;
    ssize_t n = read(fd, mark, sizeof mark - 1);
    close(fd);
    if (n <= 0) return 0;
    mark[n] = '\0';
    return !strcmp(mark, state);
}

CrErr idx_store_integrity(IdxStore *st, int *damaged, StrBuf *why, ErrInfo *e)
{
    *damaged = 0;
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s.damaged", st->db_path);
    int marked = access(p.buf, F_OK) == 0;
    sb_release(&p);
    if (marked) {
        *damaged = 1;
        sb_adds(why, "SQLite found it damaged earlier");
        return CR_OK;
    }
    if (clean_mark_holds(st)) return CR_OK;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        if (!v || strcmp(v, "ok") != 0) {
            *damaged = 1;
            sb_addf(why, "quick_check: %s", v ? v : "no answer");
        }
    } else if (idx_store_code_damaged(rc) || idx_store_code_damaged(sqlite3_errcode(st->db))) {
        *damaged = 1;
        sb_addf(why, "%s", sqlite3_errmsg(st->db));
    } else {
        CrErr r = err_set(e, CR_EDB, "checking the index: %s", sqlite3_errmsg(st->db));
        sqlite3_finalize(s);
        return r;
    }
    sqlite3_finalize(s);
    return CR_OK;
}
