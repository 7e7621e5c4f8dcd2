#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

void rtv_request_init(RtvRequest *r)
{
    memset(r, 0, sizeof *r);
    r->use_bm25 = r->use_dense = r->use_graph = 1;
    r->mode = RTV_MODE_AUTO;
}

static const char *const mode_names[] = {"auto", "extractive", "llm"};

const char *rtv_mode_name(RtvMode m)
{
    return (unsigned)m < sizeof mode_names / sizeof mode_names[0] ? mode_names[m] : "auto";
}

int rtv_mode_parse(const char *s, RtvMode *out)
{
    for (size_t i = 0; s && i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (strcmp(s, mode_names[i]) == 0) {
            *out = (RtvMode)i;
            return 1;
        }
    }
    return 0;
}

const char *rtv_item_symbol(const RtvItem *it)
{
    if (it->chunk.symbol && it->chunk.symbol[0]) return it->chunk.symbol;
    return it->chunk.module ? it->chunk.module : "";
}

void rtv_item_release(RtvItem *it)
{
    if (!it) return;
    idx_chunk_release(&it->chunk);
    free(it->text);
    it->text = NULL;
}

void rtv_answer_release(RtvAnswer *a)
{
    if (!a) return;
    free(a->answer);
    free(a->fallback_reason);
    for (size_t i = 0; i < a->n_items; i++)
        rtv_item_release(&a->items[i]);
    free(a->items);
    vfy_citations_free(a->citations, a->n_citations);
    vfy_rejected_free(a->rejected, a->n_rejected);
    memset(a, 0, sizeof *a);
}

const char *rtv_match_name(const RtvAnswer *a)
{
    if (!a->n_items) return "none";
    return a->coverage < RTV_WEAK_COVERAGE ? "weak" : "strong";
}
