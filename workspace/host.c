#include "ws.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The workspace host: the job queue every door's work goes through, the
 * threads that run it (the worker, the LLM pool, the builder), their start
 * and stop. A job's stage returns where the job goes next, and the host
 * puts it there: no stage ever queues its own job again (ws.h). */

struct WsHost {
    WsHostDoor door;
    pthread_mutex_t mu;
    pthread_cond_t work_cond, build_cond, llm_cond, done_cond;
    WsJob *head, *tail;         /* the worker's queue */
    WsJob *llm_head, *llm_tail; /* the LLM pool's */
    int stopping;
    int started;
    /* With a door that reads its input on the host (serve_one): a thread
     * is reading (one at a time), a thread runs a worker stage (one at a
     * time: the query stores are single-threaded), the input ended. */
    int reading, store_busy, input_ended;
    pthread_t reader; /* the thread reading, while reading */
    int n_llm;        /* LLM threads running: started by the first job for the pool */
    WsRoot **roots;   /* the roots served, fixed once the threads start */
    size_t n_roots;
    pthread_t worker, builder, llm[WS_LLM_THREADS];
};

WsHost *ws_host_new(const WsHostDoor *door)
{
    WsHost *h = xcalloc(1, sizeof *h);
    h->door = *door;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->work_cond, NULL);
    pthread_cond_init(&h->build_cond, NULL);
    pthread_cond_init(&h->llm_cond, NULL);
    pthread_cond_init(&h->done_cond, NULL);
    return h;
}

void ws_job_init(WsJob *j, WsJobFn run, void (*free_fn)(WsJob *j))
{
    j->run = run;
    j->free = free_fn;
    j->next = NULL;
    j->urgent = 0;
}

void ws_job_free(WsJob *j)
{
    if (!j) return;
    if (j->free)
        j->free(j);
    else
        free(j);
}

static void free_queue(WsJob **head, WsJob **tail)
{
    while (*head) {
        WsJob *j = *head;
        *head = j->next;
        ws_job_free(j);
    }
    *tail = NULL;
}

/* ---------------------------------------------------------------- the roots */

/* A root's settings and the state its threads share under the host's lock
 * (ws.h: WsRoot); its store and builds are root_index.c's. */

static WsRoot *root_new(WsHost *h, const char *root, const WsConfig *cfg)
{
    WsRoot *r = xcalloc(1, sizeof *r);
    char real[PATH_MAX];
    r->host = h;
    r->root = xstrdup(realpath(root, real) ? real : root);
    if (strcmp(r->root, root) != 0) r->alias = xstrdup(root);
    ws_config_copy(&r->cfg, cfg);
    free(r->cfg.root);
    r->cfg.root = xstrdup(r->root);
    r->state = WS_ROOT_OPENING;
    r->parked_tail = &r->parked;
    strmap_init(&r->pending);
    return r;
}

static void root_free(WsRoot *r)
{
    if (!r) return;
    while (r->parked) { /* the host is going away: nothing answers them */
        WsJob *j = r->parked;
        r->parked = j->next;
        ws_job_free(j);
    }
    ws_watch_close(r->watch);
    idx_close(r->writer);
    idx_close(r->q);
    free(r->root);
    free(r->alias);
    ws_config_release(&r->cfg);
    strmap_release(&r->pending);
    free(r);
}

/* Length of root when abs is root itself or inside it, else 0; both
 * normalised, abs absolute. */
static size_t under_root(const char *abs, const char *root, StrBuf *tmp)
{
    if (!path_normalize(root, tmp) || !path_under(tmp->buf, abs)) return 0;
    return tmp->len;
}

static size_t root_match(const WsRoot *r, const char *norm_abs)
{
    StrBuf tmp;
    sb_init(&tmp);
    size_t best = 0;
    const char *names[2] = {r->root, r->alias};
    for (int k = 0; k < 2; k++) {
        size_t n = names[k] ? under_root(norm_abs, names[k], &tmp) : 0;
        if (n > best) best = n;
    }
    sb_release(&tmp);
    return best;
}

/* ---------------------------------------------------------------- state */

void ws_root_set_error(WsRoot *r, const char *msg)
{
    ws_host_lock(r->host);
    r->state = WS_ROOT_ERROR;
    snprintf(r->message, sizeof r->message, "%s", msg);
    ws_host_unlock(r->host);
}

void ws_root_want_build(WsRoot *r)
{
    ws_host_lock(r->host);
    r->build_wanted = 1;
    if (!r->building) {
        r->state = WS_ROOT_INDEXING;
        snprintf(r->message, sizeof r->message, "indexing %s", r->root);
    }
    ws_host_wake_builder(r->host);
    ws_host_unlock(r->host);
}

static int root_build_take_locked(WsRoot *r)
{
    if (!r->build_wanted || r->building) return 0;
    r->build_wanted = 0;
    r->building = 1;
    r->state = WS_ROOT_INDEXING;
    r->done = r->total = 0;
    snprintf(r->message, sizeof r->message, "indexing %s", r->root);
    return 1;
}

int ws_root_indexing(WsRoot *r)
{
    ws_host_lock(r->host);
    int busy = r->state == WS_ROOT_OPENING || r->state == WS_ROOT_INDEXING || r->building;
    ws_host_unlock(r->host);
    return busy;
}

int ws_root_progress(WsRoot *r, size_t done, size_t total)
{
    ws_host_lock(r->host);
    r->done = done;
    r->total = total;
    int stop = ws_host_stopping(r->host); /* exit: a pass stops at the next file */
    ws_host_unlock(r->host);
    return stop;
}

/* ---------------------------------------------------------------- parked jobs */

void ws_root_park_locked(WsRoot *r, WsJob *j)
{
    j->next = NULL;
    *r->parked_tail = j;
    r->parked_tail = &j->next;
}

WsJob *ws_root_unpark_locked(WsRoot *r, int (*pick)(WsJob *j, void *ud), void *ud)
{
    WsJob *go = NULL, **go_tail = &go;
    WsJob **p = &r->parked;
    r->parked_tail = &r->parked;
    while (*p) {
        WsJob *j = *p;
        if (!pick || pick(j, ud)) {
            *p = j->next;
            j->next = NULL;
            *go_tail = j;
            go_tail = &j->next;
        } else {
            p = &j->next;
            r->parked_tail = p;
        }
    }
    return go;
}

/* ---------------------------------------------------------------- the query store */

/* ---------------------------------------------------------------- file updates */

int ws_root_pending_add(WsRoot *r, const char *rel)
{
    ws_host_lock(r->host);
    if (!strmap_get(&r->pending, rel, NULL))
        strmap_put(&r->pending, rel, (int64_t)(now_ms() * 1000));
    int queue = !r->update_queued && !r->building;
    if (queue) r->update_queued = 1;
    ws_host_unlock(r->host);
    return queue;
}

void ws_root_pending_put_back(WsRoot *r, const char *rel, int64_t when)
{
    ws_host_lock(r->host);
    if (!strmap_get(&r->pending, rel, NULL)) strmap_put(&r->pending, rel, when);
    ws_host_unlock(r->host);
}

int ws_root_pending_take(WsRoot *r, StrMap *todo)
{
    ws_host_lock(r->host);
    r->update_queued = 0;
    if (r->building) { /* the adoption runs them */
        ws_host_unlock(r->host);
        return 0;
    }
    *todo = r->pending;
    strmap_init(&r->pending);
    ws_host_unlock(r->host);
    return 1;
}

void ws_root_snapshot(WsRoot *r, const IdxStatus *s)
{
    ws_host_lock(r->host);
    r->snap = *s;
    r->counted = 1;
    ws_host_unlock(r->host);
}

WsRoot *ws_host_add_root(WsHost *h, const char *root, const WsConfig *cfg)
{
    h->roots = xrealloc(h->roots, (h->n_roots + 1) * sizeof *h->roots);
    WsRoot *r = root_new(h, root, cfg);
    h->roots[h->n_roots++] = r;
    return r;
}

WsRoot *ws_host_root_for_path(const WsHost *h, const char *abs, char **out_rel)
{
    WsRoot *best = NULL;
    size_t best_len = 0;
    StrBuf norm;
    sb_init(&norm);
    /* "/ws/a/../../etc/x" is /etc/x: never inside /ws */
    if (abs[0] == '/' && path_normalize(abs, &norm)) {
        for (size_t i = 0; i < h->n_roots; i++) {
            size_t n = root_match(h->roots[i], norm.buf);
            if (n > best_len) {
                best = h->roots[i];
                best_len = n;
            }
        }
    }
    if (out_rel) {
        *out_rel = NULL;
        if (best) {
            const char *rel = norm.buf + best_len;
            while (*rel == '/')
                rel++;
            *out_rel = rel[0] ? xstrdup(rel) : NULL;
        }
    }
    sb_release(&norm);
    return best;
}

void ws_host_free(WsHost *h)
{
    if (!h) return;
    free_queue(&h->head, &h->tail);
    free_queue(&h->llm_head, &h->llm_tail);
    for (size_t i = 0; i < h->n_roots; i++)
        root_free(h->roots[i]);
    free(h->roots);
    pthread_cond_destroy(&h->work_cond);
    pthread_cond_destroy(&h->build_cond);
    pthread_cond_destroy(&h->llm_cond);
    pthread_cond_destroy(&h->done_cond);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void ws_host_lock(WsHost *h)
{
    pthread_mutex_lock(&h->mu);
}

void ws_host_unlock(WsHost *h)
{
    pthread_mutex_unlock(&h->mu);
}

int ws_host_stopping(const WsHost *h)
{
    return h->stopping;
}

int ws_host_queued(const WsHost *h)
{
    return h->head != NULL;
}

void ws_host_changed(WsHost *h)
{
    pthread_cond_broadcast(&h->done_cond);
}

void ws_host_wait_until(WsHost *h, int (*done)(void *ud), void *ud)
{
    pthread_mutex_lock(&h->mu);
    while (!done(ud))
        pthread_cond_wait(&h->done_cond, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

void ws_host_wake_builder(WsHost *h)
{
    pthread_cond_signal(&h->build_cond);
}

static void append(WsJob **head, WsJob **tail, WsJob *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

static void *llm_main(void *arg);

/* Under h->mu: the LLM pool's threads, started when the first job goes
 * there (a server with no LLM configured never starts them). 1 when at
 * least one runs. */
static int llm_pool_locked(WsHost *h)
{
    while (h->started && h->n_llm < WS_LLM_THREADS) {
        int rc = pthread_create(&h->llm[h->n_llm], NULL, llm_main, h);
        if (rc) {
            log_msg(LOG_WARN, "cannot start an LLM thread: %s", strerror(rc));
            break;
        }
        h->n_llm++;
    }
    return h->n_llm > 0;
}

/* Under h->mu: j into the queue its next stage runs on (llm: the pool's;
 * the worker's when no thread of the pool could start). Returns the
 * condition its thread waits on, to signal. */
static pthread_cond_t *queue_locked(WsHost *h, WsJob *j, int llm)
{
    if (llm && llm_pool_locked(h)) {
        append(&h->llm_head, &h->llm_tail, j);
        return &h->llm_cond;
    }
    if (j->urgent) {
        /* After other urgent jobs, before the rest: order among updates holds. */
        WsJob **pp = &h->head;
        while (*pp && (*pp)->urgent)
            pp = &(*pp)->next;
        j->next = *pp;
        *pp = j;
        if (!j->next) h->tail = j;
    } else {
        append(&h->head, &h->tail, j);
    }
    return &h->work_cond;
}

/* j goes to the worker (llm 0) or the pool; freed when the host stops. The
 * thread is signalled once the lock is let go: signalled under it, it
 * would wake only to wait for the lock, a second wake-up on every
 * request's way. */
static void put(WsHost *h, WsJob *j, int llm)
{
    pthread_mutex_lock(&h->mu);
    if (h->stopping) {
        pthread_mutex_unlock(&h->mu);
        ws_job_free(j);
        return;
    }
    pthread_cond_t *c = queue_locked(h, j, llm);
    /* a job the reading thread queued, that thread runs once the message
     * is handled: no other thread is woken for it */
    int mine = c == &h->work_cond && h->reading && pthread_equal(h->reader, pthread_self());
    pthread_mutex_unlock(&h->mu);
    if (!mine) pthread_cond_signal(c);
}

void ws_host_submit(WsHost *h, WsJob *j)
{
    put(h, j, 0);
}

void ws_host_run(WsHost *h, WsJob *j)
{
    if (h->started) {
        put(h, j, 0);
        return;
    }
    for (;;) {
        WsJobNext next = j->run(h->door.ud, j);
        if (next == WS_JOB_KEPT) return;
        if (next == WS_JOB_DONE) {
            ws_job_free(j);
            return;
        }
    }
}

void ws_host_submit_locked(WsHost *h, WsJob *j)
{
    pthread_cond_signal(queue_locked(h, j, 0)); /* while stopping, freed by ws_host_stop */
}

/* Under h->mu, a job at *head: runs its stage (the lock let go meanwhile),
 * then puts the job where the stage says it goes next. */
static void run_one_locked(WsHost *h, WsJob **head, WsJob **tail)
{
    WsJob *j = *head;
    *head = j->next;
    if (!*head) *tail = NULL;
    j->next = NULL;
    pthread_mutex_unlock(&h->mu);
    switch (j->run(h->door.ud, j)) {
    case WS_JOB_DONE:
        ws_job_free(j);
        break;
    case WS_JOB_KEPT:
        break;
    case WS_JOB_WORKER:
        put(h, j, 0);
        break;
    case WS_JOB_LLM:
        put(h, j, 1);
        break;
    }
    pthread_mutex_lock(&h->mu);
    pthread_cond_broadcast(&h->done_cond);
}

/* Under h->mu, the worker's queue empty: the door's idle work, as a
 * worker stage. */
static void idle_locked(WsHost *h)
{
    if (!h->door.on_idle) return;
    h->store_busy = 1;
    h->door.on_idle(h->door.ud);
    h->store_busy = 0;
    pthread_cond_broadcast(&h->work_cond); /* a thread waiting for its turn at the stores */
}

/* One queue's loop: pop, run a stage, then put the job where the stage
 * says it goes next. */
static void run_queue(WsHost *h, WsJob **head, WsJob **tail, pthread_cond_t *cond, int worker)
{
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (worker && !*head) idle_locked(h);
        while (!h->stopping && !*head)
            pthread_cond_wait(cond, &h->mu);
        if (h->stopping) break;
        if (worker) h->store_busy = 1;
        run_one_locked(h, head, tail);
        if (worker) h->store_busy = 0;
    }
    pthread_mutex_unlock(&h->mu);
}

/* The loop of a door that reads its input on the host: the caller's thread
 * and the worker take turns. Whichever is free reads the next message and
 * handles it; a job it queued, it then runs itself (it is awake already:
 * no other thread is woken on a request's way) while the other thread
 * reads on, so a slow request holds up no other message (a cancel, a
 * status, an edit). Worker stages still run one at a time and in order.
 * caller: the door's thread, which leaves once the input ended; the
 * worker stays until the host stops. */
static void serve_loop(WsHost *h, int caller)
{
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (h->stopping || (caller && h->input_ended)) break;
        if (h->head && !h->store_busy) {
            h->store_busy = 1;
            run_one_locked(h, &h->head, &h->tail);
            h->store_busy = 0;
            pthread_cond_broadcast(&h->work_cond); /* a job it left queued: the other's */
            continue;
        }
        if (!h->reading && !h->input_ended) {
            h->reading = 1;
            h->reader = pthread_self();
            pthread_mutex_unlock(&h->mu);
            int more = h->door.serve_one(h->door.ud);
            pthread_mutex_lock(&h->mu);
            h->reading = 0;
            if (!more) h->input_ended = 1;
            /* the other thread reads next (or, at the end, the caller
             * leaves); this one runs what the message queued, lock held
             * till then so that it is this one */
            pthread_cond_broadcast(&h->work_cond);
            continue;
        }
        if (h->store_busy) { /* the other thread runs a stage: its end wakes this one */
            pthread_cond_wait(&h->work_cond, &h->mu);
            continue;
        }
        idle_locked(h); /* the lock is let go meanwhile: look again */
        if (h->head || h->stopping || (caller && h->input_ended) ||
            (!h->reading && !h->input_ended))
            continue;
        pthread_cond_wait(&h->work_cond, &h->mu);
    }
    pthread_mutex_unlock(&h->mu);
}

void ws_host_serve(WsHost *h)
{
    serve_loop(h, 1);
}

static void *worker_main(void *arg)
{
    WsHost *h = arg;
    if (h->door.serve_one)
        serve_loop(h, 0);
    else
        run_queue(h, &h->head, &h->tail, &h->work_cond, 1);
    return NULL;
}

static void *llm_main(void *arg)
{
    WsHost *h = arg;
    run_queue(h, &h->llm_head, &h->llm_tail, &h->llm_cond, 0);
    return NULL;
}

/* Under h->mu: the first root due a full build, marked as building; or
 * NULL. */
static WsRoot *build_next_locked(WsHost *h)
{
    for (size_t i = 0; i < h->n_roots; i++)
        if (root_build_take_locked(h->roots[i])) return h->roots[i];
    return NULL;
}

static void *builder_main(void *arg)
{
    WsHost *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        WsRoot *what = NULL;
        while (!h->stopping && !(what = build_next_locked(h)))
            pthread_cond_wait(&h->build_cond, &h->mu);
        if (h->stopping) break;
        pthread_mutex_unlock(&h->mu);
        h->door.build(h->door.ud, what);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int ws_host_start(WsHost *h)
{
    if (h->started) return 0;
    int rc = pthread_create(&h->worker, NULL, worker_main, h);
    if (!rc && h->door.build) rc = pthread_create(&h->builder, NULL, builder_main, h);
    if (!rc) h->started = 1;
    return rc;
}

int ws_host_stop(WsHost *h, int wait_ms)
{
    pthread_mutex_lock(&h->mu);
    h->stopping = 1;
    pthread_cond_broadcast(&h->work_cond);
    pthread_cond_broadcast(&h->build_cond);
    pthread_cond_broadcast(&h->llm_cond);
    pthread_mutex_unlock(&h->mu);
    if (h->started) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += wait_ms / 1000;
        dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        int busy = pthread_timedjoin_np(h->worker, NULL, &dl) != 0;
        for (int i = 0; i < h->n_llm; i++)
            busy |= pthread_timedjoin_np(h->llm[i], NULL, &dl) != 0;
        if (h->door.build) busy |= pthread_timedjoin_np(h->builder, NULL, &dl) != 0;
        if (busy) return -1;
        h->started = 0;
        h->n_llm = 0;
    }
    free_queue(&h->head, &h->tail);
    free_queue(&h->llm_head, &h->llm_tail);
    return 0;
}
