/* Exact (IndexFlatIP) against approximate (HNSW32,Flat) inner-product search
 * on random L2-normalised vectors, to decide whether the vector store needs
 * HNSW. For each dimension and size: add time, single-query search time
 * (the language server asks one question at a time), recall@10 of HNSW
 * against the exact answer at a few efSearch values, and the store itself
 * (idx_vecstore_add in batches of 64, save, open). Also reports whether OpenMP
 * threads burn CPU while the process idles after a search.
 *
 *   bench_vectors [--dims 128,384] [--sizes 10000,50000,100000,300000]
 *                 [--queries 200] [--data random|lowrank] [--no-hnsw] [--no-store]
 *
 * --data random draws vectors uniformly on the sphere (full intrinsic
 * dimension: the hardest case for HNSW); lowrank draws them from a random
 * 32-dimensional subspace plus a little noise, nearer to how text
 * embeddings concentrate. Two query sets: "random" (drawn like the data)
 * and "near" (a stored vector plus noise, cosine about 0.8 to it: a
 * question close to one chunk).
 *
 * Search times are medians over both query sets (the box may be shared).
 * "HNSW CPU" is process CPU time per isolated query (search, then 50 ms
 * idle), which includes OpenMP workers spinning after the search.
 */
#include "index/dense/vec_int.h"

#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/index_factory_c.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { K = 10, MAX_LIST = 16 };

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_gauss(Rng *r)
{
    double u1 = ((double)(rng_next(r) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(rng_next(r) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void normalise(float *v, int d)
{
    double s = 0;
    for (int j = 0; j < d; j++)
        s += (double)v[j] * v[j];
    float inv = (float)(1.0 / sqrt(s));
    for (int j = 0; j < d; j++)
        v[j] *= inv;
}

enum { LOWRANK = 32 };

/* basis: NULL for uniform on the sphere, else d x LOWRANK */
static void random_unit(Rng *r, const float *basis, float *v, int d)
{
    if (!basis) {
        for (int j = 0; j < d; j++)
            v[j] = (float)rng_gauss(r);
    } else {
        float z[LOWRANK];
        for (int c = 0; c < LOWRANK; c++)
            z[c] = (float)rng_gauss(r);
        for (int j = 0; j < d; j++) {
            float s = 0.1f * (float)rng_gauss(r);
            for (int c = 0; c < LOWRANK; c++)
                s += basis[(size_t)j * LOWRANK + c] * z[c];
            v[j] = s;
        }
    }
    normalise(v, d);
}

static int parse_list(const char *s, long *out)
{
    int n = 0;
    while (*s && n < MAX_LIST) {
        out[n++] = strtol(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, int rc)
{
    const char *m = faiss_get_last_error();
    fprintf(stderr, "bench_vectors: %s failed (%d): %s\n", what, rc, m ? m : "?");
    exit(2);
}

/* Per-query search times (ms) into ms[nq]; labels into lab[nq * K]. */
static void time_search(const FaissIndex *ix, const float *q, int nq, int d, double *ms, idx_t *lab)
{
    float dist[K];
    for (int i = 0; i < nq; i++) {
        double t0 = now_ms();
        int rc = faiss_Index_search(ix, 1, q + (size_t)i * d, K, dist, lab + (size_t)i * K);
        ms[i] = now_ms() - t0;
        if (rc) die("search", rc);
    }
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static double recall(const idx_t *truth, const idx_t *got, int nq)
{
    long hit = 0;
    for (int i = 0; i < nq; i++)
        for (int a = 0; a < K; a++)
            for (int b = 0; b < K; b++)
                if (got[i * K + a] >= 0 && got[i * K + a] == truth[i * K + b]) hit++;
    return (double)hit / ((double)nq * K);
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
           ru.ru_stime.tv_usec / 1e3;
}

static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

/* CPU burnt by the process while the main thread sleeps 500 ms right after
 * a search: non-zero means OpenMP workers spin instead of sleeping. */
static void idle_report(const char *after)
{
    struct timespec ts = {0, 500 * 1000 * 1000};
    double c0 = cpu_ms();
    nanosleep(&ts, NULL);
    printf("idle after %s: threads %d, CPU %.1f ms during 500 ms asleep\n", after, thread_count(),
           cpu_ms() - c0);
}

/* Process CPU per query when queries come one at a time (as from an
 * editor): each search followed by 50 ms of idling, which is where
 * spinning OpenMP workers show. */
static double isolated_cpu(const FaissIndex *ix, const float *q, int d)
{
    enum { ROUNDS = 10 };
    struct timespec ts = {0, 50 * 1000 * 1000};
    float dist[K];
    idx_t lab[K];
    double c0 = cpu_ms();
    for (int i = 0; i < ROUNDS; i++) {
        int rc = faiss_Index_search(ix, 1, q + (size_t)i * d, K, dist, lab);
        if (rc) die("search", rc);
        nanosleep(&ts, NULL);
    }
    return (cpu_ms() - c0) / ROUNDS;
}

static void bench_store(int d, long n, const float *xb, const idx_t *ids, const float *q, int nq)
{
    char dir[] = "/tmp/cr_benchvec_XXXXXX", path[64];
    if (!mkdtemp(dir)) return;
    snprintf(path, sizeof path, "%s/vectors.faiss", dir);
    VecStore *vs = NULL;
    ErrInfo e = {0};
    if (idx_vecstore_open(path, d, &vs, &e)) {
        fprintf(stderr, "bench_vectors: %s\n", e.msg);
        exit(2);
    }
    double t0 = now_ms();
    for (long i = 0; i < n; i += 64) {
        size_t b = (size_t)(n - i < 64 ? n - i : 64);
        if (idx_vecstore_add(vs, ids + i, xb + (size_t)i * d, b, &e)) {
            fprintf(stderr, "bench_vectors: %s\n", e.msg);
            exit(2);
        }
    }
    double t_add = now_ms() - t0;
    /* a re-embedded file: 64 existing ids replaced */
    t0 = now_ms();
    idx_vecstore_add(vs, ids + n / 2, xb, 64, &e);
    double t_repl = now_ms() - t0;
    t0 = now_ms();
    if (idx_vecstore_save(vs, &e)) {
        fprintf(stderr, "bench_vectors: %s\n", e.msg);
        exit(2);
    }
    double t_save = now_ms() - t0;
    idx_vecstore_close(vs);
    vs = NULL;
    t0 = now_ms();
    idx_vecstore_open(path, d, &vs, &e);
    double t_open = now_ms() - t0;
    double *ms = xcalloc((size_t)nq, sizeof *ms);
    int64_t got[K];
    float sc[K];
    size_t nf;
    for (int i = 0; i < nq; i++) {
        t0 = now_ms();
        idx_vecstore_search(vs, q + (size_t)i * d, K, got, sc, &nf, &e);
        ms[i] = now_ms() - t0;
    }
    struct timespec ts = {0, 50 * 1000 * 1000};
    double c0 = cpu_ms();
    for (int i = 0; i < 10; i++) {
        idx_vecstore_search(vs, q + (size_t)i * d, K, got, sc, &nf, &e);
        nanosleep(&ts, NULL);
    }
    double cpu_q = (cpu_ms() - c0) / 10;
    struct stat st;
    stat(path, &st);
    printf("store d=%d n=%ld: add %.0f ms (batches of 64), replace 64 %.2f ms, save %.0f ms "
           "(%.1f MB), open %.0f ms, search %.2f ms/query (median), CPU %.2f ms/query "
           "(isolated)\n",
           d, n, t_add, t_repl, t_save, st.st_size / 1e6, t_open, median(ms, nq), cpu_q);
    free(ms);
    idx_vecstore_close(vs);
    unlink(path);
    rmdir(dir);
}

static const int efs[] = {16, 64, 128};
enum { N_EF = 3 };

/* One dimension's vectors: nmax stored ones, nq random queries then nq
 * near ones (remade for each size), and the buffers of the searches. */
typedef struct Data {
    int d, nq;
    float *basis, *xb, *q, *noise;
    idx_t *ids, *truth, *lab;
    double *ms;
} Data;

/* What one size measured (HNSW figures stay 0 with --no-hnsw). */
typedef struct Row {
    double t_flat_add, flat_q, build_s, hq[N_EF], rr[N_EF], rn[N_EF], hcpu;
} Row;

static void data_init(Data *x, int d, long nmax, int nq, int lowrank)
{
    memset(x, 0, sizeof *x);
    x->d = d;
    x->nq = nq;
    Rng r = {42 + (uint64_t)d};
    if (lowrank) {
        x->basis = xmalloc(sizeof(float) * (size_t)d * LOWRANK);
        for (size_t j = 0; j < (size_t)d * LOWRANK; j++)
            x->basis[j] = (float)rng_gauss(&r);
    }
    x->xb = xmalloc(sizeof(float) * (size_t)nmax * d);
    x->ids = xmalloc(sizeof(idx_t) * (size_t)nmax);
    for (long i = 0; i < nmax; i++) {
        random_unit(&r, x->basis, x->xb + (size_t)i * d, d);
        x->ids[i] = 1000 + 3 * i;
    }
    /* queries: [0, nq) random, [nq, 2nq) near a stored vector */
    x->q = xmalloc(sizeof(float) * 2 * (size_t)nq * d);
    x->noise = xmalloc(sizeof(float) * (size_t)d);
    for (int i = 0; i < nq; i++)
        random_unit(&r, x->basis, x->q + (size_t)i * d, d);
    x->ms = xmalloc(sizeof(double) * 2 * (size_t)nq);
    x->truth = xmalloc(sizeof(idx_t) * 2 * (size_t)nq * K);
    x->lab = xmalloc(sizeof(idx_t) * 2 * (size_t)nq * K);
}

static void data_release(Data *x)
{
    free(x->basis);
    free(x->xb);
    free(x->ids);
    free(x->q);
    free(x->noise);
    free(x->ms);
    free(x->truth);
    free(x->lab);
}

/* The near queries for the first n stored vectors. */
static void near_queries(Data *x, long n)
{
    int d = x->d, nq = x->nq;
    Rng rq = {7 + (uint64_t)n};
    for (int i = 0; i < nq; i++) {
        float *v = x->q + (size_t)(nq + i) * d;
        memcpy(v, x->xb + (size_t)(rng_next(&rq) % (uint64_t)n) * d, sizeof(float) * d);
        random_unit(&rq, NULL, x->noise, d);
        for (int j = 0; j < d; j++)
            v[j] += 0.75f * x->noise[j];
        normalise(v, d);
    }
}

/* Exact search over the first n vectors; its labels are the truth. */
static void bench_flat(Data *x, long n, int first, Row *row)
{
    int d = x->d, nq = x->nq, rc;
    FaissIndexFlatIP *flat = NULL;
    FaissIndexIDMap *fmap = NULL;
    if ((rc = faiss_IndexFlatIP_new_with(&flat, d))) die("IndexFlatIP", rc);
    if ((rc = faiss_IndexIDMap_new(&fmap, flat))) die("IndexIDMap", rc);
    faiss_IndexIDMap_set_own_fields(fmap, 1);
    double t0 = now_ms();
    if ((rc = faiss_Index_add_with_ids(fmap, n, x->xb, x->ids))) die("add flat", rc);
    row->t_flat_add = now_ms() - t0;
    /* sub-indexes, labels are positions: IndexIDMap::search would add
     * an OpenMP label translation (see vectors.c) */
    time_search(faiss_IndexIDMap_sub_index(fmap), x->q, 2 * nq, d, x->ms, x->truth);
    row->flat_q = median(x->ms, 2 * nq);
    if (first) idle_report("a flat search");
    faiss_Index_free(fmap);
}

/* HNSW32,Flat over the first n vectors at each efSearch. */
static void bench_hnsw(Data *x, long n, int first, Row *row)
{
    int d = x->d, nq = x->nq, rc;
    FaissIndex *h = NULL;
    FaissIndexIDMap *hmap = NULL;
    FaissParameterSpace *ps = NULL;
    if ((rc = faiss_index_factory(&h, d, "HNSW32,Flat", METRIC_INNER_PRODUCT)))
        die("factory HNSW32,Flat", rc);
    if ((rc = faiss_IndexIDMap_new(&hmap, h))) die("IndexIDMap", rc);
    faiss_IndexIDMap_set_own_fields(hmap, 1);
    double t0 = now_ms();
    if ((rc = faiss_Index_add_with_ids(hmap, n, x->xb, x->ids))) die("add HNSW", rc);
    row->build_s = (now_ms() - t0) / 1e3;
    if ((rc = faiss_ParameterSpace_new(&ps))) die("ParameterSpace", rc);
    for (int ei = 0; ei < N_EF; ei++) {
        if ((rc = faiss_ParameterSpace_set_index_parameter(ps, hmap, "efSearch", efs[ei])))
            die("efSearch", rc);
        time_search(faiss_IndexIDMap_sub_index(hmap), x->q, 2 * nq, d, x->ms, x->lab);
        row->hq[ei] = median(x->ms, 2 * nq);
        row->rr[ei] = recall(x->truth, x->lab, nq);
        row->rn[ei] = recall(x->truth + (size_t)nq * K, x->lab + (size_t)nq * K, nq);
        if (efs[ei] == 64) row->hcpu = isolated_cpu(faiss_IndexIDMap_sub_index(hmap), x->q, d);
    }
    if (first) idle_report("an HNSW search");
    faiss_ParameterSpace_free(ps);
    faiss_Index_free(hmap);
}

int main(int argc, char **argv)
{
    long dims[MAX_LIST] = {128, 384}, sizes[MAX_LIST] = {10000, 50000, 100000, 300000};
    int n_dims = 2, n_sizes = 4, nq = 200, hnsw = 1, store = 1, lowrank = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dims") && i + 1 < argc)
            n_dims = parse_list(argv[++i], dims);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            n_sizes = parse_list(argv[++i], sizes);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nq = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--data") && i + 1 < argc)
            lowrank = !strcmp(argv[++i], "lowrank");
        else if (!strcmp(argv[i], "--no-hnsw"))
            hnsw = 0;
        else if (!strcmp(argv[i], "--no-store"))
            store = 0;
        else {
            fprintf(stderr, "usage: bench_vectors [--dims 128,384] [--sizes 10000,...] "
                            "[--queries N] [--data random|lowrank] [--no-hnsw] [--no-store]\n");
            return 1;
        }
    }
    if (nq < 1) nq = 1;
    printf("data: %s\n\n", lowrank ? "lowrank" : "random");
    printf("| dim | n | flat add ms | flat ms/query | HNSW build s | HNSW ms/query ef16/64/128 "
           "| HNSW CPU ms/query ef64 | recall@10 random ef16/64/128 "
           "| recall@10 near ef16/64/128 |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    fflush(stdout);
    for (int di = 0; di < n_dims; di++) {
        int d = (int)dims[di];
        long nmax = 0;
        for (int si = 0; si < n_sizes; si++)
            if (sizes[si] > nmax) nmax = sizes[si];
        Data x;
        data_init(&x, d, nmax, nq, lowrank);
        for (int si = 0; si < n_sizes; si++) {
            long n = sizes[si];
            int first = di == 0 && si == 0;
            Row row = {0};
            near_queries(&x, n);
            bench_flat(&x, n, first, &row);
            if (hnsw) bench_hnsw(&x, n, first, &row);
            printf("| %d | %ld | %.0f | %.3f | %.1f | %.3f / %.3f / %.3f | %.2f "
                   "| %.3f / %.3f / %.3f | %.3f / %.3f / %.3f |\n",
                   d, n, row.t_flat_add, row.flat_q, row.build_s, row.hq[0], row.hq[1], row.hq[2],
                   row.hcpu, row.rr[0], row.rr[1], row.rr[2], row.rn[0], row.rn[1], row.rn[2]);
            fflush(stdout);
            if (store) {
                bench_store(d, n, x.xb, x.ids, x.q, nq);
                fflush(stdout);
            }
        }
        data_release(&x);
    }
    return 0;
}
