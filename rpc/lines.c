#include "rpc_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Newline-delimited framing: a line over the cap is discarded as it
 * arrives (t->resync while inside it) and reported once at its end. */

static RpcReadResult too_long(RpcTransport *t, ErrInfo *e)
{
    char cap[32];
    snprintf(cap, sizeof cap, "%zu", t->max_body);
    RpcReadResult r = rpc__bad(t, e, "message longer than %s bytes", cap);
    t->resync = 0; /* the line is over: the next one starts clean */
    if (e) e->code = CR_ETOOBIG;
    return r;
}

static RpcReadResult lines_read(RpcTransport *t, StrBuf *out, ErrInfo *e)
{
    size_t scanned = 0; /* bytes after t->pos known to hold no newline */
    for (;;) {
        const char *start = t->buf + t->pos;
        size_t avail = t->end - t->pos;
        const char *nl = memchr(start + scanned, '\n', avail - scanned);
        if (nl) {
            size_t len = (size_t)(nl - start), line = len;
            if (line && start[line - 1] == '\r') line--;
            t->pos += len + 1;
            scanned = 0;
            if (t->resync || line > t->max_body) return too_long(t, e);
            if (!line) continue; /* blank line between messages */
            sb_add(out, start, line);
            return RPC_READ_MSG;
        }
        if (t->resync || avail > t->max_body + 1) { /* +1: a CR before the LF */
            t->resync = 1;
            t->pos = t->end;
            scanned = 0;
        } else {
            scanned = avail;
        }
        ssize_t n = rpc__fill(t, -1);
        if (n == RPC_FILL_EOF) {
            if (t->resync) {
                t->resync = 0;
                err_set(e, CR_EIO, "input ended inside a message longer than %zu bytes",
                        t->max_body);
                return RPC_READ_EOF;
            }
            size_t line = t->end - t->pos;
            const char *last = t->buf + t->pos;
            if (line && last[line - 1] == '\r') line--;
            t->pos = t->end;
            if (!line) return RPC_READ_EOF;
            if (line > t->max_body) return too_long(t, e);
            sb_add(out, last, line); /* the last line may come without its newline */
            return RPC_READ_MSG;
        }
        if (n < 0) {
            err_set(e, CR_EIO, "read: %s", strerror(errno));
            return RPC_READ_IO;
        }
    }
}

static size_t lines_head(char *buf, size_t len)
{
    return 0;
}

const RpcFraming rpc_framing_lines = {
    "newline-delimited", RPC_MAX_LINE, lines_read, NULL, lines_head, "\n",
};
