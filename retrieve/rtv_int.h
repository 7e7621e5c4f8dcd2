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

/* Picks what to pack from cands (best first, each with its text): walks the
 * list in order and takes a candidate when its text fits in what is left of
 * budget and it overlaps no line of an item already taken from the same
 * file; what does not fit is skipped and the walk goes on. Stops after
 * max_items picks. Writes the picked indexes, in order, to out_idx (room for
 * n) and returns how many. */
size_t rtv_pack_select(const RtvItem *cands, size_t n, size_t budget, size_t max_items,
                       size_t *out_idx);

/* The extractive answer over the packed items (best first): a summary
 * sentence, then per file (files in order of their best item) one line per
 * item in rank order with its symbol, its "[path:a-b]" citation, signature
 * and first docstring line. With no items the answer says that no indexed
 * code matched, followed by `why_empty` when not NULL. Caller frees. */
char *rtv_extractive_answer(const RtvItem *items, size_t n, const char *why_empty);

/* The verifier's view of the packed items. Borrows from items; caller frees
 * the array with free(). NULL when n is 0. */
VfyContextItem *rtv_vfy_context(const RtvItem *items, size_t n);

/* A candidate before it is loaded: a chunk, its fused score (best 1.0)
 * and the legs that found it. */
typedef struct RtvCand {
    int64_t chunk_id;
    double score;
    unsigned via;
} RtvCand;

typedef struct RtvGraphParams {
    size_t seeds;      /* expand from this many best candidates */
    size_t per_seed;   /* at most this many neighbours per seed and direction */
    double out_factor; /* score of a referenced definition: referrer's score times this */
    double in_factor;  /* score of a referrer (caller): referenced score times this; 0: off */
} RtvGraphParams;

/* Adds the definitions the first gp->seeds candidates reference (calls,
 * raises, bases) and, when in_factor > 0, their referrers, one hop, with
 * scores scaled from the seed's; a neighbour already present keeps the
 * higher score and gains RTV_VIA_GRAPH. *cands grows (ARRAY_GROW with *cap). */
CrErr rtv_expand_graph(IdxStore *st, RtvCand **cands, size_t *n, size_t *cap,
                       const RtvGraphParams *gp, ErrInfo *e);

/* Narrows an item longer than max_lines to the max_lines-line window that
 * mentions the most of `words` (lowercase question words) at word starts,
 * preferring the unit's head on ties; its lines and text change, its chunk
 * does not. */
void rtv_trim_item(RtvItem *it, const char *const *words, size_t n_words, uint32_t max_lines);

/* Releases an item's chunk and text. */
void rtv_item_release(RtvItem *it);

#endif
