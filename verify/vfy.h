/*
 * vfy.h - citation checking. Finds the citations an answer writes
 * ("[path:a-b]", "[path:a]", several in one bracket separated by ';' or ','),
 * normalises their paths against the workspace root, checks each one against
 * the files on disk and the packed context, removes the ones that fail from
 * the answer text and, when none is left but there was context, cites the
 * best context item itself.
 *
 * The checks run against a VfySource (the few questions verification asks of
 * the workspace) so they can be tested without an index; vfy_source_for_store
 * answers them from an IdxStore.
 */
#ifndef CODERAG_VFY_H
#define CODERAG_VFY_H

#include "base.h"
#include "idx.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- results */

/* A citation that passed every check. */
typedef struct VfyCitation {
    char *path;                    /* relative to the root, '/'-separated; owned */
    uint32_t start_line, end_line; /* 1-based, inclusive */
    char *symbol;                  /* of the context item it overlaps most; owned, never NULL */
    int verified;                  /* 1: every check passed (all entries, for now) */
    const char *source; /* static: "model" (written by the LLM) or "auto" (by the server) */
    char anchor[17];    /* idx_hash_text of the cited lines as they are now */
} VfyCitation;

/* A citation that failed a check, as it was written. */
typedef struct VfyRejected {
    char *text; /* e.g. "[pkg/mod.py:12-30]" (the part, for a bracket with several); owned */
    const char *reason; /* static: one of the vfy_reason_name strings */
} VfyRejected;

/* Why a citation was rejected, in the order the checks run. */
typedef enum {
    VFY_OK,
    VFY_MALFORMED,      /* cannot be read as path + line range (e.g. "a.py:9-3", "a.py:x") */
    VFY_OUTSIDE,        /* the path leaves the workspace root */
    VFY_FILE_NOT_FOUND, /* not an indexed file (or gone from disk) */
    VFY_OUT_OF_RANGE,   /* line 0, or past the end of the file */
    VFY_NOT_IN_CONTEXT, /* overlaps no packed context item */
    VFY_STALE,          /* the cited packed lines changed on disk since packing */
} VfyReason;

/* "ok", "malformed", "outside-workspace", "file-not-found", "out-of-range",
 * "not-in-context", "stale" (SPEC.md's strings). Static; never NULL. */
const char *vfy_reason_name(VfyReason r);

/* Free arrays of results (and their strings); accept NULL. */
void vfy_citations_free(VfyCitation *v, size_t n);
void vfy_rejected_free(VfyRejected *v, size_t n);

/* ---------------------------------------------------------------- the workspace seam */

typedef struct VfySource {
    /* Absolute workspace root (a trailing '/' is ignored). Borrowed. */
    const char *root;
    /* 1 when the relative path is an indexed file. */
    int (*is_indexed)(void *ud, const char *path);
    /* As idx_read_lines: appends lines start..end (1-based, inclusive) of the
     * relative path as they are now, and the file's line count to *out_total.
     * CR_EINVAL: range outside the file; CR_ENOENT, CR_EIO, CR_ETOOBIG,
     * CR_EBINARY, CR_EUTF8, CR_EOUTSIDE: the file is gone or unreadable;
     * anything else (CR_EDB, ...) aborts verification. */
    CrErr (*read_lines)(void *ud, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                        uint32_t *out_total, ErrInfo *e);
    void *ud;
} VfySource;

/* Fills src with callbacks over an open store (root = idx_root). A file is
 * "indexed" when it has at least one chunk. The store must outlive src. */
void vfy_source_for_store(VfySource *src, IdxStore *st);

/* ---------------------------------------------------------------- parsing */

/* One citation found in an answer. A bracket "[a.py:1-2; b.py:7]" gives one
 * mention per part; all parts of a bracket share group_off/group_len. */
typedef struct VfyMention {
    size_t group_off, group_len;   /* the whole bracket, '[' to ']' */
    size_t off, len;               /* this part, trimmed */
    char *path;                    /* as written, trimmed of spaces and quotes; owned */
    uint32_t start_line, end_line; /* as written; end == start for "[a.py:7]" */
    int malformed;                 /* looks like a citation but the lines do not parse */
} VfyMention;

/* Finds the citations in text[0..len). A bracket counts when each of its
 * parts is "PATH:LINES" (or "PATH#LINES", or bare LINES after a part with a
 * path) where PATH has no spaces and ends in ".py"/".pyi" or contains '/',
 * and LINES is "a", "a-b" (also "La-Lb", en/em dash, spaces). Escaped
 * brackets ("\[") and brackets spanning lines are not citations. Returns the
 * number found; *out (caller frees with vfy_mentions_free) is NULL when 0. */
size_t vfy_parse(const char *text, size_t len, VfyMention **out);
void vfy_mentions_free(VfyMention *v, size_t n);

/* Normalises a cited path to one relative to root: trims, strips a file://
 * scheme (percent-decoding it, "file://localhost/" too), makes an absolute
 * path inside root relative, drops "." and empty components and resolves
 * ".." lexically (symlinks are not followed). *out is owned by the caller.
 * Errors: CR_EOUTSIDE (absolute path outside root, or ".." above it),
 * CR_EINVAL (empty, the root itself, or a NUL byte in a decoded URI). */
CrErr vfy_normalize_path(const char *root, const char *path, char **out);

/* ---------------------------------------------------------------- checking */

/* One packed context item, as given to the answer step. */
typedef struct VfyContextItem {
    const char *path;              /* relative, '/'-separated */
    uint32_t start_line, end_line; /* 1-based, inclusive */
    const char *symbol;            /* name to report for citations of it; NULL: "" */
    const char *text;              /* the packed lines start..end, '\n'-separated */
    size_t text_len;
} VfyContextItem;

/* Who wrote the answer: the citations of an LLM are "model", those the
 * server wrote (extractive answers, the fallback) "auto". */
typedef enum { VFY_AUTHOR_MODEL, VFY_AUTHOR_SERVER } VfyAuthor;

typedef struct VfyResult {
    char *answer;           /* the answer without rejected citations, the kept ones
                             * rewritten as "[path:a-b]"; owned */
    VfyCitation *citations; /* unique by path and range, in order of first appearance */
    size_t n_citations;
    VfyRejected *rejected; /* unique by text and reason */
    size_t n_rejected;
} VfyResult;

/* Checks every citation of answer[0..len) in order: well-formed, inside the
 * workspace, file indexed, range inside the file, overlapping a context item
 * of the same path, and the overlapping lines unchanged since they were
 * packed. When no citation survives and ctx is not empty, the first context
 * item that passes the same checks is cited with source "auto" (the answer
 * text is left as it is). Fills *out (release with vfy_result_release).
 * Errors: only the src->read_lines errors that abort (see VfySource); *out
 * is then empty. */
CrErr vfy_check(const VfySource *src, const char *answer, size_t len, const VfyContextItem *ctx,
                size_t n_ctx, VfyAuthor author, VfyResult *out, ErrInfo *e);
void vfy_result_release(VfyResult *r);

#endif
