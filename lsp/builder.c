#include "ask_job.h"
#include "jobs.h"
#include "folder.h"
#include "progress.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The builder thread (full builds on a handle of its own, with work-done
 * progress) and the worker's adoption of a finished build. */

/* ---------------------------------------------------------------- builder */

static int on_build_progress(void *ud, size_t done, size_t total)
{
    LspFolder *ws = ud;
    ws_host_lock(ws->srv->host);
    ws->done = done;
    ws->total = total;
    int stop = ws_host_stopping(ws->srv->host); /* exit: a build stops at the next file */
    ws_host_unlock(ws->srv->host);
    lsp_progress_report(ws, done, total);
    lsp_ask_waiting_progress(ws, done, total);
    return stop;
}

/* A finished build, for the worker to adopt. */
typedef struct AdoptJob {
    Job job;
    IdxStore *built;
    CrErr build_rc;
    char build_msg[512];
    IdxUpdateStats stats;
    IdxStatus built_status;
} AdoptJob;

static WsJobNext run_adopt(void *ctx, WsJob *wj);

static void adopt_free(WsJob *wj)
{
    Job *job = (Job *)wj;
    rpc_call_drop(job->call);
    AdoptJob *j = (AdoptJob *)job;
    idx_close(j->built);
    free(j);
}

/* Builder thread: a full update with a handle of its own, handed to the
 * worker when done. */
static void build(LspFolder *ws)
{
    AdoptJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, run_adopt, adopt_free);
    lsp_job_init(&j->job, ws, NULL);
    j->job.hj.urgent = 1;
    ErrInfo e = {0};
    double t0 = now_ms();
    /* Inside an editor, a full build leaves a core to the editor unless
     * told otherwise (threads). A shallow copy: its strings stay ws->cfg's. */
    WsConfig cfg = ws->cfg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!cfg.threads) cfg.threads = cores > 1 ? (int)cores - 1 : 1;
    lsp_progress_start(ws);
    CrErr rc = ws_store_open(&cfg, WS_OPEN_CREATE, &j->built, &e);
    if (!rc) rc = ws_store_pass(j->built, on_build_progress, ws, NULL, NULL, &j->stats, &e);
    if (!rc || ws_update_embed_failed(rc)) {
        /* counts that cannot be read: the build failed (never "0 files") */
        ErrInfo se = {0};
        CrErr src = idx_status(j->built, &j->built_status, &se);
        if (src) {
            rc = src;
            snprintf(e.msg, sizeof e.msg, "the index could not be read: %.400s",
                     se.msg[0] ? se.msg : cr_strerror(src));
        }
    }
    j->build_rc = rc;
    snprintf(j->build_msg, sizeof j->build_msg, "%s",
             rc ? (e.msg[0] ? e.msg : cr_strerror(rc)) : "");
    log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed, %zu removed) in %.0f ms%s%s", ws->root,
            j->stats.files_seen, j->stats.files_changed, j->stats.files_removed, now_ms() - t0,
            rc ? ": " : "", j->build_msg);
    lsp_srv_push(ws->srv, &j->job);
}

/* Builder, host lock held (WsHostDoor.build_next): the next workspace due
 * a full build, marked as building; or NULL. */
void *lsp_builder_next(void *ud)
{
    Server *s = ud;
    for (size_t i = 0; i < s->n_ws; i++) {
        LspFolder *ws = s->ws[i];
        if (!ws->build_wanted || ws->building) continue;
        ws->build_wanted = 0;
        ws->building = 1;
        ws->state = FOLDER_INDEXING;
        ws->done = ws->total = 0;
        snprintf(ws->message, sizeof ws->message, "indexing %s", ws->root);
        return ws;
    }
    return NULL;
}

/* Builder, unlocked (WsHostDoor.build). */
void lsp_builder_run(void *ud, void *what)
{
    (void)ud;
    build(what);
}

/* Worker: a build ended; keep its handle as the query store. */
static WsJobNext run_adopt(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    AdoptJob *j = (AdoptJob *)job;
    LspFolder *ws = job->ws;
    char msg[sizeof ws->message];
    if (j->build_rc && !ws_update_embed_failed(j->build_rc)) {
        idx_close(j->built);
        j->built = NULL;
        ws_host_lock(s->host);
        ws->building = 0;
        if (ws->build_wanted) ws_host_wake_builder(s->host);
        ws_host_unlock(s->host);
        lsp_folder_set_error(ws, j->build_msg);
        snprintf(msg, sizeof msg, "Indexing failed: %.400s", j->build_msg);
        lsp_progress_finish(ws, msg);
        lsp_srv_notice(s, NOTICE_INDEX, 1, "coderag: indexing %s failed: %s", ws->root,
                       j->build_msg);
        lsp_folder_unpark(ws, 1); /* answered from what there is, or with the error */
        return WS_JOB_DONE;
    }
    /* The builder's handle is as fresh as the database: it becomes the
     * query store (warm, or mapped from the snapshot in milliseconds). */
    double t0 = now_ms();
    idx_close(ws->q);
    ws->q = j->built;
    j->built = NULL;
    if (lsp_folder_warm(ws))
        log_msg(LOG_INFO, "search structures of %s ready in %.0f ms", ws->root, now_ms() - t0);
    ws->q_status = j->built_status;
    ws->q_status_stale = 0;
    ws_host_lock(s->host);
    int was_complete = ws->complete;
    ws_host_unlock(s->host);
    const IdxUpdateStats *u = &j->stats;
    char changed[96] = "";
    if (u->files_changed || u->files_removed)
        snprintf(changed, sizeof changed, " (%zu changed, %zu removed)", u->files_changed,
                 u->files_removed);
    snprintf(msg, sizeof msg, "%s%lld files, %lld chunks, %lld edges%s",
             was_complete && !changed[0] ? "up to date: " : "", (long long)j->built_status.files,
             (long long)j->built_status.chunks, (long long)j->built_status.edges,
             was_complete ? changed : "");
    ws_host_lock(s->host);
    ws->snap = j->built_status;
    ws->state = FOLDER_READY;
    ws->building = 0;
    ws->complete = 1;
    ws->done = ws->total = j->stats.files_seen;
    snprintf(ws->message, sizeof ws->message, "%s", msg);
    if (ws->build_wanted) ws_host_wake_builder(s->host);
    ws_host_unlock(s->host);
    if (ws_update_embed_failed(j->build_rc))
        lsp_srv_notice(s, NOTICE_EMBED, 2,
                       "coderag: the embeddings endpoint failed (%s); answers "
                       "use BM25 and the graph until it is back",
                       j->build_msg);
    lsp_progress_finish(ws, msg);
    lsp_folder_unpark(ws, 1);              /* the asks that waited for the first index */
    lsp_folder_write_outcome(ws, NULL, 0); /* a whole pass written: nothing is behind */
    lsp_folder_run_updates(s, ws);
    return WS_JOB_DONE;
}
