/*
 * vec_util.h - fixtures for the vector store's tests (test_vectors.c,
 * test_vec_journal.c): a scratch directory and a small store whose search
 * results are exact in float.
 */
#ifndef CODERAG_VEC_UTIL_H
#define CODERAG_VEC_UTIL_H

#include "test.h"
#include "index/dense/vec_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { D = 8 };

/* ---------------------------------------------------------------- fixtures */

typedef struct TmpDir {
    char dir[64];
    char path[128]; /* <dir>/vectors.faiss */
} TmpDir;

static void tmp_init(TmpDir *t)
{
    strcpy(t->dir, "/tmp/cr_vectors_XXXXXX");
    if (!mkdtemp(t->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(t->path, sizeof t->path, "%s/vectors.faiss", t->dir);
}

static void tmp_release(TmpDir *t)
{
    DIR *d = opendir(t->dir);
    struct dirent *de;
    char p[512];
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", t->dir, de->d_name);
        if (unlink(p) != 0) rmdir(p);
    }
    if (d) closedir(d);
    rmdir(t->dir);
}

/* Vector i (i in 0..7) has the single component i set to w: inner products
 * with a query are exact in float. */
static void basis(float *v, int i, float w)
{
    memset(v, 0, sizeof(float) * D);
    v[i % D] = w;
}

/* ids 10..15 on axes 0..5 with weights 1..6; query (1,1,1,1,1,1,1,1) scores
 * them 1..6, so the order is 15, 14, 13, ... */
static VecStore *open_filled(const char *path)
{
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(path, D, &vs, NULL), CR_OK);
    float v[6 * D];
    int64_t ids[6];
    for (int i = 0; i < 6; i++) {
        basis(v + i * D, i, (float)(i + 1));
        ids[i] = 10 + i;
    }
    CHECK_INT(idx_vecstore_add(vs, ids, v, 6, NULL), CR_OK);
    return vs;
}

static const float ones[D] = {1, 1, 1, 1, 1, 1, 1, 1};

static void check_search(const VecStore *vs, const float *q, size_t k, const int64_t *want_ids,
                         const float *want_scores, size_t want_n)
{
    int64_t ids[32];
    float sc[32];
    size_t n = 99;
    CHECK_INT(idx_vecstore_search(vs, q, k, ids, sc, &n, NULL), CR_OK);
    CHECK_INT(n, want_n);
    for (size_t i = 0; i < n && i < want_n; i++) {
        CHECK_INT(ids[i], want_ids[i]);
        CHECK(sc[i] == want_scores[i]);
    }
}

static void check_ids(const VecStore *vs, const int64_t *want, size_t want_n)
{
    int64_t *ids = NULL;
    size_t n = 99;
    CHECK_INT(idx_vecstore_ids(vs, &ids, &n, NULL), CR_OK);
    CHECK_INT(n, want_n);
    for (size_t i = 0; i < n && i < want_n; i++)
        CHECK_INT(ids[i], want[i]);
    free(ids);
}

#endif
