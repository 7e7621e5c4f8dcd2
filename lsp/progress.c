#include "folder.h"
#include "progress.h"
#include "server_int.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the user is told: notices (window/showMessage), changes of the LLM
 * endpoint's state (ws.h keeps it and its back-off) and the work-done
 * progress of builds. */

/* ---------------------------------------------------------------- notices */

void lsp_srv_notice(Server *s, int kind, int type, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_msg(type == 1 ? LOG_ERROR : type == 2 ? LOG_WARN : LOG_INFO, "%s", msg);
    /* shown again whenever it changes: a new problem is never hidden
     * behind an old one */
    ws_host_lock(s->host);
    int shown = !strncmp(s->notified[kind], msg, sizeof s->notified[kind] - 1);
    snprintf(s->notified[kind], sizeof s->notified[kind], "%.255s", msg);
    ws_host_unlock(s->host);
    if (shown) return;
    json_t *p = json_object();
    json_object_set_new(p, "type", json_integer(type));
    json_object_set_new(p, "message", json_text(msg));
    rpc_notify(s->rpc, "window/showMessage", p);
}

void lsp_srv_notice_clear(Server *s, int kind)
{
    ws_host_lock(s->host);
    s->notified[kind][0] = '\0';
    ws_host_unlock(s->host);
}

/* ---------------------------------------------------------------- endpoints */

void lsp_ep_notice(void *ud, int type, const char *msg)
{
    Server *s = ud;
    log_msg(type == 3 ? LOG_INFO : LOG_WARN, "%s", msg);
    json_t *p = json_object();
    json_object_set_new(p, "type", json_integer(type));
    json_object_set_new(p, "message", json_text(msg));
    rpc_notify(s->rpc, "window/showMessage", p);
}

/* ---------------------------------------------------------------- progress */

static json_t *progress_value(const Progress *pg, const char *kind, const char *title, size_t done,
                              size_t total, const char *message)
{
    json_t *v = json_object();
    json_object_set_new(v, "kind", json_string(kind));
    if (title) json_object_set_new(v, "title", json_text(title));
    if (!strcmp(kind, "begin")) json_object_set_new(v, "cancellable", json_false());
    char files[96], msg[128];
    if (!message && total) {
        ws_progress_files(files, sizeof files, done, total);
        /* an index that was whole is checked (a stat per file), not built */
        snprintf(msg, sizeof msg, "%s%s", pg->checking ? "checking " : "", files);
        message = msg;
    }
    if (message) json_object_set_new(v, "message", json_text(message));
    if (strcmp(kind, "end") != 0)
        json_object_set_new(v, "percentage",
                            json_integer(total ? (json_int_t)(done * 100 / total) : 0));
    return v;
}

/* Sends one $/progress; caller holds ws->pg_mu. */
static void progress_send(LspFolder *ws, json_t *value)
{
    json_t *p = json_object();
    json_object_set_new(p, "token", json_string(ws->pg.token));
    json_object_set_new(p, "value", value);
    rpc_notify(ws->srv->rpc, "$/progress", p);
}

static void progress_begin_locked(LspFolder *ws)
{
    char title[300];
    size_t done, total;
    ws_host_lock(ws->srv->host);
    done = ws->r->done;
    total = ws->r->total;
    ws_host_unlock(ws->srv->host);
    if (ws->pg.checking)
        snprintf(title, sizeof title, "Checking the index of %s", ws->name);
    else
        snprintf(title, sizeof title, "Indexing %s", ws->name);
    progress_send(ws, progress_value(&ws->pg, "begin", title, done, total,
                                     total             ? NULL
                                     : ws->pg.checking ? "checking"
                                                       : "scanning"));
    ws->pg.st = PG_ACTIVE;
    ws_pace_init(&ws->pg.pace, WS_PACE_MIN_MS);
    ws_pace_due(&ws->pg.pace, done, total); /* the begin is the first report */
}

/* Reader thread: the client answered window/workDoneProgress/create. */
static void on_progress_created(void *ud, json_t *result, json_t *error)
{
    LspFolder *ws = ud;
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_CREATING) {
        if (error) {
            ws->pg.st = PG_NONE;
        } else {
            progress_begin_locked(ws);
            if (ws->pg.finished) {
                progress_send(ws, progress_value(&ws->pg, "end", NULL, 0, 0, ws->pg.end_msg));
                ws->pg.st = PG_DONE;
            }
        }
    }
    pthread_mutex_unlock(&ws->pg_mu);
}

void lsp_progress_start(LspFolder *ws)
{
    Server *s = ws->srv;
    if (!s->cap_progress) return;
    ws_host_lock(s->host);
    int seq = ++s->progress_seq;
    int checking = ws->r->complete;
    ws_host_unlock(s->host);
    pthread_mutex_lock(&ws->pg_mu);
    memset(&ws->pg, 0, sizeof ws->pg);
    ws->pg.seq = seq;
    ws->pg.checking = checking;
    snprintf(ws->pg.token, sizeof ws->pg.token, "coderag/index/%d", seq);
    ws->pg.st = PG_CREATING;
    json_t *p = json_object();
    json_object_set_new(p, "token", json_string(ws->pg.token));
    pthread_mutex_unlock(&ws->pg_mu);
    rpc_request(s->rpc, "window/workDoneProgress/create", p, on_progress_created, ws);
}

void lsp_progress_report(LspFolder *ws, size_t done, size_t total)
{
    if (!ws->srv->cap_progress) return;
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_ACTIVE && ws_pace_due(&ws->pg.pace, done, total))
        progress_send(ws, progress_value(&ws->pg, "report", NULL, done, total, NULL));
    pthread_mutex_unlock(&ws->pg_mu);
}

void lsp_progress_finish(LspFolder *ws, const char *msg)
{
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_ACTIVE) {
        progress_send(ws, progress_value(&ws->pg, "end", NULL, 0, 0, msg));
        ws->pg.st = PG_DONE;
    } else if (ws->pg.st == PG_CREATING) {
        ws->pg.finished = 1;
        snprintf(ws->pg.end_msg, sizeof ws->pg.end_msg, "%s", msg);
    }
    pthread_mutex_unlock(&ws->pg_mu);
}
