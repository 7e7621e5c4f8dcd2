#include "ask_job.h"
#include "handlers.h"
#include "folder.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LLM explanations, only when asked for: the coderag.explain command (an
 * ask in mode llm about the definition under the cursor, streamed and
 * cancellable like any ask, a newer one superseding it), the code action
 * that offers it, and the cache hovers show explanations from. A hover
 * never calls the LLM. */

#define EXPLAIN_BUDGET 6000 /* an explanation is a glance, not a report */

static int llm_configured(const LspFolder *ws)
{
    return ws && ws->r->cfg.llm_url && ws->r->cfg.llm_url[0];
}

/* A code action request, for the worker: its title names the definition
 * the explanation would be about, as the index qualifies it. Without an
 * LLM, the action shows the definition and its callers (coderag.explain in
 * mode extractive). */
typedef struct ActionJob {
    Job job;
    char *uri, *rel, *word;
    int line, character; /* 0-based */
    int llm;             /* an LLM is configured */
} ActionJob;

static void action_free(WsJob *wj)
{
    Job *job = (Job *)wj;
    rpc_call_drop(job->call);
    ActionJob *j = (ActionJob *)job;
    free(j->uri);
    free(j->rel);
    free(j->word);
    free(j);
}

static WsJobNext run_action(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    (void)s;
    ActionJob *j = (ActionJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    if (rpc_call_cancelled(call)) { /* editors ask on every cursor move, and move on */
        rpc_call_reply(call, NULL, NULL);
        return WS_JOB_DONE;
    }
    ErrInfo e = {0};
    IdxStore *st = lsp_folder_query_store(job->ws, &e);
    RtvDef d = {0};
    const char *name = j->word; /* the index does not know it (yet): the word */
    if (st && ws_nav_def_under(st, j->rel, lsp_folder_disk_line(job->ws, st, j->rel, j->line),
                               j->word, &d, NULL) == CR_OK)
        name = d.head.symbol[0] ? d.head.symbol : d.head.module;
    char title[300];
    if (j->llm)
        snprintf(title, sizeof title, "Explain `%.200s` with the LLM (CodeRAG)", name);
    else
        snprintf(title, sizeof title, "Show `%.200s` and its callers (CodeRAG)", name);
    rtv_def_release(&d);
    json_t *arg = json_pack("{s:{s:s}, s:{s:i, s:i}}", "textDocument", "uri", j->uri, "position",
                            "line", j->line, "character", j->character);
    if (!j->llm) json_object_set_new(arg, "mode", json_string("extractive"));
    json_t *cmd = json_pack("{s:o, s:s, s:[o]}", "title", json_text(title), "command",
                            "coderag.explain", "arguments", arg);
    json_t *out =
        json_pack("[{s:o, s:s, s:o}]", "title", json_text(title), "kind", "", "command", cmd);
    rpc_call_reply(call, out, NULL);
    return WS_JOB_DONE;
}

RpcStatus lsp_on_code_action(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Server *s = ctx;
    const char *uri;
    int line = 0, character = 0, c0 = 0, c1 = 0;
    json_error_t je;
    if (!params ||
        json_unpack_ex(params, &je, 0, "{s:{s:s}, s:{s:{s:i, s:i}}}", "textDocument", "uri", &uri,
                       "range", "start", "line", &line, "character", &character) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "textDocument/codeAction: %s",
                         params ? je.text : "no params");
    char *rel = NULL;
    LspFolder *ws = lsp_folder_for_uri(s, uri, &rel);
    char *word = ws && rel && line >= 0 && character >= 0
                     ? lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1)
                     : NULL;
    if (!word) {
        free(rel);
        *out = json_array();
        return RPC_DONE;
    }
    ActionJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, run_action, action_free);
    j->job.ws = ws;
    j->job.call = call;
    j->uri = xstrdup(uri);
    j->rel = rel;
    j->word = word;
    j->line = line;
    j->character = character;
    j->llm = llm_configured(ws);
    ws_host_submit(s->host, &j->job.hj);
    return RPC_LATER;
}

RpcStatus lsp_explain_command(Server *s, json_t *args, RpcCall *call, RpcError *err)
{
    const char *uri, *mode = "llm";
    int line = 0, character = 0, c0 = 0, c1 = 0;
    json_t *token = NULL, *partial = NULL;
    json_error_t je;
    if (!json_is_object(args) ||
        json_unpack_ex(args, &je, 0, "{s:{s:s}, s:{s:i, s:i}, s?o, s?o, s?s}", "textDocument",
                       "uri", &uri, "position", "line", &line, "character", &character,
                       "workDoneToken", &token, "partialResultToken", &partial, "mode", &mode) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS,
                         "coderag.explain takes one argument: {textDocument, position}");
    int extractive = !strcmp(mode, "extractive");
    if (!extractive && strcmp(mode, "llm") != 0)
        return rpc_error(err, RPC_INVALID_PARAMS,
                         "coderag.explain: mode must be llm or extractive");
    if (line < 0 || character < 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "coderag.explain: negative position");
    if ((token && !json_is_string(token) && !json_is_integer(token)) ||
        (partial && !json_is_string(partial) && !json_is_integer(partial)))
        return rpc_error(err, RPC_INVALID_PARAMS, "tokens must be integers or strings");
    char *rel = NULL;
    LspFolder *ws = lsp_folder_for_uri(s, uri, &rel);
    if (!ws || !rel) {
        free(rel);
        return rpc_error(err, RPC_INVALID_PARAMS,
                         "coderag.explain: the document is not in a "
                         "workspace folder");
    }
    if (!extractive && !llm_configured(ws)) {
        free(rel);
        return rpc_error(err, RPC_REQUEST_FAILED,
                         "no LLM endpoint configured (llm.url); mode \"extractive\" shows the "
                         "definition and its callers");
    }
    char *word = lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1);
    if (!word) {
        free(rel);
        return rpc_error(err, RPC_REQUEST_FAILED, "no identifier under the cursor");
    }
    AskJob *j = lsp_ask_job_new(ws, call);
    j->explain_word = word;
    j->explain_rel = rel;
    j->req.mode = extractive ? RTV_MODE_EXTRACTIVE : RTV_MODE_LLM;
    j->req.budget = EXPLAIN_BUDGET;
    j->uri = xstrdup(uri);
    j->line = line;
    j->character = character;
    j->wd_token = token ? json_deep_copy(token) : NULL;
    j->partial_token = partial ? json_deep_copy(partial) : NULL;
    ws_host_lock(s->host);
    j->explain_gen = ++s->explain_gen; /* the previous explanation is superseded */
    if (!j->explain_gen) j->explain_gen = ++s->explain_gen;
    ws_host_unlock(s->host);
    lsp_ask_queue(s, j);
    return RPC_LATER;
}
