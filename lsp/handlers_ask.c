#include "ask_job.h"
#include "handlers.h"
#include "folder.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* coderag/ask (and the coderag.ask command), coderag/status, and
 * workspace/executeCommand: decoding on the reader thread. The pipeline
 * that answers (worker, LLM pool, worker) is in ask_run.c. */

#define MAX_BUDGET 10000000
#define MAX_HISTORY 50

/* Decodes history: [{"question": s, "answer": s}, ...]. */
static RpcStatus decode_history(json_t *h, AskJob *j, RpcError *err)
{
    if (!h || json_is_null(h)) return RPC_DONE;
    if (!json_is_array(h) || json_array_size(h) > MAX_HISTORY)
        return rpc_error(err, RPC_INVALID_PARAMS,
                         "history must be an array of at most %d {question, answer} objects",
                         MAX_HISTORY);
    size_t n = json_array_size(h);
    j->turns = n ? xcalloc(n, sizeof *j->turns) : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *q = NULL, *a = NULL;
        if (json_unpack(json_array_get(h, i), "{s:s, s?s}", "question", &q, "answer", &a) != 0)
            return rpc_error(err, RPC_INVALID_PARAMS,
                             "history[%zu] must be {\"question\": string, \"answer\": string}", i);
        j->turns[i].question = xstrdup(q);
        j->turns[i].answer = xstrdup(a ? a : "");
        j->n_turns = i + 1;
    }
    return RPC_DONE;
}

static int is_token(json_t *t)
{
    return !t || json_is_string(t) || json_is_integer(t);
}

/* Decodes coderag/ask params into j (reader thread). */
static RpcStatus lsp_ask_decode(Server *s, json_t *params, AskJob *j, RpcError *err)
{
    const char *question = NULL, *mode = NULL, *uri = NULL;
    json_t *token = NULL, *partial = NULL, *history = NULL;
    json_int_t budget = 0;
    int bm25 = 1, dense = 1, graph = 1, line = 0, character = 0, all = 0;
    json_error_t je;
    if (!params ||
        json_unpack_ex(
            params, &je, 0,
            "{s:s, s?s, s?I, s?{s?b, s?b, s?b}, s?{s:s}, s?{s:i, s:i}, s?o, s?o, s?o, s?b}",
            "question", &question, "mode", &mode, "budget", &budget, "retrieval", "bm25", &bm25,
            "dense", &dense, "graph", &graph, "textDocument", "uri", &uri, "position", "line",
            &line, "character", &character, "workDoneToken", &token, "partialResultToken", &partial,
            "history", &history, "all", &all) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "coderag/ask: %s",
                         params ? je.text : "params with a \"question\" are required");
    if (mode && !rtv_mode_parse(mode, &j->req.mode))
        return rpc_error(err, RPC_INVALID_PARAMS, "mode must be extractive, llm or auto");
    if (budget < 0 || budget > MAX_BUDGET)
        return rpc_error(err, RPC_INVALID_PARAMS, "budget must be 0-%d characters", MAX_BUDGET);
    if (!is_token(token) || !is_token(partial))
        return rpc_error(err, RPC_INVALID_PARAMS,
                         "workDoneToken and partialResultToken must be integers or strings");
    if (strlen(question) > RTV_MAX_QUESTION)
        return rpc_error(err, RPC_INVALID_PARAMS, "the question is longer than %d bytes",
                         RTV_MAX_QUESTION);
    if (decode_history(history, j, err) != RPC_DONE) return RPC_FAIL;
    LspFolder *ws = lsp_folder_pick(s, uri);
    if (!ws) return rpc_error(err, RPC_REQUEST_FAILED, "no workspace folder is open");
    j->job.ws = ws;
    j->question = xstrdup(question);
    j->req.budget = (size_t)budget;
    j->req.use_bm25 = bm25;
    j->req.use_dense = dense;
    j->req.use_graph = graph;
    j->req.answer_all = all;
    j->uri = uri ? xstrdup(uri) : NULL;
    j->line = line;
    j->character = character;
    j->wd_token = token ? json_deep_copy(token) : NULL;
    j->partial_token = partial ? json_deep_copy(partial) : NULL;
    return RPC_DONE;
}

static RpcStatus queue_ask(Server *s, json_t *params, RpcCall *call, RpcError *err)
{
    AskJob *j = lsp_ask_job_new(NULL, call);
    if (lsp_ask_decode(s, params, j, err) != RPC_DONE) {
        j->job.call = NULL; /* the dispatcher answers with the error */
        ws_job_free(&j->job.hj);
        return RPC_FAIL;
    }
    lsp_ask_queue(s, j);
    return RPC_LATER;
}

RpcStatus lsp_on_ask(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    return queue_ask(ctx, params, call, err);
}

RpcStatus lsp_on_status(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    *out = lsp_srv_status_json(ctx);
    return RPC_DONE;
}

RpcStatus lsp_on_execute_command(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                 RpcError *err)
{
    Server *s = ctx;
    const char *command = NULL;
    json_t *args = NULL;
    json_error_t je;
    if (!params ||
        json_unpack_ex(params, &je, 0, "{s:s, s?o}", "command", &command, "arguments", &args) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "workspace/executeCommand: %s",
                         params ? je.text : "params are required");
    json_t *first = json_is_array(args) ? json_array_get(args, 0) : NULL;
    if (!strcmp(command, "coderag.ask")) {
        if (json_is_string(first)) {
            json_t *p = json_pack("{s:O}", "question", first);
            RpcStatus st = queue_ask(s, p, call, err);
            json_decref(p);
            return st;
        }
        if (!json_is_object(first))
            return rpc_error(
                err, RPC_INVALID_PARAMS,
                "coderag.ask takes one argument: the coderag/ask params or a question");
        return queue_ask(s, first, call, err);
    }
    if (!strcmp(command, "coderag.explain")) return lsp_explain_command(s, first, call, err);
    if (!strcmp(command, "coderag.reindex")) {
        for (size_t i = 0; i < s->n_ws; i++)
            lsp_folder_request_build(s->ws[i]);
        return RPC_DONE;
    }
    return rpc_error(err, RPC_INVALID_PARAMS, "unknown command %s", command);
}
