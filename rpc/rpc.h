/*
 * rpc.h - JSON-RPC 2.0 for the protocol doors (lsp/, mcp/): one envelope
 * with its method table, cancellation and lifecycle, and two framings of
 * the byte stream behind one transport: Content-Length headers (LSP's base
 * protocol) and newline-delimited messages (MCP's stdio). What differs
 * between the protocols' lifecycles is data: an RpcProfile.
 *
 * Depends on base/ and jansson only.
 */
#ifndef CODERAG_RPC_H
#define CODERAG_RPC_H

#include "base.h"

#include <stddef.h>

/* ---------------------------------------------------------------- transport
 *
 * A framing over two file descriptors, so that tests drive it through
 * pipes. Reading is done by one thread (the server's main loop); writing is
 * thread-safe: each message is written whole under a lock. A failed write
 * (EPIPE: the client is gone; SIGPIPE must be ignored) marks the transport
 * broken and every later write fails at once.
 *
 * Framing errors do not end the stream: rpc_transport_read reports
 * RPC_READ_BAD (the caller answers with a JSON-RPC error whose id is null;
 * e->code is CR_ETOOBIG for a message over the cap, CR_EPARSE otherwise)
 * and reads on. Only the end of the input and read errors end the stream.
 *
 * rpc_framing_content_length: "Content-Length: N\r\n\r\n" + N bytes. Header
 * lines end in CRLF (a bare LF is accepted); names are case-insensitive;
 * Content-Type and unknown headers are ignored; blank lines between
 * messages are skipped. Bodies larger than the cap are refused without
 * allocating anything. After a framing error the reader resynchronises by
 * discarding input up to the next "Content-Length:" it sees. That covers a
 * missing or malformed Content-Length, an oversized one (the body is
 * skipped by scanning, never buffered), junk between messages, and a body
 * that stops arriving for stall_ms while the declared length is still
 * unread. A Content-Length that was too long swallows the next message's
 * header; rpc_transport_reject lets the caller hand back an unparsable body
 * so that the swallowed message is read again.
 *
 * rpc_framing_lines: one message per line. A CR before the LF is dropped,
 * blank lines are skipped, the last line may come without its LF. A line
 * longer than the cap is dropped without being buffered and reported once
 * at its end (RPC_READ_BAD, CR_ETOOBIG). Written messages end with "\n"
 * (JSON text never holds a raw newline).
 */

typedef struct RpcTransport RpcTransport;
typedef struct RpcFraming RpcFraming;

extern const RpcFraming rpc_framing_content_length; /* default cap RPC_MAX_BODY */
extern const RpcFraming rpc_framing_lines;          /* default cap RPC_MAX_LINE */

#define RPC_MAX_BODY ((size_t)64 << 20) /* default cap on Content-Length */
#define RPC_MAX_LINE ((size_t)32 << 20) /* default cap on a line */
#define RPC_MAX_HEADER 8192             /* bytes of header lines per message */
#define RPC_STALL_MS 2000               /* default: a body silent this long is abandoned */

typedef enum {
    RPC_READ_MSG, /* a body in *out (NUL-terminated, out->len bytes) */
    RPC_READ_BAD, /* framing error described in e->msg; read again */
    RPC_READ_EOF, /* end of input (e->msg says when it cut a message short) */
    RPC_READ_IO,  /* a read error (e->msg) */
} RpcReadResult;

/* The descriptors stay the caller's (not closed by _free). */
RpcTransport *rpc_transport_new(const RpcFraming *framing, int in_fd, int out_fd);
void rpc_transport_free(RpcTransport *t);

/* Caps (0 leaves a setting as it is): max_body bytes per message, stall_ms
 * of silence inside a body before it is abandoned (negative: wait forever;
 * Content-Length framing only). */
void rpc_transport_set_limits(RpcTransport *t, size_t max_body, int stall_ms);

/* Reads the next message into out (reset first). Blocks. */
RpcReadResult rpc_transport_read(RpcTransport *t, StrBuf *out, ErrInfo *e);

/* The body just read could not be parsed: when the framing can resynchronise
 * inside it (Content-Length: it contains "Content-Length:"), the bytes from
 * there are put back in front of the unread input. Returns 1 when it did so. */
int rpc_transport_reject(RpcTransport *t, const char *body, size_t len);

/* Writes one framed message; thread-safe. CR_EIO once the peer is gone. */
CrErr rpc_transport_write(RpcTransport *t, const char *body, size_t len, ErrInfo *e);

/* An RpcSendFn over a transport (ud is the RpcTransport). */
int rpc_transport_send(void *ud, const char *body, size_t len);

/* Whether a write has failed (the client is gone). */
int rpc_transport_broken(RpcTransport *t);

/* ---------------------------------------------------------------- envelope
 *
 * Rpc owns the JSON-RPC 2.0 envelope and the lifecycle; a const table of
 * RpcMethod says which handler runs for which method. Handlers get their
 * params and fill a result or an error; they never see or build "jsonrpc"
 * or "id".
 *
 *   - bad JSON: -32700; an array or scalar, a non-string method, an id that
 *     is neither integer nor string, wrong "jsonrpc": -32600 (id null when
 *     it is unknown);
 *   - params neither object nor array: -32602 (-32600 when the profile
 *     takes objects only, arrays then included);
 *   - before a RPC_INIT method succeeded: profile->not_initialized (-32002)
 *     for requests of RPC_NEEDS_INIT or unknown methods, notifications
 *     dropped; initialize twice: -32600;
 *   - after an RPC_SHUTDOWN method succeeded: -32600 for requests,
 *     notifications dropped;
 *   - unknown requests: -32601; unknown notifications: silence; a
 *     request-only method without an id is a notification and is dropped;
 *     a notification-only method with an id: -32600;
 *   - the profile's cancel notification: a pending request of that id is
 *     marked cancelled and answered with -32800 whatever its handler
 *     produces (or not at all when the profile says so);
 *   - the profile's exit notification: the loop ends, exit code 0 after
 *     shutdown, 1 before.
 *
 * rpc_handle runs on one thread (the reader). Replies to deferred requests,
 * notifications and server-to-client requests may be sent from any thread.
 */

struct json_t;

enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = CR_RPC_INVALID, /* -32602; base.h's error table maps codes to these */
    RPC_INTERNAL_ERROR = -32603,
    RPC_SERVER_NOT_INITIALIZED = -32002,
    RPC_REQUEST_FAILED = CR_RPC_FAILED,       /* -32803 */
    RPC_REQUEST_CANCELLED = CR_RPC_CANCELLED, /* -32800 */
};

/* What differs between the protocols' lifecycles. */
typedef struct RpcProfile {
    const char *name;          /* in log lines ("lsp", "mcp") */
    const char *cancel_method; /* the cancellation notification */
    const char *cancel_key;    /* its params member naming the request id */
    int cancel_silent;         /* a cancelled call gets no answer (else -32800) */
    const char *exit_method;   /* ends the loop; NULL: only the end of input does */
    int object_params;         /* params must be an object (-32600 otherwise) */
    size_t json_flags;         /* extra jansson decoding flags (JSON_REJECT_DUPLICATES) */
} RpcProfile;

/* LSP: $/cancelRequest {id} answered -32800, exit, params object or array.
 * MCP: notifications/cancelled {requestId} unanswered, no exit (end of
 * input), object params, duplicate keys rejected. */
extern const RpcProfile rpc_profile_lsp;
extern const RpcProfile rpc_profile_mcp;

typedef struct Rpc Rpc;
typedef struct RpcCall RpcCall; /* a request whose reply is still owed */

typedef struct RpcError {
    int code;
    char message[512];
} RpcError;

typedef enum {
    RPC_DONE,  /* *out_result holds the result (NULL: JSON null) */
    RPC_FAIL,  /* *err holds the error */
    RPC_LATER, /* the handler kept `call` and will finish it (requests only) */
} RpcStatus;

/* A handler: params is borrowed (NULL when absent); call is NULL for
 * notifications. A result is a new reference the dispatcher steals. */
typedef RpcStatus (*RpcHandler)(void *ctx, struct json_t *params, RpcCall *call,
                                struct json_t **out_result, RpcError *err);

enum {
    RPC_REQUEST = 1 << 0,    /* may come as a request */
    RPC_NOTIFY = 1 << 1,     /* may come as a notification */
    RPC_NEEDS_INIT = 1 << 2, /* only after initialize */
    RPC_INIT = 1 << 3,       /* initialize: success moves to the initialized state */
    RPC_SHUTDOWN = 1 << 4,   /* shutdown: success moves to the shutdown state */
};

typedef struct RpcMethod {
    const char *name;
    RpcHandler fn;
    unsigned flags;
} RpcMethod;

/* Sends one JSON text (a whole message body); returns 0 on success. */
typedef int (*RpcSendFn)(void *ud, const char *body, size_t len);

/* profile and methods (n entries) must outlive the Rpc; ctx is passed to
 * handlers. */
Rpc *rpc_new(const RpcProfile *profile, const RpcMethod *methods, size_t n, void *ctx,
             RpcSendFn send, void *send_ud);
/* fn (may be NULL) is called with the handlers' ctx on the reader thread
 * after the profile's cancel notification marked a pending call cancelled:
 * for a server whose deferred calls wait where nothing polls
 * rpc_call_cancelled (an ask waiting for the first index). Set before
 * rpc_serve. */
void rpc_set_on_cancel(Rpc *rpc, void (*fn)(void *ctx));
/* Frees the endpoint; calls still pending are dropped without a reply
 * (their owners must be done with them: call after the workers stopped). */
void rpc_free(Rpc *rpc);

/* Handles one incoming message body. Returns -1 when the body was not JSON
 * at all (answered with -32700; see rpc_transport_reject), else 0. */
int rpc_handle(Rpc *rpc, const char *body, size_t len);
/* Answers a framing error (from the transport) with an error whose id is null. */
void rpc_framing_error(Rpc *rpc, int code, const char *message);

/* Whether the exit notification was received, and the process exit code it
 * implies. */
int rpc_exited(const Rpc *rpc, int *out_code);
/* Whether shutdown was received (the loop should end at end of input
 * with exit code 0 then, 1 otherwise). */
int rpc_shut_down(const Rpc *rpc);

typedef enum {
    RPC_END_EXIT,   /* the exit notification (rpc_exited) */
    RPC_END_EOF,    /* end of input */
    RPC_END_IO,     /* a read error */
    RPC_END_BROKEN, /* the output broke (the client stopped reading) */
} RpcEnd;

/* The reader loop: reads messages from t and handles them (framing errors
 * answered with -32600 for a message over the cap, -32700 otherwise; an
 * unparsable body handed back with rpc_transport_reject) until the exit
 * notification, the end of input, a read error or a broken output. */
RpcEnd rpc_serve(Rpc *rpc, RpcTransport *t);
/* One turn of that loop: reads one message into body (the caller's, kept
 * across turns) and handles it. 1 to go on; 0 when the loop would end,
 * with *end saying why. Turns may be taken by different threads, one at a
 * time (a server whose threads take turns reading). */
int rpc_serve_one(Rpc *rpc, RpcTransport *t, StrBuf *body, RpcEnd *end);

/* Finishes a deferred call from any thread and frees it: result (a new
 * reference, stolen; NULL: null) or, when err is not NULL, an error. A
 * cancelled call is answered with -32800 instead (or not at all: the
 * profile's cancel_silent). */
void rpc_call_reply(RpcCall *call, struct json_t *result, const RpcError *err);
/* Frees a deferred call without answering (the server is going away). */
void rpc_call_drop(RpcCall *call);
/* Whether the client cancelled this call; any thread. */
int rpc_call_cancelled(const RpcCall *call);
/* The method of the call (borrowed). */
const char *rpc_call_method(const RpcCall *call);

/* Sends a notification from any thread; params (may be NULL) is stolen. */
void rpc_notify(Rpc *rpc, const char *method, struct json_t *params);

/* Answer to a server-to-client request, run on the reader thread: result
 * (borrowed; NULL with error) or error (borrowed; NULL on success). */
typedef void (*RpcResponseFn)(void *ud, struct json_t *result, struct json_t *error);

/* Sends a request to the client from any thread; params is stolen; fn
 * (may be NULL) runs when the answer arrives. */
void rpc_request(Rpc *rpc, const char *method, struct json_t *params, RpcResponseFn fn, void *ud);

/* Sets *err (code, printf-style message); returns RPC_FAIL for handlers. */
RpcStatus rpc_error(RpcError *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
