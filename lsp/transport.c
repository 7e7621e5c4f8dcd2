#include "lsp_int.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define HEADER_NAME "Content-Length:"
#define HEADER_NAME_LEN 15

struct LspTransport {
    int in_fd, out_fd;
    char *buf; /* unread input is buf[pos..end) */
    size_t pos, end, cap;
    int resync; /* discard input up to the next "Content-Length:" */
    size_t max_body;
    int stall_ms;
    pthread_mutex_t wmu; /* guards out_fd and broken */
    int broken;
};

LspTransport *lsp_transport_new(int in_fd, int out_fd)
{
    LspTransport *t = xcalloc(1, sizeof *t);
    t->in_fd = in_fd;
    t->out_fd = out_fd;
    t->cap = READ_CHUNK;
    t->buf = xmalloc(t->cap);
    t->max_body = LSP_MAX_BODY;
    t->stall_ms = LSP_STALL_MS;
    pthread_mutex_init(&t->wmu, NULL);
    return t;
}

void lsp_transport_free(LspTransport *t)
{
    if (!t) return;
    pthread_mutex_destroy(&t->wmu);
    free(t->buf);
    free(t);
}

void lsp_transport_set_limits(LspTransport *t, size_t max_body, int stall_ms)
{
    if (max_body) t->max_body = max_body;
    if (stall_ms) t->stall_ms = stall_ms < 0 ? -1 : stall_ms;
}

enum { FILL_EOF = 0, FILL_ERR = -1, FILL_STALL = -2 };

/* Waits (up to timeout_ms, or forever when negative) for input readable. */
static int wait_input(int fd, int timeout_ms)
{
    if (timeout_ms < 0) return 1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    return r < 0 ? FILL_ERR : r == 0 ? FILL_STALL : 1;
}

static ssize_t read_some(int fd, void *dst, size_t n)
{
    ssize_t r;
    do
        r = read(fd, dst, n);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Appends more input to the buffer: >0 bytes read, or FILL_*. */
static ssize_t fill(LspTransport *t, int timeout_ms)
{
    if (t->pos == t->end) {
        t->pos = t->end = 0;
    } else if (t->pos > 0 && t->cap - t->end < READ_CHUNK / 4) {
        memmove(t->buf, t->buf + t->pos, t->end - t->pos);
        t->end -= t->pos;
        t->pos = 0;
    }
    if (t->cap - t->end < READ_CHUNK / 4) {
        t->cap *= 2;
        t->buf = xrealloc(t->buf, t->cap);
    }
    int w = wait_input(t->in_fd, timeout_ms);
    if (w <= 0) return w;
    ssize_t n = read_some(t->in_fd, t->buf + t->end, t->cap - t->end);
    if (n < 0) return FILL_ERR;
    t->end += (size_t)n;
    return n;
}

/* Puts bytes back in front of the unread input. */
static void unread(LspTransport *t, const char *data, size_t n)
{
    if (!n) return;
    if (t->pos >= n) {
        t->pos -= n;
        memcpy(t->buf + t->pos, data, n);
        return;
    }
    size_t rest = t->end - t->pos, cap = n + rest + READ_CHUNK;
    char *nb = xmalloc(cap);
    memcpy(nb, data, n);
    memcpy(nb + n, t->buf + t->pos, rest);
    free(t->buf);
    t->buf = nb;
    t->cap = cap;
    t->pos = 0;
    t->end = n + rest;
}

static const char *find_header_name(const char *p, size_t n)
{
    for (size_t i = 0; i + HEADER_NAME_LEN <= n; i++)
        if ((p[i] == 'C' || p[i] == 'c') && !strncasecmp(p + i, HEADER_NAME, HEADER_NAME_LEN))
            return p + i;
    return NULL;
}

/* Discards input up to the next "Content-Length:". */
static LspReadResult skip_to_header(LspTransport *t, ErrInfo *e)
{
    for (;;) {
        const char *h = find_header_name(t->buf + t->pos, t->end - t->pos);
        if (h) {
            t->pos = (size_t)(h - t->buf);
            t->resync = 0;
            return LSP_READ_MSG;
        }
        if (t->end - t->pos >= HEADER_NAME_LEN) t->pos = t->end - (HEADER_NAME_LEN - 1);
        ssize_t n = fill(t, -1);
        if (n == FILL_EOF) return LSP_READ_EOF;
        if (n < 0) {
            err_set(e, CR_EIO, "read: %s", strerror(errno));
            return LSP_READ_IO;
        }
    }
}

/* RFC 7230 token characters (header names). */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static LspReadResult bad(LspTransport *t, ErrInfo *e, const char *fmt, const char *arg)
{
    t->resync = 1;
    err_set(e, CR_EPARSE, fmt, arg);
    return LSP_READ_BAD;
}

/* Parses a Content-Length value: digits with optional surrounding blanks.
 * Returns 0 when malformed; *too_big when it does not fit the cap. */
static int parse_length(const char *v, size_t n, size_t cap, size_t *out, int *too_big)
{
    size_t i = 0, val = 0, digits = 0;
    while (i < n && (v[i] == ' ' || v[i] == '\t'))
        i++;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
        if (!*too_big) {
            val = val * 10 + (size_t)(v[i] - '0');
            if (val > cap) *too_big = 1;
        }
    while (i < n && (v[i] == ' ' || v[i] == '\t'))
        i++;
    if (!digits || i != n) return 0;
    *out = val;
    return 1;
}

/* The header block up to its blank line: *clen from Content-Length. */
static LspReadResult read_headers(LspTransport *t, size_t *clen, ErrInfo *e)
{
    size_t hdr_bytes = 0;
    int have_len = 0, too_big = 0, n_lines = 0;
    for (;;) {
        const char *nl = memchr(t->buf + t->pos, '\n', t->end - t->pos);
        if (!nl) {
            if (t->end - t->pos > LSP_MAX_HEADER) {
                t->pos++; /* so that resynchronising moves past this line */
                return bad(t, e, "header line longer than %s bytes", "8192");
            }
            ssize_t n = fill(t, -1);
            if (n == FILL_EOF) {
                if (n_lines || t->pos != t->end)
                    err_set(e, CR_EIO, "input ended inside a message header");
                return LSP_READ_EOF;
            }
            if (n < 0) {
                err_set(e, CR_EIO, "read: %s", strerror(errno));
                return LSP_READ_IO;
            }
            continue;
        }
        const char *line = t->buf + t->pos;
        size_t len = (size_t)(nl - line), next = t->pos + len + 1;
        if (len && line[len - 1] == '\r') len--;
        hdr_bytes += len + 2;
        if (len == 0) {
            t->pos = next;
            if (n_lines == 0) continue; /* stray blank line between messages */
            break;
        }
        if (hdr_bytes > LSP_MAX_HEADER) {
            t->pos = next; /* resynchronise after this line, not at it again */
            return bad(t, e, "headers longer than %s bytes", "8192");
        }
        size_t nn = 0;
        while (nn < len && is_tchar((unsigned char)line[nn]))
            nn++;
        if (nn == 0 || nn == len || line[nn] != ':')
            /* Not a header: resynchronise from this line's start, which may
             * hold a header glued to the tail of a cut-short body. */
            return bad(t, e, "malformed header line%s", "");
        t->pos = next;
        n_lines++;
        if (nn == HEADER_NAME_LEN - 1 && !strncasecmp(line, HEADER_NAME, nn)) {
            size_t v;
            if (!parse_length(line + nn + 1, len - nn - 1, t->max_body, &v, &too_big))
                return bad(t, e, "invalid Content-Length%s", "");
            if (have_len && v != *clen)
                return bad(t, e, "conflicting Content-Length headers%s", "");
            *clen = v;
            have_len = 1;
        }
    }
    if (too_big) {
        char lim[32];
        snprintf(lim, sizeof lim, "%zu", t->max_body);
        bad(t, e, "Content-Length exceeds the limit of %s bytes; message skipped", lim);
        if (e) e->code = CR_ETOOBIG;
        return LSP_READ_BAD;
    }
    if (!have_len) return bad(t, e, "missing Content-Length header%s", "");
    return LSP_READ_MSG;
}

/* clen body bytes into out; a body that stalls is given back for a rescan. */
static LspReadResult read_body(LspTransport *t, size_t clen, StrBuf *out, ErrInfo *e)
{
    sb_grow(out, clen);
    while (out->len < clen) {
        size_t want = clen - out->len, avail = t->end - t->pos;
        if (avail) {
            size_t n = avail < want ? avail : want;
            memcpy(out->buf + out->len, t->buf + t->pos, n);
            out->len += n;
            t->pos += n;
            continue;
        }
        ssize_t n;
        int w = wait_input(t->in_fd, t->stall_ms);
        if (w <= 0) {
            n = w;
        } else if (want >= READ_CHUNK) {
            n = read_some(t->in_fd, out->buf + out->len, want); /* big body: no copy */
            if (n > 0) out->len += (size_t)n;
        } else {
            n = fill(t, -1);
        }
        if (n == FILL_EOF) {
            err_set(e, CR_EIO, "input ended inside a message body (%zu of %zu bytes)", out->len,
                    clen);
            sb_reset(out);
            return LSP_READ_EOF;
        }
        if (n == FILL_STALL) {
            /* Perhaps the Content-Length was too long and the next message
             * is inside what arrived: scan it again. */
            char msg[160];
            snprintf(msg, sizeof msg, "%zu of %zu body bytes arrived, then nothing for %d ms",
                     out->len, clen, t->stall_ms);
            unread(t, out->buf, out->len);
            sb_reset(out);
            return bad(t, e, "incomplete message: %s", msg);
        }
        if (n < 0) {
            err_set(e, CR_EIO, "read: %s", strerror(errno));
            sb_reset(out);
            return LSP_READ_IO;
        }
    }
    out->buf[out->len] = '\0';
    return LSP_READ_MSG;
}

LspReadResult lsp_transport_read(LspTransport *t, StrBuf *out, ErrInfo *e)
{
    if (out->cap > ((size_t)1 << 20)) {
        sb_release(out);
        sb_init(out);
    }
    sb_reset(out);
    if (e) e->msg[0] = '\0';
    if (t->resync) {
        LspReadResult r = skip_to_header(t, e);
        if (r != LSP_READ_MSG) return r;
    }
    size_t clen = 0;
    LspReadResult r = read_headers(t, &clen, e);
    return r == LSP_READ_MSG ? read_body(t, clen, out, e) : r;
}

int lsp_transport_reject(LspTransport *t, const char *body, size_t len)
{
    const char *h = find_header_name(body, len);
    if (!h) return 0;
    unread(t, h, len - (size_t)(h - body));
    return 1;
}

CrErr lsp_transport_write(LspTransport *t, const char *body, size_t len, ErrInfo *e)
{
    char hdr[64];
    int hn = snprintf(hdr, sizeof hdr, "Content-Length: %zu\r\n\r\n", len);
    struct iovec iov[2] = {{hdr, (size_t)hn}, {(void *)body, len}};
    struct iovec *v = iov;
    int nv = 2;
    CrErr rc = CR_OK;
    pthread_mutex_lock(&t->wmu);
    if (t->broken) {
        rc = err_set(e, CR_EIO, "output closed");
        goto out;
    }
    while (nv > 0) {
        ssize_t n = writev(t->out_fd, v, nv);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            t->broken = 1;
            rc = err_set(e, CR_EIO, "write: %s", strerror(errno));
            goto out;
        }
        while (nv > 0 && (size_t)n >= v->iov_len) {
            n -= (ssize_t)v->iov_len;
            v++;
            nv--;
        }
        if (nv > 0) {
            v->iov_base = (char *)v->iov_base + n;
            v->iov_len -= (size_t)n;
        }
    }
out:
    pthread_mutex_unlock(&t->wmu);
    return rc;
}

int lsp_transport_broken(LspTransport *t)
{
    pthread_mutex_lock(&t->wmu);
    int b = t->broken;
    pthread_mutex_unlock(&t->wmu);
    return b;
}
