/* inbuf.c - the transport's input buffer, which every framing reads
 * through: filled from the input descriptor, bytes put back, a framing
 * error that sends the framing resynchronising. */
#include "rpc_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Waits (up to timeout_ms, or forever when negative) for input readable. */
static int wait_input(int fd, int timeout_ms)
{
    if (timeout_ms < 0) return 1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    return r < 0 ? RPC_FILL_ERR : r == 0 ? RPC_FILL_STALL : 1;
}

static ssize_t read_some(int fd, void *dst, size_t n)
{
    ssize_t r;
    do
        r = read(fd, dst, n);
    while (r < 0 && errno == EINTR);
    return r;
}

ssize_t rpc__fill(RpcTransport *t, int timeout_ms)
{
    if (t->pos == t->end) {
        t->pos = t->end = 0;
        if (t->cap > 16 * RPC_READ_CHUNK) { /* after a long message: give the memory back */
            free(t->buf);
            t->cap = RPC_READ_CHUNK;
            t->buf = xmalloc(t->cap);
        }
    } else if (t->pos > 0 && t->cap - t->end < RPC_READ_CHUNK / 4) {
        memmove(t->buf, t->buf + t->pos, t->end - t->pos);
        t->end -= t->pos;
        t->pos = 0;
    }
    if (t->cap - t->end < RPC_READ_CHUNK / 4) {
        t->cap *= 2;
        t->buf = xrealloc(t->buf, t->cap);
    }
    int w = wait_input(t->in_fd, timeout_ms);
    if (w <= 0) return w;
    ssize_t n = read_some(t->in_fd, t->buf + t->end, t->cap - t->end);
    if (n < 0) return RPC_FILL_ERR;
    t->end += (size_t)n;
    return n;
}

ssize_t rpc__read_into(RpcTransport *t, char *dst, size_t n, int timeout_ms)
{
    int w = wait_input(t->in_fd, timeout_ms);
    if (w <= 0) return w;
    ssize_t r = read_some(t->in_fd, dst, n);
    return r < 0 ? RPC_FILL_ERR : r;
}

/* Puts bytes back in front of the unread input. */
void rpc__unread(RpcTransport *t, const char *data, size_t n)
{
    if (!n) return;
    if (t->pos >= n) {
        t->pos -= n;
        memcpy(t->buf + t->pos, data, n);
        return;
    }
    size_t rest = t->end - t->pos, cap = n + rest + RPC_READ_CHUNK;
    char *nb = xmalloc(cap);
    memcpy(nb, data, n);
    memcpy(nb + n, t->buf + t->pos, rest);
    free(t->buf);
    t->buf = nb;
    t->cap = cap;
    t->pos = 0;
    t->end = n + rest;
}

RpcReadResult rpc__bad(RpcTransport *t, ErrInfo *e, const char *fmt, const char *arg)
{
    t->resync = 1;
    err_set(e, CR_EPARSE, fmt, arg);
    return RPC_READ_BAD;
}
