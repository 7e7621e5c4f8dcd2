/*
 * scan_path.c - whether one relative path would be listed by a scan, without
 * walking the tree (single-file updates and deletions).
 */
#include "../idx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether rel (a file, or a directory when is_dir) survives the rules on its
 * way down from the root: no VCS folder component, not the index dir, no ignored
 * ancestor, not ignored itself. Reads the .gitignore files from disk. */
static int scan__rules_allow(const ScanCtx *c, const char *rel, int is_dir)
{
    int ok = 1;
    IgnoreList **stack = NULL;
    size_t n = 0, cap = 0;
    StrBuf abs, prefix;
    sb_init(&abs);
    sb_init(&prefix);
    sb_adds(&abs, c->root);
    for (const char *p = rel;;) {
        size_t mark = abs.len;
        sb_adds(&abs, "/.gitignore");
        int refused = 0;
        IgnoreList *l = idx_scan_read_gitignore(AT_FDCWD, abs.buf, prefix.buf, &refused);
        sb_truncate(&abs, mark);
        if (refused) { /* fail closed, as the walk does */
            ok = 0;
            break;
        }
        if (l) {
            ARRAY_GROW(stack, n + 1, cap);
            stack[n++] = l;
        }
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        int dir = slash ? 1 : is_dir;
        if (idx_is_vcs_dir(p, len) ||
            (slash && len == strlen(IDX_DIR_NAME) && !memcmp(p, IDX_DIR_NAME, len))) {
            ok = 0;
            break;
        }
        if (prefix.len) sb_addc(&prefix, '/');
        sb_add(&prefix, p, len);
        sb_addc(&abs, '/');
        sb_add(&abs, p, len);
        if (dir && c->index_real && !strcmp(abs.buf, c->index_real)) {
            ok = 0;
            break;
        }
        if (idx_scan_ignored(c, stack, n, prefix.buf, dir)) {
            ok = 0;
            break;
        }
        if (!slash) break;
        p = slash + 1;
    }
    for (size_t i = 0; i < n; i++)
        idx_ignore_free(stack[i]);
    free(stack);
    sb_release(&abs);
    sb_release(&prefix);
    return ok;
}

/* A path that does not exist is judged by the rules alone, so that callers
 * can use the answer for deletions too. */
int idx_scan_path_included(const ScanOptions *opt, const char *relpath)
{
    if (!path_is_normal_rel(relpath) || !idx_scan_is_candidate(relpath, strlen(relpath))) return 0;
    int ok = 0;
    char *parent_real = NULL, *target = NULL;
    StrBuf abs;
    sb_init(&abs);
    ScanCtx c;
    idx_scan_ctx_init(&c, opt);
    if (!scan__rules_allow(&c, relpath, 0)) goto out;

    const char *slash = strrchr(relpath, '/');
    size_t parent_len = slash ? (size_t)(slash - relpath) : 0;
    sb_adds(&abs, c.root);
    if (parent_len) {
        sb_addc(&abs, '/');
        sb_add(&abs, relpath, parent_len);
    }
    parent_real = realpath(abs.len ? abs.buf : "/", NULL);
    if (!parent_real) {
        ok = idx_scan_vanished(errno);
        goto out;
    }
    const char *parent_rel = path_under(c.root, parent_real);
    if (!parent_rel || idx_scan_forbidden(&c, parent_real)) goto out;
    /* Reached through a symlinked directory: a scan lists it there only
     * when the real directory is not walked on its own. */
    if ((strlen(parent_rel) != parent_len || memcmp(parent_rel, relpath, parent_len) != 0) &&
        (!*parent_rel || scan__rules_allow(&c, parent_rel, 1)))
        goto out;

    sb_reset(&abs);
    sb_adds(&abs, c.root);
    sb_addc(&abs, '/');
    sb_adds(&abs, relpath);
    struct stat st;
    if (lstat(abs.buf, &st) != 0) {
        ok = idx_scan_vanished(errno);
        goto out;
    }
    if (S_ISLNK(st.st_mode)) {
        target = realpath(abs.buf, NULL);
        if (!target) {
            ok = idx_scan_vanished(errno);
            goto out;
        }
        if (!path_under(c.root, target) || idx_scan_forbidden(&c, target)) goto out;
        if (stat(target, &st) != 0) goto out;
    }
    if (!S_ISREG(st.st_mode)) goto out;
    ok = (!opt->max_file_bytes || (uint64_t)st.st_size <= opt->max_file_bytes) &&
         idx_scan_wanted(AT_FDCWD, abs.buf, st.st_size);
out:
    free(parent_real);
    free(target);
    sb_release(&abs);
    idx_scan_ctx_release(&c);
    return ok;
}
