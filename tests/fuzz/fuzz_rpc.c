/*
 * fuzz_rpc.c - the JSON-RPC core (rpc/) on arbitrary bytes, both framings.
 * The first byte picks the door: even, Content-Length framing with the LSP
 * profile; odd, newline-delimited framing with the MCP profile. The rest is
 * the client's input, served from a memfd (any size reads without a writer
 * thread), with small caps so that oversized messages are reached.
 *
 * Two passes over the same input:
 *   1. the transport alone: reads end (no loop), bodies are NUL-terminated
 *      and within the cap; an unparsable body is handed back through
 *      rpc_transport_reject as rpc_serve does;
 *   2. rpc_serve with a method table shaped like the servers' (request,
 *      notification, deferred, init, shutdown), deferred calls finished
 *      after the loop: every message written reads back through the same
 *      framing as one JSON object with "jsonrpc":"2.0".
 * No sanitizer report or leak.
 */
#include "rpc.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CAP 256

typedef struct Ctx {
    RpcCall *later[16];
    size_t n_later;
} Ctx;

static RpcStatus h_ok(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    *out = params ? json_deep_copy(params) : NULL;
    return RPC_DONE;
}

static RpcStatus h_fail(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *text = "";
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "text", &text) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "fail: %s", params ? je.text : "no params");
    return rpc_error(err, RPC_REQUEST_FAILED, "%s", text);
}

static RpcStatus h_later(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Ctx *c = ctx;
    if (c->n_later == sizeof c->later / sizeof c->later[0]) return rpc_error(err, -1, "full");
    c->later[c->n_later++] = call;
    return RPC_LATER;
}

static const RpcMethod methods[] = {
    {"initialize", h_ok, RPC_REQUEST | RPC_INIT},
    {"initialized", h_ok, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"notifications/initialized", h_ok, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"shutdown", h_ok, RPC_REQUEST | RPC_NEEDS_INIT | RPC_SHUTDOWN},
    {"ping", h_ok, RPC_REQUEST},
    {"textDocument/hover", h_ok, RPC_REQUEST | RPC_NEEDS_INIT},
    {"textDocument/didSave", h_ok, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"coderag/ask", h_later, RPC_REQUEST | RPC_NEEDS_INIT},
    {"tools/call", h_later, RPC_REQUEST | RPC_NEEDS_INIT},
    {"coderag/fail", h_fail, RPC_REQUEST | RPC_NOTIFY | RPC_NEEDS_INIT},
    {"coderag/early", h_ok, RPC_REQUEST | RPC_NOTIFY},
};

static int memfd_with(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-rpc", 0);
    if (fd < 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

static void transport_pass(const RpcFraming *fr, const uint8_t *data, size_t size, int null_fd)
{
    int fd = memfd_with(data, size);
    RpcTransport *t = rpc_transport_new(fr, fd, null_fd);
    rpc_transport_set_limits(t, CAP, 50);
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    int rejects = 0;
    /* Each read consumes at least one byte or ends; at most 8 rejects put
     * back at most CAP bytes each, so this is a generous bound. */
    size_t rounds = 4 * (size + 8 * CAP) + 16;
    for (size_t round = 0; round < rounds; round++) {
        RpcReadResult r = rpc_transport_read(t, &body, &e);
        if (r == RPC_READ_EOF || r == RPC_READ_IO) break;
        if (r == RPC_READ_MSG) {
            if (body.len > CAP || body.buf[body.len] != '\0') abort();
            if (body.len && body.buf[0] != '{' && rejects < 8)
                rejects += rpc_transport_reject(t, body.buf, body.len);
            else
                rpc_transport_write(t, body.buf, body.len, &e);
        }
        if (round == rounds - 1) abort(); /* the transport never reached the end */
    }
    sb_release(&body);
    rpc_transport_free(t);
    close(fd);
}

/* Every message in the output fd reads back as a JSON-RPC 2.0 object. */
static void check_output(const RpcFraming *fr, int out)
{
    lseek(out, 0, SEEK_SET);
    RpcTransport *t = rpc_transport_new(fr, out, -1);
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    RpcReadResult r;
    while ((r = rpc_transport_read(t, &body, &e)) == RPC_READ_MSG) {
        json_error_t je;
        json_t *j = json_loadb(body.buf, body.len, 0, &je);
        if (!json_is_object(j)) abort();
        json_t *v = json_object_get(j, "jsonrpc");
        if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) abort();
        json_decref(j);
    }
    if (r != RPC_READ_EOF || e.msg[0]) abort(); /* nothing malformed, nothing cut short */
    sb_release(&body);
    rpc_transport_free(t);
}

static void serve_pass(const RpcFraming *fr, const RpcProfile *pf, const uint8_t *data, size_t size)
{
    int in = memfd_with(data, size);
    int out = memfd_create("fuzz-rpc-out", 0);
    if (out < 0) abort();
    RpcTransport *t = rpc_transport_new(fr, in, out);
    rpc_transport_set_limits(t, CAP, 50);
    Ctx ctx = {0};
    Rpc *rpc =
        rpc_new(pf, methods, sizeof methods / sizeof methods[0], &ctx, rpc_transport_send, t);
    RpcEnd end = rpc_serve(rpc, t);
    if (end != RPC_END_EXIT && end != RPC_END_EOF) abort();
    /* Finish deferred calls: odd ones answered, even ones with an error. */
    for (size_t i = 0; i < ctx.n_later; i++) {
        if (i % 2) {
            rpc_call_reply(ctx.later[i], json_string("done"), NULL);
        } else {
            RpcError err = {RPC_REQUEST_FAILED, "failed"};
            rpc_call_reply(ctx.later[i], NULL, &err);
        }
    }
    rpc_notify(rpc, "window/logMessage", json_pack("{s:i,s:s}", "type", 3, "message", "x"));
    rpc_request(rpc, "client/registerCapability", NULL, NULL, NULL);
    rpc_free(rpc);
    rpc_transport_free(t);
    check_output(fr, out);
    close(in);
    close(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int null_fd = -1;
    if (null_fd < 0) null_fd = open("/dev/null", O_WRONLY);
    if (size < 1) return 0;
    int lines = data[0] & 1;
    const RpcFraming *fr = lines ? &rpc_framing_lines : &rpc_framing_content_length;
    const RpcProfile *pf = lines ? &rpc_profile_mcp : &rpc_profile_lsp;
    transport_pass(fr, data + 1, size - 1, null_fd);
    serve_pass(fr, pf, data + 1, size - 1);
    return 0;
}
