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

typedef struct FileAgg {
    int64_t file_id;
    double top[3];
} FileAgg;

void rtv_file_boost(RtvCand *v, size_t n, double beta)
{
    if (!n || beta <= 0) return;
    rtv_cands_sort(v, n);
    FileAgg *files = xcalloc(n, sizeof *files);
    size_t n_files = 0;
    I64Map at;
    i64map_init(&at);
    /* Candidates arrive best first, so each file's top three fill in order. */
    for (size_t i = 0; i < n; i++) {
        if (!v[i].file_id) continue;
        int64_t k;
        if (!i64map_get(&at, v[i].file_id, &k)) {
            k = (int64_t)n_files++;
            files[k].file_id = v[i].file_id;
            i64map_put(&at, v[i].file_id, k);
        }
        for (int j = 0; j < 3; j++)
            if (files[k].top[j] == 0) {
                files[k].top[j] = v[i].score;
                break;
            }
    }
    double best = 0;
    double *fs = xcalloc(n_files + 1, sizeof *fs);
    for (size_t k = 0; k < n_files; k++) {
        fs[k] = files[k].top[0] + 0.5 * files[k].top[1] + 0.25 * files[k].top[2];
        if (fs[k] > best) best = fs[k];
    }
    for (size_t i = 0; i < n; i++) {
        int64_t k;
        if (!v[i].file_id || !i64map_get(&at, v[i].file_id, &k) || best <= 0) continue;
        v[i].score = (1 - beta) * v[i].score + beta * fs[k] / best;
    }
    rtv_cands_sort(v, n);
    free(fs);
    free(files);
    i64map_release(&at);
}

int rtv_tuning_at_size(const RtvTuning *t, size_t units, RtvTuning *out)
{
    *out = *t;
    out->central_weight = 0;
    if (!t->units_per_candidate || t->bm25_candidates_max <= t->bm25_candidates) return 0;
    size_t want = units / t->units_per_candidate;
    if (want <= t->bm25_candidates) return 0;
    if (want > t->bm25_candidates_max) want = t->bm25_candidates_max;
    out->bm25_candidates = want;
    if (out->keep < want) out->keep = want;
    out->rerank = 0;
    out->central_weight = t->central_weight * (double)(want - t->bm25_candidates) /
                          (double)(t->bm25_candidates_max - t->bm25_candidates);
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
