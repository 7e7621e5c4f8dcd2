#include "mcp_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The server: the calling thread reads messages and answers what needs no
 * index (initialize, ping, tools/list, argument errors); tool calls queue
 * for one worker thread, which owns the store: it indexes the root first,
 * then runs the calls in order, bringing the index up to date before each
 * one when the watcher saw a change. */

typedef struct Call {
    json_t *id;
    const McpTool *tool;
    json_t *args;
    json_t *token;   /* _meta.progressToken, or NULL */
    double progress; /* last progress value sent to token */
    struct Call *next;
} Call;

typedef enum { IDX_STARTING, IDX_RUNNING, IDX_READY, IDX_FAILED } IndexState;

typedef struct McpServer {
    const McpOptions *opt;
    int out_fd;
    pthread_mutex_t out_mu; /* one writer at a time */
    pthread_mutex_t mu;     /* everything below */
    pthread_cond_t cv;
    Call *head, *tail;
    Call *running;
    int running_cancelled;
    int stopping;
    int initialized;
    int structured;
    IndexState state;
    size_t done, total;
    char error[512];
} McpServer;

static const char *const versions[] = {MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                       "2024-11-05", "2024-10-07"};

/* ---------------------------------------------------------------- output */

static void send_msg(McpServer *s, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text) return;
    size_t len = strlen(text);
    pthread_mutex_lock(&s->out_mu);
    const char *p = text;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(s->out_fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break; /* the client is gone; reading will end too */
        p += w;
        left -= (size_t)w;
    }
    while (write(s->out_fd, "\n", 1) < 0 && errno == EINTR) {
    }
    pthread_mutex_unlock(&s->out_mu);
    free(text);
}

static void reply(McpServer *s, json_t *id, json_t *result)
{
    send_msg(s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                          "result", result));
}

static void reply_error(McpServer *s, json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void reply_error(McpServer *s, json_t *id, int code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    send_msg(s, json_pack("{s:s, s:O, s:{s:i, s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                          "error", "code", code, "message", json_text(msg)));
}

/* Under s->mu: progress of the first index to every queued call that asked. */
static void progress_locked(McpServer *s, const char *what)
{
    for (Call *c = s->head; c; c = c->next) {
        if (!c->token || (double)s->done <= c->progress) continue; /* strictly increasing */
        c->progress = (double)s->done;
        char msg[160];
        if (s->total)
            snprintf(msg, sizeof msg, "%s: %zu/%zu files", what, s->done, s->total);
        else
            snprintf(msg, sizeof msg, "%s: scanning", what);
        json_t *p = json_pack("{s:O, s:I, s:s}", "progressToken", c->token, "progress",
                              (json_int_t)s->done, "message", msg);
        if (s->total) json_object_set_new(p, "total", json_integer((json_int_t)s->total));
        send_msg(s, json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
                              "notifications/progress", "params", p));
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
    McpServer *s = ud;
    pthread_mutex_lock(&s->mu);
    int c = s->running_cancelled;
    pthread_mutex_unlock(&s->mu);
    return c;
}

static void call_free(Call *c)
{
    if (!c) return;
    json_decref(c->id);
    json_decref(c->args);
    json_decref(c->token);
    free(c);
}

static void run_call(McpServer *s, IdxStore *st, WsWatch *w, WsEndpoint *llm_ep, Call *c)
{
    McpResult r = {0};
    ErrInfo e = {0};
    double t0 = now_ms();
    sb_init(&r.text);
    pthread_mutex_lock(&s->mu);
    IndexState state = s->state;
    int structured = s->structured;
    pthread_mutex_unlock(&s->mu);
    if (c->token && c->progress < 0) { /* every call that asks hears where the index stands */
        pthread_mutex_lock(&s->mu);
        char msg[160];
        snprintf(msg, sizeof msg, "index ready: %zu files", s->total);
        send_msg(s, json_pack("{s:s, s:s, s:{s:O, s:I, s:I, s:s}}", "jsonrpc", "2.0", "method",
                              "notifications/progress", "params", "progressToken", c->token,
                              "progress", (json_int_t)s->total, "total", (json_int_t)s->total,
                              "message", msg));
        pthread_mutex_unlock(&s->mu);
    }
    if (state == IDX_FAILED) {
        mcp_fail(&r, "the index of the workspace could not be opened: %s", s->error);
    } else if (ws_refresh(st, w, on_index_progress, s, &e) != CR_OK) {
        mcp_fail(&r, "updating the index failed: %s", e.msg);
    } else {
        McpCtx ctx = {st, s->opt, structured, call_cancelled, s, llm_ep};
        c->tool->run(&ctx, c->args, &r);
    }
    pthread_mutex_lock(&s->mu);
    int cancelled = s->running_cancelled;
    s->running = NULL;
    s->running_cancelled = 0;
    pthread_mutex_unlock(&s->mu);
    json_t *res = mcp_result_json(&r, structured);
    /* time inside the server, freshness check included (bench/mcp_bench.py) */
    json_object_set_new(res, "_meta", json_pack("{s:f}", "coderag/ms", now_ms() - t0));
    if (cancelled) /* the client said it no longer wants an answer */
        json_decref(res);
    else
        reply(s, c->id, res);
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
        s->running = c;
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

static json_t *on_initialize(McpServer *s, json_t *params, json_t *id)
{
    const char *asked = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "protocolVersion", &asked) != 0) {
        reply_error(s, id, -32602, "initialize: %s", params ? je.text : "no params");
        return NULL;
    }
    const char *use = versions[0];
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (!strcmp(asked, versions[i])) use = versions[i];
    pthread_mutex_lock(&s->mu);
    s->initialized = 1;
    s->structured = strcmp(use, "2025-06-18") >= 0;
    pthread_mutex_unlock(&s->mu);
    return json_pack(
        "{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", use, "capabilities",
        "tools", "listChanged", 0, "serverInfo", "name", "coderag", "title", "CodeRAG", "version",
        "0.1.0", "instructions",
        "Verified code context for this repository: `search` ranks definitions for a "
        "question, `ask` answers with citations checked against the code, `definition`, "
        "`callers` and `callees` query the static code graph, `read` returns indexed source "
        "lines, `status` tells what is indexed.");
}

static void on_tools_call(McpServer *s, json_t *params, json_t *id)
{
    const char *name = NULL;
    json_t *args = NULL, *meta = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s, s?o, s?o}", "name", &name, "arguments",
                                  &args, "_meta", &meta) != 0) {
        reply_error(s, id, -32602, "tools/call: %s", params ? je.text : "no params");
        return;
    }
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
        reply(s, id, mcp_result_json(&r, structured));
        sb_release(&r.text);
        return;
    }
    sb_release(&r.text);
    Call *c = xcalloc(1, sizeof *c);
    c->id = json_incref(id);
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
}

/* notifications/cancelled: a queued call is dropped unanswered, a running
 * one is told to stop (an LLM request is abandoned). */
static void on_cancelled(McpServer *s, json_t *params)
{
    json_t *rid = params ? json_object_get(params, "requestId") : NULL;
    if (!rid) return;
    pthread_mutex_lock(&s->mu);
    Call **pp = &s->head, *prev = NULL;
    while (*pp) {
        Call *c = *pp;
        if (json_equal(c->id, rid)) {
            *pp = c->next;
            if (s->tail == c) s->tail = prev;
            call_free(c);
            break;
        }
        prev = c;
        pp = &c->next;
    }
    if (s->running && json_equal(s->running->id, rid)) s->running_cancelled = 1;
    pthread_mutex_unlock(&s->mu);
}

static void handle(McpServer *s, const char *line, size_t len)
{
    json_error_t je;
    json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!msg) {
        reply_error(s, NULL, -32700, "parse error: %s", je.text);
        return;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *mj = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    const char *method = json_string_value(mj);
    if (!json_is_object(msg)) {
        reply_error(s, NULL, -32600,
                    "a message must be a JSON object (batches are not "
                    "supported)");
    } else if (!method && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
        /* a response: we send no requests, so there is nothing to match */
    } else if (!method || (id && !json_is_string(id) && !json_is_integer(id)) ||
               (params && !json_is_object(params))) {
        reply_error(s, id && (json_is_string(id) || json_is_integer(id)) ? id : NULL, -32600,
                    "invalid request: a method name, an integer or string id, object params");
    } else if (!id) { /* notifications */
        if (!strcmp(method, "notifications/cancelled")) on_cancelled(s, params);
    } else if (!strcmp(method, "initialize")) {
        json_t *res = on_initialize(s, params, id);
        if (res) reply(s, id, res);
    } else if (!strcmp(method, "ping")) {
        reply(s, id, json_object());
    } else if (!s->initialized) {
        reply_error(s, id, -32002, "the server is not initialized (send initialize first)");
    } else if (!strcmp(method, "tools/list")) {
        reply(s, id, mcp_tools_list());
    } else if (!strcmp(method, "tools/call")) {
        on_tools_call(s, params, id);
    } else {
        reply_error(s, id, -32601, "method not found: %.100s", method);
    }
    json_decref(msg);
}

/* ---------------------------------------------------------------- loop */

/* Reads newline-delimited messages until end of input. */
static void read_loop(McpServer *s, int in_fd)
{
    StrBuf buf;
    size_t scanned = 0;
    int skipping = 0;
    char chunk[65536];
    sb_init(&buf);
    for (;;) {
        ssize_t n = read(in_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sb_add(&buf, chunk, (size_t)n);
        for (;;) {
            char *nl = memchr(buf.buf + scanned, '\n', buf.len - scanned);
            if (!nl) {
                scanned = buf.len;
                if (buf.len > MCP_MAX_LINE) { /* drop it, answer at its end */
                    skipping = 1;
                    sb_reset(&buf);
                    scanned = 0;
                }
                break;
            }
            size_t len = (size_t)(nl - buf.buf);
            size_t line_len = len && buf.buf[len - 1] == '\r' ? len - 1 : len;
            if (skipping || line_len > MCP_MAX_LINE)
                reply_error(s, NULL, -32600, "message longer than %zu bytes", MCP_MAX_LINE);
            else if (line_len > 0)
                handle(s, buf.buf, line_len);
            skipping = 0;
            sb_consume(&buf, len + 1);
            scanned = 0;
        }
    }
    if (buf.len && !skipping) handle(s, buf.buf, buf.len); /* a last line without '\n' */
    sb_release(&buf);
}

int mcp_server_run(const McpOptions *o, int in_fd, int out_fd)
{
    McpServer s;
    memset(&s, 0, sizeof s);
    s.opt = o;
    s.out_fd = out_fd;
    pthread_mutex_init(&s.out_mu, NULL);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, worker, &s) != 0) {
        log_msg(LOG_ERROR, "cannot start the worker thread");
        return 2;
    }
    read_loop(&s, in_fd);
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
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    pthread_mutex_destroy(&s.out_mu);
    return 0;
}
