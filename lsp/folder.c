#include "jobs.h"
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

/* Workspaces: their lifecycle, the worker's query store, file updates,
 * and coderag/status. See server_int.h for the design. */

LspFolder *lsp_folder_new(Server *s, const char *root, const char *name, const WsConfig *cfg)
{
    LspFolder *ws = xcalloc(1, sizeof *ws);
    char real[PATH_MAX];
    ws->srv = s;
    ws->root = xstrdup(realpath(root, real) ? real : root);
    if (strcmp(ws->root, root) != 0) ws->alias = xstrdup(root);
    ws->name = xstrdup(name);
    ws_config_copy(&ws->cfg, cfg);
    free(ws->cfg.root);
    ws->cfg.root = xstrdup(ws->root);
    ws->state = FOLDER_OPENING;
    snprintf(ws->message, sizeof ws->message, "waiting for initialized");
    strmap_init(&ws->pending);
    pthread_mutex_init(&ws->pg_mu, NULL);
    return ws;
}

void lsp_folder_free(LspFolder *ws)
{
    if (!ws) return;
    while (ws->parked) { /* the server is going away: nothing answers them */
        Job *j = ws->parked;
        ws->parked = j->park_next;
        lsp_job_free(j);
    }
    lsp_nav_forget_answer(ws);
    lsp_folder_buffers_free(ws);
    for (size_t i = 0; i < HOVER_CACHE; i++)
        free(ws->explained[i].markdown);
    idx_close(ws->q);
    free(ws->root);
    free(ws->alias);
    free(ws->name);
    ws_config_release(&ws->cfg);
    strmap_release(&ws->pending);
    pthread_mutex_destroy(&ws->pg_mu);
    free(ws);
}

/* Length of root when abs is root itself or inside it, else 0; both
 * normalised, abs absolute. */
static size_t under_root(const char *abs, const char *root, StrBuf *tmp)
{
    if (!path_normalize(root, tmp) || !path_under(tmp->buf, abs)) return 0;
    return tmp->len;
}

/* The workspace holding an absolute path (longest root first), or NULL;
 * *out_rel (may be NULL) gets the root-relative part, normalised
 * (path_is_normal_rel), or NULL for the root itself (caller frees). The
 * path is normalised first: "/ws/a/../../etc/x" is in no workspace. */
static LspFolder *lsp_folder_for_path(Server *s, const char *abs, char **out_rel)
{
    LspFolder *best = NULL;
    size_t best_len = 0;
    StrBuf norm, tmp;
    sb_init(&norm);
    sb_init(&tmp);
    /* "/ws/a/../../etc/x" is /etc/x: never inside /ws */
    if (abs[0] == '/' && path_normalize(abs, &norm)) {
        for (size_t i = 0; i < s->n_ws; i++) {
            const char *names[2] = {s->ws[i]->root, s->ws[i]->alias};
            for (int k = 0; k < 2; k++) {
                size_t n = names[k] ? under_root(norm.buf, names[k], &tmp) : 0;
                if (n > best_len) {
                    best = s->ws[i];
                    best_len = n;
                }
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
    sb_release(&tmp);
    return best;
}

LspFolder *lsp_folder_for_uri(Server *s, const char *uri, char **out_rel)
{
    char *path = NULL;
    if (out_rel) *out_rel = NULL;
    if (path_from_uri(uri, &path) != CR_OK || !path) return NULL;
    LspFolder *ws = lsp_folder_for_path(s, path, out_rel);
    free(path);
    return ws;
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
        if (s->ws[i]->state != FOLDER_ERROR) {
            pick = s->ws[i];
            break;
        }
    }
    ws_host_unlock(s->host);
    return pick;
}

int lsp_folder_indexing(LspFolder *ws)
{
    ws_host_lock(ws->srv->host);
    int r = ws->state == FOLDER_OPENING || ws->state == FOLDER_INDEXING || ws->building;
    ws_host_unlock(ws->srv->host);
    return r;
}

int lsp_folder_park(LspFolder *ws, Job *j)
{
    Server *s = ws->srv;
    ws_host_lock(s->host);
    int wait = !ws->complete && ws->state != FOLDER_ERROR && !ws_host_stopping(s->host) &&
               (ws->state == FOLDER_OPENING || ws->state == FOLDER_INDEXING || ws->building ||
                ws->build_wanted) &&
               !(j->call && rpc_call_cancelled(j->call));
    if (wait) {
        j->park_next = ws->parked;
        ws->parked = j;
    }
    ws_host_unlock(s->host);
    return wait;
}

void lsp_folder_unpark(LspFolder *ws, int all)
{
    Server *s = ws->srv;
    Job *go = NULL;
    ws_host_lock(s->host);
    for (Job **p = &ws->parked; *p;) {
        Job *j = *p;
        if (all || (j->call && rpc_call_cancelled(j->call))) {
            *p = j->park_next;
            j->park_next = go;
            go = j;
        } else {
            p = &j->park_next;
        }
    }
    ws_host_unlock(s->host);
    /* in the order they were asked (both lists are reversed) */
    while (go) {
        Job *j = go;
        go = j->park_next;
        j->park_next = NULL;
        lsp_srv_push(s, j);
    }
}

/* ---------------------------------------------------------------- worker */

void lsp_folder_set_error(LspFolder *ws, const char *msg)
{
    ws_host_lock(ws->srv->host);
    ws->state = FOLDER_ERROR;
    snprintf(ws->message, sizeof ws->message, "%s", msg);
    ws_host_unlock(ws->srv->host);
}

static void set_snapshot(LspFolder *ws, const IdxStatus *st)
{
    ws_host_lock(ws->srv->host);
    ws->snap = *st;
    ws_host_unlock(ws->srv->host);
}

/* Opens q (idempotent); errors put the workspace in the error state. */
static int lsp_folder_open(LspFolder *ws, ErrInfo *e)
{
    if (ws->q) return 1;
    CrErr rc = ws_store_open(&ws->cfg, WS_OPEN_CREATE, &ws->q, e);
    if (rc) {
        lsp_folder_set_error(ws, e->msg[0] ? e->msg : cr_strerror(rc));
        lsp_srv_notice(ws->srv, NOTICE_INDEX, 1, "coderag: cannot open the index of %s: %s",
                       ws->root, e->msg);
        return 0;
    }
    lsp_folder_warm(ws);
    if (lsp_folder_count(ws, &ws->q_status)) set_snapshot(ws, &ws->q_status);
    ws_host_lock(ws->srv->host);
    ws->complete = ws->q_status.last_update != 0; /* a whole pass was written before */
    ws_host_unlock(ws->srv->host);
    return 1;
}

/* Asks the builder for a full pass; the root says "indexing" from now. */
static void want_build(LspFolder *ws)
{
    Server *s = ws->srv;
    ws_host_lock(s->host);
    ws->build_wanted = 1;
    if (!ws->building) {
        ws->state = FOLDER_INDEXING;
        snprintf(ws->message, sizeof ws->message, "indexing %s", ws->root);
    }
    ws_host_wake_builder(s->host);
    ws_host_unlock(s->host);
}

/* Worker: open the query store and ask the builder for a build. */
static WsJobNext run_open(void *ctx, WsJob *wj)
{
    Job *j = (Job *)wj;
    LspFolder *ws = j->ws;
    ErrInfo e = {0};
    if (lsp_folder_open(ws, &e)) want_build(ws);
    return WS_JOB_DONE;
}

IdxStore *lsp_folder_query_store(LspFolder *ws, ErrInfo *e)
{
    if (!ws->q) {
        ws_host_lock(ws->srv->host);
        FolderState st = ws->state;
        ws_host_unlock(ws->srv->host);
        if (st == FOLDER_ERROR) {
            ws_host_lock(ws->srv->host);
            err_set(e, CR_EIO, "%s", ws->message);
            ws_host_unlock(ws->srv->host);
            return NULL;
        }
        if (!lsp_folder_open(ws, e)) return NULL;
    }
    /* Fresh by construction: every search checks the database's
     * data_version and reloads what another connection (the builder's)
     * committed since (idx_warm), so asks during a first build see each
     * batch as it lands. */
    return ws->q;
}

static void repend(LspFolder *ws, const char *rel, int64_t when);

/* How long a save waits for another writer on the worker thread before it
 * is handed to the builder (ms). */
#define LSP_SAVE_WAIT_MS 1000

/* Applies the pending file updates (worker). */
void lsp_folder_run_updates(Server *s, LspFolder *ws)
{
    StrMap todo;
    ws_host_lock(s->host);
    ws->update_queued = 0;
    if (ws->building) { /* the adoption runs them */
        ws_host_unlock(s->host);
        return;
    }
    todo = ws->pending;
    strmap_init(&ws->pending);
    ws_host_unlock(s->host);
    if (!todo.len) return;
    ErrInfo e = {0};
    if (!ws->q && !lsp_folder_open(ws, &e)) {
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
            repend(ws, todo.keys[i], todo.vals[i]);
            continue;
        }
        double t0 = now_ms();
        e.msg[0] = '\0';
        int busy = 0;
        CrErr rc = ws_store_update_file(ws->q, todo.keys[i], LSP_SAVE_WAIT_MS, &busy, &e);
        double t1 = now_ms();
        if (busy) {
            log_msg(LOG_INFO,
                    "re-indexing %s waits for another writer of the index; handed to a full pass",
                    todo.keys[i]);
            repend(ws, todo.keys[i], todo.vals[i]);
            handed = 1;
            continue;
        }
        if (rc && rc != CR_EOUTSIDE)
            log_msg(LOG_WARN, "re-indexing %s failed: %s", todo.keys[i], e.msg);
        /* a path naming nothing to index is the client's, not the index's */
        if (rc != CR_EOUTSIDE && rc != CR_EINVAL) {
            char why[sizeof ws->write_error];
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
    ws->q_status_stale = 1; /* counted when the worker is idle, not before the next ask */
    if (handed) want_build(ws);
}

/* Puts a save back among the pending ones (the builder's adoption runs
 * them after its pass), keeping when it was first announced. */
static void repend(LspFolder *ws, const char *rel, int64_t when)
{
    ws_host_lock(ws->srv->host);
    if (!strmap_get(&ws->pending, rel, NULL)) strmap_put(&ws->pending, rel, when);
    ws_host_unlock(ws->srv->host);
}

void lsp_folder_write_outcome(LspFolder *ws, const char *why, int catch_up)
{
    Server *s = ws->srv;
    ws_host_lock(s->host);
    int was_failing = ws->write_error[0] != '\0';
    /* a full pass that failed (a full disk too) left the root in error: a
     * write that works again is the moment to retry it */
    int pass_failed = !why && ws->state == FOLDER_ERROR && !ws->building;
    if (why)
        snprintf(ws->write_error, sizeof ws->write_error, "%s", why);
    else
        ws->write_error[0] = '\0';
    ws_host_unlock(s->host);
    if (why && !was_failing)
        lsp_srv_notice(s, NOTICE_UPDATE, 1,
                       "coderag: the index of %s cannot be updated: %s. Answers may miss "
                       "the changes since; updating resumes when it can.",
                       ws->root, why);
    if (!why && (was_failing || pass_failed)) {
        /* the saves that failed: a full pass (a stat per file), before the
         * user is told, so status says "indexing" from then */
        if (catch_up) want_build(ws);
        if (pass_failed) lsp_srv_notice_clear(s, NOTICE_INDEX);
        lsp_srv_notice_clear(s, NOTICE_UPDATE);
        lsp_srv_notice(s, NOTICE_UPDATE, 3,
                       "coderag: the index of %s is being updated again; catching up with the "
                       "changes it missed.",
                       ws->root);
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
    Server *s = ws->srv;
    ws_host_lock(s->host);
    if (!strmap_get(&ws->pending, rel, NULL))
        strmap_put(&ws->pending, rel, (int64_t)(now_ms() * 1000));
    int queue = !ws->update_queued && !ws->building;
    if (queue) ws->update_queued = 1;
    ws_host_unlock(s->host);
    if (queue) {
        Job *j = xcalloc(1, sizeof *j);
        ws_job_init(&j->hj, run_update, NULL);
        lsp_job_init(j, ws, NULL);
        j->hj.urgent = 1;
        lsp_srv_push(s, j);
    }
}

void lsp_folder_request_build(LspFolder *ws)
{
    Job *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, run_open, NULL);
    lsp_job_init(j, ws, NULL);
    lsp_srv_push(ws->srv, j);
}

void lsp_folder_refresh_stale(void *ud)
{
    Server *s = ud;
    for (size_t i = 0; i < s->n_ws && !ws_host_queued(s->host) && !ws_host_stopping(s->host); i++) {
        LspFolder *ws = s->ws[i];
        if (!ws->q_status_stale || !ws->q) continue;
        ws->q_status_stale = 0;
        ws_host_unlock(s->host);
        IdxStatus st;
        int ok = lsp_folder_count(ws, &st);
        ws_host_lock(s->host);
        if (ok) {
            ws->q_status = st;
            ws->snap = st;
        }
    }
}

/* ---------------------------------------------------------------- status */

static const char *state_name(FolderState st)
{
    switch (st) {
    case FOLDER_OPENING:
    case FOLDER_INDEXING:
        return "indexing";
    case FOLDER_READY:
        return "ready";
    default:
        return "error";
    }
}

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
        FolderState st = ws->building && ws->state == FOLDER_READY ? FOLDER_INDEXING : ws->state;
        /* a failed update: the index serves, but is behind the files */
        const char *message = ws->message;
        if (st == FOLDER_READY && ws->write_error[0]) {
            st = FOLDER_ERROR;
            message = ws->write_error;
        }
        size_t w_indexed = ws->done, w_total = ws->total;
        if (st == FOLDER_READY) w_indexed = w_total = (size_t)ws->snap.files;
        any_indexing |= st == FOLDER_OPENING || st == FOLDER_INDEXING;
        any_error |= st == FOLDER_ERROR;
        files += ws->snap.files;
        chunks += ws->snap.chunks;
        edges += ws->snap.edges;
        vectors += ws->snap.vectors;
        indexed += (json_int_t)w_indexed;
        total += (json_int_t)w_total;
        char line[700];
        if (st == FOLDER_INDEXING && w_total)
            snprintf(line, sizeof line, "%s: indexing, %zu/%zu files", ws->name, w_indexed,
                     w_total);
        else
            snprintf(line, sizeof line, "%s: %s", ws->name, message);
        if (msg.len) sb_adds(&msg, "; ");
        sb_adds(&msg, line);
        /* the keys every door reports, then the server's own */
        json_t *r = ws_status_json(ws->root, &ws->snap);
        json_object_set_new(r, "state", json_string(state_name(st)));
        json_object_set_new(r, "indexed", json_integer((json_int_t)w_indexed));
        json_object_set_new(r, "total", json_integer((json_int_t)w_total));
        json_object_set_new(r, "message", json_text(message));
        json_array_append_new(roots, r);
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
