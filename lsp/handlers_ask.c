#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* coderag/ask (and the coderag.ask command), coderag/status, and
 * workspace/executeCommand. Asks are decoded here on the reader thread and
 * answered by the worker. */

#define MAX_BUDGET 10000000

/* The workspace a request is about: the one holding its document, else
 * the first. */
static Workspace *pick_workspace(Server *s, const char *uri)
{
    if (uri) {
        char *path = lsp_uri_to_path(uri);
        Workspace *ws = path ? ws_for_path(s, path, NULL) : NULL;
        free(path);
        if (ws) return ws;
    }
    return s->n_ws ? s->ws[0] : NULL;
}

static LspStatus queue_ask(Server *s, json_t *params, LspCall *call, LspError *err)
{
    const char *question = NULL, *mode = NULL, *uri = NULL;
    json_t *token = NULL;
    json_int_t budget = 0;
    int bm25 = 1, dense = 1, graph = 1, line = 0, character = 0;
    json_error_t je;
    RtvMode m;
    if (!params ||
        json_unpack_ex(params, &je, 0,
                       "{s:s, s?s, s?I, s?{s?b, s?b, s?b}, s?{s:s}, s?{s:i, s:i}, s?o}", "question",
                       &question, "mode", &mode, "budget", &budget, "retrieval", "bm25", &bm25,
                       "dense", &dense, "graph", &graph, "textDocument", "uri", &uri, "position",
                       "line", &line, "character", &character, "workDoneToken", &token) != 0)
        return lsp_error(err, LSP_INVALID_PARAMS, "coderag/ask: %s",
                         params ? je.text : "params with a \"question\" are required");
    if (mode && !rtv_mode_parse(mode, &m))
        return lsp_error(err, LSP_INVALID_PARAMS, "mode must be extractive, llm or auto");
    if (budget < 0 || budget > MAX_BUDGET)
        return lsp_error(err, LSP_INVALID_PARAMS, "budget must be 0-%d characters", MAX_BUDGET);
    if (token && !json_is_string(token) && !json_is_integer(token))
        return lsp_error(err, LSP_INVALID_PARAMS, "workDoneToken must be an integer or a string");
    if (strlen(question) > RTV_MAX_QUESTION)
        return lsp_error(err, LSP_INVALID_PARAMS, "the question is longer than %d bytes",
                         RTV_MAX_QUESTION);
    Workspace *ws = pick_workspace(s, uri);
    if (!ws) return lsp_error(err, LSP_REQUEST_FAILED, "no workspace folder is open");
    Job *j = job_new(JOB_ASK, ws, call);
    j->ask.question = xstrdup(question);
    j->ask.mode = mode ? xstrdup(mode) : NULL;
    j->ask.budget = budget;
    j->ask.bm25 = bm25;
    j->ask.dense = dense;
    j->ask.graph = graph;
    j->ask.uri = uri ? xstrdup(uri) : NULL;
    j->ask.line = line;
    j->ask.character = character;
    j->ask.wd_token = token ? json_deep_copy(token) : NULL;
    srv_push(s, j, 0);
    return LSP_LATER;
}

LspStatus on_ask(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    return queue_ask(ctx, params, call, err);
}

LspStatus on_status(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    *out = srv_status_json(ctx);
    return LSP_DONE;
}

LspStatus on_execute_command(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    Server *s = ctx;
    const char *command = NULL;
    json_t *args = NULL;
    json_error_t je;
    if (!params ||
        json_unpack_ex(params, &je, 0, "{s:s, s?o}", "command", &command, "arguments", &args) != 0)
        return lsp_error(err, LSP_INVALID_PARAMS, "workspace/executeCommand: %s",
                         params ? je.text : "params are required");
    if (!strcmp(command, "coderag.ask")) {
        json_t *first = json_is_array(args) ? json_array_get(args, 0) : NULL;
        if (json_is_string(first)) {
            json_t *p = json_pack("{s:O}", "question", first);
            LspStatus st = queue_ask(s, p, call, err);
            json_decref(p);
            return st;
        }
        if (!json_is_object(first))
            return lsp_error(
                err, LSP_INVALID_PARAMS,
                "coderag.ask takes one argument: the coderag/ask params or a question");
        return queue_ask(s, first, call, err);
    }
    if (!strcmp(command, "coderag.reindex")) {
        for (size_t i = 0; i < s->n_ws; i++)
            ws_request_build(s->ws[i]);
        return LSP_DONE;
    }
    return lsp_error(err, LSP_INVALID_PARAMS, "unknown command %s", command);
}

/* Polled by rtv_ask during LLM requests. */
static int ask_cancelled(void *ud)
{
    Job *j = ud;
    Server *s = j->ws->srv;
    pthread_mutex_lock(&s->mu);
    int stopping = s->stopping;
    pthread_mutex_unlock(&s->mu);
    return stopping || lsp_call_cancelled(j->call);
}

/* Work-done progress of one ask, on the client's token (no create needed). */
static void ask_progress(Server *s, Job *j, const char *kind, const char *message)
{
    if (!j->ask.wd_token) return;
    json_t *v = json_pack("{s:s}", "kind", kind);
    if (!strcmp(kind, "begin")) {
        json_object_set_new(v, "title", json_string("CodeRAG"));
        json_object_set_new(v, "cancellable", json_false());
    }
    if (message) json_object_set_new(v, "message", lsp_json_string(message));
    lsp_rpc_notify(s->rpc, "$/progress",
                   json_pack("{s:O, s:o}", "token", j->ask.wd_token, "value", v));
}

/* Called by rtv_ask as a streamed LLM answer arrives. */
static void on_llm_progress(void *ud, size_t tokens, size_t chars)
{
    Job *j = ud;
    double now = now_ms();
    if (now - j->ask.wd_last_ms < 200) return;
    j->ask.wd_last_ms = now;
    char msg[64];
    snprintf(msg, sizeof msg, "writing the answer: %zu tokens", tokens);
    ask_progress(j->ws->srv, j, "report", msg);
}

static int error_code(CrErr rc)
{
    switch (rc) {
    case CR_EINVAL:
    case CR_ETOOBIG:
        return LSP_INVALID_PARAMS;
    case CR_ECANCELED:
        return LSP_REQUEST_CANCELLED;
    default:
        return LSP_REQUEST_FAILED;
    }
}

void run_ask(Server *s, Job *j)
{
    LspError err = {0};
    ErrInfo e = {0};
    RtvAnswer ans = {0};
    json_t *result = NULL;
    LspCall *call = j->call;
    j->call = NULL;                 /* answered here whatever happens */
    if (lsp_call_cancelled(call)) { /* still queued when cancelled */
        lsp_call_reply(call, NULL, NULL);
        return;
    }
    Workspace *ws = j->ws;
    IdxStore *st = ws_query_store(ws, &e);
    if (!st) {
        lsp_error(&err, LSP_REQUEST_FAILED, "the index of %s is not available: %s", ws->root,
                  e.msg);
        lsp_call_reply(call, NULL, &err);
        return;
    }
    int indexing = ws_indexing(ws);
    RtvRequest req;
    rtv_request_init(&req);
    req.question = j->ask.question;
    req.budget = (size_t)j->ask.budget;
    req.use_bm25 = j->ask.bm25;
    req.use_dense = j->ask.dense;
    req.use_graph = j->ask.graph;
    if (j->ask.mode) rtv_mode_parse(j->ask.mode, &req.mode);
    req.llm_url = ws->cfg.llm_url;
    req.llm_model = ws->cfg.llm_model;
    req.llm_api_key_env = ws->cfg.llm_api_key_env;
    j->call = call; /* for ask_cancelled */
    req.cancel = ask_cancelled;
    req.cancel_ud = j;
    if (j->ask.wd_token) {
        req.progress = on_llm_progress;
        req.progress_ud = j;
        ask_progress(s, j, "begin", "retrieving");
    }
    CrErr rc = rtv_ask(st, &req, &ans, &e);
    ask_progress(s, j, "end", rc ? "failed" : NULL);
    j->call = NULL;
    if (rc) {
        lsp_error(&err, error_code(rc), "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        if (rc == CR_EHTTP || rc == CR_ETIMEOUT)
            srv_notice(s, NOTICE_LLM, 2, "coderag: the LLM endpoint failed: %s", err.message);
        lsp_call_reply(call, NULL, &err);
    } else {
        if (ans.fallback_reason)
            srv_notice(
                s, NOTICE_LLM, 2,
                "coderag: the LLM is unavailable (%s); answers are extractive until it is back",
                ans.fallback_reason);
        else if (ans.mode == RTV_MODE_LLM)
            srv_notice_clear(s, NOTICE_LLM);
        nav_remember_answer(ws, j->ask.question, &ans);
        result = lsp_answer_to_json(&ans, idx_root(st));
        json_object_set_new(result, "indexing", json_boolean(indexing));
        lsp_call_reply(call, result, NULL);
    }
    rtv_answer_release(&ans);
}
