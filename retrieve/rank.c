#include "rtv_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranking: each leg's hits scored relative to its best and blended with
 * their file's score, then widened along the code graph, and finally
 * weighted by what kind of unit they are. */

const RtvTuning rtv_tuning = {
    .bm25_candidates = 50,
    .dense_candidates = 50,
    .dense_weight = 0.4,
    .keep = RTV_MAX_CANDIDATES,
    .module_prior = 0.75,
    .class_prior = 0.85,
    .section_prior = 0.6,
    .test_prior = 0.5,
    .file_beta = 0.35,
    .graph = {.seeds = 8, .per_seed = 8, .out_factor = 0.7, .in_factor = 0.5},
    .window_lines = 30,
};


/* Adds a leg's hits to v (scores relative to the leg's best, times weight),
 * merging with candidates already there. */
static void add_leg(RtvCand **v, size_t *n, size_t *cap, const IdxHit *hits, size_t n_hits,
                    double weight, unsigned via)
{
    double top = 0;
    for (size_t i = 0; i < n_hits; i++)
        if (hits[i].score > top) top = hits[i].score;
    size_t before = *n;
    for (size_t i = 0; i < n_hits; i++) {
        double s = top > 0 ? weight * hits[i].score / top : 0;
        size_t k = 0;
        while (k < before && (*v)[k].chunk_id != hits[i].chunk_id) k++;
        if (k < before) {
            (*v)[k].score += s;
            (*v)[k].via |= via;
            if (!(*v)[k].file_id) (*v)[k].file_id = hits[i].file_id;
            continue;
        }
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[*n] = (RtvCand){hits[i].chunk_id, hits[i].file_id, hits[i].kind, s, via};
        (*n)++;
    }
}

CrErr rtv_rank(IdxStore *st, const RtvRequest *req, const RtvTuning *t, RtvCand **out,
               size_t *n_out, RtvTimings *tm, RtvRankInfo *info, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxHit *hits = NULL;
    size_t n_hits = 0, n = 0, cap = 0;
    RtvCand *v = NULL;
    int dense = req->use_dense && idx_has_dense(st);
    /* With both legs, a candidate's score is a convex blend of its
     * relative scores: a dense score alone never outranks strong lexical
     * evidence, and the reverse. */
    double w_bm25 = dense ? 1.0 - t->dense_weight : 1.0;
    double t0 = now_ms();
    *out = NULL;
    *n_out = 0;
    memset(info, 0, sizeof *info);
    if (req->use_bm25) {
        if ((rc = idx_search_bm25(st, req->question, t->bm25_candidates, &hits, &n_hits, e))) goto out;
        add_leg(&v, &n, &cap, hits, n_hits, w_bm25, RTV_VIA_BM25);
        for (size_t i = 0; i < n_hits && i < 5; i++)
            if (hits[i].coverage > info->coverage) info->coverage = hits[i].coverage;
        free(hits);
        hits = NULL;
    }
    tm->bm25_ms = now_ms() - t0;
    t0 = now_ms();
    if (dense) {
        ErrInfo de = {0};
        if (idx_search_dense(st, req->question, t->dense_candidates, &hits, &n_hits, &de) ==
            CR_OK) {
            add_leg(&v, &n, &cap, hits, n_hits, t->dense_weight, RTV_VIA_DENSE);
        } else {
            /* An unreachable embeddings endpoint costs the dense leg, not the answer. */
            log_msg(LOG_WARN, "dense retrieval skipped: %s", de.msg);
            snprintf(info->notice, sizeof info->notice, "dense retrieval was skipped: %.400s", de.msg);
        }
    }
    tm->dense_ms = now_ms() - t0;
    rtv_file_boost(v, n, t->file_beta);
    if (n > t->keep) n = t->keep;

    t0 = now_ms();
    if (req->use_graph && n) {
        if ((rc = rtv_expand_graph(st, &v, &n, &cap, &t->graph, e))) goto out;
    }
    /* behaviour questions are answered by code, not by the tests exercising it */
    for (size_t i = 0; i < n; i++)
        if (v[i].file_id && idx_file_is_test(st, v[i].file_id)) v[i].score *= t->test_prior;
    rtv_apply_priors(v, n, t);
    tm->graph_ms = now_ms() - t0;
out:
    free(hits);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

void rtv_apply_priors(RtvCand *v, size_t n, const RtvTuning *t)
{
    /* Import blocks and class headers match many words and answer few
     * questions; functions and methods are where behaviour lives. */
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == IDX_KIND_MODULE) v[i].score *= t->module_prior;
        if (v[i].kind == IDX_KIND_CLASS) v[i].score *= t->class_prior;
        /* docs and config answer usage questions, below the code they describe */
        if (v[i].kind == IDX_KIND_SECTION) v[i].score *= t->section_prior;
    }
    rtv_cands_sort(v, n);
}
