#include "ask_job.h"
#include "jobs.h"
#include "lsp_ws.h"
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
    Workspace *ws = ud;
    pthread_mutex_lock(&ws->srv->mu);
    ws->done = done;
    ws->total = total;
    int stop = ws->srv->stopping; /* exit: a build stops at the next file */
    pthread_mutex_unlock(&ws->srv->mu);
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

static int run_adopt(Server *s, Job *job);

static void adopt_free(Job *job)
{
    AdoptJob *j = (AdoptJob *)job;
    idx_close(j->built);
    free(j);
}

/* Builder thread: a full update with a handle of its own, handed to the
 * worker when done. */
static void build(Workspace *ws)
{
    AdoptJob *j = xcalloc(1, sizeof *j);
    lsp_job_init(&j->job, ws, NULL, run_adopt, adopt_free);
    j->job.urgent = 1;
    ErrInfo e = {0};
    double t0 = now_ms();
    /* Inside an editor, a full build leaves a core to the editor unless
     * told otherwise (threads). A shallow copy: its strings stay ws->cfg's. */
    WsConfig cfg = ws->cfg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!cfg.threads) cfg.threads = cores > 1 ? (int)cores - 1 : 1;
    lsp_progress_start(ws);
    CrErr rc = ws_store_open(&cfg, WS_OPEN_CREATE, &j->built, &e);
    if (!rc) rc = idx_update(j->built, on_build_progress, ws, &j->stats, &e);
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

static Workspace *next_build(Server *s)
{
    for (size_t i = 0; i < s->n_ws; i++)
        if (s->ws[i]->build_wanted && !s->ws[i]->building) return s->ws[i];
    return NULL;
}

void *lsp_builder_main(void *arg)
{
    Server *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        Workspace *ws = NULL;
        while (!s->stopping && !(ws = next_build(s)))
            pthread_cond_wait(&s->build_cond, &s->mu);
        if (s->stopping) break;
        ws->build_wanted = 0;
        ws->building = 1;
        ws->state = FOLDER_INDEXING;
        ws->done = ws->total = 0;
        snprintf(ws->message, sizeof ws->message, "indexing %s", ws->root);
        pthread_mutex_unlock(&s->mu);
        build(ws);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Worker: a build ended; keep its handle as the query store. */
static int run_adopt(Server *s, Job *job)
{
    AdoptJob *j = (AdoptJob *)job;
    Workspace *ws = job->ws;
    char msg[sizeof ws->message];
    if (j->build_rc && !ws_update_embed_failed(j->build_rc)) {
        idx_close(j->built);
        j->built = NULL;
        pthread_mutex_lock(&s->mu);
        ws->building = 0;
        if (ws->build_wanted) pthread_cond_signal(&s->build_cond);
        pthread_mutex_unlock(&s->mu);
        lsp_ws_set_error(ws, j->build_msg);
        snprintf(msg, sizeof msg, "Indexing failed: %.400s", j->build_msg);
        lsp_progress_finish(ws, msg);
        lsp_srv_notice(s, NOTICE_INDEX, 1, "coderag: indexing %s failed: %s", ws->root,
                       j->build_msg);
        lsp_ws_unpark(ws, 1); /* answered from what there is, or with the error */
        return JOB_DONE;
    }
    /* The builder's handle is as fresh as the database: it becomes the
     * query store (warm, or mapped from the snapshot in milliseconds). */
    double t0 = now_ms();
    idx_close(ws->q);
    ws->q = j->built;
    j->built = NULL;
    if (lsp_ws_warm(ws))
        log_msg(LOG_INFO, "search structures of %s ready in %.0f ms", ws->root, now_ms() - t0);
    ws->q_status = j->built_status;
    ws->q_status_stale = 0;
    pthread_mutex_lock(&s->mu);
    int was_complete = ws->complete;
    pthread_mutex_unlock(&s->mu);
    const IdxUpdateStats *u = &j->stats;
    char changed[96] = "";
    if (u->files_changed || u->files_removed)
        snprintf(changed, sizeof changed, " (%zu changed, %zu removed)", u->files_changed,
                 u->files_removed);
    snprintf(msg, sizeof msg, "%s%lld files, %lld chunks, %lld edges%s",
             was_complete && !changed[0] ? "up to date: " : "", (long long)j->built_status.files,
             (long long)j->built_status.chunks, (long long)j->built_status.edges,
             was_complete ? changed : "");
    pthread_mutex_lock(&s->mu);
    ws->snap = j->built_status;
    ws->state = FOLDER_READY;
    ws->building = 0;
    ws->complete = 1;
    ws->done = ws->total = j->stats.files_seen;
    snprintf(ws->message, sizeof ws->message, "%s", msg);
    if (ws->build_wanted) pthread_cond_signal(&s->build_cond);
    pthread_mutex_unlock(&s->mu);
    if (ws_update_embed_failed(j->build_rc))
        lsp_srv_notice(s, NOTICE_EMBED, 2,
                       "coderag: the embeddings endpoint failed (%s); answers "
                       "use BM25 and the graph until it is back",
                       j->build_msg);
    lsp_progress_finish(ws, msg);
    lsp_ws_unpark(ws, 1);              /* the asks that waited for the first index */
    lsp_ws_write_outcome(ws, NULL, 0); /* a whole pass written: nothing is behind */
    lsp_ws_run_updates(s, ws);
    return JOB_DONE;
}
