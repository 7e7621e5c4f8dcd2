#include "jobs.h"
#include "lsp_ws.h"
#include "server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The job queues: the worker's (everything that reads a store) and the LLM
 * pool's (LLM requests only), their threads, and their start and stop.
 * See server_int.h for the design. */

void lsp_job_init(Job *j, Workspace *ws, RpcCall *call, JobRunFn run, JobFreeFn free_fn)
{
    j->ws = ws;
    j->call = call;
    j->run = run;
    j->free = free_fn;
    j->next = NULL;
    j->urgent = 0;
}

void lsp_job_free(Job *j)
{
    if (!j) return;
    rpc_call_drop(j->call);
    j->call = NULL;
    if (j->free)
        j->free(j);
    else
        free(j);
}

static void append(Job **head, Job **tail, Job *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

void lsp_srv_push(Server *s, Job *j)
{
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        lsp_job_free(j);
        return;
    }
    if (j->urgent) {
        /* After other urgent jobs, before the rest: order among updates holds. */
        Job **pp = &s->head;
        while (*pp && (*pp)->urgent)
            pp = &(*pp)->next;
        j->next = *pp;
        *pp = j;
        if (!j->next) s->tail = j;
    } else {
        append(&s->head, &s->tail, j);
    }
    pthread_cond_signal(&s->work_cond);
    pthread_mutex_unlock(&s->mu);
}

void lsp_srv_push_llm(Server *s, Job *j)
{
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        lsp_job_free(j);
        return;
    }
    append(&s->llm_head, &s->llm_tail, j);
    pthread_cond_signal(&s->llm_cond);
    pthread_mutex_unlock(&s->mu);
}

/* One queue's loop: pop, run, free unless the job was handed on. */
static void run_queue(Server *s, Job **head, Job **tail, pthread_cond_t *cond, int worker)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (worker && !*head && s->on_idle) s->on_idle(s);
        while (!s->stopping && !*head)
            pthread_cond_wait(cond, &s->mu);
        if (s->stopping) break;
        Job *j = *head;
        *head = j->next;
        if (!*head) *tail = NULL;
        j->next = NULL;
        pthread_mutex_unlock(&s->mu);
        if (j->run(s, j) == JOB_DONE) lsp_job_free(j);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

static void *worker_main(void *arg)
{
    Server *s = arg;
    run_queue(s, &s->head, &s->tail, &s->work_cond, 1);
    return NULL;
}

static void *llm_main(void *arg)
{
    Server *s = arg;
    run_queue(s, &s->llm_head, &s->llm_tail, &s->llm_cond, 0);
    return NULL;
}

void lsp_srv_start_threads(Server *s, void *(*builder)(void *), void (*on_idle)(Server *))
{
    if (s->threads_started) return;
    s->on_idle = on_idle;
    int rc = pthread_create(&s->worker, NULL, worker_main, s);
    for (int i = 0; i < LLM_THREADS && !rc; i++)
        rc = pthread_create(&s->llm[i], NULL, llm_main, s);
    if (!rc) rc = pthread_create(&s->builder, NULL, builder, s);
    if (rc) {
        /* a server without its threads would hang every request: said
         * plainly, exit 2 (a memory limit, a thread limit) */
        fprintf(stderr, "coderag: cannot start the language server's threads: %s\n", strerror(rc));
        fflush(stderr);
        _exit(2);
    }
    s->threads_started = 1;
}

static void free_queue(Job **head, Job **tail)
{
    while (*head) {
        Job *j = *head;
        *head = j->next;
        lsp_job_free(j);
    }
    *tail = NULL;
}

int lsp_srv_stop_threads(Server *s, int wait_ms)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->work_cond);
    pthread_cond_broadcast(&s->build_cond);
    pthread_cond_broadcast(&s->llm_cond);
    pthread_mutex_unlock(&s->mu);
    if (s->threads_started) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += wait_ms / 1000;
        dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        int busy = pthread_timedjoin_np(s->worker, NULL, &dl) != 0;
        for (int i = 0; i < LLM_THREADS; i++)
            busy |= pthread_timedjoin_np(s->llm[i], NULL, &dl) != 0;
        busy |= pthread_timedjoin_np(s->builder, NULL, &dl) != 0;
        if (busy) return -1;
        s->threads_started = 0;
    }
    free_queue(&s->head, &s->tail);
    free_queue(&s->llm_head, &s->llm_tail);
    return 0;
}
