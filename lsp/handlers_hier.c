#include "handlers.h"
#include "folder.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* workspace/symbol and call hierarchy (prepareCallHierarchy, incomingCalls,
 * outgoingCalls), answered by the worker from retrieve/'s navigation
 * queries, like hover and lenses. A CallHierarchyItem is a whole
 * definition, however the indexer chunked it; incoming and outgoing calls
 * name the definition at the item's first line. The graph records which
 * chunk a call is written in, not its column: fromRanges are the lines of
 * that chunk. */

#define MAX_SYMBOLS 200
#define MAX_CALLS 500

/* A workspace/symbol or call hierarchy request, for the worker. */
typedef struct HierJob {
    Job job;
    char *path; /* root-relative: the document (prepare) or the item's file (calls) */
    char *word; /* the query (symbol) or the identifier under the cursor (prepare) */
    int line;   /* 0-based: the cursor's (prepare) or the item's first line (calls) */
} HierJob;

static void hier_free(WsJob *wj)
{
    Job *job = (Job *)wj;
    rpc_call_drop(job->call);
    HierJob *j = (HierJob *)job;
    free(j->path);
    free(j->word);
    free(j);
}

static WsJobNext run_symbol(void *ctx, WsJob *wj);

static WsJobNext run_prepare(void *ctx, WsJob *wj);
static WsJobNext run_incoming(void *ctx, WsJob *wj);
static WsJobNext run_outgoing(void *ctx, WsJob *wj);
static WsJobNext run_definition(void *ctx, WsJob *wj);

/* Queues a job for the worker; path and word are taken over. */
static void hier_push(Server *s, LspFolder *ws, RpcCall *call, WsJobFn run, char *path, char *word,
                      int line)
{
    HierJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, run, hier_free);
    j->job.ws = ws;
    j->job.call = call;
    j->path = path;
    j->word = word;
    j->line = line;
    ws_host_submit(s->host, &j->job.hj);
}

/* LSP SymbolKind of a definition. */
static int symbol_kind(const IdxChunk *c)
{
    switch (c->kind) {
    case IDX_KIND_CLASS:
        return 5; /* Class */
    case IDX_KIND_METHOD:
        return 6; /* Method */
    case IDX_KIND_FUNCTION:
        return 12; /* Function */
    default:
        return 2; /* Module */
    }
}

static const char *short_name(const IdxChunk *c)
{
    if (!c->symbol[0]) return c->module;
    const char *dot = strrchr(c->symbol, '.');
    return dot ? dot + 1 : c->symbol;
}

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* The name's place in the definition's header (its first whole-word use
 * within the first lines, whatever the language writes before it), as a
 * range; the first line when it is not found. */
static json_t *name_range(IdxStore *st, const RtvDef *d)
{
    const char *name = short_name(&d->head);
    uint32_t last = d->start_line + 20 < d->end_line ? d->start_line + 20 : d->end_line;
    StrBuf text;
    sb_init(&text);
    json_t *r = NULL;
    if (d->head.kind != IDX_KIND_MODULE &&
        ws_read_lines(st, d->head.path, d->start_line, last, &text, NULL, NULL) == CR_OK) {
        size_t nl = strlen(name);
        uint32_t line = d->start_line;
        for (const char *p = text.buf; nl && p && *p && !r; line++) {
            const char *end = strchr(p, '\n');
            size_t ll = end ? (size_t)(end - p) : strlen(p);
            for (const char *at = p; at + nl <= p + ll && !r; at++) {
                if (strncmp(at, name, nl) || (at > p && is_word_char(at[-1])) ||
                    (at + nl < p + ll && is_word_char(at[nl])))
                    continue;
                /* columns in UTF-16 units: the header is ASCII up to the name in practice */
                uint32_t col = (uint32_t)(at - p);
                r = lsp_range(line - 1, col, line - 1, col + (uint32_t)nl);
            }
            p = end ? end + 1 : NULL;
        }
    }
    sb_release(&text);
    return r ? r : lsp_range(d->start_line - 1, 0, d->start_line - 1, 0);
}

static json_t *hier_item(IdxStore *st, const RtvDef *d)
{
    const IdxChunk *c = &d->head;
    char *uri = path_to_uri(ws_store_root(st), c->path);
    json_t *item = json_pack(
        "{s:o, s:i, s:o, s:o, s:o, s:o, s:{s:o, s:i}}", "name", json_text(short_name(c)), "kind",
        symbol_kind(c), "detail", json_text(c->signature[0] ? c->signature : c->module), "uri",
        json_text(uri), "range", ws_lines_range_json(d->start_line, d->end_line), "selectionRange",
        name_range(st, d), "data", "path", json_text(c->path), "line", (int)d->start_line);
    free(uri);
    return item;
}

/* ---------------------------------------------------------------- requests */

RpcStatus lsp_on_workspace_symbol(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                  RpcError *err)
{
    Server *s = ctx;
    const char *query = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "query", &query) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "workspace/symbol: %s",
                         params ? je.text : "no params");
    if (!s->n_ws || !query[0] || strlen(query) > 200) {
        *out = json_array();
        return RPC_DONE;
    }
    hier_push(s, s->ws[0], call, run_symbol, NULL, xstrdup(query), 0);
    return RPC_LATER;
}

RpcStatus lsp_on_prepare_call_hierarchy(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                        RpcError *err)
{
    Server *s = ctx;
    const char *uri;
    int line, character, c0 = 0, c1 = 0;
    LspFolder *ws = NULL;
    char *rel = NULL, *word = NULL;
    if (lsp_nav_position_params(s, params, "textDocument/prepareCallHierarchy", &uri, &line,
                                &character, &ws, &rel, err) != RPC_DONE)
        return RPC_FAIL;
    if (ws && rel) word = lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1);
    if (!word) {
        free(rel);
        return RPC_DONE; /* null */
    }
    hier_push(s, ws, call, run_prepare, rel, word, line);
    return RPC_LATER;
}

/* textDocument/definition: the definition the word at the cursor names,
 * found as hover, call hierarchy and explain find it (rtv_def_under: a
 * call there as the call graph resolved it, else by scope, else by name). */
RpcStatus lsp_on_definition(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Server *s = ctx;
    const char *uri;
    int line, character, c0 = 0, c1 = 0;
    LspFolder *ws = NULL;
    char *rel = NULL, *word = NULL;
    if (lsp_nav_position_params(s, params, "textDocument/definition", &uri, &line, &character, &ws,
                                &rel, err) != RPC_DONE)
        return RPC_FAIL;
    if (ws && rel) word = lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1);
    if (!word) {
        free(rel);
        return RPC_DONE; /* null */
    }
    hier_push(s, ws, call, run_definition, rel, word, line);
    return RPC_LATER;
}

/* incomingCalls / outgoingCalls: {item: CallHierarchyItem}. */
static RpcStatus calls_request(Server *s, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err, WsJobFn run, const char *method)
{
    const char *uri;
    int line = 0;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:{s:s, s:{s:{s:i}}}}", "item", "uri", &uri,
                                  "range", "start", "line", &line) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "%s: %s", method, params ? je.text : "no params");
    if (line < 0) return rpc_error(err, RPC_INVALID_PARAMS, "%s: negative line", method);
    char *rel = NULL;
    LspFolder *ws = lsp_folder_for_uri(s, uri, &rel);
    if (!ws || !rel) {
        free(rel);
        *out = json_array();
        return RPC_DONE;
    }
    hier_push(s, ws, call, run, rel, NULL, line);
    return RPC_LATER;
}

RpcStatus lsp_on_incoming_calls(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                RpcError *err)
{
    return calls_request(ctx, params, call, out, err, run_incoming, "callHierarchy/incomingCalls");
}

RpcStatus lsp_on_outgoing_calls(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                RpcError *err)
{
    return calls_request(ctx, params, call, out, err, run_outgoing, "callHierarchy/outgoingCalls");
}

/* ---------------------------------------------------------------- worker */

/* The symbols of every workspace; *rc and e get the first failure to
 * read an index. */
static json_t *symbols(Server *s, const char *query, CrErr *rc, ErrInfo *e)
{
    json_t *out = json_array();
    for (size_t w = 0; w < s->n_ws && json_array_size(out) < MAX_SYMBOLS; w++) {
        ErrInfo we = {0};
        IdxStore *st = lsp_folder_query_store(s->ws[w], &we);
        RtvDef *defs = NULL;
        size_t n = 0;
        CrErr got =
            st ? ws_nav_symbols(st, query, MAX_SYMBOLS - json_array_size(out), &defs, &n, &we)
               : CR_OK;
        if (got && !*rc) {
            *rc = got;
            *e = we;
        }
        if (!st || got) continue;
        for (size_t i = 0; i < n; i++) {
            const IdxChunk *c = &defs[i].head;
            char *uri = path_to_uri(ws_store_root(st), c->path);
            const char *dot = strrchr(c->symbol, '.');
            StrBuf container;
            sb_init(&container);
            sb_adds(&container, c->module);
            if (dot) sb_addf(&container, ".%.*s", (int)(dot - c->symbol), c->symbol);
            json_array_append_new(
                out, json_pack("{s:o, s:i, s:{s:o, s:o}, s:o}", "name", json_text(short_name(c)),
                               "kind", symbol_kind(c), "location", "uri", json_text(uri), "range",
                               ws_lines_range_json(defs[i].start_line, defs[i].end_line),
                               "containerName", json_text(container.buf ? container.buf : "")));
            sb_release(&container);
            free(uri);
        }
        rtv_defs_free(defs, n);
    }
    return out;
}

static CrErr calls(IdxStore *st, const char *path, int line0, int outgoing, json_t **out_json,
                   ErrInfo *e)
{
    RtvRef *refs = NULL;
    size_t n = 0;
    json_t *out = json_array();
    *out_json = out;
    CrErr rc = ws_nav_calls(st, path, (uint32_t)line0 + 1, outgoing, MAX_CALLS, &refs, &n, e);
    if (rc == CR_OK) {
        for (size_t i = 0; i < n; i++) {
            const RtvRef *r = &refs[i];
            json_t *item = hier_item(st, &r->other);
            if (r->cond) { /* the #if the call is written under, as MCP's condition */
                StrBuf detail;
                sb_init(&detail);
                sb_addf(&detail, "%s · #if %s (%s)",
                        json_string_value(json_object_get(item, "detail")), r->cond,
                        idx_built_name(r->built));
                json_object_set_new(item, "detail", json_text(detail.buf));
                sb_release(&detail);
            }
            json_array_append_new(out, json_pack("{s:o, s:[o]}", outgoing ? "to" : "from", item,
                                                 "fromRanges",
                                                 ws_lines_range_json(r->at_start, r->at_end)));
        }
        rtv_refs_free(refs, n);
    }
    return rc;
}

static WsJobNext run_symbol(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    HierJob *j = (HierJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    CrErr rc = CR_OK;
    ErrInfo e = {0};
    json_t *out = symbols(s, j->word, &rc, &e);
    if (lsp_call_reply_failed(call, rc, &e))
        json_decref(out);
    else
        rpc_call_reply(call, out, NULL);
    return WS_JOB_DONE;
}

static json_t *prepare_result(IdxStore *st, RtvDef *d)
{
    return json_pack("[o]", hier_item(st, d));
}

static json_t *definition_result(IdxStore *st, RtvDef *d)
{
    char *uri = path_to_uri(ws_store_root(st), d->head.path);
    json_t *out = json_pack("{s:o, s:o}", "uri", json_text(uri), "range",
                            ws_lines_range_json(d->start_line, d->start_line));
    free(uri);
    return out;
}

/* Replies with shape(the definition the word under the cursor reaches: the
 * line mapped from an unsaved buffer onto the indexed file, one lookup as
 * for hover and explain), or null when none does or it is a module. */
static int reply_def_at_cursor(Job *job, json_t *(*shape)(IdxStore *st, RtvDef *d))
{
    HierJob *j = (HierJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    ErrInfo e = {0};
    json_t *result = NULL;
    IdxStore *st = lsp_folder_query_store(job->ws, &e);
    RtvDef d = {0};
    CrErr rc =
        st ? ws_nav_def_under(st, j->path, lsp_folder_disk_line(job->ws, st, j->path, j->line),
                              j->word, &d, &e)
           : CR_OK;
    if (st && rc == CR_OK && d.head.kind != IDX_KIND_MODULE) result = shape(st, &d);
    rtv_def_release(&d);
    if (rc == CR_ENOENT) rc = CR_OK;
    if (!lsp_call_reply_failed(call, rc, &e)) rpc_call_reply(call, result, NULL);
    return WS_JOB_DONE;
}

static WsJobNext run_prepare(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    return reply_def_at_cursor(job, prepare_result);
}

static WsJobNext run_definition(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    return reply_def_at_cursor(job, definition_result);
}

static int run_calls(Job *job, int outgoing)
{
    HierJob *j = (HierJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    ErrInfo e = {0};
    IdxStore *st = lsp_folder_query_store(job->ws, &e);
    json_t *out = NULL;
    CrErr rc = st ? calls(st, j->path, j->line, outgoing, &out, &e) : CR_OK;
    if (lsp_call_reply_failed(call, rc, &e))
        json_decref(out);
    else
        rpc_call_reply(call, out ? out : json_array(), NULL);
    return WS_JOB_DONE;
}

static WsJobNext run_incoming(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    return run_calls(job, 0);
}

static WsJobNext run_outgoing(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    return run_calls(job, 1);
}
