/* graph_par.c - the lookups of resolution on threads of their own. A cold
 * build's resolution is millions of lookups against tables that no longer
 * change once the files are written (files, chunks, symbols, imports), and
 * writes of edges that no lookup reads: the lookups of a page run on n
 * threads, each over a read-only connection holding one read transaction
 * (the last commit) and a memo of its own, while the caller's thread writes
 * each row's edges in row order as soon as its block is done. Answers
 * depend on the tables alone (graph_lookup.c's memo forgets what depended
 * on the order of lookups), so the edges, and their ids, are the serial
 * pass's. */
#include "graph_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Rows a thread takes at a time: neighbours share names (one file's refs). */
#define PAR_BLOCK 64

typedef struct ParWorker {
    struct GraphPar *p;
    IdxStore rd; /* a read-only connection to the same index */
    Resolver r;
    ErrInfo e;
    uint64_t gen;                          /* the page its memo was made for */
    int64_t tmp[PAR_BLOCK * DISPATCH_MAX]; /* a block's targets, before they are packed */
    pthread_t th;
    int started;
    double cpu_ms; /* the thread's CPU time, for the debug log */
} ParWorker;

struct GraphPar {
    IdxStore *st;
    ParWorker *w;
    int n;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    const RefRow *rows;
    size_t n_rows, next; /* rows of the posted page; the next one to hand out */
    uint64_t gen;        /* pages posted */
    int busy;            /* threads inside the page */
    int stop;
    /* set (release) under mu when a block is done, read by the taker
     * without it: the lock is taken only to wait */
    atomic_uchar *block_done;
    /* a done block's targets, packed (rows have few: a fixed DISPATCH_MAX
     * a row would be pages touched once and zeroed for nothing) */
    int64_t **block_dst;
    uint32_t *off; /* a row's first target in its block's */
    size_t *nd;
    size_t cap;
    size_t ready;      /* rows known done by the taker (a block's end) */
    size_t waits;      /* blocks the taker waited for, for the debug log */
    CrErr rc;          /* the first failed lookup */
    atomic_int failed; /* rc set: the taker takes the lock to read it */
    ErrInfo err;
};

static int reader_open(const IdxStore *st, IdxStore *rd)
{
    memset(rd, 0, sizeof *rd);
    rd->readonly = 1; /* db_path NULL: a damaged file is noted on st, by the caller */
    rd->root = st->root;
    rd->index_real = st->index_real;
    rd->shared = st->shared;
    rd->lang_pick = st->lang_pick; /* a C++ project's headers read as C++ here too */
    if (sqlite3_open_v2(st->db_path, &rd->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                        idx_vfs_name(st->vfs)) != SQLITE_OK)
        return 0;
    sqlite3_busy_timeout(rd->db, 5000);
    /* one read transaction for the whole pass: one snapshot, and no
     * check of the WAL index per lookup */
    return sqlite3_exec(rd->db,
                        "PRAGMA cache_size = -16000; PRAGMA temp_store = MEMORY; BEGIN;"
                        "SELECT 1 FROM files LIMIT 1;",
                        NULL, NULL, NULL) == SQLITE_OK;
}

static void reader_close(IdxStore *rd)
{
    for (int i = 0; i < STMT__COUNT; i++)
        sqlite3_finalize(rd->stmts[i]);
    if (rd->db) sqlite3_exec(rd->db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(rd->db);
    rd->db = NULL;
}

static void *par_worker(void *arg)
{
    ParWorker *w = arg;
    GraphPar *p = w->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next >= p->n_rows)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop) break;
        size_t lo = p->next, hi = lo + PAR_BLOCK < p->n_rows ? lo + PAR_BLOCK : p->n_rows;
        p->next = hi;
        p->busy++;
        const RefRow *rows = p->rows;
        if (w->gen != p->gen) {
            /* a new page: the serial pass forgets its memo per page too */
            w->gen = p->gen;
            idx_graph_memo_forget(&w->r);
        }
        pthread_mutex_unlock(&p->mu);
        size_t used = 0;
        for (size_t i = lo; i < hi && w->r.rc == CR_OK; i++) {
            p->off[i] = (uint32_t)used;
            p->nd[i] = idx_graph_lookup_row(&w->r, &rows[i], &w->tmp[used]);
            used += p->nd[i];
        }
        int64_t *packed = xmalloc((used ? used : 1) * sizeof *packed);
        memcpy(packed, w->tmp, used * sizeof *packed);
        pthread_mutex_lock(&p->mu);
        p->block_dst[lo / PAR_BLOCK] = packed;
        if (w->r.rc && p->rc == CR_OK) {
            p->rc = w->r.rc;
            atomic_store(&p->failed, 1);
            p->err = w->e;
        }
        atomic_store_explicit(&p->block_done[lo / PAR_BLOCK], 1, memory_order_release);
        p->busy--;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    w->cpu_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    return NULL;
}

/* The packed targets of the last page's blocks (the caller is done with
 * them: a page is taken whole before the next is posted). */
static void par_blocks_free(GraphPar *p)
{
    for (size_t b = 0; p->block_dst && b < p->cap / PAR_BLOCK + 1; b++) {
        free(p->block_dst[b]);
        p->block_dst[b] = NULL;
    }
}

GraphPar *idx_graph_par_start(IdxStore *st, int n, const GraphNames *names)
{
    if (n < 2 || !st->db_path) return NULL;
    GraphPar *p = xcalloc(1, sizeof *p);
    p->st = st;
    p->w = xcalloc((size_t)n, sizeof *p->w);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int t = 0; t < n; t++) {
        ParWorker *w = &p->w[t];
        w->p = p;
        if (!reader_open(st, &w->rd)) {
            reader_close(&w->rd);
            break;
        }
        idx_graph_resolver_init(&w->r, &w->rd, &w->e);
        w->r.names = names;
        p->n++;
    }
    if (p->n < n) { /* no read connection: resolve serially */
        idx_graph_par_stop(p);
        return NULL;
    }
    int all = 1;
    for (int t = 0; t < p->n; t++)
        all &= p->w[t].started = pthread_create(&p->w[t].th, NULL, par_worker, &p->w[t]) == 0;
    if (!all) { /* no thread to be had (a memory limit): resolve serially */
        idx_graph_par_stop(p);
        return NULL;
    }
    return p;
}

void idx_graph_par_stop(GraphPar *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    int damaged = 0;
    for (int t = 0; t < p->n; t++) {
        ParWorker *w = &p->w[t];
        if (w->started) pthread_join(w->th, NULL);
        idx_graph_resolver_release(&w->r);
        damaged |= w->rd.damaged;
        reader_close(&w->rd);
    }
    if (damaged) idx_store_note_damaged(p->st);
    log_msg(LOG_DEBUG,
            "resolve: %d lookup threads, CPU %.0f + %.0f ms; %zu pages, waited for %zu blocks",
            p->n, p->w[0].cpu_ms, p->n > 1 ? p->w[1].cpu_ms : 0.0, (size_t)p->gen, p->waits);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    par_blocks_free(p);
    free(p->block_done);
    free(p->block_dst);
    free(p->off);
    free(p->nd);
    free(p->w);
    free(p);
}

void idx_graph_par_post(GraphPar *p, const RefRow *rows, size_t n)
{
    pthread_mutex_lock(&p->mu);
    par_blocks_free(p);
    if (n > p->cap) {
        p->cap = n;
        free(p->block_done);
        free(p->block_dst);
        free(p->off);
        free(p->nd);
        p->block_done = xcalloc(n / PAR_BLOCK + 1, sizeof *p->block_done);
        p->block_dst = xcalloc(n / PAR_BLOCK + 1, sizeof *p->block_dst);
        p->off = xcalloc(n, sizeof *p->off);
        p->nd = xcalloc(n, sizeof *p->nd);
    } else if (p->block_done) {
        for (size_t b = 0; b < p->cap / PAR_BLOCK + 1; b++)
            atomic_store_explicit(&p->block_done[b], 0, memory_order_relaxed);
    }
    p->rows = rows;
    p->n_rows = n;
    p->next = 0;
    p->ready = 0;
    p->gen++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

CrErr idx_graph_par_take(GraphPar *p, size_t i, const int64_t **dst, size_t *nd, ErrInfo *e)
{
    if (i >= p->ready) {
        size_t b = i / PAR_BLOCK;
        if (atomic_load(&p->failed) ||
            !atomic_load_explicit(&p->block_done[b], memory_order_acquire)) {
            pthread_mutex_lock(&p->mu);
            p->waits += !p->block_done[b];
            while (!p->block_done[b] && p->rc == CR_OK)
                pthread_cond_wait(&p->done, &p->mu);
            CrErr rc = p->rc;
            if (rc && e) *e = p->err;
            pthread_mutex_unlock(&p->mu);
            if (rc) return rc;
        }
        p->ready = (b + 1) * PAR_BLOCK;
    }
    *dst = p->block_dst[i / PAR_BLOCK] + p->off[i];
    *nd = p->nd[i];
    return CR_OK;
}

void idx_graph_par_finish(GraphPar *p)
{
    pthread_mutex_lock(&p->mu);
    p->next = p->n_rows;
    while (p->busy)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
