/* content_length.c - the Content-Length framing (rpc.h): a header block,
 * a blank line, then exactly Content-Length bytes of body; after a framing
 * error the reader skips to the next "Content-Length:". */
#include "rpc_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HEADER_NAME "Content-Length:"
#define HEADER_NAME_LEN 15

static const char *find_header_name(const char *p, size_t n)
{
    for (size_t i = 0; i + HEADER_NAME_LEN <= n; i++)
        if ((p[i] == 'C' || p[i] == 'c') && !strncasecmp(p + i, HEADER_NAME, HEADER_NAME_LEN))
            return p + i;
    return NULL;
}

/* Discards input up to the next "Content-Length:". */
static RpcReadResult skip_to_header(RpcTransport *t, ErrInfo *e)
{
    for (;;) {
        const char *h = find_header_name(t->buf + t->pos, t->end - t->pos);
        if (h) {
            t->pos = (size_t)(h - t->buf);
            t->resync = 0;
            return RPC_READ_MSG;
        }
        if (t->end - t->pos >= HEADER_NAME_LEN) t->pos = t->end - (HEADER_NAME_LEN - 1);
        ssize_t n = rpc__fill(t, -1);
        if (n == RPC_FILL_EOF) return RPC_READ_EOF;
        if (n < 0) {
            err_set(e, CR_EIO, "read: %s", strerror(errno));
            return RPC_READ_IO;
        }
    }
}

/* RFC 7230 token characters (header names). */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
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
static RpcReadResult read_headers(RpcTransport *t, size_t *clen, ErrInfo *e)
{
    size_t hdr_bytes = 0;
    int have_len = 0, too_big = 0, n_lines = 0;
    for (;;) {
        const char *nl = memchr(t->buf + t->pos, '\n', t->end - t->pos);
        if (!nl) {
            if (t->end - t->pos > RPC_MAX_HEADER) {
                t->pos++; /* so that resynchronising moves past this line */
                return rpc__bad(t, e, "header line longer than %s bytes", "8192");
            }
            ssize_t n = rpc__fill(t, -1);
            if (n == RPC_FILL_EOF) {
                if (n_lines || t->pos != t->end)
                    err_set(e, CR_EIO, "input ended inside a message header");
                return RPC_READ_EOF;
            }
            if (n < 0) {
                err_set(e, CR_EIO, "read: %s", strerror(errno));
                return RPC_READ_IO;
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
        if (hdr_bytes > RPC_MAX_HEADER) {
            t->pos = next; /* resynchronise after this line, not at it again */
            return rpc__bad(t, e, "headers longer than %s bytes", "8192");
        }
        size_t nn = 0;
        while (nn < len && is_tchar((unsigned char)line[nn]))
            nn++;
        if (nn == 0 || nn == len || line[nn] != ':')
            /* Not a header: resynchronise from this line's start, which may
             * hold a header glued to the tail of a cut-short body. */
            return rpc__bad(t, e, "malformed header line%s", "");
        t->pos = next;
        n_lines++;
        if (nn == HEADER_NAME_LEN - 1 && !strncasecmp(line, HEADER_NAME, nn)) {
            size_t v;
            if (!parse_length(line + nn + 1, len - nn - 1, t->max_body, &v, &too_big))
                return rpc__bad(t, e, "invalid Content-Length%s", "");
            if (have_len && v != *clen)
                return rpc__bad(t, e, "conflicting Content-Length headers%s", "");
            *clen = v;
            have_len = 1;
        }
    }
    if (too_big) {
        char lim[32];
        snprintf(lim, sizeof lim, "%zu", t->max_body);
        rpc__bad(t, e, "Content-Length exceeds the limit of %s bytes; message skipped", lim);
        if (e) e->code = CR_ETOOBIG;
        return RPC_READ_BAD;
    }
    if (!have_len) return rpc__bad(t, e, "missing Content-Length header%s", "");
    return RPC_READ_MSG;
}

/* clen body bytes into out; a body that stalls is given back for a rescan. */
static RpcReadResult read_body(RpcTransport *t, size_t clen, StrBuf *out, ErrInfo *e)
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
        if (want >= RPC_READ_CHUNK) {
            n = rpc__read_into(t, out->buf + out->len, want, t->stall_ms); /* big body: no copy */
            if (n > 0) out->len += (size_t)n;
        } else {
            n = rpc__fill(t, t->stall_ms);
        }
        if (n == RPC_FILL_EOF) {
            err_set(e, CR_EIO, "input ended inside a message body (%zu of %zu bytes)", out->len,
                    clen);
            sb_reset(out);
            return RPC_READ_EOF;
        }
        if (n == RPC_FILL_STALL) {
            /* Perhaps the Content-Length was too long and the next message
             * is inside what arrived: scan it again. */
            char msg[160];
            snprintf(msg, sizeof msg, "%zu of %zu body bytes arrived, then nothing for %d ms",
                     out->len, clen, t->stall_ms);
            rpc__unread(t, out->buf, out->len);
            sb_reset(out);
            return rpc__bad(t, e, "incomplete message: %s", msg);
        }
        if (n < 0) {
            err_set(e, CR_EIO, "read: %s", strerror(errno));
            sb_reset(out);
            return RPC_READ_IO;
        }
    }
    out->buf[out->len] = '\0';
    return RPC_READ_MSG;
}

/* The Content-Length framing. */
static RpcReadResult cl_read(RpcTransport *t, StrBuf *out, ErrInfo *e)
{
    if (t->resync) {
        RpcReadResult r = skip_to_header(t, e);
        if (r != RPC_READ_MSG) return r;
    }
    size_t clen = 0;
    RpcReadResult r = read_headers(t, &clen, e);
    return r == RPC_READ_MSG ? read_body(t, clen, out, e) : r;
}

static int cl_reject(RpcTransport *t, const char *body, size_t len)
{
    const char *h = find_header_name(body, len);
    if (!h) return 0;
    rpc__unread(t, h, len - (size_t)(h - body));
    return 1;
}

static size_t cl_head(char *buf, size_t len)
{
    return (size_t)snprintf(buf, 64, "Content-Length: %zu\r\n\r\n", len);
}

const RpcFraming rpc_framing_content_length = {
    "Content-Length", RPC_MAX_BODY, cl_read, cl_reject, cl_head, "",
};
