/*
 * rtv.h - answering a question from the index: retrieve candidate chunks
 * (BM25, dense vectors, graph expansion), pack the best of them into a
 * character budget, write an answer that cites them (extractively, or by an
 * OpenAI-compatible chat completions endpoint) and verify its citations.
 */
#ifndef CODERAG_RTV_H
#define CODERAG_RTV_H

#include "base.h"
#include "idx.h"
#include "vfy.h"

#include <stddef.h>
#include <stdint.h>

/* Longest question accepted, in bytes. */
#define RTV_MAX_QUESTION 8192
/* Packed-context budget in characters (code points) when the request says 0. */
#define RTV_DEFAULT_BUDGET 12000
/* The most items packed (and results an MCP search returns). */
#define RTV_MAX_CANDIDATES 50

typedef enum { RTV_MODE_AUTO, RTV_MODE_EXTRACTIVE, RTV_MODE_LLM } RtvMode;

/* LLM defaults: total time per attempt, time to connect, further attempts
 * after a 429, a 5xx or a failed connection, and the cap on the response
 * body (a streamed one included). */
#define RTV_LLM_TIMEOUT_MS 120000
#define RTV_LLM_CONNECT_TIMEOUT_MS 5000
#define RTV_LLM_RETRIES 2
#define RTV_LLM_MAX_RESPONSE ((size_t)4 << 20)

/* Called from inside rtv_ask as a streamed LLM answer arrives: `tokens` is
 * the number of content pieces received so far (servers send about one
 * token each), `chars` the bytes of answer text. Never called for
 * extractive answers. */
typedef void (*RtvProgressFn)(void *ud, size_t tokens, size_t chars);
/* Polled during the LLM request (also while waiting to retry); non-zero
 * cancels it and rtv_ask fails with CR_ECANCELED. */
typedef int (*RtvCancelFn)(void *ud);
/* Called from inside the LLM request as a streamed answer arrives, with the
 * whole text so far (unverified; not NUL-terminated). */
typedef void (*RtvTextFn)(void *ud, const char *text, size_t len);

/* One earlier turn of a conversation. */
typedef struct RtvTurn {
    const char *question;
    const char *answer;
} RtvTurn;

/* Turns of history used (the last ones), and their caps in bytes. */
#define RTV_MAX_TURNS 3
#define RTV_TURN_QUESTION_MAX 1000
#define RTV_TURN_ANSWER_MAX 4000

typedef struct RtvRequest {
    const char *question;               /* required; at most RTV_MAX_QUESTION bytes */
    size_t budget;                      /* characters of packed context; 0: RTV_DEFAULT_BUDGET */
    int use_bm25, use_dense, use_graph; /* ablation switches; all 1 by default */
    RtvMode mode;                       /* default RTV_MODE_AUTO */
    /* The LLM: an OpenAI-compatible base URL, completed with
     * http_endpoint_url(url, "chat/completions"); NULL or "": none. */
    const char *llm_url;
    const char *llm_model;       /* "model" of the request; NULL: left to the server */
    const char *llm_api_key_env; /* name of the environment variable holding the key, sent
                                  * as "Authorization: Bearer"; NULL: no key. The key is never
                                  * logged, stored, returned or put in a message. */
    long llm_timeout_ms;         /* per attempt, whole transfer; 0: RTV_LLM_TIMEOUT_MS */
    long llm_connect_timeout_ms; /* 0: RTV_LLM_CONNECT_TIMEOUT_MS */
    int llm_max_retries;         /* 0: RTV_LLM_RETRIES; negative: none */
    int llm_no_stream;           /* 1: ask for one JSON response instead of server-sent events */
    RtvProgressFn progress;      /* optional */
    void *progress_ud;
    RtvCancelFn cancel; /* optional */
    void *cancel_ud;
    RtvTextFn on_text; /* optional */
    void *text_ud;
    /* Earlier turns, oldest first (the last RTV_MAX_TURNS are used): they
     * go to the LLM as the conversation so far, and the last turn's
     * question is searched together with this one, as a prior: the
     * question alone is ranked too, and its candidates take turns with the
     * joined search's (its own first), so what it finds alone stays. */
    const RtvTurn *history;
    size_t n_history;
    /* A chunk (any piece) of the definition the question is about, e.g. the
     * one rtv_def_under found for an explanation; 0: none. Its whole
     * definition, however many pieces it is stored as, is the first context
     * item, outside the budget (the user asked about all of it) up to
     * RTV_FOCUS_MAX_CHARS (a longer one is cut at a line end); its callers
     * (the code graph's, up to 3) and then retrieval's other items, none
     * overlapping it, fill the budget. rtv_ask fails with
     * CR_ENOENT when the chunk is no longer indexed. */
    int64_t focus_chunk;
    /* The text of a file (root-relative path) that an editor shows unsaved,
     * or NULL to read the disk's; *len its length. Retrieval reads context
     * from it, with the index's line ranges carried onto it by a line diff,
     * and verification checks citations against it: what was shown is what
     * was checked. Called on the threads of rtv_ask_prepare and
     * rtv_ask_finish; the text must stay valid until the call returns.
     * NULL (the default): every file as it is on disk. */
    const char *(*buffer)(void *ud, const char *path, size_t *len);
    void *buffer_ud;
    /* 1: the extractive answer lists every context item (by default the
     * best few are quoted and the rest past RTV_ANSWER_FOLDED counted). */
    int answer_all;
} RtvRequest;

/* Most characters of a focus definition packed (RtvRequest.focus_chunk). */
#define RTV_FOCUS_MAX_CHARS 40000

/* Fills r with the defaults (no question, default budget, every retriever
 * on, mode auto, no LLM, streaming, default timeouts and retries, no hooks). */
void rtv_request_init(RtvRequest *r);

/* Which retrievers proposed an item (bit set). */
typedef enum { RTV_VIA_BM25 = 1, RTV_VIA_DENSE = 2, RTV_VIA_GRAPH = 4 } RtvVia;

/* One packed context item. */
typedef struct RtvItem {
    IdxChunk chunk;                /* the chunk it came from; owned */
    uint32_t start_line, end_line; /* packed span, 1-based inclusive (the chunk's, for now) */
    double score; /* fused relevance (BM25 relative to the top hit), at most 1.0 and
                   * never rising down the list: rtv_scores_by_rank */
    unsigned via; /* RtvVia bits */
    char *text;   /* the packed lines as read at packing time; owned */
} RtvItem;

typedef struct RtvTimings {
    double bm25_ms, dense_ms, graph_ms, pack_ms, llm_ms, verify_ms, total_ms;
} RtvTimings;

/* How well the index answers a question (rtv_match): strong, weak
 * (something related, little that matches) or none (nothing relevant). */
typedef enum { RTV_MATCH_STRONG, RTV_MATCH_WEAK, RTV_MATCH_NONE } RtvMatch;

/* What retrieval saw, for rtv_match. */
typedef struct RtvMatchSignals {
    double coverage; /* best share of the question's term weight among the top BM25 hits */
    size_t terms;    /* the question's distinct search terms */
    /* of those, the ones that cannot make a match by themselves: a
     * language's syntax words (idx_is_syntax_word) and words any question
     * may hold ("else", "explain", "anything"); when every term is one,
     * nothing is relevant */
    size_t empty_terms;
    size_t idents;     /* identifiers in the question (snake_case, CamelCase, dotted) */
    size_t idents_hit; /* of those, names of indexed definitions */
    size_t n_items;    /* packed context items */
    /* of the question's words that can make a match, the share the first
     * RTV_MATCH_TOP packed items' text mentions (at a word start, a plural
     * or tense ending aside): the evidence read, not only the best hit's
     * term weight; -1 when not measured */
    double context_share;
} RtvMatchSignals;

/* Packed items whose text the match reads (RtvMatchSignals.context_share). */
#define RTV_MATCH_TOP 3

/* Classifies; *why (may be NULL) gets one line saying why when not strong,
 * "" when strong. */
RtvMatch rtv_match(const RtvMatchSignals *sig, char *why, size_t why_size);
/* "strong", "weak", "none". Static. */
const char *rtv_match_name(RtvMatch m);

typedef struct RtvAnswer {
    char *answer; /* markdown with "[path:a-b]" citations; owned */
    RtvMode mode; /* the mode used: EXTRACTIVE or LLM */
    RtvMatch match;
    char match_reason[256]; /* one line, "" when strong */
    RtvMatchSignals signals;
    /* Why an LLM was configured (mode auto or llm) but the answer is
     * extractive, on one line without credentials, e.g. "the LLM timed out:
     * http://host/v1/chat/completions: Operation timed out after ..."; the
     * answer's first line says it too, unless nothing matched (the LLM is
     * not asked then). NULL when the LLM answered or none is configured, for
     * a client to show (window/showMessage). Owned. */
    char *fallback_reason;
    RtvItem *items; /* the packed context, best first */
    size_t n_items;
    VfyCitation *citations; /* verified citations, in order of appearance */
    size_t n_citations;
    VfyRejected *rejected; /* citations that failed a check */
    size_t n_rejected;
    RtvTimings timings;
    size_t n_candidates; /* ranked candidates before packing */
    double coverage;     /* best BM25 hit's share of the question's term weight, 0-1 */
} RtvAnswer;

/* A line map between a file as the index read it (the disk's text) and an
 * editor's unsaved buffer of it (RtvRequest.buffer): a line diff (Myers',
 * up to 512 edits; past that, lines between the first and last change
 * follow the nearest unchanged line). NULL when the file cannot be read. */
typedef struct RtvLineMap RtvLineMap;
RtvLineMap *rtv_line_map_new(IdxStore *st, const char *path, const char *buf, size_t len);
void rtv_line_map_free(RtvLineMap *lm);
/* Where a line (1-based) is in the other text: an unchanged line's own
 * place; a changed or added one moves as the nearest unchanged line before
 * it did. Clamped to the other text's lines. */
uint32_t rtv_line_map_to_buffer(const RtvLineMap *lm, uint32_t disk_line);
uint32_t rtv_line_map_to_disk(const RtvLineMap *lm, uint32_t buf_line);

/* Answers req over the store: candidates from the enabled legs, packed best
 * first into the budget, then an answer.
 *
 * Extractive (mode extractive, or auto without llm_url): the answer lists
 * the packed items grouped by file, each cited; its citations are "auto".
 *
 * LLM (mode llm, or auto with llm_url): the packed items, and nothing else
 * from the workspace, go to the chat endpoint as numbered blocks with the
 * question (see rtv_prompt_user); the reply, streamed unless llm_no_stream,
 * goes through vfy_check as the model's: citations that fail a check are
 * removed from the text and listed in `rejected`, and when none is left the
 * best context item is cited with source "auto". With no packed item the
 * LLM is not asked.
 *
 * In auto mode an LLM that fails (unreachable, HTTP error after retries,
 * timeout, response over the cap, invalid JSON, a stream cut before its
 * end, a refusal or an empty answer) gives the extractive answer, headed by
 * a line that says why, with fallback_reason set; only a cancel fails.
 *
 * Release *out with rtv_answer_release, also after a failure (it is then
 * empty). Errors: CR_EINVAL (no or blank question), CR_ETOOBIG (question
 * too long), CR_ECANCELED (req->cancel), in mode llm CR_EHTTP (no llm_url,
 * or any LLM failure but a timeout; e->msg says which) and CR_ETIMEOUT, and
 * the store's errors (CR_EDB, CR_EIO). It keeps no state between questions:
 * the doors ask through workspace/'s ws_ask, which backs off a dead LLM. */
CrErr rtv_ask(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);
void rtv_answer_release(RtvAnswer *a);

/* rtv_ask in three steps, so that the LLM call can run on another thread
 * than the store's (a server's worker owns the store; its LLM pool does
 * not wait on it):
 *   rtv_ask_prepare (store): rank, pack, match; says whether the LLM is due;
 *   rtv_ask_llm (no store, any thread): the LLM's draft, when due;
 *   rtv_ask_finish (store): the draft (LLM or extractive) verified.
 * req must stay the same and valid through the three; out is owned by the
 * caller throughout (rtv_ask_llm only reads its items). The draft between
 * them is opaque. */
typedef struct RtvDraft RtvDraft;

/* A draft for one question; free with rtv_draft_free (accepts NULL). */
RtvDraft *rtv_draft_new(void);
void rtv_draft_free(RtvDraft *d);

CrErr rtv_ask_prepare(IdxStore *st, const RtvRequest *req, RtvAnswer *out, RtvDraft *d, ErrInfo *e);
/* Set by prepare: whether rtv_ask_llm is due before finish. */
int rtv_draft_wants_llm(const RtvDraft *d);
/* After prepare: the LLM is not asked and its failure is taken to be rc
 * with msg (e.g. an endpoint known to be down): finish then answers as
 * after that failure (extractively, said why, in auto mode). */
void rtv_draft_skip_llm(RtvDraft *d, CrErr rc, const char *msg);
/* Returns the LLM's outcome (CR_ECANCELED when req->cancel said so). */
CrErr rtv_ask_llm(const RtvRequest *req, const RtvAnswer *out, RtvDraft *d);
/* After rtv_ask_llm: the LLM's whole answer (NULL when it failed) and its
 * failure's message ("" when none). Borrowed; valid until finish. */
const char *rtv_draft_llm_text(const RtvDraft *d);
const char *rtv_draft_llm_msg(const RtvDraft *d);
CrErr rtv_ask_finish(IdxStore *st, const RtvRequest *req, RtvAnswer *out, RtvDraft *d, ErrInfo *e);

/* After prepare: checks a piece of an LLM's text (e.g. one citation as it
 * streams, "[a.py:3-5]") as finish will check the whole answer, against the
 * packed context of out; fills *vr (release with vfy_result_release).
 * Errors: vfy_check's. */
CrErr rtv_ask_check(IdxStore *st, const RtvRequest *req, const RtvAnswer *out, const char *text,
                    size_t len, VfyResult *vr, ErrInfo *e);

/* The retrieval half of rtv_ask alone: the same checks, ranking and packing,
 * so out->items is exactly the context rtv_ask would use, with no answer
 * text, citations or LLM call (out->answer is NULL). Release with
 * rtv_answer_release. Errors: as rtv_ask's but the LLM's. */
CrErr rtv_search(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);

/* The name an item is known by: the chunk's symbol, or its module's dotted
 * name for module-level code. Borrowed from the item. */
const char *rtv_item_symbol(const RtvItem *it);

/* "auto", "extractive", "llm". Static. */
const char *rtv_mode_name(RtvMode m);
/* Parses those names; returns 1 on success, 0 (leaving *out) otherwise. */
int rtv_mode_parse(const char *s, RtvMode *out);

/* ---------------------------------------------------------------- navigation */

/* Deterministic queries over the code graph, for hover, code lenses, call
 * hierarchy and the MCP tools. A definition is one function, method or class
 * however the indexer chunked it: a unit longer than the window limit is
 * stored as several pieces, and a class as its header run plus further runs
 * between its methods; all of them make one RtvDef. */

typedef struct RtvDef {
    IdxChunk head;                 /* its first piece: symbol, signature, docstring; owned */
    uint32_t start_line, end_line; /* from the first piece's start to the last piece's end */
    int64_t *pieces;               /* chunk ids of every piece, in line order; owned */
    size_t n_pieces;
} RtvDef;

void rtv_def_release(RtvDef *d);
/* Releases n definitions and frees the array; accepts NULL. */
void rtv_defs_free(RtvDef *v, size_t n);

/* The definitions of a file (relative path), in line order, each once
 * however it is chunked; module-level code is not one. Caller frees with
 * rtv_defs_free. Errors: the store's. */
CrErr rtv_file_defs(IdxStore *st, const char *path, RtvDef **out, size_t *n_out, ErrInfo *e);

/* The definition a chunk is a piece of; for module-level code, that chunk
 * alone (head.kind IDX_KIND_MODULE). CR_ENOENT when the chunk is unknown. */
CrErr rtv_def_of_chunk(IdxStore *st, int64_t chunk_id, RtvDef *out, ErrInfo *e);

/* The innermost definition of path whose lines (first to last piece)
 * contain `line` (1-based). CR_ENOENT when the line is in none. */
CrErr rtv_def_at(IdxStore *st, const char *path, uint32_t line, RtvDef *out, ErrInfo *e);

/* The definition that `word` (an identifier) at `line` (1-based) of path
 * names, for hover, explain and go-to: the innermost definition of path
 * named word whose lines contain line (the cursor is on its name, or in its
 * own body); else word in the scopes reachable from there, innermost first
 * (in Headers.update, "copy" is Headers.copy before a module-level copy);
 * else the file's definition named word nearest to line; only when path
 * defines no word, the index's first definition of that name elsewhere
 * (rtv_defs_named). Its head.symbol is qualified ("Class.method"). Release
 * with rtv_def_release. CR_ENOENT when the index defines no word; CR_EINVAL
 * without path or word; the store's errors. */
CrErr rtv_def_under(IdxStore *st, const char *path, uint32_t line, const char *word, RtvDef *out,
                    ErrInfo *e);

/* The definitions of a name: a qualified dotted name ("pkg.mod.Class.meth"),
 * or when none matches, every definition whose last component is the name's
 * last component. Ranked: with near_path set, a definition of that file whose
 * lines contain near_line first, then the others of that file, then the rest
 * in index order. At most max (0: all) are returned; *n_total (may be NULL)
 * receives how many there are. Caller frees with rtv_defs_free. */
CrErr rtv_defs_named(IdxStore *st, const char *name, const char *near_path, uint32_t near_line,
                     size_t max, RtvDef **out, size_t *n_out, size_t *n_total, ErrInfo *e);

/* Definitions for a workspace-wide symbol query (LSP workspace/symbol):
 * those named exactly `query` first, then those BM25 finds for it whose
 * name holds the letters of one of the query's words in order
 * (case-insensitive), each once;
 * at most max. An empty query gives none. Caller frees with rtv_defs_free. */
CrErr rtv_symbols(IdxStore *st, const char *query, size_t max, RtvDef **out, size_t *n_out,
                  ErrInfo *e);

/* One edge of the code graph seen from a definition. */
typedef struct RtvRef {
    IdxEdgeKind kind;
    RtvDef other; /* the definition (or module code) at the far end; owned */
    /* The piece of the referring side the reference is written in: of
     * `other` for incoming references, of the queried definition for
     * outgoing ones (the graph records chunks, not call-site lines). */
    uint32_t at_start, at_end;
    /* A call made through a macro: the macro's symbol (the definition
     * calls the macro, whose body calls `other`, or the reverse); else NULL. */
    char *via;
    /* The preprocessor condition the reference is compiled under (the
     * piece it is written in, and the macro it goes through), NULL when
     * none, and whether the build compiles it (idx_pp_cond). */
    char *cond;
    IdxBuilt built;
} RtvRef;

/* Bit of an edge kind in a kinds mask; RTV_REFS_ALL: calls, imports,
 * bases and raises (the default; not IDX_EDGE_CONTAIN: class membership is
 * structure, not a reference). Calls (IDX_EDGE_CALL) go through macros:
 * a macro's callers call what its body calls (RtvRef.via). */
#define RTV_REF_BIT(kind) (1u << (kind))
#define RTV_REFS_ALL                                                                               \
    (RTV_REF_BIT(IDX_EDGE_IMPORT) | RTV_REF_BIT(IDX_EDGE_CALL) | RTV_REF_BIT(IDX_EDGE_INHERIT) |   \
     RTV_REF_BIT(IDX_EDGE_RAISE))
/* Every kind a client may ask for: RTV_REFS_ALL, type uses and functions
 * named as values (IDX_EDGE_EXPAND is followed by calls, never listed). */
#define RTV_REFS_ANY (RTV_REFS_ALL | RTV_REF_BIT(IDX_EDGE_TYPE) | RTV_REF_BIT(IDX_EDGE_REFERENCE))

/* The references to (outgoing 0: callers, importers, subclasses, raisers) or
 * from (outgoing 1: callees, imported and raised definitions, bases) a
 * definition, over all its pieces, of the kinds in `kinds` (0:
 * RTV_REFS_ALL): one per far-end definition and kind, ordered by path and
 * line. Only edges the index resolved are returned, never guessed ones. At
 * most max (0: all) are materialised; *n_total (may be NULL) receives the
 * count. Caller frees with rtv_refs_free. Errors: the store's. */
CrErr rtv_refs(IdxStore *st, const RtvDef *d, int outgoing, unsigned kinds, size_t max,
               RtvRef **out, size_t *n_out, size_t *n_total, ErrInfo *e);
void rtv_refs_free(RtvRef *v, size_t n);

/* One variant of a definition: its pieces (lines start..end) written under
 * one preprocessor condition (a function defined once per platform in
 * #if/#elif/#else branches is one definition with a variant each). */
typedef struct RtvVariant {
    uint32_t start_line, end_line;
    char *cond; /* as written; NULL: none */
    IdxBuilt built;
} RtvVariant;

/* The variants of d, in line order; none (*n_out 0) when no piece is
 * under a condition. Caller frees with rtv_variants_free. */
CrErr rtv_def_variants(IdxStore *st, const RtvDef *d, RtvVariant **out, size_t *n_out, ErrInfo *e);
void rtv_variants_free(RtvVariant *v, size_t n);
/* Whether some variant is built: yes if one is, no if none can be. */
IdxBuilt rtv_variants_built(const RtvVariant *v, size_t n);

/* What a code lens shows: distinct callers of d, and distinct other
 * referrers (importers, subclasses, raisers/catchers). */
CrErr rtv_def_counts(IdxStore *st, const RtvDef *d, size_t *out_callers, size_t *out_refs,
                     ErrInfo *e);

/* What the graph cannot see, in one paragraph, for clients to show beside
 * references of definitions of path's language (what its row says it
 * cannot see; path NULL or a row that says nothing: what dynamic code
 * hides in general), appended to out. */
void rtv_graph_limits(const char *path, StrBuf *out);

#endif
