/*
 * shared.c - IdxShared: what every store of a process borrows instead of
 * each holding a copy: the language rows' compiled queries (chunk/) and the
 * builtin embedding models (dense/).
 */
#include "idx_int.h"

#include <stdatomic.h>
#include <stdlib.h>

struct IdxShared {
    atomic_int refs;
    IdxQueries *queries;
    IdxModels *models;
};

IdxShared *idx_shared_new(void)
{
    IdxShared *sh = xcalloc(1, sizeof *sh);
    atomic_init(&sh->refs, 1);
    sh->queries = idx_queries_new();
    sh->models = idx_models_new();
    return sh;
}

IdxShared *idx_shared_ref(IdxShared *sh)
{
    atomic_fetch_add(&sh->refs, 1);
    return sh;
}

void idx_shared_unref(IdxShared *sh)
{
    if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1) return;
    idx_queries_free(sh->queries);
    idx_models_free(sh->models);
    free(sh);
}

IdxQueries *idx_shared_queries(IdxShared *sh)
{
    return sh ? sh->queries : NULL;
}

IdxModels *idx_shared_models(IdxShared *sh)
{
    return sh ? sh->models : NULL;
}

Chunker *idx_chunker_new_shared(IdxShared *sh)
{
    return idx_chunker_new_queries(idx_shared_queries(sh));
}

int idx_find_definition_shared(IdxShared *sh, const char *path, const char *text, size_t len,
                               const char *symbol, uint32_t near, uint32_t *start, uint32_t *end)
{
    return idx_find_definition_queries(idx_shared_queries(sh), path, text, len, symbol, near, start,
                                       end);
}
