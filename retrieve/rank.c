#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* Ranking: each leg's hits scored relative to its best and blended with
 * their file's score, then widened along the code graph; once loaded,
 * weighted by what kind of unit they are. */

const RtvTuning rtv_tuning = {
    .bm25_candidates = 50,
    .keep = RTV_MAX_CANDIDATES,
    .module_prior = 0.75,
    .class_prior = 0.85,
    .file_beta = 0.35,
    .graph = {.seeds = 8, .per_seed = 8, .out_factor = 0.7, .in_factor = 0.5},
    .window_lines = 30,
};


CrErr rtv_rank(IdxStore *st, const RtvRequest *req, const RtvTuning *t, RtvCand **out,
               size_t *n_out, RtvTimings *tm, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxHit *hits = NULL;
    size_t n_hits = 0, n = 0, cap = 0;
    RtvCand *v = NULL;
    double t0 = now_ms();
    *out = NULL;
    *n_out = 0;
    if (req->use_bm25 &&
        (rc = idx_search_bm25(st, req->question, t->bm25_candidates, &hits, &n_hits, e)))
        return rc;
    double top = 0;
    for (size_t i = 0; i < n_hits; i++)
        if (hits[i].score > top) top = hits[i].score;
    v = n_hits ? xcalloc(n_hits, sizeof *v) : NULL;
    cap = n_hits;
    for (size_t i = 0; i < n_hits; i++) {
        v[n].chunk_id = hits[i].chunk_id;
        v[n].file_id = hits[i].file_id;
        v[n].score = top > 0 ? hits[i].score / top : 0;
        v[n].via = RTV_VIA_BM25;
        n++;
    }
    free(hits);
    rtv_file_boost(v, n, t->file_beta);
    if (n > t->keep) n = t->keep;
    tm->bm25_ms = now_ms() - t0;

    t0 = now_ms();
    if (req->use_graph && n) {
        if ((rc = rtv_expand_graph(st, &v, &n, &cap, &t->graph, e))) {
            free(v);
            return rc;
        }
        rtv_cands_sort(v, n);
    }
    tm->graph_ms = now_ms() - t0;
    *out = v;
    *n_out = n;
    return CR_OK;
}

void rtv_apply_priors(RtvItem *v, size_t n, const RtvTuning *t)
{
    /* Import blocks and class headers match many words and answer few
     * questions; functions and methods are where behaviour lives. */
    for (size_t i = 0; i < n; i++) {
        if (v[i].chunk.kind == IDX_KIND_MODULE) v[i].score *= t->module_prior;
        if (v[i].chunk.kind == IDX_KIND_CLASS) v[i].score *= t->class_prior;
    }
}
