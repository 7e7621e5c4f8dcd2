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

typedef enum { PHASE_NONE, PHASE_INDEX, PHASE_READY, PHASE_LLM } CallPhase;

typedef struct Call {
    RpcCall *call; /* the request: answered (or dropped) once, then NULL */
    const McpTool *tool;
    json_t *args;
    json_t *token; /* _meta.progressToken, or NULL */
    struct McpServer *srv;
    /* Progress sent to token, at a human pace (ws_pace_due), in phases (an
     * index pass, the LLM writing): a phase's values start above the last
     * one sent, so that the call's values strictly increase. */
    long long sent; /* last progress value sent; -1: none */
    long long base; /* the current phase's 0 */
    CallPhase phase;
    unsigned pass; /* PHASE_INDEX: which index pass (McpServer.pass) */
    WsPace pace;
    struct Call *next;
} Call;

typedef enum { IDX_STARTING, IDX_RUNNING, IDX_READY, IDX_FAILED } IndexState;

typedef struct McpServer {
    const McpOptions *opt;
    Rpc *rpc;
    pthread_mutex_t mu; /* everything below, and the progress fields of the calls */
    pthread_cond_t cv;
    Call *head, *tail;
    Call *running; /* the call the worker runs, or NULL */
    int stopping;
    int structured;
    IndexState state;
    unsigned pass;      /* index passes begun */
    size_t done, total; /* the current pass's progress */
    long long files;    /* files in the index (status's count); -1: unknown */
    char error[512];
} McpServer;

static const char *const versions[] = {MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                       "2024-11-05", "2024-10-07"};

/* ---------------------------------------------------------------- progress */

/* Under s->mu: a new phase of c's progress, reported at a human pace. */
static void phase_begin_locked(Call *c, CallPhase phase, unsigned pass)
{
    c->phase = phase;
    c->pass = pass;
    c->base = c->sent + 1;
    ws_pace_init(&c->pace, WS_PACE_MIN_MS);
}

/* Under s->mu: one notifications/progress to c, done out of total (0:
 * open-ended) in the current phase, when it is due. */
static void progress_to_locked(McpServer *s, Call *c, size_t done, size_t total, const char *msg)
{
    if (!c->token || rpc_call_cancelled(c->call)) return; /* a cancelled call hears nothing more */
    long long v = c->base + (long long)done;
    if (v <= c->sent || !ws_pace_due(&c->pace, done, total)) return;
    c->sent = v;
    json_t *p = json_pack("{s:O, s:I, s:s}", "progressToken", c->token, "progress", (json_int_t)v,
                          "message", msg);
    if (total) json_object_set_new(p, "total", json_integer((json_int_t)(c->base + total)));
    rpc_notify(s->rpc, "notifications/progress", p);
}

/* Under s->mu: the current index pass to c. */
static void index_progress_to_locked(McpServer *s, Call *c)
{
    if (c->phase != PHASE_INDEX || c->pass != s->pass) phase_begin_locked(c, PHASE_INDEX, s->pass);
    char files[64], msg[160];
    ws_progress_files(files, sizeof files, s->done, s->total);
    snprintf(msg, sizeof msg, "indexing the workspace: %s", files);
    progress_to_locked(s, c, s->done, s->total, msg);
}

/* Under s->mu: an index pass begins. */
static void pass_begin_locked(McpServer *s)
{
    s->pass++;
    s->done = s->total = 0;
}

/* Worker: progress of an index pass to the running call and every queued
 * one that asked. */
static int on_index_progress(void *ud, size_t done, size_t total)
{
    McpServer *s = ud;
    pthread_mutex_lock(&s->mu);
    s->done = done;
    s->total = total;
    if (s->running) index_progress_to_locked(s, s->running);
    for (Call *c = s->head; c; c = c->next)
        index_progress_to_locked(s, c);
    int stop = s->stopping && !s->head; /* calls still queued at end of input are answered */
    pthread_mutex_unlock(&s->mu);
    return stop;
}

/* Worker (RtvProgressFn): the LLM writing the running call's answer. */
static void on_llm_tokens(void *ud, size_t tokens, size_t chars)
{
    Call *c = ud;
    McpServer *s = c->srv;
    char msg[96];
    ws_progress_tokens(msg, sizeof msg, tokens);
    pthread_mutex_lock(&s->mu);
    if (c->phase != PHASE_LLM) phase_begin_locked(c, PHASE_LLM, 0);
    progress_to_locked(s, c, tokens, 0, msg);
    pthread_mutex_unlock(&s->mu);
}

/* Worker: where the index stands, to the running call (its count is
 * status's). */
static void ready_to(McpServer *s, Call *c)
{
    pthread_mutex_lock(&s->mu);
    if (s->files >= 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "index ready: %lld file%s", s->files, s->files == 1 ? "" : "s");
        phase_begin_locked(c, PHASE_READY, 0);
        progress_to_locked(s, c, (size_t)s->files, (size_t)s->files, msg);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Worker: counts the files in the index again (after a pass changed it). */
static void count_files(McpServer *s, IdxStore *st)
{
    IdxStatus is;
    long long files = idx_status(st, &is, NULL) == CR_OK ? (long long)is.files : -1;
    pthread_mutex_lock(&s->mu);
    s->files = files;
    pthread_mutex_unlock(&s->mu);
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
    int passes = 0;
    if (state == IDX_FAILED) {
        mcp_fail(&r, "the index of the workspace could not be opened: %s", s->error);
    } else {
        pthread_mutex_lock(&s->mu);
        pass_begin_locked(s);
        pthread_mutex_unlock(&s->mu);
        CrErr rc = ws_refresh(st, w, on_index_progress, s, &passes, &e);
        if (passes) count_files(s, st);
        if (rc) {
            mcp_fail(&r, "updating the index failed: %s", e.msg);
        } else {
            ready_to(s, c); /* every call that asks hears where the index stands */
            McpCtx ctx = {st, s->opt, structured, call_cancelled, c, llm_ep, NULL, NULL};
            if (c->token) {
                ctx.progress = on_llm_tokens;
                ctx.progress_ud = c;
            }
            c->tool->run(&ctx, c->args, &r);
        }
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
        w = ws_watch_open(idx_root(st), s->opt->cfg->index_dir);
        double t0 = now_ms();
        pthread_mutex_lock(&s->mu);
        pass_begin_locked(s);
        s->state = IDX_RUNNING;
        pthread_mutex_unlock(&s->mu);
        rc = ws_store_pass(st, on_index_progress, s, NULL, NULL, &stats, &e);
        if (ws_update_embed_failed(rc)) {
            log_msg(LOG_WARN, "embeddings failed, dense leg off until the next update: %s", e.msg);
            rc = CR_OK;
        }
        if (!rc) {
            log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed) in %.0f ms", idx_root(st),
                    stats.files_seen, stats.files_changed, now_ms() - t0);
            pthread_mutex_lock(&s->mu);
            pass_begin_locked(s);
            pthread_mutex_unlock(&s->mu);
            rc = ws_refresh(st, w, on_index_progress, s, NULL, &e); /* edits made while indexing */
        }
        if (!rc) count_files(s, st);
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
        s->running = c;
        pthread_mutex_unlock(&s->mu);
        run_call(s, st, w, llm_ep, c);
        pthread_mutex_lock(&s->mu);
        s->running = NULL;
        pthread_mutex_unlock(&s->mu);
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
    c->srv = s;
    c->sent = -1;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    if (s->state == IDX_STARTING || s->state == IDX_RUNNING)
        index_progress_to_locked(s, c); /* where the first index stands */
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
    s.files = -1;
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
