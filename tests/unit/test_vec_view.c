/* The read-only view of a vector file (index/dense/vec_view.c): the same hits as
 * the FAISS store of the same file, and no view of a file it cannot serve
 * whole (a journal to replay, damage, not a vector file), which the store
 * then reads, repairs or reports. */
#include "index/dense/vec_int.h"
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct TmpDir {
    char dir[64];
    char path[128]; /* <dir>/vectors.faiss */
} TmpDir;

static void tmp_init(TmpDir *t)
{
    strcpy(t->dir, "/tmp/cr_vecview_XXXXXX");
    if (!mkdtemp(t->dir)) exit(1);
    snprintf(t->path, sizeof t->path, "%s/vectors.faiss", t->dir);
}

static void tmp_release(TmpDir *t)
{
    test_sh("rm -rf '%s'%s", t->dir, "");
}

enum { N_VECS = 700, DIM = 24, K = 40 };

/* Deterministic pseudo-random vectors with many equal scores (components
 * from a few values), so that ties and their order are exercised. */
static float component(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((int)((*s >> 16) % 7) - 3) * 0.25f;
}

static VecStore *open_random(const char *path, int64_t first_id)
{
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(path, DIM, &vs, NULL), CR_OK);
    if (!vs) return NULL;
    float *v = xmalloc(sizeof(float) * N_VECS * DIM);
    int64_t *ids = xmalloc(sizeof(int64_t) * N_VECS);
    unsigned s = 7;
    for (int i = 0; i < N_VECS; i++) {
        for (int d = 0; d < DIM; d++)
            v[i * DIM + d] = component(&s);
        ids[i] = first_id + (i * 7919) % 100000; /* not in row order */
    }
    CHECK_INT(idx_vecstore_add(vs, ids, v, N_VECS, NULL), CR_OK);
    free(v);
    free(ids);
    return vs;
}

/* The store's and the view's top K for a few queries, identical. */
static void check_same(const VecStore *vs, const VecView *view)
{
    unsigned s = 99;
    for (int q = 0; q < 12; q++) {
        float query[DIM];
        for (int d = 0; d < DIM; d++)
            query[d] = component(&s);
        int64_t a[K], b[K];
        float sa[K], sb[K];
        size_t na = 0, nb = 0;
        CHECK_INT(idx_vecstore_search(vs, query, K, a, sa, &na, NULL), CR_OK);
        CHECK_INT(idx_vecview_search(view, query, K, b, sb, &nb, NULL), CR_OK);
        CHECK_INT(nb, na);
        CHECK(na == nb && !memcmp(a, b, na * sizeof *a) && !memcmp(sa, sb, na * sizeof *sa));
    }
}

static void test_same_hits(void)
{
    TmpDir t;
    tmp_init(&t);
    VecStore *vs = open_random(t.path, 1);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    /* read back by both */
    vs = NULL;
    CHECK_INT(idx_vecstore_open(t.path, 0, &vs, NULL), CR_OK);
    VecView *view = NULL;
    CHECK_INT(idx_vecview_open(t.path, &view), 1);
    if (vs && view) {
        CHECK_INT(idx_vecview_dim(view), DIM);
        CHECK_INT(idx_vecview_count(view), idx_vecstore_count(vs));
        check_same(vs, view);
        CHECK_INT(idx_vecview_changed_on_disk(view, t.path), 0);
    }
    /* a change journaled after the file: the view no longer serves it */
    float extra[DIM] = {1};
    int64_t id = 555555;
    CHECK_INT(idx_vecstore_add(vs, &id, extra, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    if (view) CHECK_INT(idx_vecview_changed_on_disk(view, t.path), 1);
    idx_vecview_close(view);
    view = NULL;
    CHECK_INT(idx_vecview_open(t.path, &view), 0);
    idx_vecstore_close(vs);
    tmp_release(&t);
}

static void test_refused(void)
{
    TmpDir t;
    tmp_init(&t);
    VecView *view = NULL;
    CHECK_INT(idx_vecview_open(t.path, &view), 0); /* none */
    VecStore *vs = open_random(t.path, 1);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    struct stat st;
    CHECK_INT(stat(t.path, &st), 0);
    /* a flipped byte among the vectors: the checksum fails */
    int fd = open(t.path, O_RDWR);
    CHECK(fd >= 0);
    unsigned char b = 0;
    CHECK_INT(pread(fd, &b, 1, 500), 1);
    b ^= 0x40;
    CHECK_INT(pwrite(fd, &b, 1, 500), 1);
    CHECK_INT(idx_vecview_open(t.path, &view), 0);
    b ^= 0x40;
    CHECK_INT(pwrite(fd, &b, 1, 500), 1);
    CHECK_INT(idx_vecview_open(t.path, &view), 1);
    idx_vecview_close(view);
    /* cut short */
    CHECK_INT(ftruncate(fd, st.st_size - 1), 0);
    close(fd);
    CHECK_INT(idx_vecview_open(t.path, &view), 0);
    tmp_release(&t);
}

int main(void)
{
    RUN(test_same_hits);
    RUN(test_refused);
    return test_summary();
}
