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
    pthread_cond_t compiled;             /* a thread's compile ended */
    const IdxLang *lang[QUERIES__LANGS]; /* each slot's row, in the order first asked */
    size_t n;                            /* slots taken */
    TSQuery *q[QUERIES__LANGS];
    signed char state[QUERIES__LANGS]; /* 0 not compiled yet, 1 done, -1 failed, 2 compiling */
    pthread_t thread[QUERIES__LANGS];  /* idx_queries_start's, joined at free */
    unsigned char started[QUERIES__LANGS];
};

typedef struct QueryJob {
    IdxQueries *qs;
    const IdxLang *lang;
    size_t i;
} QueryJob;

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
    pthread_cond_init(&qs->compiled, NULL);
    return qs;
}

void idx_queries_free(IdxQueries *qs)
{
    if (!qs) return;
    for (size_t i = 0; i < QUERIES__LANGS; i++)
        if (qs->started[i]) pthread_join(qs->thread[i], NULL);
    for (size_t i = 0; i < QUERIES__LANGS; i++)
        if (qs->q[i]) ts_query_delete(qs->q[i]);
    pthread_cond_destroy(&qs->compiled);
    pthread_mutex_destroy(&qs->mu);
    free(qs);
}

/* lang's slot, taken now if it has none yet (qs->mu held), or
 * QUERIES__LANGS: no query, or no slot left. Slots are keyed by the row
 * itself, not its place in the table: the queries need not know the table. */
static size_t queries__slot(IdxQueries *qs, const IdxLang *lang)
{
    if (!lang->grammar || !lang->query) return QUERIES__LANGS;
    for (size_t i = 0; i < qs->n; i++)
        if (qs->lang[i] == lang) return i;
    if (qs->n == QUERIES__LANGS) return QUERIES__LANGS;
    qs->lang[qs->n] = lang;
    return qs->n++;
}

static void *queries__compile(void *arg)
{
    QueryJob *j = arg;
    TSQuery *q = idx_chunk_query_compile(j->lang);
    pthread_mutex_lock(&j->qs->mu);
    j->qs->q[j->i] = q;
    j->qs->state[j->i] = q ? 1 : -1;
    pthread_cond_broadcast(&j->qs->compiled);
    pthread_mutex_unlock(&j->qs->mu);
    free(j);
    return NULL;
}

void idx_queries_start(IdxQueries *qs, const IdxLang *lang)
{
    pthread_mutex_lock(&qs->mu);
    size_t i = queries__slot(qs, lang);
    if (i < QUERIES__LANGS && !qs->state[i] && !qs->started[i]) {
        QueryJob *j = xmalloc(sizeof *j);
        *j = (QueryJob){qs, lang, i};
        if (pthread_create(&qs->thread[i], NULL, queries__compile, j) == 0) {
            qs->state[i] = 2;
            qs->started[i] = 1;
        } else {
            free(j); /* compiled by the first idx_queries_get */
        }
    }
    pthread_mutex_unlock(&qs->mu);
}

const TSQuery *idx_queries_get(IdxQueries *qs, const IdxLang *lang)
{
    pthread_mutex_lock(&qs->mu);
    size_t i = queries__slot(qs, lang);
    if (i == QUERIES__LANGS) {
        pthread_mutex_unlock(&qs->mu);
        return NULL;
    }
    while (qs->state[i] == 2)
        pthread_cond_wait(&qs->compiled, &qs->mu);
    if (!qs->state[i]) {
        qs->q[i] = idx_chunk_query_compile(lang);
        qs->state[i] = qs->q[i] ? 1 : -1;
    }
    const TSQuery *q = qs->q[i];
    pthread_mutex_unlock(&qs->mu);
    return q;
}
