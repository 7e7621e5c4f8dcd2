/*
 * jobs.h - the job queue of the language server: the worker, the LLM pool
 * and their jobs (jobs.c); see server_int.h for the threads.
 */
#ifndef CODERAG_LSP_JOBS_H
#define CODERAG_LSP_JOBS_H

#include "server_int.h"

enum { JOB_DONE = 0, JOB_KEPT = 1 };
typedef int (*JobRunFn)(Server *s, Job *j);
typedef void (*JobFreeFn)(Job *j);

struct Job {
    Workspace *ws;
    RpcCall *call; /* requests: answered by run (lsp_job_free drops what is left) */
    JobRunFn run;
    JobFreeFn free; /* frees the payload and the job; NULL: free(j) */
    Job *next;
    int urgent; /* file updates, adoption, verification: before other jobs */
};

/* ---- jobs.c */

void lsp_job_init(Job *j, Workspace *ws, RpcCall *call, JobRunFn run, JobFreeFn free_fn);
/* Drops what is left of the call and frees the job. */
void lsp_job_free(Job *j);
/* Queues a job for the worker (the queue owns it); urgent jobs go first,
 * in their order. */
void lsp_srv_push(Server *s, Job *j);
/* Queues a job for the LLM pool: its run must not touch a store. */
void lsp_srv_push_llm(Server *s, Job *j);
/* Starts the worker, LLM and builder threads. */
/* The worker, the LLM pool and the builder thread (its main given here, as
 * the hook the worker runs when its queue is empty: jobs.c knows neither). */
void lsp_srv_start_threads(Server *s, void *(*builder)(void *), void (*on_idle)(Server *));
/* Stops them: waits up to wait_ms for running work; returns 0 when all
 * ended, -1 when one is still busy (the caller then leaves at once). */
int lsp_srv_stop_threads(Server *s, int wait_ms);

#endif
