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

/* The program's one result enum: X(name, message). 0 is success. */
#define CR_ERRNO_MAP(X)                                                                            \
    X(OK, "success")                                                                               \
    X(EUSAGE, "usage error")                                                                       \
    X(EINVAL, "invalid argument")                                                                  \
    X(EIO, "I/O error")                                                                            \
    X(ENOENT, "no such file or entry")                                                             \
    X(ETOOBIG, "input too large")                                                                  \
    X(EBINARY, "binary file")                                                                      \
    X(EUTF8, "not valid UTF-8")                                                                    \
    X(EDB, "index database error")                                                                 \
    X(ESCHEMA, "index schema mismatch")                                                            \
    X(ECORRUPT, "index is inconsistent")                                                           \
    X(EPARSE, "parse error")                                                                       \
    X(EVECTOR, "vector index error")                                                               \
    X(EHTTP, "endpoint error")                                                                     \
    X(ETIMEOUT, "timed out")                                                                       \
    X(ECANCELED, "canceled")                                                                       \
    X(EOUTSIDE, "path outside the workspace")

typedef enum {
#define CR_X(name, msg) CR_##name,
    CR_ERRNO_MAP(CR_X)
#undef CR_X
        CR__COUNT
} CrErr;

/* Static message for a code; never NULL. */
const char *cr_strerror(CrErr code);

/* Optional detail a callee fills on failure. Callers may pass NULL. */
typedef struct ErrInfo {
    CrErr code;
    char msg[512];
} ErrInfo;

/* Sets e->code and formats e->msg (when e is not NULL); returns code. */
CrErr err_set(ErrInfo *e, CrErr code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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
            size_t cr__c = (cap) ? (size_t)(cap) * 2 : 16;                                         \
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
void sb_grow(StrBuf *sb, size_t extra);
void sb_add(StrBuf *sb, const void *data, size_t len);
void sb_adds(StrBuf *sb, const char *s);
void sb_addc(StrBuf *sb, char c);
void sb_addf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(StrBuf *sb, const char *fmt, va_list ap);
/* Returns the buffer (never NULL; caller frees) and leaves sb empty without
 * allocating: releasing it afterwards is optional. */
char *sb_detach(StrBuf *sb, size_t *out_len);

/* Reads a whole file into sb (appending). Fails with CR_ETOOBIG past max_bytes
 * (0 = no cap) and CR_ENOENT/CR_EIO otherwise. */
CrErr sb_read_file(StrBuf *sb, const char *path, size_t max_bytes, ErrInfo *e);

/* ---------------------------------------------------------------- hashing */

/* A fast 64-bit non-cryptographic hash of bytes (stable across runs and
 * machines of the same endianness). */
uint64_t hash64(const void *data, size_t len);
/* Writes 16 lowercase hex digits and a NUL into out (17 bytes). */
void hash64_hex(uint64_t h, char out[17]);

/* ---------------------------------------------------------------- text */

/* True when data[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
int utf8_valid(const char *data, size_t len);
/* True when the bytes look binary: a NUL byte in the first 8 KiB. */
int looks_binary(const char *data, size_t len);

/* Number of lines as Python's ast counts them: split on '\n' only; a final
 * line without '\n' counts. */
size_t count_lines(const char *data, size_t len);

/* ---------------------------------------------------------------- time */

/* Monotonic milliseconds (fractional). */
double now_ms(void);

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

#endif
