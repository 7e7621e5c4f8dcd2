#include "handlers.h"
#include "folder.h"
#include "progress.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The server object, its method table, the lifecycle handlers and the
 * main loop. Threads and jobs: see server_int.h. */

#define SERVER_VERSION "0.1.0"
#define STOP_WAIT_MS 5000

static RpcStatus on_initialize(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err);
static RpcStatus on_initialized(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                RpcError *err);
static RpcStatus on_shutdown(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err);

/* The method table: a request's row names its handler, its flags and the
 * capability initialize announces for it (JSON merged into the result's
 * "capabilities"; NULL: none), so that adding a request is a row here and
 * a handler file. */
typedef struct LspMethod {
    RpcMethod m;
    const char *capability;
} LspMethod;

#define REQ (RPC_REQUEST | RPC_NEEDS_INIT)
#define NOTE (RPC_NOTIFY | RPC_NEEDS_INIT)
static const LspMethod methods[] = {
    {{"initialize", on_initialize, RPC_REQUEST | RPC_INIT}, NULL},
    {{"initialized", on_initialized, NOTE}, NULL},
    {{"shutdown", on_shutdown, REQ | RPC_SHUTDOWN}, NULL},
    {{"textDocument/didOpen", lsp_on_did_open, NOTE},
     "{\"textDocumentSync\": {\"openClose\": true}}"},
    {{"textDocument/didChange", lsp_on_did_change, NOTE},
     "{\"textDocumentSync\": {\"change\": 1}}"},
    {{"textDocument/didClose", lsp_on_did_close, NOTE}, NULL},
    {{"textDocument/didSave", lsp_on_did_save, NOTE},
     "{\"textDocumentSync\": {\"save\": {\"includeText\": false}}}"},
    {{"workspace/didChangeWatchedFiles", lsp_on_watched_files, NOTE}, NULL},
    {{"workspace/executeCommand", lsp_on_execute_command, REQ},
     "{\"executeCommandProvider\": {\"commands\": [\"coderag.ask\", \"coderag.reindex\", "
     "\"coderag.explain\"]}}"},
    {{"textDocument/hover", lsp_on_hover, REQ}, "{\"hoverProvider\": true}"},
    {{"textDocument/definition", lsp_on_definition, REQ}, "{\"definitionProvider\": true}"},
    {{"textDocument/codeLens", lsp_on_code_lens, REQ},
     "{\"codeLensProvider\": {\"resolveProvider\": false}}"},
    {{"textDocument/codeAction", lsp_on_code_action, REQ}, "{\"codeActionProvider\": true}"},
    {{"workspace/symbol", lsp_on_workspace_symbol, REQ}, "{\"workspaceSymbolProvider\": true}"},
    {{"textDocument/prepareCallHierarchy", lsp_on_prepare_call_hierarchy, REQ},
     "{\"callHierarchyProvider\": true}"},
    {{"callHierarchy/incomingCalls", lsp_on_incoming_calls, REQ}, NULL},
    {{"callHierarchy/outgoingCalls", lsp_on_outgoing_calls, REQ}, NULL},
    {{"coderag/ask", lsp_on_ask, REQ}, NULL},
    {{"coderag/status", lsp_on_status, REQ}, NULL},
};
#undef REQ
#undef NOTE
#define N_METHODS (sizeof methods / sizeof methods[0])

/* initialize's "capabilities": what every request's row announces, and
 * what is the server's own (UTF-16 positions, workspace folders). New
 * reference. */
static json_t *capabilities(void)
{
    json_t *caps = json_pack("{s:s, s:{s:{s:b, s:b}}}", "positionEncoding", "utf-16", "workspace",
                             "workspaceFolders", "supported", 1, "changeNotifications", 0);
    for (size_t i = 0; i < N_METHODS; i++) {
        if (!methods[i].capability) continue;
        json_t *c = json_loads(methods[i].capability, 0, NULL);
        json_object_update_recursive(caps, c); /* a row's text is ours: it parses */
        json_decref(c);
    }
    return caps;
}

static void add_workspace(Server *s, const char *path, const char *name)
{
    for (size_t i = 0; i < s->n_ws; i++)
        if (!strcmp(s->ws[i]->r->root, path)) return;
    WsConfig cfg;
    ws_config_copy(&cfg, &s->cfg);
    if (s->n_ws > 0 && cfg.index_dir) { /* one index per root: indexDir is the first's */
        free(cfg.index_dir);
        cfg.index_dir = NULL;
    }
    if (!name || !name[0]) {
        const char *b = strrchr(path, '/');
        name = b && b[1] ? b + 1 : path;
    }
    s->ws = xrealloc(s->ws, (s->n_ws + 1) * sizeof *s->ws);
    s->ws[s->n_ws++] = lsp_folder_new(s, path, name, &cfg);
    ws_config_release(&cfg);
}

static RpcStatus on_initialize(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err)
{
    Server *s = ctx;
    json_t *caps = NULL, *root_uri = NULL, *root_path = NULL, *folders = NULL, *opts = NULL;
    json_error_t je;
    if (params && json_unpack_ex(params, &je, 0, "{s?o, s?o, s?o, s?o, s?o}", "capabilities", &caps,
                                 "rootUri", &root_uri, "rootPath", &root_path, "workspaceFolders",
                                 &folders, "initializationOptions", &opts) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "initialize: %s", je.text);
    if (caps && json_unpack_ex(caps, &je, 0, "{s?{s?b}, s?{s?{s?b}}}", "window", "workDoneProgress",
                               &s->cap_progress, "workspace", "didChangeWatchedFiles",
                               "dynamicRegistration", &s->cap_watch_dynamic) != 0) {
        log_msg(LOG_WARN, "initialize: client capabilities not understood (%s)", je.text);
        s->cap_progress = s->cap_watch_dynamic = 0;
    }
    if (json_is_object(opts)) ws_config_from_json(&s->cfg, opts);

    /* A folder that cannot be served (another scheme: vscode-vfs://, a
     * remote host, a malformed entry) is skipped and named; the others are
     * indexed. */
    StrBuf skipped;
    size_t n_skipped = 0;
    sb_init(&skipped);
    if (json_is_array(folders) && json_array_size(folders)) {
        size_t i;
        json_t *f;
        json_array_foreach(folders, i, f)
        {
            const char *uri = NULL, *name = NULL;
            char *path = NULL;
            if (json_unpack_ex(f, &je, 0, "{s:s, s?s}", "uri", &uri, "name", &name) != 0 ||
                path_from_uri(uri, &path) != CR_OK) {
                sb_addf(&skipped, "%s%.200s", n_skipped++ ? ", " : "", uri ? uri : "(malformed)");
                continue;
            }
            add_workspace(s, path, name);
            free(path);
        }
    } else if (json_is_string(root_uri)) {
        char *path = NULL;
        if (path_from_uri(json_string_value(root_uri), &path) == CR_OK) {
            add_workspace(s, path, NULL);
        } else {
            sb_addf(&skipped, "%.200s", json_string_value(root_uri));
            n_skipped++;
        }
        free(path);
    } else if (json_is_string(root_path)) {
        add_workspace(s, json_string_value(root_path), NULL);
    } else {
        /* no folder named: the configured root as given, else the root
         * rule from the working directory, as every door (ws.h) */
        add_workspace(s, ws_config_resolve_root(&s->cfg), NULL);
    }
    if (n_skipped) {
        StrBuf m;
        sb_init(&m);
        sb_addf(&m,
                "coderag: cannot serve workspace folder%s %s (only local file: folders are "
                "indexed); %s",
                n_skipped > 1 ? "s" : "", skipped.buf,
                s->n_ws ? "indexing the others" : "nothing to index");
        /* logged and shown at initialized (the client listens from then) */
        free(s->skipped_folders);
        s->skipped_folders = sb_detach(&m, NULL);
    }
    sb_release(&skipped);
    if (!s->n_ws) log_msg(LOG_WARN, "initialize: no workspace folder; nothing to index");
    for (size_t i = 0; i < s->n_ws; i++) {
        const char *root = s->ws[i]->r->root;
        log_msg(LOG_INFO, "workspace %s", root);
        char *vcs = ws_vcs_root_above(root);
        if (vcs)
            log_msg(LOG_WARN,
                    "workspace %s is inside the repository %s: the root rule "
                    "(docs/protocol.md) would index %s",
                    root, vcs, vcs);
        free(vcs);
    }
    int rc = ws_host_start(s->host);
    if (rc) {
        /* a server without its threads would hang every request: said
         * plainly, exit 2 (a memory limit, a thread limit) */
        fprintf(stderr, "coderag: cannot start the language server's threads: %s\n", strerror(rc));
        fflush(stderr);
        _exit(2);
    }

    *out = json_pack("{s:o, s:{s:s, s:s}}", "capabilities", capabilities(), "serverInfo", "name",
                     "coderag", "version", SERVER_VERSION);
    return RPC_DONE;
}

static RpcStatus on_initialized(void *ctx, json_t *params, RpcCall *call, json_t **out,
                                RpcError *err)
{
    Server *s = ctx;
    if (s->initialized) return RPC_DONE;
    s->initialized = 1;
    if (s->skipped_folders) lsp_srv_notice(s, NOTICE_FOLDERS, 2, "%s", s->skipped_folders);
    if (s->cap_watch_dynamic) {
        /* every extension the index reads */
        json_t *watchers = json_array();
        const char *ext;
        for (size_t i = 0; (ext = idx_source_ext(i)) != NULL; i++) {
            char glob[32];
            snprintf(glob, sizeof glob, "**/*%s", ext);
            json_array_append_new(watchers, json_pack("{s:s}", "globPattern", glob));
        }
        json_t *reg = json_pack(
            "{s:[{s:s, s:s, s:{s:o}}]}", "registrations", "id", "coderag/watch-sources", "method",
            "workspace/didChangeWatchedFiles", "registerOptions", "watchers", watchers);
        rpc_request(s->rpc, "client/registerCapability", reg, NULL, NULL);
    }
    for (size_t i = 0; i < s->n_ws; i++)
        lsp_folder_request_build(s->ws[i]);
    return RPC_DONE;
}

static RpcStatus on_shutdown(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    log_msg(LOG_INFO, "shutdown requested");
    return RPC_DONE;
}

/* Reader: a call was cancelled; asks waiting for a first index are
 * answered now (the others notice it where they poll). */
static void on_cancel(void *ctx)
{
    Server *s = ctx;
    for (size_t i = 0; i < s->n_ws; i++)
        lsp_folder_unpark(s->ws[i], 0);
}

/* One message read and handled, on the thread whose turn it is
 * (ws_host_serve). */
static int serve_one(void *ud)
{
    Server *s = ud;
    return rpc_serve_one(s->rpc, s->tr, &s->in_body, &s->end);
}

int lsp_server_run(const WsConfig *cfg, int in_fd, int out_fd)
{
    Server s;
    int code = 1;
    memset(&s, 0, sizeof s);
    ws_config_copy(&s.cfg, cfg);
    /* every root's stores share one copy of what is read-only (the model) */
    ws_config_share(&s.cfg);
    WsHostDoor door = {&s, lsp_folder_refresh_stale, lsp_builder_run, serve_one};
    sb_init(&s.in_body);
    s.end = RPC_END_EOF;
    s.host = ws_host_new(&door);
    s.llm_ep = ws_endpoint_new("LLM", lsp_ep_notice, &s);
    s.tr = rpc_transport_new(&rpc_framing_content_length, in_fd, out_fd);
    RpcMethod table[N_METHODS];
    for (size_t i = 0; i < N_METHODS; i++)
        table[i] = methods[i].m;
    s.rpc = rpc_new(&rpc_profile_lsp, table, N_METHODS, &s, rpc_transport_send, s.tr);
    rpc_set_on_cancel(s.rpc, on_cancel);
    log_msg(LOG_INFO, "language server %s ready on fd %d/%d", SERVER_VERSION, in_fd, out_fd);

    ws_host_serve(s.host);
    switch (s.end) {
    case RPC_END_EXIT:
        rpc_exited(s.rpc, &code);
        break;
    case RPC_END_EOF:
    case RPC_END_IO:
        code = rpc_shut_down(s.rpc) ? 0 : 1;
        break;
    case RPC_END_BROKEN:
        code = rpc_shut_down(s.rpc) ? 0 : 2;
        break;
    }

    if (ws_host_stop(s.host, STOP_WAIT_MS) != 0) {
        /* A build or an LLM request that cannot be interrupted: the index
         * survives any interruption, so leave without waiting for it. */
        log_msg(LOG_WARN, "work still running after %d ms; exiting anyway", STOP_WAIT_MS);
        _exit(code);
    }
    ws_host_free(s.host); /* and its roots, with the jobs parked there (their calls dropped) */
    for (size_t i = 0; i < s.n_ws; i++)
        lsp_folder_free(s.ws[i]);
    free(s.ws);
    lsp_docs_free(&s);
    free(s.skipped_folders);
    rpc_free(s.rpc);
    sb_release(&s.in_body);
    rpc_transport_free(s.tr);
    ws_config_release(&s.cfg);
    ws_endpoint_free(s.llm_ep);
    log_msg(LOG_INFO, "exit %d", code);
    return code;
}
