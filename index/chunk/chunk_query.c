/*
 * chunk_query.c - the language rows' tree-sitter queries compiled: one for a
 * Chunker of its own, or kept in an IdxQueries that every thread and store
 * of a process borrows (the C++ query takes ~200 ms to compile).
 */
#include "lang/lang.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define QUERIES__LANGS 32

struct IdxQueries {
    pthread_mutex_t mu;
    TSQuery *q[QUERIES__LANGS];        /* by row of the language table */
    signed char state[QUERIES__LANGS]; /* 0 not compiled yet, 1 done, -1 failed */
};

TSQuery *idx_chunk_query_compile(const IdxLang *lang)
{
    uint32_t off = 0;
    TSQueryError qe = TSQueryErrorNone;
    TSQuery *q =
        ts_query_new(lang->grammar(), lang->query, (uint32_t)strlen(lang->query), &off, &qe);
    if (!q)
        log_msg(LOG_ERROR, "chunk: query for '%s' fails at byte %u (error %d)", lang->name, off,
                (int)qe);
    return q;
}

IdxQueries *idx_queries_new(void)
{
    IdxQueries *qs = xcalloc(1, sizeof *qs);
    pthread_mutex_init(&qs->mu, NULL);
    return qs;
}

void idx_queries_free(IdxQueries *qs)
{
    if (!qs) return;
    for (size_t i = 0; i < QUERIES__LANGS; i++)
        if (qs->q[i]) ts_query_delete(qs->q[i]);
    pthread_mutex_destroy(&qs->mu);
    free(qs);
}

const TSQuery *idx_queries_get(IdxQueries *qs, const IdxLang *lang)
{
    size_t i = 0, n = idx_lang_count();
    while (i < n && idx_lang_at(i) != lang)
        i++;
    if (i >= n || i >= QUERIES__LANGS || !lang->grammar || !lang->query) return NULL;
    pthread_mutex_lock(&qs->mu);
    if (!qs->state[i]) {
        qs->q[i] = idx_chunk_query_compile(lang);
        qs->state[i] = qs->q[i] ? 1 : -1;
    }
    const TSQuery *q = qs->q[i];
    pthread_mutex_unlock(&qs->mu);
    return q;
}
