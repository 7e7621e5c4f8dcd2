#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sb_init(StrBuf *sb)
{
    sb->cap = 64;
    sb->len = 0;
    sb->buf = xmalloc(sb->cap);
    sb->buf[0] = '\0';
}

void sb_release(StrBuf *sb)
{
    if (!sb) return;
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

void sb_reset(StrBuf *sb)
{
    sb->len = 0;
    if (sb->buf) sb->buf[0] = '\0';
}

void sb_grow(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t c = sb->cap * 2;
    if (c < sb->len + extra + 1) c = sb->len + extra + 1;
    sb->buf = xrealloc(sb->buf, c);
    sb->cap = c;
}

void sb_add(StrBuf *sb, const void *data, size_t len)
{
    sb_grow(sb, len);
    if (len) memcpy(sb->buf + sb->len, data, len); /* data may be NULL when len is 0 */
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void sb_adds(StrBuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}

void sb_addc(StrBuf *sb, char c)
{
    sb_grow(sb, 1);
    sb->buf[sb->len++] = c;
    sb->buf[sb->len] = '\0';
}

void sb_addi(StrBuf *sb, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[sizeof tmp - ++n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[sizeof tmp - ++n] = '-';
    sb_add(sb, tmp + sizeof tmp - n, n);
}

void sb_vaddf(StrBuf *sb, const char *fmt, va_list ap)
{
    if (!sb->buf) sb_grow(sb, 64);
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, cp);
    va_end(cp);
    if (n < 0) return;
    if ((size_t)n >= sb->cap - sb->len) {
        sb_grow(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
    }
    sb->len += (size_t)n;
}

void sb_addf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

int sb_add_excerpt(StrBuf *sb, const char *s, size_t len, size_t max)
{
    size_t shown = 0, i = 0;
    int space = 1; /* also trims leading whitespace */
    for (; i < len && shown < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7f) {
            if (!space) {
                sb_addc(sb, ' ');
                shown++;
            }
            space = 1;
            continue;
        }
        sb_addc(sb, c < 0x7f ? (char)c : '?');
        shown++;
        space = 0;
    }
    while (sb->len && sb->buf[sb->len - 1] == ' ')
        sb->buf[--sb->len] = '\0';
    int cut = i < len;
    if (cut) sb_adds(sb, "...");
    return cut;
}

char *sb_detach(StrBuf *sb, size_t *out_len)
{
    char *p = sb->buf ? sb->buf : xcalloc(1, 1);
    if (out_len) *out_len = sb->len;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return p;
}

CrErr sb_read_fd(StrBuf *sb, int fd, const char *name, size_t max_bytes, ErrInfo *e)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return err_set(e, CR_EIO, "%s: not a regular file", name);
    if (max_bytes && (size_t)st.st_size > max_bytes)
        return err_set(e, CR_ETOOBIG, "%s: %lld bytes is over the %zu byte limit", name,
                       (long long)st.st_size, max_bytes);
    sb_grow(sb, (size_t)st.st_size);
    for (;;) {
        sb_grow(sb, 65536);
        ssize_t n = read(fd, sb->buf + sb->len, sb->cap - sb->len - 1);
        if (n < 0) {
            if (errno == EINTR) continue;
            return err_set(e, CR_EIO, "%s: %s", name, strerror(errno));
        }
        if (n == 0) break;
        sb->len += (size_t)n;
        if (max_bytes && sb->len > max_bytes)
            return err_set(e, CR_ETOOBIG, "%s: over the %zu byte limit", name, max_bytes);
    }
    sb->buf[sb->len] = '\0';
    return CR_OK;
}

CrErr sb_read_file(StrBuf *sb, const char *path, size_t max_bytes, ErrInfo *e)
{
    /* O_NONBLOCK: a FIFO put where a source file was must not block the
     * open (it has no effect on regular files); anything but a regular file
     * is refused. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return err_set(e, errno == ENOENT || errno == ENOTDIR ? CR_ENOENT : CR_EIO, "%s: %s", path,
                       strerror(errno));
    CrErr rc = sb_read_fd(sb, fd, path, max_bytes, e);
    close(fd);
    return rc;
}

void sb_truncate(StrBuf *sb, size_t len)
{
    if (len >= sb->len) return;
    sb->len = len;
    sb->buf[len] = '\0';
}

void sb_consume(StrBuf *sb, size_t n)
{
    if (n >= sb->len) {
        sb_reset(sb);
        return;
    }
    memmove(sb->buf, sb->buf + n, sb->len - n);
    sb_truncate(sb, sb->len - n);
}
