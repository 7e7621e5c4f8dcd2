/* The vector store (index/dense/vectors.c): exact search, replace, remove, ids,
 * persistence, and what happens to files it must not trust. */
#include "test.h"
#include "index/dense/vec_int.h"
#include "vec_util.h"

#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/index_io_c.h>

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

/* ---------------------------------------------------------------- tests */

static void test_round_trip(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    CHECK_INT(idx_vecstore_dim(vs), D);
    CHECK_INT(idx_vecstore_count(vs), 6);
    const int64_t top[3] = {15, 14, 13};
    const float top_s[3] = {6, 5, 4};
    check_search(vs, ones, 3, top, top_s, 3);
    float q[D];
    basis(q, 2, 1); /* only id 12 scores (3); the rest 0 */
    int64_t id;
    float s;
    size_t n;
    CHECK_INT(idx_vecstore_search(vs, q, 1, &id, &s, &n, NULL), CR_OK);
    CHECK_INT(n, 1);
    CHECK_INT(id, 12);
    CHECK(s == 3);

    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    CHECK_INT(count_files(t.dir), 1); /* no temporary left behind */

    for (int dim = 0; dim <= D; dim += D) { /* 0: take it from the file */
        vs = NULL;
        CHECK_INT(idx_vecstore_open(t.path, dim, &vs, NULL), CR_OK);
        if (!vs) break;
        CHECK_INT(idx_vecstore_dim(vs), D);
        CHECK_INT(idx_vecstore_count(vs), 6);
        check_search(vs, ones, 3, top, top_s, 3);
        const int64_t all[6] = {10, 11, 12, 13, 14, 15};
        check_ids(vs, all, 6);
        idx_vecstore_close(vs);
    }
    tmp_release(&t);
}

static void test_replace(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    /* id 10 (score 1) moves to axis 7 with weight 9: now the best */
    float v[D];
    basis(v, 7, 9);
    int64_t id = 10;
    CHECK_INT(idx_vecstore_add(vs, &id, v, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 6);
    const int64_t top[4] = {10, 15, 14, 13};
    const float top_s[4] = {9, 6, 5, 4};
    check_search(vs, ones, 4, top, top_s, 4);
    float q[D];
    basis(q, 0, 1); /* the old vector of id 10 is gone: nothing scores on axis 0 */
    int64_t got[6];
    float sc[6];
    size_t n;
    CHECK_INT(idx_vecstore_search(vs, q, 6, got, sc, &n, NULL), CR_OK);
    CHECK_INT(n, 6);
    for (size_t i = 0; i < n; i++)
        CHECK(sc[i] == 0);

    /* the same id twice in one batch: the last vector wins */
    float two[2 * D];
    basis(two, 0, 7);
    basis(two + D, 1, 8);
    int64_t dup[2] = {20, 20};
    CHECK_INT(idx_vecstore_add(vs, dup, two, 2, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 7);
    const int64_t top2[2] = {10, 20};
    const float top2_s[2] = {9, 8};
    check_search(vs, ones, 2, top2, top2_s, 2);

    /* replaced ids survive a save and reopen */
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    check_search(vs, ones, 4, (const int64_t[]){10, 20, 15, 14}, (const float[]){9, 8, 6, 5}, 4);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

static void test_remove_and_ids(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    const int64_t gone[4] = {15, 13, 999, 15}; /* absent and repeated ids are ignored */
    CHECK_INT(idx_vecstore_remove(vs, gone, 4, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 4);
    const int64_t left[4] = {10, 11, 12, 14};
    check_ids(vs, left, 4);
    const int64_t top[3] = {14, 12, 11};
    const float top_s[3] = {5, 3, 2};
    check_search(vs, ones, 3, top, top_s, 3);

    CHECK_INT(idx_vecstore_remove(vs, left, 4, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 0);
    check_ids(vs, NULL, 0);
    check_search(vs, ones, 5, NULL, NULL, 0);
    CHECK_INT(idx_vecstore_remove(vs, left, 4, NULL), CR_OK); /* nothing left: still fine */

    /* an emptied store saves and reopens empty */
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 0, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_dim(vs), D);
    CHECK_INT(idx_vecstore_count(vs), 0);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

static void test_empty_and_k(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 0);
    check_search(vs, ones, 10, NULL, NULL, 0);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK); /* nothing changed: nothing written */
    CHECK_INT(count_files(t.dir), 0);

    float v[3 * D];
    int64_t ids[3] = {7, 8, 9};
    for (int i = 0; i < 3; i++)
        basis(v + i * D, i, (float)(3 - i));
    CHECK_INT(idx_vecstore_add(vs, ids, v, 3, NULL), CR_OK);
    const int64_t all[3] = {7, 8, 9};
    const float all_s[3] = {3, 2, 1};
    check_search(vs, ones, 10, all, all_s, 3); /* k larger than count */
    int64_t id;
    float s;
    size_t n = 99;
    CHECK_INT(idx_vecstore_search(vs, ones, 0, &id, &s, &n, NULL), CR_OK); /* k = 0 */
    CHECK_INT(n, 0);
    idx_vecstore_close(vs);

    /* dimension 0 and no file: empty, finds nothing, cannot take vectors */
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 0, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_dim(vs), 0);
    check_search(vs, ones, 10, NULL, NULL, 0);
    ErrInfo e = {0};
    CHECK_INT(idx_vecstore_add(vs, ids, v, 3, &e), CR_EINVAL);
    CHECK_INT(e.code, CR_EINVAL);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    CHECK_INT(count_files(t.dir), 0);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

static void test_bad_arguments(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, -1, &vs, NULL), CR_EINVAL);
    CHECK(vs == NULL);
    CHECK_INT(idx_vecstore_open(NULL, D, &vs, NULL), CR_EINVAL);
    vs = open_filled(t.path);
    int64_t got[4];
    float sc[4];
    size_t n = 99;
    ErrInfo e = {0};
    float q[D] = {1, 1, 1, NAN, 1, 1, 1, 1};
    CHECK_INT(idx_vecstore_search(vs, q, 4, got, sc, &n, &e), CR_EINVAL); /* not a query */
    CHECK_INT(n, 0);
    CHECK_INT(idx_vecstore_search(vs, NULL, 4, got, sc, &n, NULL), CR_EINVAL);
    CHECK_INT(idx_vecstore_search(vs, ones, 4, NULL, sc, &n, NULL), CR_EINVAL);
    float v[D];
    basis(v, 0, 1);
    int64_t neg = -1;
    CHECK_INT(idx_vecstore_add(vs, &neg, v, 1, NULL), CR_EINVAL);
    v[1] = INFINITY;
    int64_t ok_id = 77;
    CHECK_INT(idx_vecstore_add(vs, &ok_id, v, 1, NULL), CR_EINVAL);
    CHECK_INT(idx_vecstore_count(vs), 6); /* rejected adds change nothing */
    CHECK_INT(idx_vecstore_ids(vs, NULL, &n, NULL), CR_EINVAL);
    CHECK_INT(idx_vecstore_add(vs, NULL, NULL, 0, NULL), CR_OK); /* nothing to add */
    CHECK_INT(idx_vecstore_remove(vs, NULL, 0, NULL), CR_OK);
    idx_vecstore_close(vs);
    idx_vecstore_close(NULL);
    tmp_release(&t);
}

static void test_dimension_mismatch(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);

    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 2 * D, &vs, NULL), CR_OK); /* warns, discards */
    CHECK_INT(idx_vecstore_dim(vs), 2 * D);
    CHECK_INT(idx_vecstore_count(vs), 0);
    float q[2 * D] = {1};
    check_search(vs, q, 5, NULL, NULL, 0);
    /* the next save replaces the old file with the new dimension */
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 0, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_dim(vs), 2 * D);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

/* Each damaged file opens as an empty store with the requested dimension
 * (or none), and a save then replaces it. */
static void expect_discarded(const char *path, int dim)
{
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(path, dim, &vs, NULL), CR_OK);
    CHECK(vs != NULL);
    if (!vs) return;
    CHECK_INT(idx_vecstore_dim(vs), dim);
    CHECK_INT(idx_vecstore_count(vs), 0);
    check_search(vs, ones, 3, NULL, NULL, 0);
    idx_vecstore_close(vs);
}

static void test_corrupt_files(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    StrBuf good;
    sb_init(&good);
    CHECK_INT(sb_read_file(&good, t.path, 0, NULL), CR_OK);
    CHECK(good.len > 48);

    /* garbage */
    unsigned char junk[4096];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof junk; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        junk[i] = (unsigned char)x;
    }
    write_bytes(t.path, junk, sizeof junk);
    expect_discarded(t.path, D);
    expect_discarded(t.path, 0);

    /* garbage that starts like a FAISS IDMap ("IxMp") and claims a huge size */
    memcpy(junk, "IxMp", 4);
    memset(junk + 4, 0x7f, 64);
    write_bytes(t.path, junk, 512);
    expect_discarded(t.path, D);

    /* truncations: empty, mid-payload, one byte short, trailer only */
    const size_t cuts[] = {0, 1, good.len / 2, good.len - 1, good.len - 48};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        write_bytes(t.path, good.buf, cuts[i]);
        expect_discarded(t.path, D);
    }
    write_bytes(t.path, good.buf + good.len - 48, 48);
    expect_discarded(t.path, D);

    /* one flipped bit in the payload, in the trailer */
    const size_t flips[] = {good.len / 3, good.len - 20, good.len - 1};
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        good.buf[flips[i]] ^= 0x10;
        write_bytes(t.path, good.buf, good.len);
        expect_discarded(t.path, D);
        good.buf[flips[i]] ^= 0x10;
    }

    /* trailing bytes after a good file */
    sb_add(&good, "xx", 2);
    write_bytes(t.path, good.buf, good.len);
    expect_discarded(t.path, D);
    good.len -= 2;

    /* a genuine FAISS index without our trailer */
    FaissIndexFlatIP *flat = NULL;
    CHECK_INT(faiss_IndexFlatIP_new_with(&flat, D), 0);
    CHECK_INT(faiss_write_index_fname(flat, t.path), 0);
    faiss_Index_free(flat);
    expect_discarded(t.path, D);

    /* the discarded file is replaced by the next save, even by a store
     * without a dimension (which removes it) */
    write_bytes(t.path, junk, 100);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 0, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    CHECK_INT(count_files(t.dir), 0);

    /* the intact bytes still load */
    write_bytes(t.path, good.buf, good.len);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 6);
    idx_vecstore_close(vs);

    /* a directory where the file should be is an I/O error, not a discard */
    unlink(t.path);
    CHECK_INT(mkdir(t.path, 0755), 0);
    vs = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, &e), CR_EIO);
    CHECK(vs == NULL);
    CHECK(e.msg[0] != '\0');
    rmdir(t.path);

    sb_release(&good);
    tmp_release(&t);
}

static void test_atomic_save(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_filled(t.path);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    struct stat st0, st1;
    CHECK_INT(stat(t.path, &st0), 0);

    /* a save that "crashed" half-way left its temporary behind */
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp-4242", t.path);
    write_bytes(tmp, "IxMp half a file", 16);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), 6);

    /* no change, no write */
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    CHECK_INT(stat(t.path, &st1), 0);
    CHECK(st1.st_ino == st0.st_ino);

    /* a change too big for the journal is written to a new file renamed
     * over the old one (smaller ones: test_vec_journal.c) */
    idx_vecstore_close(vs);
    char log[160];
    snprintf(log, sizeof log, "%s.log", t.path);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_remove(vs, (const int64_t[]){10}, 1, NULL), CR_OK);
    float big[D];
    for (int64_t id = 100; id < 100 + 300000 / (int64_t)sizeof big; id++) {
        basis(big, (int)id, 1);
        CHECK_INT(idx_vecstore_add(vs, &id, big, 1, NULL), CR_OK); /* past the journal's room */
    }
    CHECK_INT(idx_vecstore_remove(vs, (const int64_t[]){10}, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    CHECK_INT(stat(t.path, &st1), 0);
    CHECK(st1.st_ino != st0.st_ino);
    CHECK(access(log, F_OK) != 0);
    CHECK_INT(count_files(t.dir), 2); /* the file and the stranger's leftover */
    idx_vecstore_close(vs);

    /* a save that cannot write (the directory is gone) fails cleanly and
     * keeps the store dirty */
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    int64_t before = idx_vecstore_count(vs);
    CHECK_INT(idx_vecstore_remove(vs, (const int64_t[]){11}, 1, NULL), CR_OK);
    unlink(tmp);
    unlink(t.path);
    rmdir(t.dir);
    ErrInfo e = {0};
    CHECK_INT(idx_vecstore_save(vs, &e), CR_EIO);
    CHECK(strstr(e.msg, "tmp-") != NULL);
    CHECK_INT(mkdir(t.dir, 0700), 0);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, D, &vs, NULL), CR_OK);
    CHECK_INT(idx_vecstore_count(vs), before - 1);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

/* Random adds, replaces and removes against a brute-force model. */
static void test_against_model(void)
{
    enum { MD = 16, IDS = 400, STEPS = 60, K = 7 };
    static float model[IDS][MD];
    static int present[IDS];
    memset(present, 0, sizeof present);
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, MD, &vs, NULL), CR_OK);
    uint64_t x = 0x2545F4914F6CDD1Dull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
    for (int step = 0; step < STEPS && vs; step++) {
        int64_t ids[32];
        float v[32 * MD];
        size_t n = RND() % 32 + 1;
        for (size_t i = 0; i < n; i++)
            ids[i] = (int64_t)(RND() % IDS) * 1000003; /* large, scattered ids */
        if (RND() % 3) {
            for (size_t i = 0; i < n * MD; i++)
                v[i] = (float)((double)(RND() % 2001) / 1000.0 - 1.0);
            CHECK_INT(idx_vecstore_add(vs, ids, v, n, NULL), CR_OK);
            for (size_t i = 0; i < n; i++) {
                memcpy(model[ids[i] / 1000003], v + i * MD, sizeof(float) * MD);
                present[ids[i] / 1000003] = 1;
            }
        } else {
            CHECK_INT(idx_vecstore_remove(vs, ids, n, NULL), CR_OK);
            for (size_t i = 0; i < n; i++)
                present[ids[i] / 1000003] = 0;
        }
        if (step == STEPS / 2) { /* persistence in the middle */
            CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
            idx_vecstore_close(vs);
            vs = NULL;
            CHECK_INT(idx_vecstore_open(t.path, MD, &vs, NULL), CR_OK);
            if (!vs) break;
        }
        int64_t want_n = 0;
        for (int i = 0; i < IDS; i++)
            want_n += present[i];
        CHECK_INT(idx_vecstore_count(vs), want_n);

        float q[MD];
        for (int j = 0; j < MD; j++)
            q[j] = (float)((double)(RND() % 2001) / 1000.0 - 1.0);
        int64_t got[K];
        float sc[K];
        size_t nf = 0;
        CHECK_INT(idx_vecstore_search(vs, q, K, got, sc, &nf, NULL), CR_OK);
        CHECK_INT(nf, want_n < K ? want_n : K);
        /* the model's best scores, in order; ids compared via scores */
        int taken[IDS] = {0};
        for (size_t r = 0; r < nf; r++) {
            int best = -1;
            float best_s = 0;
            for (int i = 0; i < IDS; i++) {
                if (!present[i] || taken[i]) continue;
                float s = 0;
                for (int j = 0; j < MD; j++)
                    s += model[i][j] * q[j];
                if (best < 0 || s > best_s) best = i, best_s = s;
            }
            taken[best] = 1;
            CHECK(fabsf(sc[r] - best_s) < 1e-4f);
            CHECK(got[r] % 1000003 == 0 && present[got[r] / 1000003]);
        }
        int64_t *all = NULL;
        size_t n_all = 0;
        CHECK_INT(idx_vecstore_ids(vs, &all, &n_all, NULL), CR_OK);
        CHECK_INT(n_all, want_n);
        for (size_t i = 0, j = 0; i < IDS; i++) {
            if (!present[i]) continue;
            CHECK(j < n_all && all[j] == (int64_t)i * 1000003);
            j++;
        }
        free(all);
    }
#undef RND
    idx_vecstore_close(vs);
    tmp_release(&t);
}

/* The scan's selection against a full sort by (score desc, row asc), with
 * many equal scores (a handful of distinct rows repeated) and every k. */
static int by_score_then_row(const void *a, const void *b)
{
    const float *x = a, *y = b; /* score, row */
    if (x[0] != y[0]) return x[0] < y[0] ? 1 : -1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static void test_scan_selection(void)
{
    enum { N = 300, SD = 4 };
    static float rows[N * SD], want[N][2], got_s[N];
    static size_t got_r[N];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t r = 0; r < N; r++)
        for (int d = 0; d < SD; d++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            rows[r * SD + d] = (float)(x % 5) - 2; /* few distinct rows: many ties */
        }
    const float q[SD] = {1, 0.5f, -1, 2};
    for (size_t r = 0; r < N; r++) {
        want[r][0] = 0;
        for (int d = 0; d < SD; d++)
            want[r][0] += rows[r * SD + d] * q[d];
        want[r][1] = (float)r;
    }
    qsort(want, N, sizeof want[0], by_score_then_row);
    for (size_t k = 1; k <= N + 5; k += k < 20 ? 1 : 37) {
        size_t n = idx_vec_scan(rows, N, SD, q, k, got_r, got_s);
        CHECK_INT(n, k < N ? k : N);
        for (size_t i = 0; i < n; i++) {
            CHECK(got_s[i] == want[i][0]);
            CHECK_INT(got_r[i], (size_t)want[i][1]);
        }
    }
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_replace);
    RUN(test_remove_and_ids);
    RUN(test_empty_and_k);
    RUN(test_bad_arguments);
    RUN(test_dimension_mismatch);
    RUN(test_corrupt_files);
    RUN(test_atomic_save);
    RUN(test_against_model);
    RUN(test_scan_selection);
    return test_summary();
}
