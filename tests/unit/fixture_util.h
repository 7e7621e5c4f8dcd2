/*
 * fixture_util.h - a fresh index of a fixture repository in a temporary
 * folder, for tests that search or rank over it.
 */
#ifndef CODERAG_FIXTURE_UTIL_H
#define CODERAG_FIXTURE_UTIL_H

#include "idx.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The index in index_dir of the tree at root, opened (flags: idx_open's)
 * on two threads, not updated; NULL on failure (said on stderr). */
static inline IdxStore *fixture_open(const char *root, const char *index_dir, unsigned flags)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 2};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, flags, &st, &e)) fprintf(stderr, "idx_open: %s\n", e.msg);
    CHECK(st != NULL);
    return st;
}

/* A fresh index of the fixture at root in tmp (a mkdtemp template); NULL on failure. */
static inline IdxStore *fixture_store(const char *root, char *tmp)
{
    CHECK(mkdtemp(tmp) != NULL);
    IdxConfig cfg = {.root = root, .index_dir = tmp, .threads = 1};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    return st;
}

/* A fresh index (two threads) of a copy of FIXTURE_DIR/name: the copy in
 * root (a mkdtemp template of at most 200 characters), the index in index
 * (root + ".idx"; 256 bytes). NULL on failure. */
static inline IdxStore *fixture_copy_store(const char *name, char *root, char *index)
{
    CHECK(mkdtemp(root) != NULL);
    snprintf(index, 256, "%.200s.idx", root);
    char from[512];
    snprintf(from, sizeof from, "%s/%s", FIXTURE_DIR, name);
    test_sh("cp -R '%s/.' '%s'", from, root);
    IdxConfig cfg = {.root = root, .index_dir = index, .threads = 2};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_OK);
    return st;
}

/* Closes st and removes its folder. */
static inline void fixture_drop(IdxStore *st, const char *tmp)
{
    idx_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK_INT(system(cmd), 0);
}

#endif
