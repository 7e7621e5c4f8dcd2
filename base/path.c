#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__linux__) && defined(SYS_openat2)
#include <linux/openat2.h>
#endif

/* The one answer to "is this path inside the workspace?" (base.h). */

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int path_percent_decode(const char *s, size_t len, StrBuf *out)
{
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < len ? hexval(s[i + 1]) : -1;
            int lo = hi < 0 ? -1 : hexval(s[i + 2]);
            if (lo < 0 || (hi == 0 && lo == 0)) return 0;
            c = hi * 16 + lo;
            i += 2;
        }
        sb_addc(out, (char)c);
    }
    return 1;
}

static int unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void path_percent_encode(const char *s, StrBuf *sb)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (unreserved(*p) || *p == '/') {
            sb_addc(sb, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            sb_add(sb, esc, 3);
        }
    }
}

int path_normalize(const char *path, StrBuf *out)
{
    int absolute = path[0] == '/';
    sb_reset(out);
    if (absolute) sb_addc(out, '/');
    size_t base = out->len; /* components start here */
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *c = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - c);
        if (n == 0 || (n == 1 && c[0] == '.')) continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            if (out->len == base) {
                if (absolute) continue; /* "/.." is "/", as the kernel has it */
                sb_reset(out);
                return 0;
            }
            while (out->len > base && out->buf[out->len - 1] != '/')
                out->len--;
            if (out->len > base) out->len--; /* the '/' before it */
            out->buf[out->len] = '\0';
            continue;
        }
        if (out->len > base) sb_addc(out, '/');
        sb_add(out, c, n);
    }
    return 1;
}

int path_is_normal_rel(const char *rel)
{
    if (!rel || !*rel || *rel == '/') return 0;
    for (const char *p = rel;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
        if (!slash) return 1;
        p = slash + 1;
    }
}

const char *path_under(const char *root, const char *path)
{
    if (path[0] != '/') return NULL;
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/') n = 0; /* "/" holds every absolute path */
    if (n && root[0] != '/') return NULL;
    if (strncmp(path, root, n) != 0) return NULL;
    path += n;
    if (*path == '/') return path + 1;
    return *path ? NULL : path;
}

CrErr path_from_uri(const char *uri, char **out)
{
    *out = NULL;
    if (!uri || strncasecmp(uri, "file://", 7) != 0) return CR_EINVAL;
    const char *p = uri + 7;
    if (!strncasecmp(p, "localhost/", 10)) p += 9;
    if (*p != '/') return *p ? CR_EOUTSIDE : CR_EINVAL; /* file://otherhost/... */
    StrBuf sb;
    sb_init(&sb);
    if (!path_percent_decode(p, strcspn(p, "?#"), &sb)) {
        sb_release(&sb);
        return CR_EINVAL;
    }
    *out = sb_detach(&sb, NULL);
    return CR_OK;
}

char *path_to_uri(const char *root_abs, const char *relpath)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "file://");
    size_t start = sb.len;
    path_percent_encode(root_abs, &sb);
    while (sb.len > start && sb.buf[sb.len - 1] == '/')
        sb.buf[--sb.len] = '\0';
    if (relpath && relpath[0]) {
        sb_addc(&sb, '/');
        path_percent_encode(relpath, &sb);
    } else if (sb.len == start) {
        sb_addc(&sb, '/');
    }
    return sb_detach(&sb, NULL);
}

CrErr path_relative(const char *root, const char *path, char **out)
{
    CrErr rc = CR_OK;
    char *decoded = NULL;
    StrBuf rootn, pathn;
    sb_init(&rootn);
    sb_init(&pathn);
    *out = NULL;
    if (strncasecmp(path, "file://", 7) == 0) {
        if ((rc = path_from_uri(path, &decoded))) goto out;
        path = decoded;
    }
    if (!path_normalize(path, &pathn)) {
        rc = CR_EOUTSIDE;
        goto out;
    }
    const char *rel = pathn.buf;
    if (path[0] == '/') {
        path_normalize(root, &rootn);
        if (rootn.buf[0] != '/' || !(rel = path_under(rootn.buf, pathn.buf))) {
            rc = CR_EOUTSIDE;
            goto out;
        }
    }
    if (!*rel) { /* empty, or the root itself */
        rc = CR_EINVAL;
        goto out;
    }
    *out = xstrdup(rel);
out:
    free(decoded);
    sb_release(&rootn);
    sb_release(&pathn);
    return rc;
}

CrErr path_real_under(const char *real_root, const char *path, char **out_real)
{
    if (out_real) *out_real = NULL;
    char *real = realpath(path, NULL);
    if (!real) return errno == ENOENT || errno == ENOTDIR ? CR_ENOENT : CR_EIO;
    if (!path_under(real_root, real)) {
        free(real);
        return CR_EOUTSIDE;
    }
    if (out_real)
        *out_real = real;
    else
        free(real);
    return CR_OK;
}

CrErr path_open_beneath(const char *real_root, const char *sub, int *out_fd)
{
    *out_fd = -1;
    if (!path_is_normal_rel(sub)) return CR_EOUTSIDE;
    int fd = open(real_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? CR_ENOENT : CR_EIO;
#if defined(__linux__) && defined(SYS_openat2)
    {
        /* The same walk in one call where the kernel has it (Linux 5.6):
         * no symlink anywhere, nothing outside fd. A kernel or a filter
         * that refuses the call leaves it to the walk below. */
        struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
        long r = syscall(SYS_openat2, fd, sub, &how, sizeof how);
        int err = errno;
        if (r >= 0 || (err != ENOSYS && err != EPERM && err != EINVAL && err != E2BIG)) {
            close(fd);
            if (r < 0)
                return err == ENOENT || err == ENOTDIR || err == ELOOP || err == ENAMETOOLONG ||
                               err == EXDEV
                           ? CR_ENOENT
                           : CR_EIO;
            fd = (int)r;
            goto opened;
        }
    }
#endif
    /* Each component is a real entry of the directory before it (never a
     * symlink, never ".."), so what opens is inside the root whatever was
     * swapped since sub was resolved. */
    for (const char *p = sub;;) {
        const char *slash = strchr(p, '/');
        char name[NAME_MAX + 1];
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n > NAME_MAX) {
            close(fd);
            return CR_ENOENT;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (slash ? O_DIRECTORY : O_NONBLOCK);
        int next = openat(fd, name, flags);
        int err = errno;
        close(fd);
        if (next < 0) return err == ENOENT || err == ENOTDIR || err == ELOOP ? CR_ENOENT : CR_EIO;
        fd = next;
        if (!slash) break;
        p = slash + 1;
    }
#if defined(__linux__) && defined(SYS_openat2)
opened:;
#endif
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return CR_EIO;
    }
    *out_fd = fd;
    return CR_OK;
}

/* Attempts at resolving and opening a path that changes meanwhile. */
#define PATH_OPEN_TRIES 4

CrErr path_open_under(const char *real_root, const char *rel, int *out_fd)
{
    *out_fd = -1;
    if (!path_is_normal_rel(rel)) return CR_EOUTSIDE;
    /* A path with no symlink in it opens as it is (what resolving it would
     * give); one with a symlink fails there (O_NOFOLLOW) and is resolved. */
    CrErr rc = path_open_beneath(real_root, rel, out_fd);
    if (rc != CR_ENOENT) return rc;
    StrBuf abs;
    sb_init(&abs);
    sb_addf(&abs, "%s/%s", real_root, rel);
    for (int i = 0; i < PATH_OPEN_TRIES; i++) {
        char *real = NULL;
        if ((rc = path_real_under(real_root, abs.buf, &real))) break;
        const char *sub = path_under(real_root, real);
        rc = sub && *sub ? path_open_beneath(real_root, sub, out_fd) : CR_EIO;
        free(real);
        /* CR_ENOENT: a component changed since it was resolved (a symlink
         * or a file where a directory was): resolve again */
        if (rc != CR_ENOENT) break;
    }
    sb_release(&abs);
    return rc;
}

CrErr path_read_under(const char *real_root, const char *rel, StrBuf *sb, size_t max_bytes,
                      ErrInfo *e)
{
    int fd;
    CrErr rc = path_open_under(real_root, rel, &fd);
    if (rc == CR_EOUTSIDE) return err_set(e, rc, "%s: resolves outside the workspace", rel);
    if (rc == CR_ENOENT) return err_set(e, rc, "%s: no such file", rel);
    if (rc) return err_set(e, rc, "%s: not a readable regular file", rel);
    rc = sb_read_fd(sb, fd, rel, max_bytes, e);
    close(fd);
    return rc;
}
