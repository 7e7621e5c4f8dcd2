#include "mcp_int.h"
#include "rpc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The server: the calling thread reads messages and answers what needs no
 * index (initialize, ping, tools/list, argument errors); tool calls queue
 * for one worker thread, which owns the store: it indexes the root first,
 * then runs the calls in order, bringing the index up to date before each
 * one when the watcher saw a change. */

typedef struct Call {
    RpcCall *call; /* the request: answered (or dropped) once, then NULL */
    const McpTool *tool;
    json_t *args;
    json_t *token;   /* _meta.progressToken, or NULL */
    double progress; /* last progress value sent to token */
    struct Call *next;
} Call;

typedef enum { IDX_STARTING, IDX_RUNNING, IDX_READY, IDX_FAILED } IndexState;

typedef struct McpServer {
    const McpOptions *opt;
    Rpc *rpc;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;
    Call *head, *tail;
    int stopping;
    int structured;
    IndexState state;
    size_t done, total;
    char error[512];
} McpServer;

static const char *const versions[] = {MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                       "2024-11-05", "2024-10-07"};

/* Under s->mu: progress of the first index to every queued call that asked. */
static void progress_locked(McpServer *s, const char *what)
{
    for (Call *c = s->head; c; c = c->next) {
        if (!c->token || (double)s->done <= c->progress || rpc_call_cancelled(c->call))
            continue; /* strictly increasing; a cancelled call hears nothing more */
        c->progress = (double)s->done;
        char msg[160];
        if (s->total)
            snprintf(msg, sizeof msg, "%s: %zu/%zu files", what, s->done, s->total);
        else
            snprintf(msg, sizeof msg, "%s: scanning", what);
        json_t *p = json_pack("{s:O, s:I, s:s}", "progressToken", c->token, "progress",
                              (json_int_t)s->done, "message", msg);
        if (s->total) json_object_set_new(p, "total", json_integer((json_int_t)s->total));
        rpc_notify(s->rpc, "notifications/progress", p);
    }
}

static int on_index_progress(void *ud, size_t done, size_t total)
{
    McpServer *s = ud;
    pthread_mutex_lock(&s->mu);
    s->done = done;
    s->total = total;
    progress_locked(s, "indexing the workspace");
    int stop = s->stopping && !s->head; /* calls still queued at end of input are answered */
    pthread_mutex_unlock(&s->mu);
    return stop;
}

/* ---------------------------------------------------------------- worker */

static int call_cancelled(void *ud)
{
    const Call *c = ud;
    return rpc_call_cancelled(c->call);
}

static void call_free(Call *c)
{
    if (!c) return;
    rpc_call_drop(c->call);
    json_decref(c->args);
    json_decref(c->token);
    free(c);
}

static void run_call(McpServer *s, IdxStore *st, WsWatch *w, WsEndpoint *llm_ep, Call *c)
{
    McpResult r = {0};
    ErrInfo e = {0};
    double t0 = now_ms();
    if (rpc_call_cancelled(c->call)) { /* cancelled while queued: no answer */
        rpc_call_reply(c->call, NULL, NULL);
        c->call = NULL;
        return;
    }
    sb_init(&r.text);
    pthread_mutex_lock(&s->mu);
    IndexState state = s->state;
    int structured = s->structured;
    pthread_mutex_unlock(&s->mu);
    if (c->token && c->progress < 0) { /* every call that asks hears where the index stands */
        pthread_mutex_lock(&s->mu);
        char msg[160];
        snprintf(msg, sizeof msg, "index ready: %zu files", s->total);
        rpc_notify(s->rpc, "notifications/progress",
                   json_pack("{s:O, s:I, s:I, s:s}", "progressToken", c->token, "progress",
                             (json_int_t)s->total, "total", (json_int_t)s->total, "message", msg));
        pthread_mutex_unlock(&s->mu);
    }
    if (state == IDX_FAILED) {
        mcp_fail(&r, "the index of the workspace could not be opened: %s", s->error);
    } else if (ws_refresh(st, w, on_index_progress, s, &e) != CR_OK) {
        mcp_fail(&r, "updating the index failed: %s", e.msg);
    } else {
        McpCtx ctx = {st, s->opt, structured, call_cancelled, c, llm_ep};
        c->tool->run(&ctx, c->args, &r);
    }
    json_t *res = mcp_result_json(&r, structured);
    /* time inside the server, freshness check included (bench/mcp_bench.py) */
    json_object_set_new(res, "_meta", json_pack("{s:f}", "coderag/ms", now_ms() - t0));
    rpc_call_reply(c->call, res, NULL); /* no answer when the client cancelled it */
    c->call = NULL;
    sb_release(&r.text);
}

/* One throw-away search before the first call, so that what a process
 * sets up on first use (SQLite's prepared statements and page cache, the
 * query tokenizer) is not paid by the agent's first question. */
static void warm_up(IdxStore *st)
{
    RtvRequest req;
    RtvAnswer a = {0};
    double t0 = now_ms();
    rtv_request_init(&req);
    req.question = "function class method module";
    req.use_dense = 0;
    rtv_search(st, &req, &a, NULL);
    rtv_answer_release(&a);
    log_msg(LOG_DEBUG, "warm-up search: %.1f ms", now_ms() - t0);
}

static void *worker(void *ud)
{
    McpServer *s = ud;
    IdxStore *st = NULL;
    ErrInfo e = {0};
    IdxUpdateStats stats;
    WsWatch *w = NULL;
    /* the LLM's health across calls: a dead endpoint is backed off */
    WsEndpoint *llm_ep = ws_endpoint_new("LLM", NULL, NULL);

    CrErr rc = ws_store_open(s->opt->cfg, WS_OPEN_CREATE, &st, &e);
    if (!rc) {
        pthread_mutex_lock(&s->mu);
        s->state = IDX_RUNNING;
        pthread_mutex_unlock(&s->mu);
        w = ws_watch_open(idx_root(st), s->opt->cfg->index_dir);
        double t0 = now_ms();
        rc = idx_update(st, on_index_progress, s, &stats, &e);
        if (rc == CR_EHTTP || rc == CR_ETIMEOUT) {
            log_msg(LOG_WARN, "embeddings failed, dense leg off until the next update: %s", e.msg);
            rc = CR_OK;
        }
        if (!rc) {
            log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed) in %.0f ms", idx_root(st),
                    stats.files_seen, stats.files_changed, now_ms() - t0);
            rc = ws_refresh(st, w, on_index_progress, s, &e); /* edits made while indexing */
        }
        if (!rc) rc = idx_warm(st, &e);
        if (!rc) warm_up(st);
    }
    pthread_mutex_lock(&s->mu);
    s->state = rc ? IDX_FAILED : IDX_READY;
    if (rc) {
        snprintf(s->error, sizeof s->error, "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        log_msg(LOG_ERROR, "%s", s->error);
    }
    for (;;) {
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head) break; /* end of input, every call answered */
        Call *c = s->head;
        s->head = c->next;
        if (!s->head) s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        run_call(s, st, w, llm_ep, c);
        call_free(c);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    ws_watch_close(w);
    ws_endpoint_free(llm_ep);
    idx_close(st);
    return NULL;
}

/* ---------------------------------------------------------------- requests */

static RpcStatus on_initialize(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err)
{
    McpServer *s = ctx;
    const char *asked = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "protocolVersion", &asked) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "initialize: %s", params ? je.text : "no params");
    const char *use = versions[0];
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (!strcmp(asked, versions[i])) use = versions[i];
    pthread_mutex_lock(&s->mu);
    s->structured = strcmp(use, "2025-06-18") >= 0;
    pthread_mutex_unlock(&s->mu);
    *out = json_pack(
        "{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", use, "capabilities",
        "tools", "listChanged", 0, "serverInfo", "name", "coderag", "title", "CodeRAG", "version",
        "0.1.0", "instructions",
        "Verified code context for this repository: `search` ranks definitions for a "
        "question, `ask` answers with citations checked against the code, `definition`, "
        "`callers` and `callees` query the static code graph, `read` returns indexed source "
        "lines, `status` tells what is indexed.");
    return RPC_DONE;
}

static RpcStatus on_initialized(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                RpcError *err)
{
    return RPC_DONE;
}

static RpcStatus on_ping(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    *out = json_object();
    return RPC_DONE;
}

static RpcStatus on_tools_list(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err)
{
    *out = mcp_tools_list();
    return RPC_DONE;
}

/* Answers what needs no index now; queues the rest for the worker. */
static RpcStatus on_tools_call(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err)
{
    McpServer *s = ctx;
    const char *name = NULL;
    json_t *args = NULL, *meta = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s, s?o, s?o}", "name", &name, "arguments",
                                  &args, "_meta", &meta) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "tools/call: %s", params ? je.text : "no params");
    McpResult r = {0};
    sb_init(&r.text);
    const McpTool *t = mcp_tool_find(name);
    if (!t)
        mcp_fail(&r, "unknown tool '%.100s' (tools/list names the tools)", name);
    else if (args && json_is_null(args))
        args = NULL;
    if (t && !mcp_check_args(t, args, &r)) t = NULL;
    if (!t) { /* answered now, without waiting for the index */
        pthread_mutex_lock(&s->mu);
        int structured = s->structured;
        pthread_mutex_unlock(&s->mu);
        *out = mcp_result_json(&r, structured);
        sb_release(&r.text);
        return RPC_DONE;
    }
    sb_release(&r.text);
    Call *c = xcalloc(1, sizeof *c);
    c->call = call;
    c->tool = t;
    c->args = args ? json_incref(args) : json_object();
    json_t *tok = meta ? json_object_get(meta, "progressToken") : NULL;
    if (tok && (json_is_string(tok) || json_is_integer(tok))) c->token = json_incref(tok);
    c->progress = -1;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    if (s->state == IDX_STARTING || s->state == IDX_RUNNING)
        progress_locked(s, "indexing the workspace");
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return RPC_LATER;
}

/* notifications/cancelled is the profile's: a queued call is then dropped
 * unanswered, a running one is told to stop (an LLM request is abandoned). */
static const RpcMethod methods[] = {
    {"initialize", on_initialize, RPC_REQUEST | RPC_INIT},
    {"notifications/initialized", on_initialized, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"ping", on_ping, RPC_REQUEST},
    {"tools/list", on_tools_list, RPC_REQUEST | RPC_NEEDS_INIT},
    {"tools/call", on_tools_call, RPC_REQUEST | RPC_NEEDS_INIT},
};

/* ---------------------------------------------------------------- loop */

int mcp_server_run(const McpOptions *o, int in_fd, int out_fd)
{
    McpServer s;
    memset(&s, 0, sizeof s);
    s.opt = o;
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    RpcTransport *tr = rpc_transport_new(&rpc_framing_lines, in_fd, out_fd);
    rpc_transport_set_limits(tr, MCP_MAX_LINE, 0);
    s.rpc = rpc_new(&rpc_profile_mcp, methods, sizeof methods / sizeof methods[0], &s,
                    rpc_transport_send, tr);
    pthread_t th;
    int code = 0;
    if (pthread_create(&th, NULL, worker, &s) != 0) {
        log_msg(LOG_ERROR, "cannot start the worker thread");
        code = 2;
        goto out;
    }
    rpc_serve(s.rpc, tr);
    pthread_mutex_lock(&s.mu);
    s.stopping = 1;
    pthread_cond_signal(&s.cv);
    pthread_mutex_unlock(&s.mu);
    pthread_join(th, NULL);
    while (s.head) {
        Call *c = s.head;
        s.head = c->next;
        call_free(c);
    }
out:
    rpc_free(s.rpc);
    rpc_transport_free(tr);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    return code;
}
