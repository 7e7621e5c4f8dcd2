#include "ws.h"

#include <pthread.h>
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

void ws_host_free(WsHost *h)
{
    if (!h) return;
    free_queue(&h->head, &h->tail);
    free_queue(&h->llm_head, &h->llm_tail);
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

/* Under h->mu: j into the queue its next stage runs on (llm: the pool's). */
static void put_locked(WsHost *h, WsJob *j, int llm)
{
    if (llm) {
        append(&h->llm_head, &h->llm_tail, j);
        pthread_cond_signal(&h->llm_cond);
        return;
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
    pthread_cond_signal(&h->work_cond);
}

/* j goes to the worker (llm 0) or the pool; freed when the host stops. */
static void put(WsHost *h, WsJob *j, int llm)
{
    pthread_mutex_lock(&h->mu);
    if (h->stopping) {
        pthread_mutex_unlock(&h->mu);
        ws_job_free(j);
        return;
    }
    put_locked(h, j, llm);
    pthread_mutex_unlock(&h->mu);
}

void ws_host_submit(WsHost *h, WsJob *j)
{
    put(h, j, 0);
}

void ws_host_submit_locked(WsHost *h, WsJob *j)
{
    put_locked(h, j, 0); /* while stopping, freed by ws_host_stop */
}

/* One queue's loop: pop, run a stage, then put the job where the stage
 * says it goes next. */
static void run_queue(WsHost *h, WsJob **head, WsJob **tail, pthread_cond_t *cond, int worker)
{
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (worker && !*head && h->door.on_idle) h->door.on_idle(h->door.ud);
        while (!h->stopping && !*head)
            pthread_cond_wait(cond, &h->mu);
        if (h->stopping) break;
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
    pthread_mutex_unlock(&h->mu);
}

static void *worker_main(void *arg)
{
    WsHost *h = arg;
    run_queue(h, &h->head, &h->tail, &h->work_cond, 1);
    return NULL;
}

static void *llm_main(void *arg)
{
    WsHost *h = arg;
    run_queue(h, &h->llm_head, &h->llm_tail, &h->llm_cond, 0);
    return NULL;
}

static void *builder_main(void *arg)
{
    WsHost *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        void *what = NULL;
        while (!h->stopping && !(what = h->door.build_next(h->door.ud)))
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
    for (int i = 0; i < WS_LLM_THREADS && !rc; i++)
        rc = pthread_create(&h->llm[i], NULL, llm_main, h);
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
        for (int i = 0; i < WS_LLM_THREADS; i++)
            busy |= pthread_timedjoin_np(h->llm[i], NULL, &dl) != 0;
        if (h->door.build) busy |= pthread_timedjoin_np(h->builder, NULL, &dl) != 0;
        if (busy) return -1;
        h->started = 0;
    }
    free_queue(&h->head, &h->tail);
    free_queue(&h->llm_head, &h->llm_tail);
    return 0;
}
