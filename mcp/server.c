#include "mcp_int.h"
#include "rpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The server on the workspace host (ws.h): the calling thread reads
 * messages and answers what needs no index (initialize, ping, tools/list,
 * argument errors); tool calls are jobs on the host's worker, which owns
 * the query store; the index's passes are the host's builder's, on a
 * handle of its own. A call waits for the first index, and for the pass a
 * change the watcher saw calls for; but never behind another writer of
 * the index (a `coderag index`, a language server): then it is answered
 * from the index as last committed, and says so. */

/* How long a call waits for a pass that meets another writer before it
 * is answered from the index as it stands (ms). */
#define MCP_WRITE_WAIT_MS 1000
/* Passes one call waits for (a tree that keeps changing: answered after these). */
#define MCP_MAX_REFRESH 3

typedef enum { PHASE_NONE, PHASE_INDEX, PHASE_READY, PHASE_LLM } CallPhase;

typedef struct Call {
    WsJob hj;      /* first: the host's */
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
    unsigned pass; /* PHASE_INDEX: which index pass (WsRoot.passes) */
    WsPace pace;
    int refreshes; /* passes it waited for */
    int stale;     /* a pass waits for another writer: answered from the index as it stands */
    int failed;    /* the pass it waited for failed (WsRoot.write_error says why) */
} Call;

/* The root's index state is the host's (WsRoot): the first index is
 * written while it is not `complete` (the error state: it failed); its
 * builder keeps one `writer` across passes, whose calls wait in `parked`;
 * the query store `q` is the worker's; `watch` is opened by the first pass. */
typedef struct McpServer {
    const McpOptions *opt;
    Rpc *rpc;
    WsHost *host;  /* its lock guards everything below, and the progress fields of the calls */
    WsRoot *r;     /* the one root served */
    Call *running; /* the call the worker runs, or NULL */
    size_t live;   /* calls not yet freed */
    int structured;
    WsEndpoint *llm_ep; /* the LLM's health across calls: a dead endpoint is backed off */
} McpServer;

static const char *const versions[] = {MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                       "2024-11-05", "2024-10-07"};

/* ---------------------------------------------------------------- progress */

/* Host lock held: a new phase of c's progress, reported at a human pace. */
static void phase_begin_locked(Call *c, CallPhase phase, unsigned pass)
{
    c->phase = phase;
    c->pass = pass;
    c->base = c->sent + 1;
    ws_pace_init(&c->pace, WS_PACE_MIN_MS);
}

/* Host lock held: one notifications/progress to c, done out of total (0:
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

/* Host lock held: the current index pass to c. */
static void index_progress_to_locked(McpServer *s, Call *c)
{
    const WsRoot *r = s->r;
    if (c->phase != PHASE_INDEX || c->pass != r->passes)
        phase_begin_locked(c, PHASE_INDEX, r->passes);
    char files[64], msg[160];
    ws_progress_files(files, sizeof files, r->done, r->total);
    snprintf(msg, sizeof msg, "indexing the workspace: %s", files);
    progress_to_locked(s, c, r->done, r->total, msg);
}

/* Host lock held: an index pass begins. */
static void pass_begin_locked(McpServer *s)
{
    s->r->passes++;
    s->r->done = s->r->total = 0;
}

/* Builder: progress of an index pass to the running call and every waiting
 * one that asked. */
static int on_index_progress(void *ud, size_t done, size_t total)
{
    McpServer *s = ud;
    ws_host_lock(s->host);
    s->r->done = done;
    s->r->total = total;
    s->r->yielded = 0; /* a file written: the pass has its turn */
    if (s->running) index_progress_to_locked(s, s->running);
    for (WsJob *j = s->r->parked; j; j = j->next)
        index_progress_to_locked(s, (Call *)j);
    int stop = ws_host_stopping(s->host); /* calls left at end of input were answered first */
    ws_host_unlock(s->host);
    return stop;
}

/* Worker (RtvProgressFn): the LLM writing the running call's answer. */
static void on_llm_tokens(void *ud, size_t tokens, size_t chars)
{
    Call *c = ud;
    McpServer *s = c->srv;
    char msg[96];
    ws_progress_tokens(msg, sizeof msg, tokens);
    ws_host_lock(s->host);
    if (c->phase != PHASE_LLM) phase_begin_locked(c, PHASE_LLM, 0);
    progress_to_locked(s, c, tokens, 0, msg);
    ws_host_unlock(s->host);
}

/* Worker: where the index stands, to the running call (its count is
 * status's). */
static void ready_to(McpServer *s, Call *c)
{
    ws_host_lock(s->host);
    if (s->r->counted) {
        long long files = (long long)s->r->snap.files;
        char msg[96];
        snprintf(msg, sizeof msg, "index ready: %lld file%s", files, files == 1 ? "" : "s");
        phase_begin_locked(c, PHASE_READY, 0);
        progress_to_locked(s, c, (size_t)files, (size_t)files, msg);
    }
    ws_host_unlock(s->host);
}

/* Counts the files in the index again (after a pass changed it). */
static void count_files(McpServer *s, IdxStore *st)
{
    IdxStatus is;
    int ok = ws_root_count(s->r, st, &is);
    ws_host_lock(s->host);
    if (ok) s->r->snap = is;
    s->r->counted = ok;
    ws_host_unlock(s->host);
}

/* ---------------------------------------------------------------- builder */

/* Host lock held: the calls that waited for a pass go back to the worker
 * (stale: answered from the index as it stands). */
static void unpark_locked(McpServer *s, int stale, int failed)
{
    WsJob *go = ws_root_unpark_locked(s->r, NULL, NULL);
    while (go) {
        Call *c = (Call *)go;
        go = go->next;
        c->hj.next = NULL;
        c->stale |= stale;
        c->failed |= failed;
        ws_host_submit_locked(s->host, &c->hj);
    }
}

/* Builder: the pass met another writer (ws_store_pass_yield): the calls
 * that wait for it go on from what is committed meanwhile. */
static void on_writer_met(void *ud)
{
    McpServer *s = ud;
    log_msg(LOG_INFO, "an index pass waits for another writer; calls answer from the index as it "
                      "stands meanwhile");
    ws_host_lock(s->host);
    s->r->yielded = 1;
    unpark_locked(s, 1, 0);
    ws_host_unlock(s->host);
}

/* One pass on the builder's handle. A refresh that meets another writer
 * lets the waiting calls go (answered from what is committed) and then
 * waits its turn. */
static CrErr pass(McpServer *s, int first, ErrInfo *e)
{
    IdxUpdateStats stats;
    double t0 = now_ms();
    ws_host_lock(s->host);
    pass_begin_locked(s);
    ws_host_unlock(s->host);
    CrErr rc = ws_store_pass_yield(s->r->writer, first ? 0 : MCP_WRITE_WAIT_MS, on_writer_met, s,
                                   on_index_progress, s, &stats, e);
    ws_host_lock(s->host);
    s->r->yielded = 0;
    ws_host_unlock(s->host);
    if (ws_update_embed_failed(rc)) {
        log_msg(LOG_WARN, "embeddings failed, dense leg off until the next update: %s", e->msg);
        rc = CR_OK;
    }
    if (!rc && (first || stats.files_changed || stats.files_removed))
        log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed, %zu removed) in %.0f ms", s->r->root,
                stats.files_seen, stats.files_changed, stats.files_removed, now_ms() - t0);
    return rc;
}

static WsJobNext run_ready(void *ctx, WsJob *j);

/* Builder (WsHostDoor.build): the first index (opening the writer's
 * handle and the watcher), or a refresh; the calls that waited go back to
 * the worker. */
static void build(void *ud, WsRoot *r)
{
    McpServer *s = ud;
    ErrInfo e = {0};
    CrErr rc = CR_OK;
    int first = !r->writer;
    if (first) {
        rc = ws_store_open(&r->cfg, WS_OPEN_CREATE, &r->writer, &e);
        if (!rc) {
            WsWatch *w = ws_watch_open(r->root, r->cfg.index_dir);
            ws_host_lock(s->host);
            r->watch = w;
            ws_host_unlock(s->host);
        }
    }
    if (!rc) rc = pass(s, first, &e);
    /* edits made while the first index was built (one stat pass without a watcher) */
    for (int i = 0; first && !rc && i < MCP_MAX_REFRESH; i++) {
        ws_host_lock(s->host);
        int changed = r->watch && ws_watch_changed(r->watch);
        ws_host_unlock(s->host);
        if (!changed) break;
        rc = pass(s, 0, &e);
    }
    if (!rc) count_files(s, r->writer);
    ws_host_lock(s->host);
    r->building = 0;
    if (r->complete) r->state = WS_ROOT_READY; /* a refresh: the index serves on */
    if (rc && first) {
        r->state = WS_ROOT_ERROR;
        snprintf(r->message, sizeof r->message, "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        log_msg(LOG_ERROR, "%s", r->message);
    } else if (rc) {
        /* kept until the next failure: the calls told of this one read it */
        snprintf(r->write_error, sizeof r->write_error, "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        log_msg(LOG_WARN, "updating the index failed: %s", r->write_error);
    }
    if (first && !rc) {
        /* the worker opens its query store, then the calls go */
        WsJob *j = xcalloc(1, sizeof *j);
        ws_job_init(j, run_ready, NULL);
        j->urgent = 1;
        ws_host_submit_locked(s->host, j);
    } else {
        unpark_locked(s, 0, rc != CR_OK);
    }
    ws_host_unlock(s->host);
}

/* ---------------------------------------------------------------- worker */

/* Worker: the first index is written; the query store opened and warmed,
 * with one throw-away search, so that the agent's first question does not
 * pay what a process sets up on first use. */
static WsJobNext run_ready(void *ctx, WsJob *j)
{
    McpServer *s = ctx;
    WsRoot *r = s->r;
    ErrInfo e = {0};
    CrErr rc = ws_root_open_query(r, &e);
    if (!rc) rc = ws_root_warm(r, &e);
    if (!rc) ws_root_warm_search(r);
    ws_host_lock(s->host);
    r->state = rc ? WS_ROOT_ERROR : WS_ROOT_READY;
    r->complete = !rc;
    if (rc) {
        snprintf(r->message, sizeof r->message, "%s", e.msg[0] ? e.msg : cr_strerror(rc));
        log_msg(LOG_ERROR, "%s", r->message);
    }
    unpark_locked(s, 0, 0);
    ws_host_unlock(s->host);
    (void)j;
    return WS_JOB_DONE;
}

static int call_cancelled(void *ud)
{
    const Call *c = ud;
    return rpc_call_cancelled(c->call);
}

static void call_free(WsJob *j)
{
    Call *c = (Call *)j;
    McpServer *s = c->srv;
    rpc_call_drop(c->call);
    json_decref(c->args);
    json_decref(c->token);
    free(c);
    ws_host_lock(s->host);
    s->live--;
    ws_host_changed(s->host);
    ws_host_unlock(s->host);
}

/* Host lock held: whether c waits for a pass first (the first index, or a
 * change the watcher saw): then it is parked, and the builder asked. */
static int park_locked(McpServer *s, Call *c)
{
    WsRoot *r = s->r;
    if (r->yielded) c->stale = 1;
    if (r->state == WS_ROOT_ERROR || c->stale || c->failed) return 0;
    int wait = !r->complete || r->building || r->build_wanted;
    /* without a watcher (inotify unavailable): one stat pass per call */
    int stale_files =
        r->watch ? c->refreshes < MCP_MAX_REFRESH && ws_watch_changed(r->watch) : c->refreshes == 0;
    if (!wait && stale_files) {
        r->build_wanted = 1;
        ws_host_wake_builder(s->host);
        wait = 1;
    }
    if (!wait) return 0;
    if (r->complete) c->refreshes++;
    ws_root_park_locked(r, &c->hj);
    return 1;
}

static WsJobNext run_call(void *ctx, WsJob *j)
{
    McpServer *s = ctx;
    Call *c = (Call *)j;
    McpResult r = {0};
    if (rpc_call_cancelled(c->call)) { /* cancelled while queued: no answer */
        rpc_call_reply(c->call, NULL, NULL);
        c->call = NULL;
        return WS_JOB_DONE;
    }
    ws_host_lock(s->host);
    if (park_locked(s, c)) {
        ws_host_unlock(s->host);
        return WS_JOB_KEPT;
    }
    int opened = s->r->state != WS_ROOT_ERROR;
    int structured = s->structured;
    char error[sizeof s->r->message];
    snprintf(error, sizeof error, "%s", opened ? s->r->write_error : s->r->message);
    s->running = c;
    ws_host_unlock(s->host);
    double t0 = now_ms();
    sb_init(&r.text);
    if (!opened) {
        mcp_fail(&r, "the index of the workspace could not be opened: %s", error);
    } else if (c->failed) {
        mcp_fail(&r, "updating the index failed: %s", error);
    } else {
        ready_to(s, c); /* every call that asks hears where the index stands */
        McpCtx ctx2 = {s->r->q, s->opt, structured, call_cancelled, c, s->llm_ep, NULL, NULL};
        if (c->token) {
            ctx2.progress = on_llm_tokens;
            ctx2.progress_ud = c;
        }
        c->tool->run(&ctx2, c->args, &r);
        if (c->stale && !r.is_error) {
            sb_adds(&r.text, "(another writer is updating the index: this answer is from the "
                             "index as last committed and may miss the latest changes)\n");
            if (json_is_object(r.structured))
                json_object_set_new(r.structured, "staleIndex", json_true());
        }
    }
    json_t *res = mcp_result_json(&r, structured);
    /* time inside the server, freshness check included (bench/mcp_bench.py) */
    json_object_set_new(res, "_meta", json_pack("{s:f}", "coderag/ms", now_ms() - t0));
    rpc_call_reply(c->call, res, NULL); /* no answer when the client cancelled it */
    c->call = NULL;
    sb_release(&r.text);
    ws_host_lock(s->host);
    s->running = NULL;
    ws_host_unlock(s->host);
    return WS_JOB_DONE;
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
    ws_host_lock(s->host);
    s->structured = strcmp(use, "2025-06-18") >= 0;
    ws_host_unlock(s->host);
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
        ws_host_lock(s->host);
        int structured = s->structured;
        ws_host_unlock(s->host);
        *out = mcp_result_json(&r, structured);
        sb_release(&r.text);
        return RPC_DONE;
    }
    sb_release(&r.text);
    Call *c = xcalloc(1, sizeof *c);
    ws_job_init(&c->hj, run_call, call_free);
    c->call = call;
    c->tool = t;
    c->args = args ? json_incref(args) : json_object();
    json_t *tok = meta ? json_object_get(meta, "progressToken") : NULL;
    if (tok && (json_is_string(tok) || json_is_integer(tok))) c->token = json_incref(tok);
    c->srv = s;
    c->sent = -1;
    ws_host_lock(s->host);
    s->live++;
    if (!s->r->complete && s->r->state != WS_ROOT_ERROR)
        index_progress_to_locked(s, c); /* where the first index stands */
    ws_host_submit_locked(s->host, &c->hj);
    ws_host_unlock(s->host);
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

/* Host lock held: every call answered (ws_host_wait_until). */
static int all_answered(void *ud)
{
    const McpServer *s = ud;
    return s->live == 0;
}

int mcp_server_run(const McpOptions *o, int in_fd, int out_fd)
{
    McpServer s;
    memset(&s, 0, sizeof s);
    s.opt = o;
    s.llm_ep = ws_endpoint_new("LLM", NULL, NULL);
    WsHostDoor door = {&s, NULL, build, NULL};
    s.host = ws_host_new(&door);
    s.r = ws_host_add_root(s.host, o->cfg->root ? o->cfg->root : ".", o->cfg);
    RpcTransport *tr = rpc_transport_new(&rpc_framing_lines, in_fd, out_fd);
    rpc_transport_set_limits(tr, MCP_MAX_LINE, 0);
    s.rpc = rpc_new(&rpc_profile_mcp, methods, sizeof methods / sizeof methods[0], &s,
                    rpc_transport_send, tr);
    int code = 0;
    s.r->build_wanted = 1; /* the first index, at once */
    int rc = ws_host_start(s.host);
    if (rc) {
        log_msg(LOG_ERROR, "cannot start the worker threads: %s", strerror(rc));
        code = 2;
        goto out;
    }
    rpc_serve(s.rpc, tr);
    /* end of input: the calls already made are answered first */
    ws_host_wait_until(s.host, all_answered, &s);
out:
    ws_host_stop(s.host, 0x7fffffff);
    ws_host_free(s.host); /* and the root: its stores and watcher */
    ws_endpoint_free(s.llm_ep);
    rpc_free(s.rpc);
    rpc_transport_free(tr);
    return code;
}
