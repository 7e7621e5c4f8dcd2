/*
 * index_util.h - helpers for tests that look into an index built from a
 * fixture repository.
 */
#ifndef CODERAG_INDEX_UTIL_H
#define CODERAG_INDEX_UTIL_H

#include "idx.h"

#include <stdio.h>
#include <string.h>

/* The id of the chunk of `path` whose symbol is `symbol` ("" for module
 * code), or 0 (said on stderr). */
static int64_t chunk_id(IdxStore *st, const char *path, const char *symbol)
{
    IdxChunk *v = NULL;
    size_t n = 0;
    int64_t id = 0;
    idx_file_chunks(st, path, &v, &n, NULL);
    for (size_t i = 0; i < n && !id; i++)
        if (!strcmp(v[i].symbol, symbol)) id = v[i].id;
    idx_chunks_free(v, n);
    if (!id) fprintf(stderr, "no chunk %s:%s\n", path, symbol);
    return id;
}

#endif
