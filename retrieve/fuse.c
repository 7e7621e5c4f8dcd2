#include "rtv_int.h"

#include <math.h>
#include <stdlib.h>

static int by_score(const void *pa, const void *pb)
{
    const RtvCand *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    return (a->chunk_id > b->chunk_id) - (a->chunk_id < b->chunk_id);
}

void rtv_cands_sort(RtvCand *v, size_t n)
{
    if (n) qsort(v, n, sizeof *v, by_score);
}

void rtv_group_blend(RtvCand *v, size_t n, const int64_t *group, double beta)
{
    if (!n || beta <= 0) return;
    double *top = xcalloc(3 * n, sizeof *top); /* per group, its best three */
    size_t n_groups = 0;
    I64Map at;
    i64map_init(&at);
    /* Candidates arrive best first, so each group's top three fill in order. */
    for (size_t i = 0; i < n; i++) {
        if (group[i] < 0) continue;
        int64_t k;
        if (!i64map_get(&at, group[i], &k)) {
            k = (int64_t)n_groups++;
            i64map_put(&at, group[i], k);
        }
        for (int j = 0; j < 3; j++)
            if (top[3 * k + j] == 0) {
                top[3 * k + j] = v[i].score;
                break;
            }
    }
    double best = 0;
    double *gs = xcalloc(n_groups + 1, sizeof *gs);
    for (size_t k = 0; k < n_groups; k++) {
        gs[k] = top[3 * k] + 0.5 * top[3 * k + 1] + 0.25 * top[3 * k + 2];
        if (gs[k] > best) best = gs[k];
    }
    for (size_t i = 0; i < n; i++) {
        int64_t k;
        if (group[i] < 0 || !i64map_get(&at, group[i], &k) || best <= 0) continue;
        v[i].score = (1 - beta) * v[i].score + beta * gs[k] / best;
    }
    rtv_cands_sort(v, n);
    free(gs);
    free(top);
    i64map_release(&at);
}

void rtv_file_boost(RtvCand *v, size_t n, double beta)
{
    if (!n || beta <= 0) return;
    rtv_cands_sort(v, n);
    int64_t *file = xcalloc(n, sizeof *file);
    for (size_t i = 0; i < n; i++)
        file[i] = v[i].file_id ? v[i].file_id : -1;
    rtv_group_blend(v, n, file, beta);
    free(file);
}

int rtv_tuning_at_size(const RtvTuning *t, size_t units, RtvTuning *out)
{
    *out = *t;
    out->central_weight = 0;
    out->driver_weight = 0;
    /* the subsystem steps start at a smaller size than the pool grows */
    int sub = t->subsystem_units && units > t->subsystem_units;
    out->folder_beta = sub ? t->folder_beta : 0;
    out->name_weight = sub ? t->name_weight : 0;
    out->short_helpers = sub ? t->short_helpers : 0;
    if (!t->units_per_candidate || t->bm25_candidates_max <= t->bm25_candidates) return 0;
    size_t want = units / t->units_per_candidate;
    if (want <= t->bm25_candidates) return 0;
    if (want > t->bm25_candidates_max) want = t->bm25_candidates_max;
    out->bm25_candidates = want;
    if (out->keep < want) out->keep = want;
    double grown =
        (double)(want - t->bm25_candidates) / (double)(t->bm25_candidates_max - t->bm25_candidates);
    out->central_weight = t->central_weight * grown;
    out->driver_weight = t->driver_weight * grown;
    if (t->graph_seeds_max > t->graph.seeds)
        out->graph.seeds =
            t->graph.seeds + (size_t)((double)(t->graph_seeds_max - t->graph.seeds) * grown + 0.5);
    return 1;
}

void rtv_central_prior(RtvCand *v, size_t n, const int *fanin, int cap, double w)
{
    if (!n || w <= 0 || cap <= 0) return;
    double norm = log(1.0 + (double)cap);
    for (size_t i = 0; i < n; i++) {
        int f = fanin[i] < 0 ? 0 : fanin[i] > cap ? cap : fanin[i];
        v[i].score *= 1.0 + w * log(1.0 + (double)f) / norm;
    }
    rtv_cands_sort(v, n);
}
