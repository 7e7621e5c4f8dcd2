/*
 * jobs.h - the language server's jobs (jobs.c): a WsJob of the workspace
 * host (ws.h: its queue, worker, LLM pool and builder) with the workspace
 * folder and the request it serves; see server_int.h for the threads.
 */
#ifndef CODERAG_LSP_JOBS_H
#define CODERAG_LSP_JOBS_H

#include "server_int.h"

struct Job {
    WsJob hj; /* first: the host's (its stage, urgency, queue link) */
    LspFolder *ws;
    RpcCall *call;  /* requests: answered by a stage (the job's free drops what is left) */
    Job *park_next; /* in LspFolder.parked */
};

/* ---- jobs.c */

/* The server's part of a job whose host part ws_job_init set (its free
 * drops j->call with rpc_call_drop; a job with no call may have none). */
void lsp_job_init(Job *j, LspFolder *ws, RpcCall *call);
/* Frees a job the host never took (or was handed back). */
void lsp_job_free(Job *j);
/* Queues a new job (or one kept aside) for the host's worker; urgent jobs
 * go first, in their order. */
void lsp_srv_push(Server *s, Job *j);

#endif
