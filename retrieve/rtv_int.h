/*
 * rtv_int.h - the steps of rtv_ask that need no store, on plain arrays, so
 * they can be unit-tested on synthetic candidates. Not for use outside
 * retrieve/ and its tests.
 */
#ifndef CODERAG_RTV_INT_H
#define CODERAG_RTV_INT_H

#include "rtv.h"

/* Characters (UTF-8 code points) in s[0..len): what budgets count. */
size_t rtv_chars(const char *s, size_t len);

/* Packing, one candidate at a time, best first: a candidate is taken when
 * its text fits in what is left of the budget and it overlaps no line of an
 * item already taken from the same file; what does not fit is skipped and
 * the walk goes on, until max_items are taken. */
typedef struct RtvPacker {
    size_t left; /* characters left */
    /* Packing stops once less than 1% of the budget is left: a unit that
     * small (two or three lines at 12,000) rarely answers anything, and
     * looking for one means reading every remaining candidate. */
    size_t min_left;
    size_t max_items;
    const RtvItem **taken;
    size_t n_taken;
} RtvPacker;

void rtv_packer_init(RtvPacker *p, size_t budget, size_t max_items);
void rtv_packer_release(RtvPacker *p);
/* Whether `it` is taken (it must stay valid while the packer lives). */
int rtv_packer_offer(RtvPacker *p, const RtvItem *it);
/* Takes `it` whatever its size, outside the budget (the focus of a
 * request): later offers may not overlap it. */
void rtv_packer_force(RtvPacker *p, const RtvItem *it);
/* Whether a piece of the definition `it` is a piece of (same path, symbol
 * and kind) is taken: packing by coverage offers such a piece only once
 * every other candidate has had its turn. */
int rtv_packer_has_def(const RtvPacker *p, const RtvItem *it);
/* Whether anything more could still be taken. */
int rtv_packer_open(const RtvPacker *p);

/* The packer over an array: writes the picked indexes, in order, to out_idx
 * (room for n) and returns how many. */
size_t rtv_pack_select(const RtvItem *cands, size_t n, size_t budget, size_t max_items,
                       size_t *out_idx);

/* What the extractive answer is written from. */
typedef struct RtvAnswerIn {
    IdxStore *st;          /* graph relations, definitions' first lines; NULL: none */
    const RtvRequest *req; /* how lines are read (unsaved buffers); may be NULL */
    const RtvItem *items;  /* the packed items, best first */
    size_t n;
    const char *words;     /* the question's search words (idx_query_words), or NULL */
    int64_t focus_chunk;   /* an explanation: items[0] is the definition asked about */
    int all;               /* list every item (none folded away) */
    int weak;              /* the match is weak or none: the lead says "closest", not "best" */
    const char *why_empty; /* said after "no indexed code matched" (may be NULL) */
    const char *notice;    /* a note at the end (may be NULL or "") */
} RtvAnswerIn;

/* The extractive answer over the packed items (best first), as a person
 * reads it: a lead of one to three sentences (the best definition, what its
 * doc comment or signature says, and the relations the code graph holds
 * between the definitions shown: calls, raises, subclasses, imports); then
 * up to RTV_ANSWER_SHOWN definitions in score order, each cited
 * "[path:a-b]" (from the definition's first line when that stays within
 * RTV_ANSWER_FIT lines, else "part k of n" with its first line quoted) with
 * the few lines that matter quoted in a fenced block as "  366 │ code";
 * then the rest, one line each (RTV_ANSWER_FOLDED of them unless `all`;
 * the others are counted), the best three by score, then those whose
 * names hold the most of `words` first; a name too long for its line loses its leading qualifiers.
 * Lines stay within 96 characters as shown, so a 100-column terminal gives each its row: the first
 * screen names a dozen definitions. An explanation (focus_chunk) shows the focus and then its
 * callers, each with its call lines. With no items the answer says that no indexed code matched,
 * followed by `why_empty`. Caller frees. */
#define RTV_ANSWER_SHOWN 3
#define RTV_ANSWER_FOLDED 12
#define RTV_ANSWER_FIT 60
char *rtv_extractive_answer(const RtvAnswerIn *in);

/* How many distinct words of `words` (lowercase, at most 64; wl their
 * lengths) line [s, s+n) mentions at a word start (after a non-alphanumeric,
 * or at a capital), so that "redirect" matches "redirects" and
 * "HttpRedirect" but not the middle of "misredirect". */
int rtv_line_mentions(const char *s, size_t n, const char *const *words, const size_t *wl,
                      size_t n_words);

/* Appends s on one line (line breaks become spaces), cut to max_chars
 * characters, with '[', ']' and '\\' escaped so that no citation can be read
 * in it. */
void rtv_add_escaped(StrBuf *sb, const char *s, size_t max_chars);

/* The verifier's view of the packed items. Borrows from items; caller frees
 * the array with free(). NULL when n is 0. */
VfyContextItem *rtv_vfy_context(const RtvItem *items, size_t n);

/* A candidate before it is loaded: a chunk, its fused score (best 1.0)
 * and the legs that found it. */
typedef struct RtvCand {
    int64_t chunk_id;
    int64_t file_id;
    IdxKind kind;
    double score;
    unsigned via;
    /* what the re-ranker reads besides: the BM25 score relative to the
     * leg's best, the dense leg's (0-1 between its last and best hit),
     * whether the unit is test code, how the graph reached it (1: a seed
     * references it, 2: it references a seed) */
    float bm25, dense;
    int test;
    int graph;
} RtvCand;

/* Multiplies each candidate's score by 1 + w ln(1 + f) / ln(1 + cap),
 * fanin[i] being f of v[i] (at most cap), and re-sorts best first. */
void rtv_central_prior(RtvCand *v, size_t n, const int *fanin, int cap, double w);

/* Blends each candidate's score with its file's: a file where several
 * definitions match is likelier to hold the rest of the answer.
 * score = (1 - beta) * score + beta * file, where a file's score is its best
 * candidate's plus half its second's plus a quarter its third's, relative to
 * the best file. Candidates without a file_id keep their score. Re-sorts
 * best first. */
void rtv_file_boost(RtvCand *v, size_t n, double beta);

/* The same over any grouping of candidates ranked best first: group[i] is
 * v[i]'s group (< 0: none, its score stays); a group's score is its best
 * candidate's plus half its second's plus a quarter its third's, relative
 * to the best group. Re-sorts best first. */
void rtv_group_blend(RtvCand *v, size_t n, const int64_t *group, double beta);

/* Sorts candidates best first (ties by chunk id, for stable output). */
void rtv_cands_sort(RtvCand *v, size_t n);

typedef struct RtvGraphParams {
    size_t seeds;      /* expand from this many best candidates */
    size_t per_seed;   /* at most this many neighbours per seed and direction */
    double out_factor; /* score of a referenced definition: referrer's score times this */
    double in_factor;  /* score of a referrer (caller): referenced score times this; 0: off */
    double one_line;   /* and times this for a one-line definition (a macro, a declaration) */
} RtvGraphParams;

/* What ranking looks up in the index about candidates (their neighbours,
 * whether their file is a test), kept for the second ranking of the same
 * question: rtv_rank ranks with and without the dense leg. */
typedef struct RtvLookups {
    I64Map is_test; /* file id -> 1 + idx_file_test_marks */
    I64Map fanin;   /* file id -> 1 + idx_file_fanin */
    I64Map folder;  /* file id -> 1 + its folder's number in folders */
    StrMap folders; /* folder path -> its number */
    struct RtvEdgesOf {
        int64_t chunk;
        int outgoing;
        IdxEdge *edges;
        size_t n;
    } * edges;
    size_t n_edges, cap_edges;
} RtvLookups;

void rtv_lookups_release(RtvLookups *lk);
/* idx_file_test_marks through lk. */
int rtv_file_test_marks(IdxStore *st, RtvLookups *lk, int64_t file_id);
/* idx_file_fanin through lk. */
int rtv_file_fanin(IdxStore *st, RtvLookups *lk, int64_t file_id);
/* A number for the folder a file is in, the same for every file of that
 * folder (through lk); -1 when the file is not indexed. */
int64_t rtv_file_folder(IdxStore *st, RtvLookups *lk, int64_t file_id);
/* idx_edges with calls through macros followed (calls.c): a call of a
 * macro is replaced by the calls its body makes, and a definition a macro's
 * body calls gains the macro's callers; (*via)[i] is the macro's chunk for
 * such an edge (0: a direct one). Macro marks are left out. Caller frees
 * *out and *via. */
CrErr rtv_call_edges(IdxStore *st, int64_t chunk, int outgoing, IdxEdge **out, int64_t **via,
                     size_t *n_out, ErrInfo *e);
/* Whether a chunk is a macro (calls.c); 0 when the store cannot say. */
int rtv_is_macro(IdxStore *st, int64_t chunk);
/* (nav_cond.c) The condition a call of callee (its name) written in chunk
 * site (through macro chunk via, 0: none; to chunk target, NULL: not
 * asked) is compiled under: the call's lines where site calls it under a
 * branch of its body (idx_pp_site_cond), the macro's, the target's, joined
 * by &&, NULL when none; *built whether it holds. A target's condition
 * counts unless it is one variant of several. */
CrErr rtv_site_cond(IdxStore *st, const IdxChunk *site, int64_t via, const IdxChunk *target,
                    const char *callee, char **cond, IdxBuilt *built, ErrInfo *e);
/* A variant of chunk c's definition that the build compiles (*alt), when
 * c's is not built and its file defines it again under another branch;
 * else *alt = 0. */
CrErr rtv_built_variant(IdxStore *st, const IdxChunk *c, int64_t *alt, ErrInfo *e);
/* Built first: 0 built, 1 unknown, 2 not built. */
int rtv_built_rank(IdxBuilt b);
/* Reorders defs (stable): the one whose lines hold near_path:near_line
 * first, then those some configuration builds, then the unknown, then
 * those nothing builds. */
CrErr rtv_defs_built_first(IdxStore *st, RtvDef *defs, size_t n, const char *near_path,
                           uint32_t near_line, ErrInfo *e);

/* Adds the definitions the first gp->seeds candidates reference (calls,
 * raises, bases) and, when in_factor > 0, their referrers, one hop, with
 * scores scaled from the seed's (and by gp->one_line for a one-line
 * definition); a neighbour already present keeps the higher score and
 * gains RTV_VIA_GRAPH. *cands grows (ARRAY_GROW with *cap). */
CrErr rtv_expand_graph(IdxStore *st, RtvCand **cands, size_t *n, size_t *cap,
                       const RtvGraphParams *gp, RtvLookups *lk, ErrInfo *e);
/* (lk may be NULL: then nothing is kept) */

/* The definitions that drive the others: each of the first `depth`
 * candidates (sorted best first) that calls, or names as a value, k other
 * of them (distinct, at most RTV_DRIVER_MAX) has its score multiplied by
 * 1 + w k; re-sorts best first. lk as rtv_expand_graph's. */
#define RTV_DRIVER_MAX 3
CrErr rtv_driver_prior(IdxStore *st, RtvCand *v, size_t n, size_t depth, double w, RtvLookups *lk,
                       ErrInfo *e);

/* Narrows an item longer than max_lines to the max_lines-line window that
 * mentions the most of `words` (lowercase question words) at word starts,
 * preferring the unit's head on ties; its lines and text change, its chunk
 * does not. */
void rtv_trim_item(RtvItem *it, const char *const *words, size_t n_words, uint32_t max_lines);
/* Whether s[0..n) calls name: the name at a word start, then "(" (or "!"
 * of a Rust macro) after blanks. */
int rtv_calls_name(const char *s, size_t n, const char *name, size_t nl);
/* A caller of the focus narrowed as rtv_trim_item does, to the window
 * that holds its first call of name (the focus's last name part): from
 * its head when the call is in the head's window, else centred on the
 * call. Returns 0, the item unchanged, when no line calls name. */
int rtv_trim_item_to_call(RtvItem *it, const char *name, uint32_t max_lines);

/* Joins packed pieces of one split definition (same path, symbol and kind,
 * window > 0) into one item spanning both and the lines between, re-read
 * from disk, when the lines between fit in *left characters (which shrinks
 * by what they cost); the joined item keeps the better rank. Holes that do
 * not fit stay, and the extractive answer says so. Errors: the store's. */
CrErr rtv_join_pieces(IdxStore *st, const RtvRequest *req, RtvItem *items, size_t *n, size_t *left,
                      ErrInfo *e);

/* Makes the packed items' scores follow their order, as every door shows
 * them ("best first"): at most 1.0, never rising down the list. Where a
 * score rises above the one before it (the lexical head, then the
 * dense-informed ranking whose scale runs higher; a joined piece), that item
 * and all after it are scaled down to meet it, so ratios within a run stay. */
void rtv_scores_by_rank(RtvItem *items, size_t n);

/* The ranking's constants, chosen on the dev questions (docs/benchmarks.md). */
typedef struct RtvTuning {
    size_t bm25_candidates;    /* BM25 hits considered */
    size_t dense_candidates;   /* dense hits considered */
    double dense_weight;       /* what the dense leg adds at most to a candidate's score */
    double dense_weight_named; /* the same when the question names an indexed definition */
    size_t dense_new;          /* dense hits that may enter without lexical evidence */
    size_t lexical_head;       /* first candidates of the ranking without dense kept first */
    size_t keep;               /* candidates kept after the file blend */
    double module_prior;       /* score factor for module-level code */
    double class_prior;        /* score factor for class headers */
    double section_prior;      /* score factor for docs and config sections */
    double test_prior;         /* score factor for test files (by their language's conventions) */
    double file_beta;          /* weight of the file's score in a candidate's */
    RtvGraphParams graph;
    uint32_t window_lines; /* longest span packed from one unit */
    int rerank;            /* the learned re-ranker (rtv_ranker) reorders the first candidates */
    /* At size (docs/ranker.md, "At any size"): an index of more units than
     * bm25_candidates * units_per_candidate ranks one BM25 candidate per
     * units_per_candidate units, at most bm25_candidates_max, keeps them all
     * after the file blend; its candidates' scores are multiplied by
     * 1 + w ln(1 + f) / ln(1 + IDX_FANIN_CAP), where f is their file's
     * fan-in (idx_file_fanin) and w is central_weight times g, how far the
     * pool has grown from bm25_candidates to bm25_candidates_max; at the
     * end, each of the first RTV_RERANK_DEPTH that calls k others of them
     * by 1 + driver_weight g k (rtv_driver_prior); the graph expands from
     * graph.seeds + (graph_seeds_max - graph.seeds) g seeds, as many more
     * as the pool is larger.
     * An index of more than subsystem_units units (0: never) blends each
     * candidate's score with its folder's (rtv_group_blend) with weight
     * folder_beta before the file blend, and, after the priors, multiplies
     * it by 1 + name_weight (n + c) and, when it is one of its language's
     * helper definitions (idx_chunk_symbol: a whole unit of at most the
     * row's helper_lines lines), by short_prior (rtv_name_prior). */
    size_t units_per_candidate;
    size_t bm25_candidates_max;
    double central_weight;
    size_t subsystem_units;
    double folder_beta;
    double name_weight;
    int short_helpers;
    double short_prior;
    double driver_weight;
    size_t graph_seeds_max;
    int pack_by_coverage; /* second pieces of a packed definition wait for the rest */
} RtvTuning;

extern const RtvTuning rtv_tuning;

/* The tuning t becomes at an index of `units` units (RtvTuning, "At
 * size"): *out is t, with no centrality weight when the index is not
 * larger than bm25_candidates * units_per_candidate (nor driver weight,
 * nor graph seeds past graph.seeds),
 * and no folder, name or helper weight when it is not larger than
 * subsystem_units. Returns whether the
 * pool grew. */
int rtv_tuning_at_size(const RtvTuning *t, size_t units, RtvTuning *out);

/* What ranking learnt besides the candidates. */
typedef struct RtvRankInfo {
    double coverage;  /* best share of the question's term weight among the top BM25 hits */
    int at_size;      /* the pool grew with the index (RtvTuning) */
    char notice[512]; /* a leg skipped on an endpoint failure, and why; "" when none */
} RtvRankInfo;

/* ---------------------------------------------------------------- the query */

#define RTV_QUERY_MAX_WORDS 64
#define RTV_QUERY_MAX_IDENTS 16

typedef struct RtvQueryIdent {
    char *name;  /* as written (trailing dots dropped); owned */
    int defined; /* an indexed definition has this name (or its last dotted part) */
} RtvQueryIdent;

/* A question read once, for every leg, the window trim, the match signals
 * and the re-ranker's features. */
typedef struct RtvQuery {
    const char *text;   /* borrowed */
    char *search_words; /* idx_query_words of text, space-separated; owned */
    char *word_buf;     /* the same, split: words point into it */
    const char *words[RTV_QUERY_MAX_WORDS];
    size_t n_words; /* the first RTV_QUERY_MAX_WORDS of them */
    size_t n_terms; /* all of them */
    /* identifiers (snake_case, CamelCase, dotted) the text names */
    RtvQueryIdent idents[RTV_QUERY_MAX_IDENTS];
    size_t n_idents;
    size_t idents_hit; /* how many name indexed definitions */
} RtvQuery;

/* Reads text into q (text must outlive it). CR_EDB when the index cannot
 * be read (never "no match"); q holds nothing then. */
CrErr rtv_query_read(IdxStore *st, const char *text, RtvQuery *q, ErrInfo *e);
void rtv_query_release(RtvQuery *q);

/* The signals rtv_match reads, from a ranked and packed question. */
void rtv_match_signals(const RtvQuery *q, const RtvRankInfo *info, size_t n_items,
                       RtvMatchSignals *sig);
/* Sets sig->context_share from the first RTV_MATCH_TOP of the packed items. */
void rtv_match_context(const RtvQuery *q, const RtvItem *items, size_t n_items,
                       RtvMatchSignals *sig);

/* How many identifiers (snake_case, CamelCase, dotted; at most 16) the
 * question names (*n_idents); *hit gets how many of them name indexed
 * definitions. CR_EDB when the index cannot be read (never "no match"). */
CrErr rtv_named_identifiers(IdxStore *st, const char *question, size_t *n_idents, size_t *hit,
                            ErrInfo *e);

/* ---------------------------------------------------------------- the re-ranker */

/* Features of a (question, candidate) pair, in the order of
 * rtv_feature_names (the model file names them). */
enum {
    RTV_F_SCORE,      /* first-ranking score relative to the best */
    RTV_F_RANK,       /* 1 / (1 + position in the first ranking) */
    RTV_F_BM25,       /* BM25 relative to the leg's best (0: not found) */
    RTV_F_DENSE,      /* the dense leg's 0-1 score (0: not found) */
    RTV_F_VIA_BM25,   /* found by BM25 */
    RTV_F_VIA_DENSE,  /* found by the dense leg */
    RTV_F_VIA_GRAPH,  /* reached along the graph */
    RTV_F_GRAPH_ONLY, /* only along the graph */
    RTV_F_GRAPH_OUT,  /* a seed references it */
    RTV_F_GRAPH_IN,   /* it references a seed */
    RTV_F_AGREE,      /* BM25 and the dense leg both found it */
    RTV_F_FUNCTION,   /* kind: function or method */
    RTV_F_CLASS,      /* kind: class header */
    RTV_F_MODULE,     /* kind: module code */
    RTV_F_SECTION,    /* kind: docs or config section */
    RTV_F_TEST,       /* test code */
    RTV_F_NAME,       /* share of the question's words in its name (stem-alike) */
    RTV_F_NAME_COVER, /* share of its name's subwords in the question */
    RTV_F_PATH,       /* share of the question's words in its path */
    RTV_F_IDENT,      /* the question names it */
    RTV_F_DOC,        /* share of the question's words in its docstring */
    RTV_F_HAS_DOC,    /* it has a docstring */
    RTV_F_LINES,      /* log(1 + lines) / 6 */
    RTV_F_WINDOW,     /* a later window of a split unit */
    RTV_F_FILE_RANK,  /* 1 / (1 + its file's position among the candidates' files) */
    RTV_F_FILE_HITS,  /* candidates in its file, / 5, at most 1 */
    RTV_N_FEATURES
};
extern const char *const rtv_feature_names[RTV_N_FEATURES];

/* How many of the first ranking's candidates the re-ranker reorders. */
#define RTV_RERANK_DEPTH 60

/* A linear model over the features. */
typedef struct RtvRanker {
    const char *name;
    const char *sha256; /* of the model file it was written from */
    double bias;
    double w[RTV_N_FEATURES];
} RtvRanker;

/* The committed model (rerank_model.c, written from models/ranker-v1.json). */
extern const RtvRanker rtv_ranker;

/* Features of v[0..n) (ranked best first) for q, row-major into out (room
 * for n * RTV_N_FEATURES). A candidate gone from the index gets no text
 * features; the store's other errors. */
CrErr rtv_features(IdxStore *st, const RtvQuery *q, const RtvCand *v, size_t n, double *out,
                   ErrInfo *e);
/* Reorders candidates keep.. of the first RTV_RERANK_DEPTH of v by m's
 * score (ties keep their order; the first `keep`, the lexical head, stay);
 * their scores follow, on the first ranking's scale. */
CrErr rtv_rerank(IdxStore *st, const RtvQuery *q, const RtvRanker *m, RtvCand *v, size_t n,
                 size_t keep, ErrInfo *e);

/* Multiplies each candidate's score by 1 + t->name_weight (n + c), where n
 * is the share of q's words in its name (the symbol's last part) and c the
 * share of its name's subwords in q, both stem-alike as the re-ranker's
 * name features, and, with t->short_helpers, a helper definition of its
 * language (idx_chunk_symbol) by t->short_prior; re-sorts best first. A candidate gone from the
 * index keeps its score. */
void rtv_name_prior(IdxStore *st, const RtvQuery *q, RtvCand *v, size_t n, const RtvTuning *t);

/* Below this coverage, no indexed code matches the question well. */
#define RTV_WEAK_COVERAGE 0.25

/* Candidates for a question, best first, not yet read: the enabled legs'
 * hits fused (see rank.c), then graph neighbours. Fills tm's bm25_ms,
 * dense_ms and graph_ms, and *info. A leg that fails on an endpoint is
 * skipped and explained in info->notice. Caller frees *out. */
CrErr rtv_rank(IdxStore *st, const RtvRequest *req, const RtvQuery *q, const RtvTuning *t,
               RtvCand **out, size_t *n_out, RtvTimings *tm, RtvRankInfo *info, ErrInfo *e);

/* Weights candidates by kind (module code, class headers) and re-sorts. */
void rtv_apply_priors(RtvCand *v, size_t n, const RtvTuning *t);

/* Releases an item's chunk and text. */
void rtv_item_release(RtvItem *it);

/* The last component of a qualified symbol ("method" of "Class.method").
 * Borrowed from symbol. */
const char *rtv_last_part(const char *symbol);

/* The focus item of a request (RtvRequest.focus_chunk): the whole
 * definition chunk_id is a piece of, as one item named by its first piece,
 * its lines read now (at most RTV_FOCUS_MAX_CHARS bytes, cut after a whole
 * line: end_line says where), score 1. Release with rtv_item_release. CR_ENOENT when
 * the chunk is gone; the store's errors. */
CrErr rtv_focus_item(IdxStore *st, const RtvRequest *req, int64_t chunk_id, RtvItem *out,
                     ErrInfo *e);

/* ---- buffer.c: unsaved buffers (RtvRequest.buffer; req may be NULL: the disk) */

/* Lines start..end (1-based, inclusive) of path as the request reads them:
 * the editor's unsaved buffer when it has one, else the disk's
 * (idx_read_lines, with its errors and *out_total). */
CrErr rtv_read_lines(IdxStore *st, const RtvRequest *req, const char *path, uint32_t start,
                     uint32_t end, StrBuf *out, uint32_t *out_total, ErrInfo *e);
/* Carries the index's (the disk's) lines *start..*end of path onto its
 * unsaved buffer, when the request has one, through a line diff: the
 * first and last lines of the span that are unchanged move as they moved
 * (a span all changed moves as the nearest unchanged line before it).
 * CR_ENOENT when the span is past the buffer's end; CR_OK otherwise
 * (nothing to do without a buffer). */
CrErr rtv_buffer_lines(IdxStore *st, const RtvRequest *req, const char *path, uint32_t *start,
                       uint32_t *end, ErrInfo *e);
/* A verification source over st that reads as the request does
 * (rtv_read_lines); ctx holds its state and must outlive src. */
typedef struct RtvSourceCtx {
    VfySource store;
    IdxStore *st;
    const RtvRequest *req;
} RtvSourceCtx;
void rtv_vfy_source(VfySource *src, RtvSourceCtx *ctx, IdxStore *st, const RtvRequest *req);
/* Callers an explanation's context shows first, after the focus. */
#define RTV_FOCUS_CALLERS 3
/* Candidates for the callers of that definition (the pieces the calls are
 * written in), at most max, by path and line, score 1, via graph: what an
 * explanation's "how is it used" needs first. Caller frees *out. */
CrErr rtv_focus_callers(IdxStore *st, int64_t chunk_id, size_t max, RtvCand **out, size_t *n_out,
                        ErrInfo *e);

/* ---------------------------------------------------------------- LLM answers */

/* Sampling temperature of LLM answers: low, for answers that stick to the
 * blocks. */
#define RTV_LLM_TEMPERATURE 0.1
/* How each context block of the prompt starts: "## Block N [path:a-b] symbol". */
#define RTV_BLOCK_HEADER "## Block"

/* The system message: answer briefly from the blocks, cite every claim as
 * [path:start-end] copied from a block header, cite nothing else. */
extern const char rtv_prompt_system[];

/* Appends the user message for question over the packed items to out: per
 * item, in order, a header line RTV_BLOCK_HEADER " N [path:start-end] symbol"
 * (N from 1; the range always has both ends; newlines in path or symbol
 * become spaces) followed by the item's packed text in a code fence longer
 * than any backtick run in it; then "Question: " and the question. Only the
 * items' text is included. Pure. */
void rtv_prompt_user(const RtvItem *items, size_t n, const char *question, StrBuf *out);

/* The chat completions request body (compact JSON): the two messages,
 * temperature RTV_LLM_TEMPERATURE, "stream", and "model" when model is not
 * NULL or "". NULL when a string is not valid UTF-8. Caller frees. */
char *rtv_chat_body(const char *model, const char *system, const char *user, int stream);
/* The same, with earlier turns (the last RTV_MAX_TURNS, capped) between
 * the system message and the user's. */
char *rtv_chat_body_turns(const char *model, const char *system, const RtvTurn *turns, size_t n,
                          const char *user, int stream);

/* Reads a chat completions response as it arrives: server-sent events
 * ("data: {chunk}" lines, several data lines joined by '\n', ':' comments,
 * "event:" names, CRLF/CR/LF line ends, "data: [DONE]") whose chunks carry
 * choices[0].delta.content; or, when the body starts with '{' (a server that
 * ignores "stream"), one JSON object with choices[0].message.content. */
typedef struct RtvSse {
    int mode;        /* 0: undecided, 1: events, 2: one JSON object */
    StrBuf line;     /* the line being read */
    StrBuf data;     /* data lines of the event being read */
    int has_data;    /* the event has a data line (maybe empty) */
    int saw_data;    /* any event had one */
    int error_event; /* the event is named "error" */
    int after_cr;    /* the last byte was '\r' (a '\n' right after it ends nothing) */
    StrBuf content;  /* the answer text so far */
    size_t tokens;   /* content pieces received */
    int done;        /* "[DONE]" seen (or the JSON object parsed) */
    int finished;    /* a finish_reason seen */
    char finish_reason[32];
    char *refusal;      /* the model's refusal, when it sent one; owned */
    CrErr err;          /* first failure; CR_OK while none */
    char msg[300];      /* its message: one line, without `secret` */
    const char *secret; /* masked in messages (the API key); borrowed; NULL: none */
    RtvProgressFn progress;
    void *progress_ud;
    RtvTextFn on_text; /* optional: the text so far, at each piece */
    void *text_ud;
} RtvSse;

void rtv_sse_init(RtvSse *s, RtvProgressFn progress, void *ud);
void rtv_sse_release(RtvSse *s);
/* Feeds the next bytes; 0 to go on, -1 after a failure (invalid JSON in an
 * event or body, an error event) when reading should stop. Matches
 * HttpDataFn. */
int rtv_sse_feed(void *s, const char *data, size_t len);
/* At the end of the body: CR_OK with the answer in s->content; CR_EPARSE
 * (invalid JSON, a stream cut before "[DONE]" and without a finish_reason,
 * a body that is neither events nor JSON, no choices), CR_EHTTP (an error
 * event or object, a refusal, finish_reason "content_filter", an empty
 * answer), with e->msg saying which. */
CrErr rtv_sse_finish(RtvSse *s, ErrInfo *e);

/* One chat completion over req's LLM settings (llm_url must be set): the
 * system and user messages go out, the answer text comes back in *out
 * (caller frees). Streams unless req->llm_no_stream, reporting progress and
 * honouring the cancel hook. Errors: CR_EHTTP, CR_ETIMEOUT, CR_ETOOBIG (the
 * response passed RTV_LLM_MAX_RESPONSE), CR_EPARSE, CR_ECANCELED, CR_EINVAL
 * (bad URL, or text that is not UTF-8); e->msg is one line naming the
 * endpoint without credentials and never holds the API key. */
CrErr rtv_llm_complete(const RtvRequest *req, const char *system, const char *user, char **out,
                       ErrInfo *e);

/* A file's chunks as definitions (nav.c): every query over the graph
 * works on whole definitions, which the listing of references
 * (nav_refs.c) names its far ends by. */
typedef struct RtvFileView {
    IdxChunk *chunks; /* in line order */
    size_t n;
    long *head; /* the first piece of chunk i's definition, or -1: module code */
} RtvFileView;

CrErr rtv_view_load(IdxStore *st, const char *path, RtvFileView *v, ErrInfo *e);
void rtv_view_release(RtvFileView *v);
/* The definition of chunk id in a loaded file; 0 when it is not there. */
int rtv_view_def_of(const RtvFileView *v, int64_t id, RtvDef *out);
/* Whether a chunk is module code (no definition's). */
int rtv_is_module_code(const IdxChunk *c);

#endif
