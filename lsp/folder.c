#include "folder.h"
#include "memory.h"
#include "progress.h"
#include "server_int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

/* Workspace folders: their lifecycle, the worker's query
 * store, file updates, and coderag/status. See server_int.h for the
 * design. */

LspFolder *lsp_folder_new(Server *s, const char *root, const char *name, const WsConfig *cfg)
{
    LspFolder *ws = xcalloc(1, sizeof *ws);
    ws->srv = s;
    ws->r = ws_host_add_root(s->host, root, cfg);
    ws->r->door = ws;
    ws->name = xstrdup(name);
    snprintf(ws->r->message, sizeof ws->r->message, "waiting for initialized");
    pthread_mutex_init(&ws->pg_mu, NULL);
    return ws;
}

void lsp_folder_free(LspFolder *ws)
{
    if (!ws) return;
    lsp_nav_forget_answer(ws);
    lsp_folder_buffers_free(ws);
    for (size_t i = 0; i < HOVER_CACHE; i++)
        free(ws->explained[i].markdown);
    free(ws->name);
    pthread_mutex_destroy(&ws->pg_mu);
    free(ws);
}

LspFolder *lsp_folder_for_uri(Server *s, const char *uri, char **out_rel)
{
    char *path = NULL;
    if (out_rel) *out_rel = NULL;
    if (path_from_uri(uri, &path) != CR_OK || !path) return NULL;
    WsRoot *r = ws_host_root_for_path(s->host, path, out_rel);
    free(path);
    return r ? r->door : NULL;
}

LspFolder *lsp_folder_pick(Server *s, const char *uri)
{
    if (uri) {
        LspFolder *ws = lsp_folder_for_uri(s, uri, NULL);
        if (ws) return ws;
    }
    /* the first folder not in error: one that cannot be opened (not a
     * folder, no index directory) must not fail every ask of the others */
    LspFolder *pick = s->n_ws ? s->ws[0] : NULL;
    ws_host_lock(s->host);
    for (size_t i = 0; i < s->n_ws; i++) {
        if (s->ws[i]->r->state != WS_ROOT_ERROR) {
            pick = s->ws[i];
            break;
        }
    }
    ws_host_unlock(s->host);
    return pick;
}

int lsp_folder_park(LspFolder *ws, Job *j)
{
    Server *s = ws->srv;
    WsRoot *r = ws->r;
    ws_host_lock(s->host);
    int wait = !r->complete && r->state != WS_ROOT_ERROR && !ws_host_stopping(s->host) &&
               (r->state == WS_ROOT_OPENING || r->state == WS_ROOT_INDEXING || r->building ||
                r->build_wanted) &&
               !(j->call && rpc_call_cancelled(j->call));
    if (wait) ws_root_park_locked(r, &j->hj);
    ws_host_unlock(s->host);
    return wait;
}

/* ws_root_unpark_locked's pick: a job whose call the client cancelled. */
static int call_cancelled(WsJob *wj, void *ud)
{
    const Job *j = (const Job *)wj;
    (void)ud;
    return j->call && rpc_call_cancelled(j->call);
}

void lsp_folder_unpark(LspFolder *ws, int all)
{
    Server *s = ws->srv;
    ws_host_lock(s->host);
    WsJob *go = ws_root_unpark_locked(ws->r, all ? NULL : call_cancelled, NULL);
    ws_host_unlock(s->host);
    /* in the order they were asked */
    while (go) {
        WsJob *j = go;
        go = j->next;
        j->next = NULL;
        ws_host_submit(s->host, j);
    }
}

/* ---------------------------------------------------------------- worker */

int lsp_folder_warm(LspFolder *ws)
{
    ErrInfo e = {0};
    CrErr rc = ws_root_warm(ws->r, &e);
    if (rc == CR_OK) return 1;
    const char *why = e.msg[0] ? e.msg : cr_strerror(rc);
    log_msg(LOG_WARN, "loading the search structures of %s failed: %s", ws->r->root, why);
    lsp_srv_notice(ws->srv, NOTICE_INDEX, 2, "coderag: the index of %s could not be loaded: %s",
                   ws->r->root, why);
    return 0;
}

/* Opens the query store (idempotent); errors put the workspace in the
 * error state. */
static int lsp_folder_open(LspFolder *ws, ErrInfo *e)
{
    WsRoot *r = ws->r;
    if (r->q) return 1;
    if (ws_root_open_query(r, e)) {
        lsp_srv_notice(ws->srv, NOTICE_INDEX, 1, "coderag: cannot open the index of %s: %s",
                       r->root, e->msg);
        return 0;
    }
    lsp_folder_warm(ws);
    if (ws_root_count(r, r->q, &r->q_status)) ws_root_snapshot(r, &r->q_status);
    ws_host_lock(ws->srv->host);
    r->complete = r->q_status.last_update != 0; /* a whole pass was written before */
    ws_host_unlock(ws->srv->host);
    return 1;
}

/* Worker: open the query store and ask the builder for a build. */
static WsJobNext run_open(void *ctx, WsJob *wj)
{
    Job *j = (Job *)wj;
    LspFolder *ws = j->ws;
    ErrInfo e = {0};
    if (lsp_folder_open(ws, &e)) ws_root_want_build(ws->r);
    return WS_JOB_DONE;
}

IdxStore *lsp_folder_query_store(LspFolder *ws, ErrInfo *e)
{
    WsRoot *r = ws->r;
    if (!r->q) {
        ws_host_lock(ws->srv->host);
        int failed = r->state == WS_ROOT_ERROR;
        if (failed) err_set(e, CR_EIO, "%s", r->message);
        ws_host_unlock(ws->srv->host);
        if (failed || !lsp_folder_open(ws, e)) return NULL;
    }
    /* Fresh by construction: every search checks the database's
     * data_version and reloads what another connection (the builder's)
     * committed since (idx_warm), so asks during a first build see each
     * batch as it lands. */
    return r->q;
}

/* How long a save waits for another writer on the worker thread before it
 * is handed to the builder (ms). */
#define LSP_SAVE_WAIT_MS 1000

/* Applies the pending file updates (worker). */
void lsp_folder_run_updates(Server *s, LspFolder *ws)
{
    WsRoot *r = ws->r;
    StrMap todo;
    if (!ws_root_pending_take(r, &todo)) return;
    if (!todo.len) {
        strmap_release(&todo);
        return;
    }
    ErrInfo e = {0};
    if (!r->q && !lsp_folder_open(ws, &e)) {
        strmap_release(&todo);
        return;
    }
    /* A save that meets another writer (a `coderag index`, another server)
     * waits a little on this thread, where asks are answered; past that it
     * is handed to the builder, whose full pass waits its turn and reads
     * every file changed since (the save is kept pending meanwhile): never
     * dropped, never told as an error. */
    int handed = 0;
    for (size_t i = 0; i < todo.cap; i++) {
        if (!todo.keys[i]) continue;
        if (handed) {
            ws_root_pending_put_back(r, todo.keys[i], todo.vals[i]);
            continue;
        }
        double t0 = now_ms();
        e.msg[0] = '\0';
        int busy = 0;
        CrErr rc = ws_store_update_file(r->q, todo.keys[i], LSP_SAVE_WAIT_MS, &busy, &e);
        double t1 = now_ms();
        if (busy) {
            log_msg(LOG_INFO,
                    "re-indexing %s waits for another writer of the index; handed to a full pass",
                    todo.keys[i]);
            ws_root_pending_put_back(r, todo.keys[i], todo.vals[i]);
            handed = 1;
            continue;
        }
        if (rc && rc != CR_EOUTSIDE)
            log_msg(LOG_WARN, "re-indexing %s failed: %s", todo.keys[i], e.msg);
        /* a path naming nothing to index is the client's, not the index's */
        if (rc != CR_EOUTSIDE && rc != CR_EINVAL) {
            char why[sizeof r->write_error];
            snprintf(why, sizeof why, "re-indexing %.200s failed: %.280s", todo.keys[i],
                     e.msg[0] ? e.msg : cr_strerror(rc));
            lsp_folder_write_outcome(ws, rc && !ws_update_embed_failed(rc) ? why : NULL, 1);
        }
        if (ws_update_embed_failed(rc))
            lsp_srv_notice(s, NOTICE_EMBED, 2,
                           "coderag: the embeddings endpoint failed (%s); "
                           "the text index is current, vectors follow when it is back",
                           e.msg);
        log_msg(LOG_INFO, "re-indexed %s in %.1f ms (%.1f ms after the notification)", todo.keys[i],
                t1 - t0, t1 - (double)todo.vals[i] / 1000.0);
    }
    strmap_release(&todo);
    r->q_status_stale = 1; /* counted when the worker is idle, not before the next ask */
    if (handed) ws_root_want_build(r);
}

void lsp_folder_write_outcome(LspFolder *ws, const char *why, int catch_up)
{
    Server *s = ws->srv;
    WsRoot *r = ws->r;
    ws_host_lock(s->host);
    int was_failing = r->write_error[0] != '\0';
    /* a full pass that failed (a full disk too) left the root in error: a
     * write that works again is the moment to retry it */
    int pass_failed = !why && r->state == WS_ROOT_ERROR && !r->building;
    if (why)
        snprintf(r->write_error, sizeof r->write_error, "%s", why);
    else
        r->write_error[0] = '\0';
    ws_host_unlock(s->host);
    if (why && !was_failing)
        lsp_srv_notice(s, NOTICE_UPDATE, 1,
                       "coderag: the index of %s cannot be updated: %s. Answers may miss "
                       "the changes since; updating resumes when it can.",
                       r->root, why);
    if (!why && (was_failing || pass_failed)) {
        /* the saves that failed: a full pass (a stat per file), before the
         * user is told, so status says "indexing" from then */
        if (catch_up) ws_root_want_build(r);
        if (pass_failed) lsp_srv_notice_clear(s, NOTICE_INDEX);
        lsp_srv_notice_clear(s, NOTICE_UPDATE);
        lsp_srv_notice(s, NOTICE_UPDATE, 3,
                       "coderag: the index of %s is being updated again; catching up with the "
                       "changes it missed.",
                       r->root);
        lsp_srv_notice_clear(s, NOTICE_UPDATE);
    }
}

static WsJobNext run_update(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *j = (Job *)wj;
    lsp_folder_run_updates(s, j->ws);
    return WS_JOB_DONE;
}

void lsp_folder_schedule_update(LspFolder *ws, const char *rel)
{
    if (!ws_root_pending_add(ws->r, rel)) return;
    Job *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, run_update, NULL);
    j->ws = ws;
    j->hj.urgent = 1;
    ws_host_submit(ws->srv->host, &j->hj);
}

void lsp_folder_request_build(LspFolder *ws)
{
    Job *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, run_open, NULL);
    j->ws = ws;
    ws_host_submit(ws->srv->host, &j->hj);
}

void lsp_folder_refresh_stale(void *ud)
{
    Server *s = ud;
    for (size_t i = 0; i < s->n_ws && !ws_host_queued(s->host) && !ws_host_stopping(s->host); i++) {
        WsRoot *r = s->ws[i]->r;
        if (!r->q_status_stale || !r->q) continue;
        r->q_status_stale = 0;
        ws_host_unlock(s->host);
        IdxStatus st;
        int ok = ws_root_count(r, r->q, &st);
        ws_host_lock(s->host);
        if (ok) {
            r->q_status = st;
            r->snap = st;
            r->counted = 1;
        }
    }
}

/* ---------------------------------------------------------------- status */

json_t *lsp_srv_status_json(Server *s)
{
    json_t *roots = json_array();
    json_int_t files = 0, chunks = 0, edges = 0, vectors = 0, indexed = 0, total = 0;
    int any_indexing = 0, any_error = 0;
    StrBuf msg;
    sb_init(&msg);
    ws_host_lock(s->host);
    for (size_t i = 0; i < s->n_ws; i++) {
        LspFolder *ws = s->ws[i];
        const WsRoot *r = ws->r;
        WsRootState st = r->building && r->state == WS_ROOT_READY ? WS_ROOT_INDEXING : r->state;
        /* a failed update: the index serves, but is behind the files */
        const char *message = r->message;
        if (st == WS_ROOT_READY && r->write_error[0]) {
            st = WS_ROOT_ERROR;
            message = r->write_error;
        }
        size_t w_indexed = r->done, w_total = r->total;
        if (st == WS_ROOT_READY) w_indexed = w_total = (size_t)r->snap.files;
        any_indexing |= st == WS_ROOT_OPENING || st == WS_ROOT_INDEXING;
        any_error |= st == WS_ROOT_ERROR;
        files += r->snap.files;
        chunks += r->snap.chunks;
        edges += r->snap.edges;
        vectors += r->snap.vectors;
        indexed += (json_int_t)w_indexed;
        total += (json_int_t)w_total;
        char line[700];
        if (st == WS_ROOT_INDEXING && w_total)
            snprintf(line, sizeof line, "%s: indexing, %zu/%zu files", ws->name, w_indexed,
                     w_total);
        else
            snprintf(line, sizeof line, "%s: %s", ws->name, message);
        if (msg.len) sb_adds(&msg, "; ");
        sb_adds(&msg, line);
        /* the keys every door reports, then the server's own */
        json_t *o = ws_status_json(r->root, &r->snap);
        json_object_set_new(o, "state", json_string(ws_root_state_name(st)));
        json_object_set_new(o, "indexed", json_integer((json_int_t)w_indexed));
        json_object_set_new(o, "total", json_integer((json_int_t)w_total));
        json_object_set_new(o, "message", json_text(message));
        json_array_append_new(roots, o);
    }
    ws_host_unlock(s->host);
    const char *state = any_indexing ? "indexing" : any_error ? "error" : "ready";
    if (!s->n_ws) {
        state = "error";
        sb_adds(&msg, "no workspace folder is open");
    }
    json_t *o = json_object();
    json_object_set_new(o, "state", json_string(state));
    json_object_set_new(o, "files", json_integer(files));
    json_object_set_new(o, "chunks", json_integer(chunks));
    json_object_set_new(o, "indexed", json_integer(indexed));
    json_object_set_new(o, "total", json_integer(total));
    json_object_set_new(o, "message", json_text(msg.buf));
    json_object_set_new(o, "edges", json_integer(edges));
    json_object_set_new(o, "vectors", json_integer(vectors));
    json_object_set_new(o, "roots", roots);
    json_object_set_new(o, "llm",
                        ws_endpoint_status_json(s->llm_ep, s->cfg.llm_url && s->cfg.llm_url[0]));
    sb_release(&msg);
    return o;
}
