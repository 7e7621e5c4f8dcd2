#include "vfy_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

CrErr vfy_normalize_path(const char *root, const char *path, char **out)
{
    size_t b = 0, e = strlen(path);
    vfy_trim(path, &b, &e);
    char *s = xstrndup(path + b, e - b);
    CrErr rc = path_relative(root, s, out);
    free(s);
    return rc;
}

/* ---------------------------------------------------------------- symlinks */

/* 1 when the absolute path p lies under dir (lexically; dir "/" holds all). */
static int under(const char *dir, const char *p)
{
    StrBuf d, q;
    sb_init(&d);
    sb_init(&q);
    int in = path_normalize(dir, &d) && path_normalize(p, &q) && path_under(d.buf, q.buf);
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

int vfy_leaves_root(const char *real_root, const char *root, const char *rel)
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
        CrErr rc = path_real_under(real_root, p.buf, NULL);
        if (rc != CR_ENOENT) {
            /* CR_EIO, a loop or a permission problem: the later checks fail it. */
            leaves = rc == CR_EOUTSIDE;
            break;
        }
        if ((leaves = dangling_leaves(real_root, root, p.buf))) break;
        char *slash = strrchr(p.buf, '/');
        if (!slash || (size_t)(slash - p.buf) <= root_len) break;
        *slash = '\0';
        p.len = (size_t)(slash - p.buf);
    }
    sb_release(&p);
    return leaves;
}
