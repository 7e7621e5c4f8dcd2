#include "jobs.h"
#include "server_int.h"

#include <stdlib.h>

/* The language server's jobs on the workspace host's queue (ws.h). */

void lsp_job_init(Job *j, LspFolder *ws, RpcCall *call)
{
    j->ws = ws;
    j->call = call;
    j->park_next = NULL;
}

void lsp_job_free(Job *j)
{
    if (j) ws_job_free(&j->hj);
}

void lsp_srv_push(Server *s, Job *j)
{
    ws_host_submit(s->host, &j->hj);
}
