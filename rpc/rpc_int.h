/*
 * rpc_int.h - what the files of rpc/ share: the transport (transport.c)
 * and its input buffer (inbuf.c), which each framing (content_length.c,
 * lines.c) reads through.
 */
#ifndef CODERAG_RPC_INT_H
#define CODERAG_RPC_INT_H

#include "rpc.h"

#include <pthread.h>
#include <sys/types.h>

#define RPC_READ_CHUNK 65536

struct RpcTransport {
    const RpcFraming *framing;
    int in_fd, out_fd;
    char *buf; /* unread input is buf[pos..end) */
    size_t pos, end, cap;
    int resync; /* the framing is skipping to its next message */
    size_t max_body;
    int stall_ms;
    pthread_mutex_t wmu; /* guards out_fd and broken */
    int broken;
};

/* A framing: how messages are cut from the input and wrapped on output. */
struct RpcFraming {
    const char *name;
    size_t max_body; /* default cap */
    RpcReadResult (*read)(RpcTransport *t, StrBuf *out, ErrInfo *e);
    int (*reject)(RpcTransport *t, const char *body, size_t len); /* NULL: never */
    /* The bytes written before a body of len bytes, into buf (cap 64). */
    size_t (*head)(char *buf, size_t len);
    const char *tail; /* written after the body */
};

enum { RPC_FILL_EOF = 0, RPC_FILL_ERR = -1, RPC_FILL_STALL = -2 };

/* Appends more input to the buffer, waiting up to timeout_ms (negative:
 * forever): >0 bytes read, or RPC_FILL_*. */
ssize_t rpc__fill(RpcTransport *t, int timeout_ms);

/* Reads up to n bytes straight into dst (past the buffer), waiting up to
 * timeout_ms: >0 bytes read, or RPC_FILL_*. */
ssize_t rpc__read_into(RpcTransport *t, char *dst, size_t n, int timeout_ms);

/* Puts n bytes back in front of the unread input. */
void rpc__unread(RpcTransport *t, const char *data, size_t n);

/* Sets e (CR_EPARSE, fmt with arg) and returns RPC_READ_BAD; the framing
 * resynchronises before its next message. */
RpcReadResult rpc__bad(RpcTransport *t, ErrInfo *e, const char *fmt, const char *arg);

#endif
