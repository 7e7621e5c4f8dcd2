/*
 * vfy.h - citation checking. Finds the citations an answer writes, in every
 * form an LLM tends to use (see vfy_parse), normalises their paths against
 * the workspace root, checks each one against the files on disk and the
 * packed context, removes the ones that fail from the answer text and, when
 * none is left but there was context, cites the best context item itself.
 *
 * Every kept citation carries a content anchor (the symbol it cites and a
 * hash of the cited lines); vfy_anchor_resolve re-finds those lines in a
 * file's current text after the user edits it.
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

/* At most this many citations of one answer are checked; an answer with more
 * is cut before the first unchecked one, and says so (VfyResult.truncated). */
#define VFY_MAX_CITATIONS 1000

/* ---------------------------------------------------------------- results */

/* A citation that passed every check. */
typedef struct VfyCitation {
    char *path;                    /* relative to the root, '/'-separated; owned */
    uint32_t start_line, end_line; /* 1-based, inclusive */
    char *symbol;                  /* of the context item it overlaps most; owned, never NULL */
    int verified;                  /* 1: every check passed (all entries, for now) */
    const char *source; /* static: "model" (written by the LLM) or "auto" (by the server) */
    /* static, who chose the lines (docs/protocol.md, "Citation origin"):
     * "model" (the LLM wrote it, the checks passed), "extractive" (the
     * server's own answer text cites it) or "fallback" (the server's pick:
     * the LLM's answer cited nothing that passed, so the best context item
     * is cited; the answer text does not mention it) */
    const char *origin;
    char anchor[17]; /* vfy_anchor_hash of the cited lines as they are now */
} VfyCitation;

/* A citation that failed a check, as it was written. */
typedef struct VfyRejected {
    char *text;         /* e.g. "[pkg/mod.py:12-30]", "`a.py:3`", "[see](a.py#L3)" (for a
                         * bracket with several parts: "[path:part]"); owned */
    const char *reason; /* static: one of the vfy_reason_name strings */
} VfyRejected;

/* Why a citation was rejected, in the order the checks run. */
typedef enum {
    VFY_OK,
    VFY_MALFORMED,      /* cannot be read as path + line range (e.g. "a.py:9-3", "a.py:x") */
    VFY_OUTSIDE,        /* the path, ".." and symlinks resolved, leaves the workspace root */
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
    /* Absolute workspace root (a trailing '/' is ignored). Borrowed. When it
     * exists on disk, cited paths are also resolved with realpath(3) and
     * must stay under realpath(root): a symlink (file or directory
     * component) that points outside is VFY_OUTSIDE. */
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

/* How a citation was written. */
typedef enum {
    VFY_FORM_BRACKET, /* "[a.py:3-5]", "[a.py#L3]", "[a.py:1-2; b.py:7]", "[a.py:1-2, 5]" */
    VFY_FORM_CODE,    /* "`a.py:3-5`", "`a.py#L3`" (the whole code span), "`a.py`:3" */
    VFY_FORM_BARE,    /* "a.py:3-5", "pkg/a.py#L3-L5", "file:///srv/ws/a.py:3" in prose */
    VFY_FORM_LINK,    /* "[text](a.py#L3-L5)", "[text](a.py:3-5)" */
    VFY_FORM_PROSE,   /* "a.py, lines 3-5", "a.py line 3", "`a.py` (lines 3-5)",
                       * "\"a.py\", line 3", "[a.py, lines 3-5]" */
} VfyForm;

/* One citation found in an answer. A bracket "[a.py:1-2; b.py:7]" gives one
 * mention per part; all parts of a bracket share group_off/group_len. Every
 * other form is one mention whose group is all of it as written (backticks,
 * link target, "lines" included). */
typedef struct VfyMention {
    size_t group_off, group_len; /* the whole written citation: '[' to ']', '`' to '`', ... */
    size_t off, len;             /* this part, trimmed (== the group but for brackets) */
    size_t label_off, label_len; /* VFY_FORM_LINK: the link text between '[' and ']' */
    VfyForm form;
    char *path;                    /* as written, trimmed of spaces and quotes; owned */
    uint32_t start_line, end_line; /* as written; end == start for "[a.py:7]" */
    int malformed;                 /* looks like a citation but the lines do not parse */
    /* "[NAME:LINES]" alone in its brackets, NAME a file name without
     * extension or folder ("[cli:3]", "[Makefile:2]"): as likely prose
     * ("[x:1]"), so vfy_check takes it for a citation only when NAME is an
     * indexed file, and otherwise leaves it as text. */
    int weak;
} VfyMention;

/* Finds the citations in text[0..len), in order, never overlapping:
 *
 *   [PATH:LINES]         several parts separated by ';' or ',', a part may be
 *                        bare LINES after one with a path; PATH#LINES too
 *   `PATH:LINES`         a whole code span (`PATH#LINES`, `[PATH:LINES]` too);
 *                        also `PATH`:LINES
 *   [text](PATH#LINES)   a markdown link; also (PATH:LINES), (<PATH#LINES>)
 *   PATH:LINES           in prose; PATH#LINES too
 *   PATH, lines A-B      also "PATH, line A", "PATH lines A-B", "PATH (lines
 *                        A-B)", "[PATH, lines A-B]", with PATH bare, in
 *                        backticks or in quotes
 *
 * LINES is "a", "a-b", "La-Lb", "a–b" (en or em dash), "a..b" or "a to b".
 * PATH has no spaces and contains '/' or is a file name with an extension
 * ("main.c", "README.md", "x+y.tsx") or a dot-file (".env"); it may be
 * "./"-relative, absolute or a file:// URI. Prose forms ask more, to keep
 * false positives out ("example.com:8080"): PATH starts with '/', "./",
 * "../" or "~/", or ends in an extension and either contains '/' or has an
 * extension the index reads (idx_is_source_path); the lines
 * start at a word boundary and are followed by one. Not citations: escaped
 * brackets ("\["), brackets spanning lines or right after an identifier
 * ("x[a/b:3]"), URLs other than file://, anything inside a fenced code
 * block or inside a code span that is not itself one citation.
 *
 * A citation-like thing whose lines do not read ("[a.py:9-3]", "[a.py:x]",
 * "[a.py:3 (f)]", "a.py:99999999999", "a.py:12:5", "`a.py:7-2`") is
 * returned with malformed set and lines 0. Outside brackets the lines must
 * at least start with a number ("`a.py::test_f`" is no citation).
 *
 * Returns the number found; *out (caller frees with vfy_mentions_free) is
 * NULL when 0. */
size_t vfy_parse(const char *text, size_t len, VfyMention **out);
void vfy_mentions_free(VfyMention *v, size_t n);

enum {
    /* Only the [PATH:LINES] form, for server-written text (code spans and
     * fenced blocks are still skipped). */
    VFY_PARSE_BRACKETS_ONLY = 1 << 0,
};

/* vfy_parse with options: flags (VFY_PARSE_*), and at most max mentions
 * (a bracket's parts are never split). *out_stop (may be NULL) receives the
 * offset of the first citation left out, or len when none was. */
size_t vfy_parse_ex(const char *text, size_t len, unsigned flags, size_t max, VfyMention **out,
                    size_t *out_stop);

/* Normalises a cited path to one relative to root: trims, then reads it as
 * base.h's path_relative does (a file:// URI percent-decoded up to '?' or
 * '#', "file://localhost/" too; an absolute path inside root made
 * relative; "." and empty components dropped, ".." resolved lexically;
 * symlinks are not followed here, vfy_check does that).
 * *out is owned by the caller.
 * Errors: CR_EOUTSIDE (absolute path outside root, ".." above it, a URI of
 * another host), CR_EINVAL (empty, the root itself, a bad escape or a NUL
 * byte in a URI). */
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
 * server wrote (extractive answers, the fallback) "auto". Server text is
 * parsed for the [PATH:LINES] form only. */
typedef enum { VFY_AUTHOR_MODEL, VFY_AUTHOR_SERVER } VfyAuthor;

typedef struct VfyResult {
    char *answer;           /* the answer without rejected citations, the kept ones
                             * rewritten as "[path:a-b]"; owned */
    size_t answer_len;      /* bytes (the answer may hold NUL bytes it was given) */
    VfyCitation *citations; /* unique by path and range, in order of first appearance */
    size_t n_citations;
    VfyRejected *rejected; /* unique by text and reason */
    size_t n_rejected;
    int truncated; /* 1: more than VFY_MAX_CITATIONS; the answer was cut and says so */
} VfyResult;

/* Checks every citation of answer[0..len) in order: well-formed, inside the
 * workspace (".." and symlinks resolved), file indexed, range inside the
 * file, overlapping a context item of the same path, and the overlapping
 * lines unchanged since they were packed.
 *
 * The answer text is passed through byte for byte (invalid UTF-8 too) but for
 * the citations: kept ones become "[path:a-b]" (a link keeps its text before
 * it: "text [path:a-b]"); rejected ones are removed, and with them the blank
 * or the empty "()", "[]" or "``" they leave (a link keeps its text, unless
 * that text is itself a path or citation).
 *
 * When no citation survives and ctx is not empty, the first context item that
 * passes the same checks is cited with source "auto" and origin "fallback"
 * (the answer text is left as it is). Citations the text holds have origin
 * "model" (author VFY_AUTHOR_MODEL) or "extractive" (VFY_AUTHOR_SERVER). Fills *out (release with
 * vfy_result_release). Errors: only the src->read_lines errors that abort (see VfySource); *out is
 * then empty. */
CrErr vfy_check(const VfySource *src, const char *answer, size_t len, const VfyContextItem *ctx,
                size_t n_ctx, VfyAuthor author, VfyResult *out, ErrInfo *e);
void vfy_result_release(VfyResult *r);

/* The path checks of a citation alone, for a path a client names (the MCP
 * read tool): normalised against src->root, inside it with ".." and
 * symlinks resolved, and an indexed file (so never the index directory).
 * VFY_OK with *out_rel set (relative; caller frees), else VFY_MALFORMED,
 * VFY_OUTSIDE or VFY_FILE_NOT_FOUND with *out_rel NULL. */
VfyReason vfy_check_path(const VfySource *src, const char *path, char **out_rel);

/* ---------------------------------------------------------------- anchors */

/* Where a citation pointed, and what was there: enough to re-find the lines
 * after the file is edited. */
typedef struct VfyAnchor {
    const char *path;              /* relative; its language re-finds the symbol; borrowed */
    uint32_t start_line, end_line; /* 1-based, inclusive, as cited */
    const char *symbol;            /* dotted ("Class.method"); NULL or "": none */
    char hash[17];                 /* vfy_anchor_hash of the cited lines */
} VfyAnchor;

/* Hash of lines of text, insensitive to line endings: each line is taken
 * without its "\n" or "\r\n" and ended with "\n" (a last line without one
 * included). For '\n'-terminated text without '\r' it equals idx_hash_text. */
void vfy_anchor_hash(const char *text, size_t len, char out[17]);

/* Fills a with the anchor of a citation; a borrows c's strings. */
void vfy_citation_anchor(const VfyCitation *c, VfyAnchor *a);

typedef enum {
    VFY_ANCHOR_UNCHANGED, /* the lines are where they were, as they were */
    VFY_ANCHOR_SHIFTED,   /* the same lines, elsewhere (lines added or removed around) */
    VFY_ANCHOR_MOVED,     /* content changed; the symbol's definition is found here */
    VFY_ANCHOR_LOST,      /* neither the lines nor the symbol are found */
} VfyAnchorStatus;

/* "unchanged", "shifted", "moved", "lost". Static; never NULL. */
const char *vfy_anchor_status_name(VfyAnchorStatus s);

typedef struct VfyAnchorMatch {
    VfyAnchorStatus status;
    uint32_t start_line, end_line; /* 1-based, inclusive; 0 when lost */
} VfyAnchorMatch;

/* Finds the anchored lines in the file's current text[0..len) (e.g. an
 * unsaved editor buffer; '\n' or "\r\n" line ends, NUL bytes allowed):
 * UNCHANGED when the hash matches at the cited lines; else SHIFTED to the
 * nearest block of as many lines with the same hash (nearby first, then the
 * whole file); else MOVED to the symbol's definition as the index chunks
 * a->path's language (idx_find_definition: the same symbol, else the same
 * name in a class of the same name, else the same name; then the nearest),
 * spanning the whole definition (not for a symbol that names the module of
 * a->path, as module-level code is named; nor without a path of a language
 * the index reads); else LOST. Also returns out->status. */
VfyAnchorStatus vfy_anchor_resolve(const VfyAnchor *a, const char *text, size_t len,
                                   VfyAnchorMatch *out);
/* The same, the definition found with sh's compiled queries
 * (idx_find_definition_shared; NULL: compiled for the call). */
VfyAnchorStatus vfy_anchor_resolve_shared(IdxShared *sh, const VfyAnchor *a, const char *text,
                                          size_t len, VfyAnchorMatch *out);

#endif
