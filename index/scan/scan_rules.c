/*
 * scan_rules.c - what decides whether a path is indexed, shared by the walk
 * (scan.c) and the single-path check (scan_path.c): source files by name and
 * shebang, .git and the index dir, .gitignore files and the exclude list.
 */
#include "../idx_int.h"
#include "../chunk/lang/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A .gitignore larger than this is not read (a stranger controls it). */
#define SCAN_GITIGNORE_MAX (1u << 20)

int idx_scan_vanished(int err)
{
    return err == ENOENT || err == ENOTDIR;
}

/* A source file by its extension (any row of the language table), or a
 * name without one, which a shebang may still make a script. */
int idx_scan_is_candidate(const char *name, size_t len)
{
    const char *slash = memrchr(name, '/', len);
    const char *base = slash ? slash + 1 : name;
    return idx_lang_for_path(name) != NULL || (!strchr(base, '.') && *base);
}

/* Whether a file found by name is indexed: an extensionless file only with
 * a known interpreter on its "#!" line; text formats only under their cap. */
int idx_scan_wanted(int dirfd, const char *name, int64_t size)
{
    const IdxLang *l = idx_lang_for_path(name);
    if (l) return !l->max_bytes || size <= (int64_t)l->max_bytes;
    char buf[128];
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 && idx_lang_for_shebang(buf, (size_t)n) != NULL;
}

static int scan__has_vcs_component(const char *rel)
{
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (idx_is_vcs_dir(p, n)) return 1;
        if (!slash) break;
        p = slash + 1;
    }
    return 0;
}

/* Inside the index dir or a VCS folder (idx_vcs_dir; canonical path inside root). */
int idx_scan_forbidden(const ScanCtx *c, const char *real)
{
    if (c->index_real && path_under(c->index_real, real)) return 1;
    const char *rel = path_under(c->root, real);
    return rel && scan__has_vcs_component(rel);
}

/* Reads one .gitignore (relative to dirfd, or absolute with AT_FDCWD);
 * NULL when absent or not a regular file; NULL with *refused set when it is
 * there but cannot be read whole (too large, a read error): the caller
 * fails closed. */
IgnoreList *idx_scan_read_gitignore(int dirfd, const char *path, const char *base, int *refused)
{
    *refused = 0;
    IgnoreList *l = NULL;
    StrBuf sb;
    sb_init(&sb);
    struct stat st;
    /* O_NONBLOCK: a FIFO named .gitignore must not block the open */
    int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto out;
    if (st.st_size > SCAN_GITIGNORE_MAX) goto refuse;
    for (;;) {
        sb_grow(&sb, 4096);
        ssize_t n = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) goto refuse;
        if (n == 0) break;
        sb.len += (size_t)n;
        if (sb.len > SCAN_GITIGNORE_MAX) goto refuse;
    }
    l = idx_ignore_parse(base, sb.buf, sb.len);
    goto out;
refuse:
    *refused = 1;
    log_msg(LOG_WARN,
            ".gitignore in '%s' is over %u bytes or unreadable: nothing under '%s' is indexed",
            *base ? base : ".", SCAN_GITIGNORE_MAX, *base ? base : ".");
out:
    if (fd >= 0) close(fd);
    sb_release(&sb);
    return l;
}

/* The exclude list acts as a root .gitignore consulted after all the
 * others: its verdict, when it excludes, cannot be overridden. */
int idx_scan_ignored(const ScanCtx *c, IgnoreList *const *stack, size_t n, const char *rel,
                     int is_dir)
{
    IgnoreVerdict x = idx_ignore_match(c->exclude, rel, is_dir);
    if (x == IGNORE_EXCLUDE || x == IGNORE_COSTLY) return x == IGNORE_COSTLY ? 2 : 1;
    for (size_t i = n; i-- > 0;) {
        IgnoreVerdict v = idx_ignore_match(stack[i], rel, is_dir);
        if (v == IGNORE_COSTLY) return 2;
        if (v != IGNORE_NONE) return v == IGNORE_EXCLUDE;
    }
    return 0;
}

void idx_scan_ctx_init(ScanCtx *c, const ScanOptions *opt)
{
    memset(c, 0, sizeof *c);
    c->opt = opt;
    size_t n = strlen(opt->root);
    while (n && opt->root[n - 1] == '/')
        n--;
    c->root = xstrndup(opt->root, n);
    if (opt->n_exclude) {
        StrBuf sb;
        sb_init(&sb);
        for (size_t i = 0; i < opt->n_exclude; i++) {
            sb_adds(&sb, opt->exclude[i]);
            sb_addc(&sb, '\n');
        }
        c->exclude = idx_ignore_parse("", sb.buf, sb.len);
        sb_release(&sb);
    }
    if (opt->index_dir && *opt->index_dir) {
        c->index_real = realpath(opt->index_dir, NULL);
        if (!c->index_real) {
            /* not created yet: compare the path as given */
            size_t m = strlen(opt->index_dir);
            while (m > 1 && opt->index_dir[m - 1] == '/')
                m--;
            c->index_real = xstrndup(opt->index_dir, m);
        }
    }
}

void idx_scan_ctx_release(ScanCtx *c)
{
    free(c->root);
    idx_ignore_free(c->exclude);
    free(c->index_real);
}
