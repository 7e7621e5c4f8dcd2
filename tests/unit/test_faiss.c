/* The FAISS C API as coderag uses it (through index/dense/faiss_c_shim.cpp when
 * the system has no libfaiss_c). */
#include "test.h"

#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/c_api/index_io_c.h>

#include <stdlib.h>
#include <unistd.h>

enum { D = 8, N = 10, K = 3 };

/* Vector i has the single component i % 8 set to i + 1, and the query is
 * (1, 2, ..., 8), so the inner products are (i + 1) * (i % 8 + 1): exact in
 * float and all distinct. */
static void make_data(float *xb, idx_t *ids, float *q)
{
    memset(xb, 0, sizeof(float) * N * D);
    for (int i = 0; i < N; i++) {
        xb[i * D + i % D] = (float)(i + 1);
        ids[i] = 100 + i;
    }
    for (int j = 0; j < D; j++)
        q[j] = (float)(j + 1);
}

static void check_top(const FaissIndex *index, const float *q, const idx_t *want_ids,
                      const float *want_scores)
{
    float dist[K];
    idx_t labels[K];
    CHECK_INT(faiss_Index_search(index, 1, q, K, dist, labels), 0);
    for (int i = 0; i < K; i++) {
        CHECK_INT(labels[i], want_ids[i]);
        CHECK(dist[i] == want_scores[i]);
    }
}

static void test_flat_idmap(void)
{
    float xb[N * D], q[D];
    idx_t ids[N];
    make_data(xb, ids, q);

    FaissIndexFlatIP *flat = NULL;
    FaissIndexIDMap *map = NULL;
    FaissIndex *loaded = NULL;
    FaissIDSelectorBatch *batch = NULL;
    char path[] = "/tmp/cr_faiss_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);

    CHECK_INT(faiss_IndexFlatIP_new_with(&flat, D), 0);
    CHECK_INT(faiss_IndexIDMap_new(&map, (FaissIndex *)flat), 0);
    faiss_IndexIDMap_set_own_fields(map, 1);
    CHECK_INT(faiss_IndexIDMap_own_fields(map), 1);
    CHECK_INT(faiss_Index_d(map), D);
    CHECK(faiss_Index_is_trained(map));
    CHECK_INT(faiss_Index_add_with_ids(map, N, xb, ids), 0);
    CHECK_INT(faiss_Index_ntotal(map), N);

    /* scores: id 107 -> 8*8, 106 -> 7*7, 105 -> 6*6, 109 -> 10*2, 104 -> 5*5 */
    const idx_t top[K] = {107, 106, 105};
    const float top_s[K] = {64, 49, 36};
    check_top(map, q, top, top_s);

    const idx_t drop[] = {107, 105};
    size_t removed = 0;
    CHECK_INT(faiss_IDSelectorBatch_new(&batch, 2, drop), 0);
    CHECK_INT(faiss_Index_remove_ids(map, (const FaissIDSelector *)batch, &removed), 0);
    CHECK_INT(removed, 2);
    CHECK_INT(faiss_Index_ntotal(map), N - 2);
    const idx_t after[K] = {106, 104, 109};
    const float after_s[K] = {49, 25, 20};
    check_top(map, q, after, after_s);

    CHECK_INT(faiss_write_index_fname(map, path), 0);
    CHECK_INT(faiss_read_index_fname(path, 0, &loaded), 0);
    CHECK(loaded != NULL);
    if (loaded) {
        CHECK_INT(faiss_Index_ntotal(loaded), N - 2);
        CHECK_INT(faiss_Index_d(loaded), D);
        check_top(loaded, q, after, after_s);
        CHECK_INT(faiss_Index_reset(loaded), 0);
        CHECK_INT(faiss_Index_ntotal(loaded), 0);
    }

    faiss_IDSelector_free((FaissIDSelector *)batch);
    faiss_Index_free(loaded);
    faiss_Index_free(map); /* owns flat */
    unlink(path);
}

static void test_other_constructors(void)
{
    float xb[N * D], q[D];
    idx_t ids[N];
    make_data(xb, ids, q);

    /* IndexFlat with a metric, plain sequential ids */
    FaissIndexFlat *l2 = NULL;
    CHECK_INT(faiss_IndexFlat_new_with(&l2, D, METRIC_L2), 0);
    CHECK_INT(faiss_Index_add(l2, N, xb), 0);
    float dist[1];
    idx_t label[1];
    float probe[D] = {0};
    probe[3] = 4; /* exactly vector 3 */
    CHECK_INT(faiss_Index_search(l2, 1, probe, 1, dist, label), 0);
    CHECK_INT(label[0], 3);
    CHECK(dist[0] == 0);
    faiss_Index_free(l2);

    /* factory + IDMap2 + a range selector */
    FaissIndex *inner = NULL;
    FaissIndexIDMap2 *map2 = NULL;
    FaissIDSelectorRange *range = NULL;
    CHECK_INT(faiss_index_factory(&inner, D, "Flat", METRIC_INNER_PRODUCT), 0);
    CHECK_INT(faiss_IndexIDMap2_new(&map2, inner), 0);
    faiss_IndexIDMap2_set_own_fields(map2, 1);
    CHECK_INT(faiss_IndexIDMap2_own_fields(map2), 1);
    CHECK_INT(faiss_Index_add_with_ids(map2, N, xb, ids), 0);
    size_t removed = 0;
    CHECK_INT(faiss_IDSelectorRange_new(&range, 105, 108), 0);
    CHECK_INT(faiss_Index_remove_ids(map2, (const FaissIDSelector *)range, &removed), 0);
    CHECK_INT(removed, 3);
    const idx_t top[K] = {104, 109, 103};
    const float top_s[K] = {25, 20, 16};
    check_top(map2, q, top, top_s);
    faiss_IDSelector_free((FaissIDSelector *)range);
    faiss_Index_free(map2);

    /* no IDMap in the factory string: an IDMap-wrapped flat index */
    FaissIndex *fx = NULL;
    CHECK_INT(faiss_index_factory(&fx, D, "IDMap,Flat", METRIC_INNER_PRODUCT), 0);
    CHECK_INT(faiss_Index_add_with_ids(fx, N, xb, ids), 0);
    const idx_t full[K] = {107, 106, 105};
    const float full_s[K] = {64, 49, 36};
    check_top(fx, q, full, full_s);
    faiss_Index_free(fx);
}

static void test_errors(void)
{
    FaissIndex *idx = NULL;
    CHECK(faiss_read_index_fname("/nonexistent/dir/none.faiss", 0, &idx) != 0);
    const char *msg = faiss_get_last_error();
    CHECK(msg != NULL && msg[0] != '\0');

    /* a bad factory string and add_with_ids on a bare flat index both throw */
    CHECK(faiss_index_factory(&idx, D, "NoSuchIndex", METRIC_L2) != 0);
    msg = faiss_get_last_error();
    CHECK(msg != NULL && msg[0] != '\0');
    FaissIndexFlatIP *flat = NULL;
    CHECK_INT(faiss_IndexFlatIP_new_with(&flat, D), 0);
    float x[D] = {1};
    idx_t id = 1;
    CHECK(faiss_Index_add_with_ids(flat, 1, x, &id) != 0);
    faiss_Index_free(flat);
    faiss_Index_free(NULL);
    faiss_IDSelector_free(NULL);
}

int main(void)
{
    RUN(test_flat_idmap);
    RUN(test_other_constructors);
    RUN(test_errors);
    return test_summary();
}
