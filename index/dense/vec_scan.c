/*
 * vec_scan.c - the exact inner-product scan behind idx_vecstore_search,
 * over the flat index's own rows. Debian's FAISS is built for the baseline
 * CPU, where its flat search runs a scalar loop; this one is written so the
 * compiler vectorises it (compiled at -O3, see CMakeLists.txt) and sums in
 * a fixed order, so a score never depends on the machine.
 */
#include "vec_int.h"

#include <stdlib.h>
#include <string.h>

static float dot(const float *a, const float *b, int d)
{
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0}, s = 0;
    int i = 0;
    for (; i + 8 <= d; i += 8)
        for (int k = 0; k < 8; k++)
            acc[k] += a[i + k] * b[i + k];
    for (; i < d; i++)
        s += a[i] * b[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + s;
}

typedef struct Scored {
    float score;
    size_t row;
} Scored;

/* Higher score first; equal scores by row, so the order is total. */
static int better(const Scored *a, const Scored *b)
{
    return a->score > b->score || (a->score == b->score && a->row < b->row);
}

static int cmp_scored(const void *a, const void *b)
{
    return better(b, a) - better(a, b);
}

/* The k-th largest (1-based, k <= n) of v[0..n), which is reordered:
 * quickselect. */
static float kth_largest(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        /* v[lo..j] >= pivot >= v[i..hi]; anything between equals it */
        if (want <= j && j < i)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            return pivot;
    }
    return v[lo];
}

size_t idx_vec_scan(const float *rows, size_t n_rows, int dim, const float *query, size_t k,
                    size_t *out_rows, float *out_scores)
{
    if (!n_rows || !k) return 0;
    if (k > n_rows) k = n_rows;
    float *score = xmalloc(2 * n_rows * sizeof *score);
    Scored *best = xmalloc(k * sizeof *best);
    for (size_t r = 0; r < n_rows; r++)
        score[r] = dot(rows + r * (size_t)dim, query, dim);
    /* the k-th best score, then every row above it and, by row, enough of
     * those equal to it */
    memcpy(score + n_rows, score, n_rows * sizeof *score);
    float cut = kth_largest(score + n_rows, n_rows, k);
    size_t m = 0;
    for (size_t r = 0; r < n_rows; r++)
        if (score[r] > cut && m < k) best[m++] = (Scored){score[r], r};
    for (size_t r = 0; r < n_rows && m < k; r++)
        if (score[r] == cut) best[m++] = (Scored){score[r], r};
    qsort(best, m, sizeof *best, cmp_scored);
    for (size_t i = 0; i < m; i++) {
        out_rows[i] = best[i].row;
        out_scores[i] = best[i].score;
    }
    free(score);
    free(best);
    return m;
}
