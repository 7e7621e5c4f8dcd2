/*
 * base.h - the few things every coderag library shares: the one result enum,
 * error detail, out-of-memory-aborting allocation, a growable string buffer,
 * hashing, UTF-8 checks and logging to stderr.
 *
 * Nothing here keeps mutable global state.
 */
#ifndef CODERAG_BASE_H
#define CODERAG_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- errors */

/* The program's one result enum and its one table: X(name, message, the
 * command line's exit status, the JSON-RPC error code a request failing
 * with it is answered with). 0 is success. Every door translates from here:
 * the CLI's exit status (cr_exit_code), the servers' error codes
 * (cr_rpc_code). Exit statuses: 0 done, 1 usage, 2 index or I/O error, 3 LLM
 * or embeddings endpoint error, 4 not indexed yet. */
#define CR_RPC_INVALID (-32602)   /* JSON-RPC: invalid params */
#define CR_RPC_CANCELLED (-32800) /* LSP: request cancelled */
#define CR_RPC_FAILED (-32803)    /* LSP: request failed */
#define CR_ERRNO_MAP(X)                                                                            \
    X(OK, "success", 0, 0)                                                                         \
    X(EUSAGE, "usage error", 1, CR_RPC_INVALID)                                                    \
    X(EINVAL, "invalid argument", 1, CR_RPC_INVALID)                                               \
    X(EIO, "I/O error", 2, CR_RPC_FAILED)                                                          \
    X(ENOENT, "no such file or entry", 2, CR_RPC_FAILED)                                           \
    X(ETOOBIG, "input too large", 1, CR_RPC_INVALID)                                               \
    X(EBINARY, "binary file", 2, CR_RPC_FAILED)                                                    \
    X(EUTF8, "not valid UTF-8", 2, CR_RPC_FAILED)                                                  \
    X(EDB, "index database error", 2, CR_RPC_FAILED)                                               \
    X(ESCHEMA, "index schema mismatch", 2, CR_RPC_FAILED)                                          \
    X(ECORRUPT, "index is inconsistent", 2, CR_RPC_FAILED)                                         \
    X(EPARSE, "parse error", 2, CR_RPC_FAILED)                                                     \
    X(EVECTOR, "vector index error", 2, CR_RPC_FAILED)                                             \
    X(EHTTP, "endpoint error", 3, CR_RPC_FAILED)                                                   \
    X(ETIMEOUT, "timed out", 3, CR_RPC_FAILED)                                                     \
    X(ECANCELED, "canceled", 2, CR_RPC_CANCELLED)                                                  \
    X(EOUTSIDE, "path outside the workspace", 2, CR_RPC_FAILED)                                    \
    X(ENOINDEX, "not indexed yet", 4, CR_RPC_FAILED)

typedef enum {
#define CR_X(name, msg, exit, rpc) CR_##name,
    CR_ERRNO_MAP(CR_X)
#undef CR_X
        CR__COUNT
} CrErr;

/* Static message for a code; never NULL. */
const char *cr_strerror(CrErr code);

/* The command line's exit status for a code (0 for CR_OK; 2 for an unknown
 * one). */
int cr_exit_code(CrErr code);

/* The JSON-RPC error code a request that failed with code is answered with. */
int cr_rpc_code(CrErr code);

/* Optional detail a callee fills on failure. Callers may pass NULL. */
typedef struct ErrInfo {
    CrErr code;
    char msg[512];
} ErrInfo;

/* Sets e->code and formats e->msg (when e is not NULL); returns code. */
CrErr err_set(ErrInfo *e, CrErr code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- memory */

/* Allocation that aborts the process on exhaustion (an editor restarts a
 * language server). Never returns NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grows array `p` (element count `n` about to be used) with capacity `cap`,
 * as git's ALLOC_GROW. */
#define ARRAY_GROW(p, n, cap)                                                                      \
    do {                                                                                           \
        if ((size_t)(n) > (size_t)(cap)) {                                                         \
            size_t cr__c = (cap) ? (size_t)(cap)*2 : 16;                                           \
            if (cr__c < (size_t)(n)) cr__c = (size_t)(n);                                          \
            (p) = xrealloc((p), cr__c * sizeof(*(p)));                                             \
            (cap) = cr__c;                                                                         \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------- strbuf */

/* A growable NUL-terminated byte string. `buf` is never NULL after init;
 * after sb_detach it is NULL until the next addition (sb_release and every
 * sb_add* still work). */
typedef struct StrBuf {
    char *buf;
    size_t len;
    size_t cap;
} StrBuf;

void sb_init(StrBuf *sb);
void sb_release(StrBuf *sb);
void sb_reset(StrBuf *sb);
/* Keeps the first len bytes (len <= sb->len), NUL-terminated. */
void sb_truncate(StrBuf *sb, size_t len);
/* Drops the first n bytes (n <= sb->len), moving the rest to the front. */
void sb_consume(StrBuf *sb, size_t n);
void sb_grow(StrBuf *sb, size_t extra);
void sb_add(StrBuf *sb, const void *data, size_t len);
void sb_adds(StrBuf *sb, const char *s);
void sb_addc(StrBuf *sb, char c);
/* Appends v in decimal ("%lld" without printf's cost). */
void sb_addi(StrBuf *sb, int64_t v);
void sb_addf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(StrBuf *sb, const char *fmt, va_list ap);
/* Appends s[0..len) as one line of printable ASCII for a message: runs of
 * whitespace and control bytes become one space (none leading or trailing),
 * other non-ASCII bytes '?'; at most max characters, then "...". Returns
 * whether it was cut. */
int sb_add_excerpt(StrBuf *sb, const char *s, size_t len, size_t max);
/* Returns the buffer (never NULL; caller frees) and leaves sb empty without
 * allocating: releasing it afterwards is optional. */
char *sb_detach(StrBuf *sb, size_t *out_len);

/* Reads a whole regular file into sb (appending). Fails with CR_ETOOBIG past
 * max_bytes (0 = no cap), CR_EIO for anything but a regular file (a FIFO is
 * refused without blocking) and CR_ENOENT/CR_EIO otherwise. */
CrErr sb_read_file(StrBuf *sb, const char *path, size_t max_bytes, ErrInfo *e);
/* The same for a file already open on fd (left open), named name in
 * messages. A file of the workspace is read with path_read_under. */
CrErr sb_read_fd(StrBuf *sb, int fd, const char *name, size_t max_bytes, ErrInfo *e);

/* Reads exactly n bytes at off of fd into buf: 1, or 0 when the file ends
 * first (cut short meanwhile) or on an error. Files that may change under
 * the process are read this way, never mapped (file.c). */
int file_pread_all(int fd, void *buf, size_t n, uint64_t off);
/* Writes exactly n bytes of buf at off of fd: 1, or 0 on an error (errno). */
int file_pwrite_all(int fd, const void *buf, size_t n, uint64_t off);
/* The first n bytes of fd in fresh page-aligned read-only memory of the
 * process (release with munmap(p, n), n 0 counting as 1); NULL when they
 * cannot all be read. */
void *file_read_pages(int fd, size_t n);
/* The same with the bytes starting lead bytes into the pages (an alignment
 * the file's layout wants): release with munmap(p, n + lead). */
void *file_read_pages_at(int fd, size_t n, size_t lead);

/* ---------------------------------------------------------------- hashing */

/* A fast 64-bit non-cryptographic hash of bytes (stable across runs and
 * machines of the same endianness). */
uint64_t hash64(const void *data, size_t len);
/* hash64 of the first len bytes of the file fd, read through a small
 * buffer; 0 when they cannot all be read. */
int hash64_fd(int fd, uint64_t len, uint64_t *out);
/* Writes 16 lowercase hex digits and a NUL into out (17 bytes). */
void hash64_hex(uint64_t h, char out[17]);

/* ---------------------------------------------------------------- text */

/* True when data[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
int utf8_valid(const char *data, size_t len);
/* Appends data[0..len) to out with each byte that is not part of a
 * well-formed UTF-8 sequence replaced by U+FFFD (for JSON strings). */
void utf8_repair(const char *data, size_t len, StrBuf *out);
/* A JSON string (jansson) from C text, NULL as ""; text that is not
 * UTF-8 has each byte outside a well-formed sequence, and each '%', written
 * as "%XX" (a path the client can give back; json_text.c). */
struct json_t *json_text(const char *s);
/* True when the bytes look binary: a NUL byte in the first 8 KiB. */
int looks_binary(const char *data, size_t len);

/* Number of lines as Python's ast counts them: split on '\n' only; a final
 * line without '\n' counts. */
size_t count_lines(const char *data, size_t len);
/* Where each line starts, lines counted as count_lines does: (*off)[i] is
 * the offset of line i + 1, and (*off)[n] == len. Returns n; *off has n + 1
 * entries (caller frees). */
size_t line_offsets(const char *data, size_t len, size_t **off);

/* Overwrites with '*', in place and at the same length, every occurrence
 * of secret[0..n) in s[0..len); secrets under 4 bytes are left alone (they
 * would mask common text). */
void text_mask(char *s, size_t len, const char *secret, size_t n);

/* ---------------------------------------------------------------- paths */

/* The one answer to "is this path inside the workspace?" (base/path.c).
 * Paths are '/'-separated bytes; nothing here follows a symlink except
 * path_real_under. */

/* Appends the percent-decoding of s[0..len) to out. Returns 0 (out then
 * holds a part) for a '%' not followed by two hex digits, or for "%00". */
int path_percent_decode(const char *s, size_t len, StrBuf *out);
/* Appends s with every byte but A-Z a-z 0-9 - . _ ~ and '/' as %XX. */
void path_percent_encode(const char *s, StrBuf *out);

/* Lexically normalises path into out (its contents replaced): empty and "."
 * components go, and ".." removes the component before it. An absolute
 * path keeps its one leading '/' ("/" alone for the root; ".." above "/"
 * stays there, as the kernel has it); a relative one is "" when nothing is
 * left. Never a trailing '/'. Returns 0, out empty, when ".." climbs above
 * the start of a relative path; else 1. */
int path_normalize(const char *path, StrBuf *out);

/* 1 when rel is a normalised relative path naming something: not empty,
 * no leading '/', no empty, "." or ".." component. */
int path_is_normal_rel(const char *rel);

/* The part of path below root ("" for root itself), borrowed from path; NULL
 * when path is neither. Lexical: both absolute and normalised (root without
 * a trailing '/'; "/" or "" holds every absolute path). */
const char *path_under(const char *root, const char *path);

/* The local path of a file URI ("file:///a%20b/c.py" -> "/a b/c.py"): scheme
 * in any case, an empty or "localhost" authority, percent-decoded up to a
 * '?' or '#'; not normalised. *out is the caller's to free (NULL on error).
 * Errors: CR_EOUTSIDE for another host ("file://host/a"), CR_EINVAL for
 * anything else unusable (another scheme, a relative path, a bad escape,
 * a NUL byte). */
CrErr path_from_uri(const char *uri, char **out);

/* "file://" + root_abs + "/" + relpath, percent-encoded as
 * path_percent_encode does. root_abs is absolute (a trailing '/' is
 * ignored); relpath may be NULL or "" for the root itself. Caller frees. */
char *path_to_uri(const char *root_abs, const char *relpath);

/* path - relative to root, absolute, or a file:// URI (path_from_uri) - as
 * a normalised path relative to root (path_is_normal_rel holds for it);
 * root is absolute. Lexical: symlinks are the reader's business
 * (path_real_under). *out is the caller's to free (NULL on error).
 * Errors: CR_EOUTSIDE (outside root, ".." above it, a URI of another host),
 * CR_EINVAL (empty, root itself, an unusable URI). */
CrErr path_relative(const char *root, const char *path, char **out);

/* Whether path, every symlink followed, lies under real_root (a canonical
 * path: realpath(3) of the root). CR_OK, with the resolved path in
 * *out_real when out_real is not NULL (caller frees); CR_EOUTSIDE when it
 * resolves outside; CR_ENOENT when it (or a directory on the way) does not
 * exist; CR_EIO otherwise (a symlink loop, no permission). */
CrErr path_real_under(const char *real_root, const char *path, char **out_real);

/* Opening a workspace file, the one way every reader of the workspace's
 * files (index, verify, retrieve, lsp, mcp) opens one: symlinks whose
 * targets lie inside the root are followed, and nothing outside the root is
 * ever opened, however the tree changes meanwhile (no check-then-use).
 *
 * path_open_beneath opens sub, a canonical path below real_root (a
 * realpath(3)), one component at a time from the root's descriptor with
 * O_NOFOLLOW (O_NONBLOCK for the file: a FIFO never blocks), so that a
 * component swapped for a symlink since sub was resolved fails instead of
 * leading out. CR_OK with *out_fd a regular file open for reading (caller
 * closes); CR_ENOENT when a component is missing, a symlink or not a
 * directory; CR_EIO for anything but a regular file or another failure;
 * CR_EOUTSIDE when sub is not a normal relative path.
 *
 * path_open_under opens rel (a normal relative path): as it is with
 * path_open_beneath when no component is a symlink (the common case: no
 * resolving), else it resolves it (path_real_under), then opens the result
 * with path_open_beneath, resolving again (a few times) when a component
 * changed in between.
 * Errors: CR_EOUTSIDE when it resolves outside the root (or rel is not
 * normal), CR_ENOENT, CR_EIO as above.
 *
 * path_read_under appends the whole file (at most max_bytes; 0 = no cap,
 * else CR_ETOOBIG) to sb, with a message naming rel in e. */
CrErr path_open_beneath(const char *real_root, const char *sub, int *out_fd);
CrErr path_open_under(const char *real_root, const char *rel, int *out_fd);
CrErr path_read_under(const char *real_root, const char *rel, StrBuf *sb, size_t max_bytes,
                      ErrInfo *e);

/* ---------------------------------------------------------------- time */

/* Monotonic milliseconds (fractional). */
double now_ms(void);
/* A Unix time as ISO 8601 UTC ("2026-11-26T03:15:30Z"), or "never" for 0. */
void utc_iso8601(int64_t unix_time, char out[32]);

/* ---------------------------------------------------------------- logging */

typedef enum { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG } LogLevel;

/* Writes one line to stderr when level is at or below the threshold taken
 * from CODERAG_LOG (error|warn|info|debug; default warn). */
void log_msg(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- string map */

/* Open-addressing map from NUL-terminated strings to int64 values. Keys are
 * copied. */
typedef struct StrMap {
    char **keys;
    int64_t *vals;
    size_t cap;
    size_t len;
} StrMap;

void strmap_init(StrMap *m);
void strmap_release(StrMap *m);
/* Inserts or overwrites. */
void strmap_put(StrMap *m, const char *key, int64_t val);
/* Returns 1 and sets *out when found (out may be NULL), else 0. */
int strmap_get(const StrMap *m, const char *key, int64_t *out);
/* Same for a key given as (pointer, length). */
int strmap_getn(const StrMap *m, const char *key, size_t len, int64_t *out);

/* ---------------------------------------------------------------- int map */

/* Open-addressing map from int64 keys (any but INT64_MAX) to int64 values. */
typedef struct I64Map {
    int64_t *keys; /* key + 1; 0 = empty */
    int64_t *vals;
    size_t cap;
    size_t len;
} I64Map;

void i64map_init(I64Map *m);
void i64map_release(I64Map *m);
/* Inserts or overwrites. */
void i64map_put(I64Map *m, int64_t key, int64_t val);
/* Returns 1 and sets *out (may be NULL) when found, else 0. */
int i64map_get(const I64Map *m, int64_t key, int64_t *out);
/* Removes key; returns 1 when it was present. */
int i64map_del(I64Map *m, int64_t key);
/* Makes room for n keys in all without growing again. */
void i64map_reserve(I64Map *m, size_t n);
/* Iteration: for (size_t i = 0; i64map_next(m, &i, &k, &v);) visits each
 * entry once, in no particular order (k or v may be NULL). */
int i64map_next(const I64Map *m, size_t *pos, int64_t *key, int64_t *val);

/* ---------------------------------------------------------------- loading libraries */

/* A function of a library loaded at run time, and where its pointer goes
 * in the caller's table of function pointers. */
typedef struct DlSym {
    const char *name;
    size_t offset;
} DlSym;

/* Resolves each of syms[0..n) in lib (a dlopen handle) into table. On a
 * missing name returns 0 with "<what> has no <name>" in err. */
int dl_bind(void *lib, const DlSym *syms, size_t n, void *table, const char *what, char *err,
            size_t err_cap);

/* ---------------------------------------------------------------- http */

/* A small HTTP POST client over libcurl: the one seam through which coderag
 * talks to embedding and LLM endpoints (tests stand a loopback server behind
 * it). libcurl types never leave base/http.c; the library initialises itself
 * once, thread-safely, on first use. */

/* Receives the body of a 2xx response as it arrives (for streaming clients,
 * e.g. server-sent events); returns 0 to go on, non-zero to stop the
 * transfer (http_post then fails with CR_ECANCELED). */
typedef int (*HttpDataFn)(void *ud, const char *data, size_t len);
/* Polled during transfers and backoff waits; non-zero cancels (CR_ECANCELED). */
typedef int (*HttpCancelFn)(void *ud);

typedef struct HttpRequest {
    const char *url;            /* http:// or https:// only; redirects are not followed */
    const char *const *headers; /* "Name: value" lines; values never appear in messages */
    size_t n_headers;           /* how many */
    const char *body;           /* POST body (may be NULL when body_len is 0) */
    size_t body_len;            /* bytes */
    long connect_timeout_ms;    /* 0: 5000 */
    long timeout_ms;            /* whole transfer, per attempt; 0: 60000 */
    size_t max_response_bytes;  /* body cap; 0: 16 MiB */
    int max_retries;            /* further attempts after the first; 0: none */
    long retry_base_ms;         /* first wait, doubled per retry, +0..25% jitter; 0: 200 */
    long retry_max_ms;          /* cap on one wait, Retry-After included; 0: 10000 */
    uint64_t seed;              /* jitter seed; 0: derived from the clock */
    HttpDataFn on_data;         /* optional: 2xx bodies go here instead of the response */
    void *data_ud;              /* passed to on_data */
    HttpCancelFn cancel;        /* optional */
    void *cancel_ud;            /* passed to cancel */
} HttpRequest;

typedef struct HttpResponse {
    long status;  /* HTTP status of the last attempt; 0 when none arrived */
    StrBuf body;  /* its body (with on_data set: only non-2xx bodies), NUL-terminated */
    int attempts; /* requests made */
} HttpResponse;

/* POSTs req->body to req->url. Retries with exponential backoff on transport
 * errors (refused, reset, cut short), HTTP 429 and 5xx, waiting for a
 * numeric Retry-After instead when the server sends one; never retries a
 * timeout, other 4xx, or a 2xx body already handed to on_data.
 *
 * Always initialises *out (release it with http_response_release, also on
 * failure). Returns CR_OK for a 2xx status. Otherwise: CR_EHTTP with the
 * status and body in *out for a non-2xx status; CR_EHTTP for transport
 * errors (e->msg says "unreachable" when no connection could be made);
 * CR_ETIMEOUT; CR_ETOOBIG when the body passes the cap (the transfer stops
 * there, nothing past the cap is allocated); CR_ECANCELED; CR_EINVAL for a
 * bad request. e->msg is one line naming the URL as http_redact_url shows
 * it, the curl reason and, for a status, a sanitised body excerpt; it
 * never contains a header value. */
CrErr http_post(const HttpRequest *req, HttpResponse *out, ErrInfo *e);
void http_response_release(HttpResponse *r);

/* Completes an OpenAI-style base URL with an endpoint ("embeddings",
 * "chat/completions"): base + "/v1/" + endpoint, or base + "/" + endpoint
 * when base already ends in "/v1"; one trailing slash on base is ignored.
 * Caller frees. */
char *http_endpoint_url(const char *base, const char *endpoint);

/* Appends url to sb as it may be shown or logged (status, messages, logs):
 * user:password@ becomes "***@", the value of every query parameter whose
 * name looks like a credential (key, token, pass, pwd, secret, sig, auth,
 * cred, session, in any case: api_key, access_token, ...) becomes "***",
 * the #fragment is dropped and bytes outside printable ASCII become '?'.
 * The one way a configured URL reaches a person. */
void http_redact_url(StrBuf *sb, const char *url);

/* The "Authorization: Bearer <key>" header for the key in environment
 * variable env (caller wipes and frees it; *key, when asked for, points
 * into the environment). No variable name, or an empty or unset variable
 * (logged, naming who wants it): CR_OK with *header NULL. A key with a line
 * break: CR_EINVAL (it would split the header). */
CrErr http_bearer_from_env(const char *env, const char *who, char **header, const char **key,
                           ErrInfo *e);

#endif
