#include "ask_job.h"
#include "folder.h"
#include "memory.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lsp_explain_resolve(Server *s, AskJob *j, IdxStore *st, RpcError *err);

/* The pipeline of an ask (and of coderag.explain): retrieval on the
 * worker, the LLM on the pool (streamed to the client as partial results,
 * cancellable), verification back on the worker; work-done progress
 * throughout. docs/protocol.md, "Streaming, progress and cancel". */

#define PARTIAL_INTERVAL_MS 50.0

static void ask_free(WsJob *wj)
{
    Job *job = (Job *)wj;
    rpc_call_drop(job->call);
    AskJob *j = (AskJob *)job;
    free(j->question);
    free(j->uri);
    json_decref(j->wd_token);
    json_decref(j->partial_token);
    for (size_t i = 0; i < j->n_turns; i++) {
        free((char *)j->turns[i].question);
        free((char *)j->turns[i].answer);
    }
    free(j->turns);
    free(j->explain_word);
    free(j->explain_rel);
    free(j->explain_symbol);
    ws_ask_free(j->ask);
    rtv_answer_release(&j->ans);
    free(j);
}

static WsJobNext ask_retrieve(void *ctx, WsJob *wj);

AskJob *lsp_ask_job_new(LspFolder *ws, RpcCall *call)
{
    AskJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, ask_retrieve, ask_free);
    j->job.ws = ws;
    j->job.call = call;
    rtv_request_init(&j->req);
    ws_pace_init(&j->wd_pace, WS_PACE_MIN_MS);
    return j;
}

/* A work-done $/progress's params on the client's token (no create
 * needed); percentage < 0: none. */
static json_t *wd_params(AskJob *j, const char *kind, const char *message, int percentage)
{
    json_t *v = json_pack("{s:s}", "kind", kind);
    if (!strcmp(kind, "begin")) {
        json_object_set_new(v, "title", json_string("CodeRAG"));
        json_object_set_new(v, "cancellable", json_true());
        percentage = 0;
    }
    if (message) json_object_set_new(v, "message", json_text(message));
    if (percentage >= 0) json_object_set_new(v, "percentage", json_integer(percentage));
    return json_pack("{s:O, s:o}", "token", j->wd_token, "value", v);
}

static void wd_progress(Server *s, AskJob *j, const char *kind, const char *message)
{
    if (j->wd_token) rpc_notify(s->rpc, "$/progress", wd_params(j, kind, message, -1));
}

/* "waiting for the first index of NAME: 12/860 files". */
static void waiting_message(LspFolder *ws, size_t done, size_t total, char *msg, size_t size)
{
    char files[64];
    ws_progress_files(files, sizeof files, done, total);
    snprintf(msg, size, "waiting for the first index of %s: %s", ws->name, files);
}

static int waiting_percentage(size_t done, size_t total)
{
    return total ? (int)(done * 100 / total) : 0;
}

void lsp_ask_waiting_progress(LspFolder *ws, size_t done, size_t total)
{
    Server *s = ws->srv;
    char msg[400];
    waiting_message(ws, done, total, msg, sizeof msg);
    json_t *out = json_array();
    ws_host_lock(s->host);
    for (WsJob *p = ws->r->parked; p; p = p->next) {
        AskJob *j = (AskJob *)p; /* only asks wait there */
        if (j->wd_token && ws_pace_due(&j->wd_pace, done, total))
            json_array_append_new(out,
                                  wd_params(j, "report", msg, waiting_percentage(done, total)));
    }
    ws_host_unlock(s->host);
    /* sent outside the lock: a slow client never holds the server's state */
    size_t i;
    json_t *p;
    json_array_foreach(out, i, p) rpc_notify(s->rpc, "$/progress", json_incref(p));
    json_decref(out);
}

/* Worker: keeps j aside while the first index is built (docs/protocol.md,
 * "Asking during the first index"); 1 when it was. */
static int wait_for_index(Server *s, AskJob *j)
{
    LspFolder *ws = j->job.ws;
    ws_host_lock(s->host);
    size_t done = ws->r->done, total = ws->r->total;
    ws_host_unlock(s->host);
    char msg[400];
    waiting_message(ws, done, total, msg, sizeof msg);
    /* told before it is parked: once parked, the builder's reports and the
     * job's resumption may come at any moment */
    json_t *p = j->wd_token && !j->waited
                    ? wd_params(j, "report", msg, waiting_percentage(done, total))
                    : NULL;
    if (!lsp_folder_park(ws, &j->job)) {
        json_decref(p);
        if (j->waited) ws_pace_init(&j->wd_pace, WS_PACE_MIN_MS); /* for the LLM's tokens */
        return 0;
    }
    if (p) rpc_notify(s->rpc, "$/progress", p);
    j->waited = 1;
    return 1;
}

/* A partial result (value is stolen). */
static void partial(Server *s, AskJob *j, json_t *value)
{
    if (!j->partial_token) {
        json_decref(value);
        return;
    }
    rpc_notify(s->rpc, "$/progress",
               json_pack("{s:O, s:o}", "token", j->partial_token, "value", value));
}

static json_t *partial_value(AskJob *j, const char *stage, const char *text, size_t len)
{
    json_t *v = json_object();
    json_object_set_new(v, "provisional", json_true());
    json_object_set_new(v, "stage", json_string(stage));
    json_t *t = json_stringn(text ? text : "", len);
    json_object_set_new(v, "answer", t ? t : json_string(""));
    json_object_set_new(v, "match", json_string(rtv_match_name(j->ans.match)));
    json_object_set_new(v, "mode",
                        json_string(j->ask && ws_ask_wants_llm(j->ask) ? "llm" : "extractive"));
    return v;
}

void lsp_ask_queue(Server *s, AskJob *j)
{
    wd_progress(s, j, "begin", "retrieving");
    ws_host_submit(s->host, &j->job.hj);
}

static int ask_cancelled(void *ud)
{
    AskJob *j = ud;
    Server *s = j->job.ws->srv;
    ws_host_lock(s->host);
    int stop = ws_host_stopping(s->host) || (j->explain_gen && j->explain_gen != s->explain_gen);
    ws_host_unlock(s->host);
    return stop || rpc_call_cancelled(j->job.call);
}

/* The LLM's text so far: the first piece at once, then at most every 50 ms. */
static void on_text(void *ud, const char *text, size_t len)
{
    AskJob *j = ud;
    double now = now_ms();
    if (j->partial_sent && now - j->partial_last_ms < PARTIAL_INTERVAL_MS) return;
    /* whole UTF-8 characters only */
    size_t n = len;
    while (n && ((unsigned char)text[n - 1] & 0xC0) == 0x80)
        n--;
    if (n && (unsigned char)text[n - 1] >= 0xC0) n--;
    if (!n) return;
    j->partial_last_ms = now;
    j->partial_sent = n;
    partial(j->job.ws->srv, j, partial_value(j, "writing", text, n));
}

static void on_tokens(void *ud, size_t tokens, size_t chars)
{
    AskJob *j = ud;
    if (!ws_pace_due(&j->wd_pace, tokens, 0)) return;
    char msg[64];
    ws_progress_tokens(msg, sizeof msg, tokens);
    wd_progress(j->job.ws->srv, j, "report", msg);
}

static int reply_error(Server *s, AskJob *j, const RpcError *err)
{
    wd_progress(s, j, "end", err->code == RPC_REQUEST_CANCELLED ? "cancelled" : "failed");
    rpc_call_reply(j->job.call, NULL, err);
    j->job.call = NULL;
    return WS_JOB_DONE;
}

static int reply_cancelled(Server *s, AskJob *j)
{
    RpcError err = {.code = RPC_REQUEST_CANCELLED};
    snprintf(err.message, sizeof err.message, "%s",
             rpc_call_cancelled(j->job.call) ? "the request was cancelled"
                                             : "superseded by a newer request");
    return reply_error(s, j, &err);
}

static void fill_request(AskJob *j)
{
    LspFolder *ws = j->job.ws;
    RtvRequest *req = &j->req; /* mode, budget and switches: decoded (handlers_ask.c) */
    req->question = j->question;
    ws_config_llm(&ws->r->cfg, req);
    req->cancel = ask_cancelled;
    req->cancel_ud = j;
    req->progress = on_tokens;
    req->progress_ud = j;
    req->on_text = on_text;
    req->text_ud = j;
    req->history = j->turns;
    req->n_history = j->n_turns;
    req->focus_chunk = j->explain_focus;
    req->buffer = lsp_folder_buffer_text; /* what the editor shows, saved or not */
    req->buffer_ud = ws;
}

static WsJobNext ask_llm(void *ctx, WsJob *wj);
static WsJobNext ask_finish(void *ctx, WsJob *wj);

/* Worker: retrieval and packing; then the LLM pool, or verification at once. */
static WsJobNext ask_retrieve(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    AskJob *j = (AskJob *)job;
    LspFolder *ws = job->ws;
    RpcError err = {0};
    ErrInfo e = {0};
    if (ask_cancelled(j)) return reply_cancelled(s, j);
    IdxStore *st = lsp_folder_query_store(ws, &e);
    if (!st) {
        rpc_error(&err, RPC_REQUEST_FAILED, "the index of %s is not available: %s", ws->r->root,
                  e.msg);
        return reply_error(s, j, &err);
    }
    if (wait_for_index(s, j)) return WS_JOB_KEPT;
    if (ask_cancelled(j)) return reply_cancelled(s, j);
    if (j->explain_gen && !lsp_explain_resolve(s, j, st, &err)) return reply_error(s, j, &err);
    j->indexing = ws_root_indexing(ws->r);
    fill_request(j);
    if (!j->ask) j->ask = ws_ask_new(s->llm_ep);
    CrErr rc = ws_ask_prepare(j->ask, st, &j->req, &j->ans, &e);
    if (rc) {
        rpc_error(&err, cr_rpc_code(rc), "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        return reply_error(s, j, &err);
    }
    j->prepared = 1;
    json_t *v = partial_value(j, "context", "", 0);
    json_object_set_new(v, "context", ws_answer_context_json(&j->ans));
    partial(s, j, v);
    char msg[200];
    snprintf(msg, sizeof msg, "found %zu location%s (match %s); %s", j->ans.n_items,
             j->ans.n_items == 1 ? "" : "s", rtv_match_name(j->ans.match),
             ws_ask_wants_llm(j->ask) ? "asking the LLM" : "writing the answer");
    wd_progress(s, j, "report", msg);
    if (ws_ask_wants_llm(j->ask)) {
        job->hj.run = ask_llm;
        return WS_JOB_LLM;
    }
    return ask_finish(ctx, wj);
}

/* LLM pool: the LLM's draft, streamed; never touches the store. */
static WsJobNext ask_llm(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    AskJob *j = (AskJob *)job;
    if (ask_cancelled(j)) return reply_cancelled(s, j);
    CrErr rc = ws_ask_llm(j->ask, &j->req, &j->ans);
    const char *text = ws_ask_llm_text(j->ask);
    if (rc == CR_OK && text && strlen(text) > j->partial_sent) {
        j->partial_sent = 0; /* the whole text, unthrottled */
        j->partial_last_ms = 0;
        on_text(j, text, strlen(text));
    }
    if (rc == CR_ECANCELED || ask_cancelled(j)) return reply_cancelled(s, j);
    job->hj.run = ask_finish;
    job->hj.urgent = 1; /* verification is quick: not behind other asks */
    return WS_JOB_WORKER;
}

/* Worker: the draft verified, the reply sent. */
static WsJobNext ask_finish(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    AskJob *j = (AskJob *)job;
    LspFolder *ws = job->ws;
    RpcError err = {0};
    ErrInfo e = {0};
    IdxStore *st = lsp_folder_query_store(ws, &e);
    if (!st) {
        rpc_error(&err, RPC_REQUEST_FAILED, "the index of %s is not available: %s", ws->r->root,
                  e.msg);
        return reply_error(s, j, &err);
    }
    CrErr rc = ws_ask_finish(j->ask, st, &j->req, &j->ans, &e);
    if (rc) {
        rpc_error(&err, cr_rpc_code(rc), "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        return reply_error(s, j, &err);
    }
    /* kept by the indexed content's hash: never an explanation of unsaved text */
    if (j->explain_gen && j->ans.mode == RTV_MODE_LLM &&
        !lsp_folder_buffer_unsaved(ws, st, j->explain_rel))
        lsp_explain_store(ws, j->explain_key, j->ans.answer);
    if (!j->explain_gen) lsp_nav_remember_answer(ws, j->question, &j->ans);
    json_t *result = ws_answer_json(&j->ans, ws_store_root(st));
    json_object_set_new(result, "indexing", json_boolean(j->indexing));
    /* a pass another process left half done (this server's own says "indexing") */
    if (!j->indexing) ws_answer_mark_partial(result, st, NULL);
    if (j->explain_symbol) {
        json_object_set_new(result, "symbol", json_text(j->explain_symbol));
        char title[300];
        if (j->req.mode == RTV_MODE_EXTRACTIVE)
            snprintf(title, sizeof title, "`%.200s` and its callers", j->explain_symbol);
        else
            snprintf(title, sizeof title, "Explain `%.200s`", j->explain_symbol);
        json_object_set_new(result, "title", json_text(title));
    }
    wd_progress(s, j, "end", "done");
    rpc_call_reply(job->call, result, NULL);
    job->call = NULL;
    return WS_JOB_DONE;
}

/* An explain job's word resolved to the definition it names from the
 * cursor's place, and turned into the question to ask. */
static int lsp_explain_resolve(Server *s, AskJob *j, IdxStore *st, RpcError *err)
{
    (void)s;
    RtvDef d;
    ErrInfo e = {0};
    uint32_t at = lsp_folder_disk_line(j->job.ws, st, j->explain_rel, j->line); /* unsaved buffer */
    CrErr rc = ws_nav_def_under(st, j->explain_rel, at, j->explain_word, &d, &e);
    if (rc == CR_ENOENT) {
        rpc_error(err, RPC_REQUEST_FAILED, "no indexed definition of `%s`", j->explain_word);
        return 0;
    }
    if (rc) {
        char why[480];
        if (ws_index_unreadable(rc))
            ws_unreadable_text(rc, &e, why, sizeof why);
        else
            snprintf(why, sizeof why, "%.400s", e.msg[0] ? e.msg : cr_strerror(rc));
        rpc_error(err, RPC_REQUEST_FAILED, "%s", why);
        return 0;
    }
    const char *name = d.head.symbol[0] ? d.head.symbol : d.head.module;
    StrBuf q;
    sb_init(&q);
    sb_addf(&q, "What does %s `%s` in %s do, and how is it used?", idx_kind_name(d.head.kind), name,
            d.head.path);
    free(j->question);
    j->question = sb_detach(&q, NULL);
    sb_release(&q);
    ws_def_key(st, &d, j->explain_key); /* the hover cache's key */
    free(j->explain_symbol);
    j->explain_symbol = xstrdup(name);
    j->explain_focus = d.head.id;
    rtv_def_release(&d);
    return 1;
}
