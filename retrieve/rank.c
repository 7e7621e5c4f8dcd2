#include "rtv_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranking: each leg's hits scored relative to its best and blended with
 * their file's score, then widened along the code graph, and finally
 * weighted by what kind of unit they are. */

const RtvTuning rtv_tuning = {
    .bm25_candidates = 50,
    .dense_candidates = 1000,
    .dense_weight = 0.5,
    .dense_weight_named = 0.3,
    .dense_new = 5,
    .lexical_head = 2,
    .keep = RTV_MAX_CANDIDATES,
    .module_prior = 0.75,
    .class_prior = 0.85,
    .section_prior = 0.6,
    .test_prior = 0.5,
    .file_beta = 0.35,
    .graph = {.seeds = 8, .per_seed = 8, .out_factor = 0.7, .in_factor = 0.5, .one_line = 0.7},
    .window_lines = 20,
    .units_per_candidate = 2500, /* growing from 125,000 units: the Linux kernel's */
    .bm25_candidates_max = 500,  /* 1.35M rank 500 candidates, centrality weighed .8, */
    .central_weight = 0.8,
    .subsystem_units = 8000, /* past 8,000 units (Django's 10,784 and larger), */
    .folder_beta = 0.45,     /* folders blended at .45 and names at .2 (docs/ranker.md) */
    .name_weight = 0.2,
    .short_helpers = 1,
    .short_prior = 0.7,
    .driver_weight = 0.1,  /* growing with the pool, as centrality (docs/ranker.md) */
    .graph_seeds_max = 16, /* and the graph's seeds, 8 to 16 */
    .rerank = 1,           /* the learned re-ranker, with packing by coverage: */
    .pack_by_coverage = 1, /* +21 gold definitions on the dev sets, none worse (docs/ranker.md) */
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
        while (k < before && (*v)[k].chunk_id != hits[i].chunk_id)
            k++;
        if (k < before) {
            (*v)[k].score += s;
            (*v)[k].via |= via;
            (*v)[k].bm25 = (float)(s / weight);
            if (!(*v)[k].file_id) (*v)[k].file_id = hits[i].file_id;
            continue;
        }
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[*n] = (RtvCand){.chunk_id = hits[i].chunk_id,
                             .file_id = hits[i].file_id,
                             .kind = hits[i].kind,
                             .score = s,
                             .via = via};
        (*v)[*n].bm25 = (float)(s / weight);
        (*n)++;
    }
}

/* Adds the dense leg's hits: each scored by where its cosine falls between
 * the leg's last and best hit, so that the bunched cosines of a bag of
 * tokens still separate. Candidates the lexical legs found gain weight
 * times that; only the first t->dense_new hits may enter on their own. */
static void add_dense(RtvCand **v, size_t *n, size_t *cap, const IdxHit *hits, size_t n_hits,
                      const RtvTuning *t, double weight, int alone)
{
    /* A question with no known token embeds to zero: every cosine is 0. */
    if (!n_hits || hits[0].score <= 0) return;
    /* Entrants only beside lexical evidence, unless the dense leg is alone:
     * a question nothing matches stays unanswered. */
    size_t entrants = alone ? n_hits : *n ? t->dense_new : 0;
    double top = hits[0].score, floor = hits[n_hits - 1].score;
    for (size_t i = 0; i < n_hits; i++) {
        if (hits[i].score > top) top = hits[i].score;
        if (hits[i].score < floor) floor = hits[i].score;
    }
    double span = top - floor;
    size_t before = *n;
    I64Map at;
    i64map_init(&at);
    for (size_t k = 0; k < before; k++)
        i64map_put(&at, (*v)[k].chunk_id, (int64_t)k);
    for (size_t i = 0; i < n_hits; i++) {
        double z = span > 0 ? (hits[i].score - floor) / span : 1.0;
        double s = weight * z;
        int64_t k;
        if (i64map_get(&at, hits[i].chunk_id, &k)) {
            (*v)[k].score += s;
            (*v)[k].via |= RTV_VIA_DENSE;
            (*v)[k].dense = (float)z;
            continue;
        }
        if (i >= entrants) continue;
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[*n] = (RtvCand){.chunk_id = hits[i].chunk_id,
                             .file_id = hits[i].file_id,
                             .kind = hits[i].kind,
                             .score = s,
                             .via = RTV_VIA_DENSE};
        (*v)[*n].dense = (float)z;
        (*n)++;
    }
    i64map_release(&at);
}

/* At size, each candidate's score blends with its folder's (the file
 * blend one level up): the subsystem where several definitions match is
 * likelier to hold the answer than a lone match in another. */
static void folder_blend(IdxStore *st, RtvLookups *lk, RtvCand *v, size_t n, double beta)
{
    if (!n || beta <= 0) return;
    rtv_cands_sort(v, n);
    int64_t *folder = xcalloc(n, sizeof *folder);
    for (size_t i = 0; i < n; i++)
        folder[i] = v[i].file_id ? rtv_file_folder(st, lk, v[i].file_id) : -1;
    rtv_group_blend(v, n, folder, beta);
    free(folder);
}

/* Folder and file blend, cut, graph expansion and priors over the legs'
 * candidates. */
static CrErr finish(IdxStore *st, const RtvRequest *req, const RtvQuery *q, const RtvTuning *t,
                    RtvCand **v, size_t *n, size_t *cap, RtvLookups *lk, ErrInfo *e)
{
    if (t->central_weight > 0 && *n) {
        int *f = xcalloc(*n, sizeof *f);
        for (size_t i = 0; i < *n; i++)
            f[i] = (*v)[i].file_id ? rtv_file_fanin(st, lk, (*v)[i].file_id) : 0;
        rtv_central_prior(*v, *n, f, IDX_FANIN_CAP, t->central_weight);
        free(f);
    }
    folder_blend(st, lk, *v, *n, t->folder_beta);
    rtv_file_boost(*v, *n, t->file_beta);
    if (*n > t->keep) *n = t->keep;
    if (req->use_graph && *n) {
        CrErr rc = rtv_expand_graph(st, v, n, cap, &t->graph, lk, e);
        if (rc) return rc;
    }
    /* behaviour questions are answered by code, not by the tests exercising it */
    for (size_t i = 0; i < *n; i++) {
        /* a chunk is asked only in a language with test modules */
        int m = (*v)[i].file_id ? rtv_file_test_marks(st, lk, (*v)[i].file_id) : IDX_TEST_MODULES;
        if ((m & IDX_TEST_PATH) ||
            ((m & IDX_TEST_MODULES) && idx_chunk_in_test_module(st, (*v)[i].chunk_id))) {
            (*v)[i].score *= t->test_prior;
            (*v)[i].test = 1;
        }
    }
    rtv_apply_priors(*v, *n, t);
    if (t->name_weight > 0 || t->short_helpers) rtv_name_prior(st, q, *v, *n, t);
    if (t->driver_weight > 0)
        return rtv_driver_prior(st, *v, *n, RTV_RERANK_DEPTH, t->driver_weight, lk, e);
    return CR_OK;
}

/* The lexical ranking's first t->lexical_head candidates lead, in their
 * order; the dense-informed ranking follows without repeating them. So the
 * dense leg reorders and fills the rest of the budget but never displaces
 * what BM25 and the graph put first. Replaces *v. */
static void keep_head(RtvCand **v, size_t *n, const RtvCand *lex, size_t n_lex, size_t head)
{
    if (head > n_lex) head = n_lex;
    RtvCand *m = xcalloc(*n + head + 1, sizeof *m);
    size_t k = 0;
    I64Map in;
    i64map_init(&in);
    for (size_t i = 0; i < head; i++) {
        m[k++] = lex[i];
        i64map_put(&in, lex[i].chunk_id, 1);
    }
    for (size_t i = 0; i < *n; i++) {
        int64_t x;
        if (i64map_get(&in, (*v)[i].chunk_id, &x)) {
            for (size_t j = 0; j < head; j++)
                if (m[j].chunk_id == (*v)[i].chunk_id) m[j].via |= (*v)[i].via;
            continue;
        }
        m[k++] = (*v)[i];
    }
    i64map_release(&in);
    free(*v);
    *v = m;
    *n = k;
}

CrErr rtv_rank(IdxStore *st, const RtvRequest *req, const RtvQuery *q, const RtvTuning *t,
               RtvCand **out, size_t *n_out, RtvTimings *tm, RtvRankInfo *info, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxHit *hits = NULL;
    size_t n_hits = 0, n = 0, cap = 0, n_lex = 0, cap_lex = 0;
    RtvCand *v = NULL, *lex = NULL;
    RtvLookups lk = {0};
    int dense = req->use_dense && idx_has_dense(st);
    double t0 = now_ms();
    *out = NULL;
    *n_out = 0;
    memset(info, 0, sizeof *info);
    size_t units = 0;
    RtvTuning sized;
    if ((rc = idx_search_units(st, &units, e))) return rc;
    info->at_size = rtv_tuning_at_size(t, units, &sized);
    t = &sized;
    if (req->use_bm25) {
        if ((rc =
                 idx_search_bm25_words(st, q->search_words, t->bm25_candidates, &hits, &n_hits, e)))
            goto out;
        add_leg(&v, &n, &cap, hits, n_hits, 1.0, RTV_VIA_BM25);
        for (size_t i = 0; i < n_hits && i < 5; i++)
            if (hits[i].coverage > info->coverage) info->coverage = hits[i].coverage;
        free(hits);
        hits = NULL;
    }
    tm->bm25_ms = now_ms() - t0;
    t0 = now_ms();
    if (dense) {
        ErrInfo de = {0};
        if (idx_search_dense(st, q->text, t->dense_candidates, &hits, &n_hits, &de) == CR_OK) {
            /* no hits (no vectors: a workspace without Python): the
             * lexical ranking is the ranking */
            if (n && n_hits && t->lexical_head) {
                lex = xcalloc(n, sizeof *lex);
                memcpy(lex, v, n * sizeof *v);
                n_lex = cap_lex = n;
            }
            /* A question naming an indexed definition is BM25's to answer:
             * the dense leg weighs less there. */
            add_dense(&v, &n, &cap, hits, n_hits, t,
                      q->idents_hit ? t->dense_weight_named : t->dense_weight, !req->use_bm25);
        } else {
            /* An unreachable embeddings endpoint costs the dense leg, not the answer. */
            log_msg(LOG_WARN, "dense retrieval skipped: %s", de.msg);
            snprintf(info->notice, sizeof info->notice, "dense retrieval was skipped: %.400s",
                     de.msg);
        }
    }
    tm->dense_ms = now_ms() - t0;
    t0 = now_ms();
    if ((rc = finish(st, req, q, t, &v, &n, &cap, &lk, e))) goto out;
    if (lex) {
        if ((rc = finish(st, req, q, t, &lex, &n_lex, &cap_lex, &lk, e))) goto out;
        keep_head(&v, &n, lex, n_lex, t->lexical_head);
    }
    tm->graph_ms = now_ms() - t0;
out:
    rtv_lookups_release(&lk);
    free(hits);
    free(lex);
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
