/*
 * fuzz_dispatch.c - the JSON-RPC endpoint on arbitrary messages. The input
 * is split at "\n\n" into several message bodies handed to one endpoint in
 * turn, so that the lifecycle (initialize, shutdown, exit, $/cancelRequest,
 * deferred calls) is reached. The method table is a small one shaped like
 * the server's (request, notification, deferred, init, shutdown), so no disk
 * is touched. Properties: every message sent is one JSON object with
 * "jsonrpc":"2.0"; no sanitizer report or leak.
 */
#include "lsp/lsp_int.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    LspCall *later[16];
    size_t n_later;
} Ctx;

static LspStatus h_ok(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    *out = params ? json_deep_copy(params) : NULL;
    return LSP_DONE;
}

static LspStatus h_fail(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    const char *text = "";
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "text", &text) != 0)
        return lsp_error(err, LSP_INVALID_PARAMS, "fail: %s", params ? je.text : "no params");
    return lsp_error(err, LSP_REQUEST_FAILED, "%s", text);
}

static LspStatus h_later(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    Ctx *c = ctx;
    if (c->n_later == sizeof c->later / sizeof c->later[0]) return lsp_error(err, -1, "full");
    c->later[c->n_later++] = call;
    return LSP_LATER;
}

static const LspMethod methods[] = {
    {"initialize", h_ok, LSP_REQUEST | LSP_INIT},
    {"initialized", h_ok, LSP_NOTIFY | LSP_NEEDS_INIT},
    {"shutdown", h_ok, LSP_REQUEST | LSP_NEEDS_INIT | LSP_SHUTDOWN},
    {"textDocument/hover", h_ok, LSP_REQUEST | LSP_NEEDS_INIT},
    {"textDocument/didSave", h_ok, LSP_NOTIFY | LSP_NEEDS_INIT},
    {"coderag/ask", h_later, LSP_REQUEST | LSP_NEEDS_INIT},
    {"coderag/fail", h_fail, LSP_REQUEST | LSP_NOTIFY | LSP_NEEDS_INIT},
    {"coderag/early", h_ok, LSP_REQUEST | LSP_NOTIFY},
};

static int check_send(void *ud, const char *body, size_t len)
{
    json_error_t je;
    json_t *j = json_loadb(body, len, 0, &je);
    if (!j || !json_is_object(j)) abort();
    json_t *v = json_object_get(j, "jsonrpc");
    if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) abort();
    json_decref(j);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Ctx ctx = {0};
    LspRpc *rpc = lsp_rpc_new(methods, sizeof methods / sizeof methods[0], &ctx, check_send, NULL);
    const char *p = (const char *)data, *end = p + size;
    while (p <= end) {
        const char *sep = memmem(p, (size_t)(end - p), "\n\n", 2);
        const char *stop = sep ? sep : end;
        /* lsp_rpc_handle gets a NUL-terminated copy, as from the transport. */
        char *body = malloc((size_t)(stop - p) + 1);
        memcpy(body, p, (size_t)(stop - p));
        body[stop - p] = '\0';
        lsp_rpc_handle(rpc, body, (size_t)(stop - p));
        free(body);
        int code;
        if (lsp_rpc_exited(rpc, &code)) break;
        if (!sep) break;
        p = sep + 2;
    }
    /* Finish deferred calls: odd ones answered, even ones with an error. */
    for (size_t i = 0; i < ctx.n_later; i++) {
        if (i % 2) {
            lsp_call_reply(ctx.later[i], json_string("done"), NULL);
        } else {
            LspError err = {LSP_REQUEST_FAILED, "failed"};
            lsp_call_reply(ctx.later[i], NULL, &err);
        }
    }
    lsp_rpc_notify(rpc, "window/logMessage", json_pack("{s:i,s:s}", "type", 3, "message", "x"));
    lsp_rpc_free(rpc);
    return 0;
}
