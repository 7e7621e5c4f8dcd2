#include "vfy_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes in place; returns 0 when a NUL byte would result. */
static int percent_decode(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        int hi, lo;
        if (*r == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0) {
            char c = (char)(hi * 16 + lo);
            if (c == '\0') return 0;
            *w++ = c;
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return 1;
}

/* Lexically normalises a '/'-separated path into out (no leading or trailing
 * '/', no "." or empty components). Returns 0 when ".." climbs above the
 * start of a relative path; above "/" of an absolute one it stays at "/". */
static int norm_components(const char *p, int absolute, StrBuf *out)
{
    sb_reset(out);
    while (*p) {
        while (*p == '/')
            p++;
        const char *c = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - c);
        if (n == 0 || (n == 1 && c[0] == '.')) continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            if (out->len == 0) {
                if (!absolute) return 0;
                continue;
            }
            char *slash = strrchr(out->buf, '/');
            out->len = slash ? (size_t)(slash - out->buf) : 0;
            out->buf[out->len] = '\0';
            continue;
        }
        if (out->len) sb_addc(out, '/');
        sb_add(out, c, n);
    }
    return 1;
}

CrErr vfy_normalize_path(const char *root, const char *path, char **out)
{
    CrErr rc = CR_OK;
    StrBuf rootn, pathn;
    sb_init(&rootn);
    sb_init(&pathn);
    *out = NULL;

    size_t b = 0, e = strlen(path);
    vfy__trim(path, &b, &e);
    char *s = xstrndup(path + b, e - b);
    char *p = s;
    if (strncasecmp(p, "file://", 7) == 0) {
        p += 7;
        if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
        if (!percent_decode(p)) {
            rc = CR_EINVAL;
            goto out;
        }
        if (*p != '/') { /* file://otherhost/... */
            rc = CR_EOUTSIDE;
            goto out;
        }
    }
    if (*p == '\0') {
        rc = CR_EINVAL;
        goto out;
    }
    if (*p == '/') {
        norm_components(root, 1, &rootn);
        norm_components(p, 1, &pathn);
        if (pathn.len == rootn.len && memcmp(pathn.buf, rootn.buf, rootn.len) == 0) {
            rc = CR_EINVAL;
            goto out;
        }
        if (rootn.len == 0) { /* root is "/" */
            *out = sb_detach(&pathn, NULL);
            goto out;
        }
        if (pathn.len <= rootn.len || memcmp(pathn.buf, rootn.buf, rootn.len) != 0 ||
            pathn.buf[rootn.len] != '/') {
            rc = CR_EOUTSIDE;
            goto out;
        }
        *out = xstrdup(pathn.buf + rootn.len + 1);
        goto out;
    }
    if (!norm_components(p, 0, &pathn)) {
        rc = CR_EOUTSIDE;
        goto out;
    }
    if (pathn.len == 0) {
        rc = CR_EINVAL;
        goto out;
    }
    *out = sb_detach(&pathn, NULL);

out:
    free(s);
    sb_release(&rootn);
    sb_release(&pathn);
    return rc;
}

/* ---------------------------------------------------------------- symlinks */

/* 1 when the absolute path p lies under dir (lexically; dir "/" holds all). */
static int under(const char *dir, const char *p)
{
    StrBuf d, q;
    sb_init(&d);
    sb_init(&q);
    norm_components(dir, 1, &d);
    norm_components(p, 1, &q);
    int in = d.len == 0 || (q.len >= d.len && memcmp(q.buf, d.buf, d.len) == 0 &&
                            (q.len == d.len || q.buf[d.len] == '/'));
    sb_release(&d);
    sb_release(&q);
    return in;
}

/* 1 when path is a symlink whose target, read lexically against the real
 * directory holding it, lies under neither root. */
static int dangling_leaves(const char *real_root, const char *root, const char *path)
{
    struct stat st;
    char target[PATH_MAX];
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';

    StrBuf abs;
    sb_init(&abs);
    int leaves = 0;
    if (target[0] == '/') {
        sb_adds(&abs, target);
    } else {
        const char *slash = strrchr(path, '/');
        char *dir = xstrndup(path, slash ? (size_t)(slash - path) : 0);
        char *real_dir = realpath(dir[0] ? dir : "/", NULL);
        free(dir);
        if (!real_dir) goto out;
        sb_addf(&abs, "%s/%s", real_dir, target);
        free(real_dir);
    }
    leaves = !under(real_root, abs.buf) && !under(root, abs.buf);
out:
    sb_release(&abs);
    return leaves;
}

int vfy__leaves_root(const char *real_root, const char *root, const char *rel)
{
    StrBuf p;
    sb_init(&p);
    sb_adds(&p, root);
    while (p.len > 0 && p.buf[p.len - 1] == '/')
        p.buf[--p.len] = '\0';
    size_t root_len = p.len;
    sb_addc(&p, '/');
    sb_adds(&p, rel);

    int leaves = 0;
    for (;;) {
        char *r = realpath(p.buf, NULL);
        if (r) {
            leaves = !under(real_root, r);
            free(r);
            break;
        }
        /* A loop or a permission problem: the later checks fail it. */
        if (errno != ENOENT && errno != ENOTDIR) break;
        if ((leaves = dangling_leaves(real_root, root, p.buf))) break;
        char *slash = strrchr(p.buf, '/');
        if (!slash || (size_t)(slash - p.buf) <= root_len) break;
        *slash = '\0';
        p.len = (size_t)(slash - p.buf);
    }
    sb_release(&p);
    return leaves;
}
