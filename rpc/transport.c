/* transport.c - a transport: a framing over two descriptors, its input
 * buffer (inbuf.c) and its serialised writes. */
#include "rpc_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

RpcTransport *rpc_transport_new(const RpcFraming *framing, int in_fd, int out_fd)
{
    RpcTransport *t = xcalloc(1, sizeof *t);
    t->framing = framing;
    t->in_fd = in_fd;
    t->out_fd = out_fd;
    t->cap = RPC_READ_CHUNK;
    t->buf = xmalloc(t->cap);
    t->max_body = framing->max_body;
    t->stall_ms = RPC_STALL_MS;
    pthread_mutex_init(&t->wmu, NULL);
    return t;
}

void rpc_transport_free(RpcTransport *t)
{
    if (!t) return;
    pthread_mutex_destroy(&t->wmu);
    free(t->buf);
    free(t);
}

void rpc_transport_set_limits(RpcTransport *t, size_t max_body, int stall_ms)
{
    if (max_body) t->max_body = max_body;
    if (stall_ms) t->stall_ms = stall_ms < 0 ? -1 : stall_ms;
}

RpcReadResult rpc_transport_read(RpcTransport *t, StrBuf *out, ErrInfo *e)
{
    if (out->cap > ((size_t)1 << 20)) {
        sb_release(out);
        sb_init(out);
    }
    sb_reset(out);
    if (e) e->msg[0] = '\0';
    return t->framing->read(t, out, e);
}

int rpc_transport_reject(RpcTransport *t, const char *body, size_t len)
{
    return t->framing->reject ? t->framing->reject(t, body, len) : 0;
}

CrErr rpc_transport_write(RpcTransport *t, const char *body, size_t len, ErrInfo *e)
{
    char hdr[64];
    size_t hn = t->framing->head(hdr, len);
    const char *tail = t->framing->tail;
    struct iovec iov[3] = {{hdr, hn}, {(void *)body, len}, {(void *)tail, strlen(tail)}};
    struct iovec *v = iov;
    int nv = iov[2].iov_len ? 3 : 2;
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

int rpc_transport_send(void *ud, const char *body, size_t len)
{
    return rpc_transport_write(ud, body, len, NULL) == CR_OK ? 0 : -1;
}

int rpc_transport_broken(RpcTransport *t)
{
    pthread_mutex_lock(&t->wmu);
    int b = t->broken;
    pthread_mutex_unlock(&t->wmu);
    return b;
}
