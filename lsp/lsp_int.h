/*
 * lsp_int.h - what the lsp/ files share: configuration and command-line
 * plumbing of the subcommands (main.c, cli.c, config.c), the Content-Length
 * transport (transport.c), the JSON-RPC endpoint with its dispatch table
 * (dispatch.c) and the server entry point (server.c).
 */
#ifndef CODERAG_LSP_INT_H
#define CODERAG_LSP_INT_H

#include "base.h"
#include "idx.h"
#include "rtv.h"

#include <stddef.h>
#include <stdio.h>

/* Settings from SPEC.md's configuration table, plus index tuning. Strings
 * are owned (NULL: unset). */
typedef struct CrConfig {
    char *root;
    char *index_dir;
    char *llm_url, *llm_model, *llm_api_key_env;
    char *embed_provider, *embed_url, *embed_model, *embed_api_key_env;
    char **exclude;
    size_t n_exclude;
    size_t max_file_bytes;
    int threads;
} CrConfig;

void lsp_config_init(CrConfig *c);
void lsp_config_release(CrConfig *c);
/* A deep copy of src into dst (not initialised before). */
void lsp_config_copy(CrConfig *dst, const CrConfig *src);

/* Sets a key by its SPEC name ("llm.url", "indexDir", "exclude", ...) or
 * its CLI flag name ("llm-url", "index-dir", ...). "exclude" appends; a
 * comma-separated value appends several. CR_EUSAGE for an unknown key or a
 * bad number. */
CrErr lsp_config_set(CrConfig *c, const char *key, const char *value, ErrInfo *e);

/* Applies CODERAG_* environment variables (CODERAG_LLM_URL, CODERAG_INDEXDIR,
 * CODERAG_EXCLUDE, ...). Explicit settings made afterwards win. */
CrErr lsp_config_from_env(CrConfig *c, ErrInfo *e);

/* Whether a CLI flag (without leading dashes) is a configuration key. */
int lsp_config_is_flag(const char *flag);
/* Prints the settings as command-line flags, one line each. */
void lsp_config_print_flags(FILE *f);

/* The IdxConfig view of c (borrowing its strings). root defaults to ".". */
void lsp_config_idx(const CrConfig *c, IdxConfig *out);
/* The LLM settings of a request (endpoint, model, key variable), from the
 * configuration: the one place they are copied. Borrows from c. */
void lsp_config_llm(const CrConfig *c, RtvRequest *req);

/* Subcommands; argv[0] is the subcommand name. Return the process exit code
 * of SPEC.md: 0 ok, 1 usage, 2 index or I/O error, 3 endpoint error. */
/* The command line: dispatches argv[1] to a command (usage on stderr and
 * exit 1 for an unknown one); returns the exit status. */
int lsp_cli_main(int argc, char **argv);
/* The list of commands (exit 0 on stdout, 1 on stderr). */
int lsp_cli_usage(FILE *f);
int lsp_cli_index(int argc, char **argv);
int lsp_cli_ask(int argc, char **argv);
int lsp_cli_status(int argc, char **argv);
int lsp_cli_lsp(int argc, char **argv);
int lsp_cli_mcp(int argc, char **argv);

/* ---------------------------------------------------------------- transport
 *
 * LSP base protocol framing ("Content-Length: N\r\n\r\n" + N bytes of
 * JSON) over two file descriptors, so that tests drive it through pipes.
 *
 * Reading is done by one thread (the server's main loop). Header lines end
 * in CRLF (a bare LF is accepted); names are case-insensitive;
 * Content-Type and unknown headers are ignored; blank lines between
 * messages are skipped. Bodies larger than the cap are refused without
 * allocating anything.
 *
 * Framing errors do not end the stream: lsp_transport_read reports
 * LSP_READ_BAD (the caller answers with a JSON-RPC error whose id is null)
 * and then resynchronises by discarding input up to the next
 * "Content-Length:" it sees. That covers a missing or malformed
 * Content-Length, an oversized one (the body is skipped by scanning, never
 * buffered), junk between messages, and a body that stops arriving for
 * stall_ms while the declared length is still unread. A Content-Length that
 * was too long swallows the next message's header; lsp_transport_reject
 * lets the caller hand back an unparsable body so that the swallowed
 * message is read again.
 *
 * Only the end of the input and read errors end the stream.
 *
 * Writing is thread-safe: each message is written whole under a lock. A
 * failed write (EPIPE: the client is gone; SIGPIPE must be ignored) marks
 * the transport broken and every later write fails at once.
 */

typedef struct LspTransport LspTransport;

#define LSP_MAX_BODY ((size_t)64 << 20) /* default cap on Content-Length */
#define LSP_MAX_HEADER 8192             /* bytes of header lines per message */
#define LSP_STALL_MS 2000               /* default: a body silent this long is abandoned */

typedef enum {
    LSP_READ_MSG, /* a body in *out (NUL-terminated, out->len bytes) */
    LSP_READ_BAD, /* framing error described in e->msg; read again */
    LSP_READ_EOF, /* end of input (e->msg says when it cut a message short) */
    LSP_READ_IO,  /* a read error (e->msg) */
} LspReadResult;

/* The descriptors stay the caller's (not closed by _free). */
LspTransport *lsp_transport_new(int in_fd, int out_fd);
void lsp_transport_free(LspTransport *t);

/* Caps (0 leaves a setting as it is): max_body bytes per message, stall_ms
 * of silence inside a body before it is abandoned (negative: wait forever). */
void lsp_transport_set_limits(LspTransport *t, size_t max_body, int stall_ms);

/* Reads the next message into out (reset first). Blocks. */
LspReadResult lsp_transport_read(LspTransport *t, StrBuf *out, ErrInfo *e);

/* The body just read could not be parsed: when it contains the start of a
 * header ("Content-Length:"), the bytes from there are put back in front of
 * the unread input. Returns 1 when it did so. */
int lsp_transport_reject(LspTransport *t, const char *body, size_t len);

/* Writes one framed message; thread-safe. CR_EIO once the peer is gone. */
CrErr lsp_transport_write(LspTransport *t, const char *body, size_t len, ErrInfo *e);

/* Whether a write has failed (the client is gone). */
int lsp_transport_broken(LspTransport *t);

/* ---------------------------------------------------------------- JSON-RPC
 *
 * LspRpc owns the JSON-RPC 2.0 envelope and the LSP lifecycle; a const
 * table of LspMethod says which handler runs for which method. Handlers get
 * their params and fill a result or an error; they never see or build
 * "jsonrpc" or "id".
 *
 *   - bad JSON: -32700; an array or scalar, a non-string method, an id that
 *     is neither integer nor string, wrong "jsonrpc": -32600 (id null when
 *     it is unknown);
 *   - before initialize: -32002 for requests, notifications dropped;
 *     initialize twice: -32600;
 *   - after shutdown: -32600 for requests, notifications dropped;
 *   - unknown requests: -32601; unknown notifications ($/ or not): silence;
 *     a request-only method without an id is a notification and is
 *     dropped; a notification-only method with an id: -32600;
 *   - $/cancelRequest: a pending request of that id is marked cancelled and
 *     answered with -32800 whatever its handler produces;
 *   - exit: ends the loop with exit code 0 after shutdown, 1 before.
 *
 * lsp_rpc_handle runs on one thread (the reader). Replies to deferred
 * requests, notifications and server-to-client requests may be sent from
 * any thread.
 */

struct json_t;

/* LSP Position and Range objects (0-based lines and characters). */
struct json_t *lsp_position(uint32_t line, uint32_t character);
struct json_t *lsp_range(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1);
/* Lines a..b (1-based, inclusive) whole: from a's start to b + 1's start. */
struct json_t *lsp_lines_range(uint32_t a, uint32_t b);

enum {
    LSP_PARSE_ERROR = -32700,
    LSP_INVALID_REQUEST = -32600,
    LSP_METHOD_NOT_FOUND = -32601,
    LSP_INVALID_PARAMS = -32602,
    LSP_INTERNAL_ERROR = -32603,
    LSP_SERVER_NOT_INITIALIZED = -32002,
    LSP_REQUEST_FAILED = -32803,
    LSP_REQUEST_CANCELLED = -32800,
};

typedef struct LspRpc LspRpc;
typedef struct LspCall LspCall; /* a request whose reply is still owed */

typedef struct LspError {
    int code;
    char message[512];
} LspError;

typedef enum {
    LSP_DONE,  /* *out_result holds the result (NULL: JSON null) */
    LSP_FAIL,  /* *err holds the error */
    LSP_LATER, /* the handler kept `call` and will finish it (requests only) */
} LspStatus;

/* A handler: params is borrowed (NULL when absent); call is NULL for
 * notifications. A result is a new reference the dispatcher steals. */
typedef LspStatus (*LspHandler)(void *ctx, struct json_t *params, LspCall *call,
                                struct json_t **out_result, LspError *err);

enum {
    LSP_REQUEST = 1 << 0,    /* may come as a request */
    LSP_NOTIFY = 1 << 1,     /* may come as a notification */
    LSP_NEEDS_INIT = 1 << 2, /* only after initialize */
    LSP_INIT = 1 << 3,       /* initialize: success moves to the initialized state */
    LSP_SHUTDOWN = 1 << 4,   /* shutdown: success moves to the shutdown state */
};

typedef struct LspMethod {
    const char *name;
    LspHandler fn;
    unsigned flags;
} LspMethod;

/* Sends one JSON text (a whole message body); returns 0 on success. */
typedef int (*LspSendFn)(void *ud, const char *body, size_t len);

/* methods (n entries) must outlive the LspRpc; ctx is passed to handlers. */
LspRpc *lsp_rpc_new(const LspMethod *methods, size_t n, void *ctx, LspSendFn send, void *send_ud);
/* Frees the endpoint; calls still pending are dropped without a reply
 * (their owners must be done with them: call after the workers stopped). */
void lsp_rpc_free(LspRpc *rpc);

/* Handles one incoming message body. Returns -1 when the body was not JSON
 * at all (answered with -32700; see lsp_transport_reject), else 0. */
int lsp_rpc_handle(LspRpc *rpc, const char *body, size_t len);
/* Answers a framing error (from the transport) with an error whose id is null. */
void lsp_rpc_framing_error(LspRpc *rpc, int code, const char *message);

/* Whether exit was received, and the process exit code it implies. */
int lsp_rpc_exited(const LspRpc *rpc, int *out_code);
/* Whether shutdown was received (the loop should end at end of input
 * with exit code 0 then, 1 otherwise). */
int lsp_rpc_shut_down(const LspRpc *rpc);

/* Finishes a deferred call from any thread and frees it: result (a new
 * reference, stolen; NULL: null) or, when err is not NULL, an error. A
 * cancelled call is answered with -32800 instead. */
void lsp_call_reply(LspCall *call, struct json_t *result, const LspError *err);
/* When rc says the index could not be read (CR_EDB, CR_ECORRUPT, CR_EIO),
 * answers the call with that error (never an empty result) and returns 1;
 * otherwise does nothing and returns 0. */
int lsp_call_reply_failed(LspCall *call, CrErr rc, const ErrInfo *e);
/* Frees a deferred call without answering (the server is going away). */
void lsp_call_drop(LspCall *call);
/* Whether $/cancelRequest named this call; any thread. */
int lsp_call_cancelled(const LspCall *call);
/* The method of the call (borrowed). */
const char *lsp_call_method(const LspCall *call);

/* Sends a notification from any thread; params (may be NULL) is stolen. */
void lsp_rpc_notify(LspRpc *rpc, const char *method, struct json_t *params);

/* Answer to a server-to-client request, run on the reader thread: result
 * (borrowed; NULL with error) or error (borrowed; NULL on success). */
typedef void (*LspResponseFn)(void *ud, struct json_t *result, struct json_t *error);

/* Sends a request to the client from any thread; params is stolen; fn
 * (may be NULL) runs when the answer arrives. */
void lsp_rpc_request(LspRpc *rpc, const char *method, struct json_t *params, LspResponseFn fn,
                     void *ud);

/* Sets *err (code, printf-style message); returns LSP_FAIL for handlers. */
LspStatus lsp_error(LspError *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- server */

/* Runs the language server over the two descriptors until exit or end of
 * input; cfg holds the CLI and environment settings (initializationOptions
 * are applied over a copy). Returns the process exit code: 0 after
 * shutdown + exit, 1 when the client exits or disappears without shutdown,
 * 2 when the output broke before that. */
int lsp_server_run(const CrConfig *cfg, int in_fd, int out_fd);

#endif
