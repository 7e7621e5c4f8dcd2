#include "ask_job.h"
#include "folder.h"
#include "progress.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The builder thread (full builds on a handle of its own, with work-done
 * progress) and the worker's adoption of a finished build. */

/* ---------------------------------------------------------------- builder */

static int on_build_progress(void *ud, size_t done, size_t total)
{
    LspFolder *ws = ud;
    int stop = ws_root_progress(ws->r, done, total);
    lsp_progress_report(ws, done, total);
    lsp_ask_waiting_progress(ws, done, total);
    return stop;
}

/* A finished build, for the worker to adopt. */
typedef struct AdoptJob {
    Job job;
    WsBuilt built;
} AdoptJob;

static WsJobNext run_adopt(void *ctx, WsJob *wj);

static void adopt_free(WsJob *wj)
{
    AdoptJob *j = (AdoptJob *)wj;
    rpc_call_drop(j->job.call);
    ws_built_free(&j->built);
    free(j);
}

/* Builder, unlocked (WsHostDoor.build): a full update with a handle of
 * its own, handed to the worker when done. Inside an editor, a full build
 * leaves a core to the editor unless told otherwise (threads). */
void lsp_builder_run(void *ud, WsRoot *r)
{
    (void)ud;
    LspFolder *ws = r->door;
    AdoptJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, run_adopt, adopt_free);
    j->job.ws = ws;
    j->job.hj.urgent = 1;
    lsp_progress_start(ws);
    ws_root_build(r, 1, on_build_progress, ws, &j->built);
    ws_host_submit(ws->srv->host, &j->job.hj);
}

/* Worker: a build ended; keep its handle as the query store. */
static WsJobNext run_adopt(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    AdoptJob *j = (AdoptJob *)wj;
    LspFolder *ws = j->job.ws;
    WsRoot *r = ws->r;
    const WsBuilt *b = &j->built;
    char msg[sizeof r->message];
    int was_complete = 0;
    if (!ws_root_adopt(r, &j->built, &was_complete)) {
        snprintf(msg, sizeof msg, "Indexing failed: %.400s", b->msg);
        lsp_progress_finish(ws, msg);
        lsp_srv_notice(s, NOTICE_INDEX, 1, "coderag: indexing %s failed: %s", r->root, b->msg);
        lsp_folder_unpark(ws, 1); /* answered from what there is, or with the error */
        return WS_JOB_DONE;
    }
    double t0 = now_ms();
    if (lsp_folder_warm(ws))
        log_msg(LOG_INFO, "search structures of %s ready in %.0f ms", r->root, now_ms() - t0);
    const IdxUpdateStats *u = &b->stats;
    char changed[96] = "";
    if (u->files_changed || u->files_removed)
        snprintf(changed, sizeof changed, " (%zu changed, %zu removed)", u->files_changed,
                 u->files_removed);
    snprintf(msg, sizeof msg, "%s%lld files, %lld chunks, %lld edges%s",
             was_complete && !changed[0] ? "up to date: " : "", (long long)b->status.files,
             (long long)b->status.chunks, (long long)b->status.edges, was_complete ? changed : "");
    ws_root_adopted(r, b, msg);
    if (ws_update_embed_failed(b->rc))
        lsp_srv_notice(s, NOTICE_EMBED, 2,
                       "coderag: the embeddings endpoint failed (%s); answers "
                       "use BM25 and the graph until it is back",
                       b->msg);
    lsp_progress_finish(ws, msg);
    lsp_folder_unpark(ws, 1);              /* the asks that waited for the first index */
    lsp_folder_write_outcome(ws, NULL, 0); /* a whole pass written: nothing is behind */
    lsp_folder_run_updates(s, ws);
    return WS_JOB_DONE;
}
