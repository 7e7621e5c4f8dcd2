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

/* Releases an item's chunk and text. */
void rtv_item_release(RtvItem *it);

#endif
