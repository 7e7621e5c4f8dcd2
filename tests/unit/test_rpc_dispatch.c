/* The JSON-RPC endpoint: table-driven, messages in -> exact messages out,
 * with a small method table of its own. */
#include "rpc.h"
#include "test.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ctx {
    StrBuf out;        /* every message sent, one per line */
    RpcCall *later[8]; /* deferred calls */
    int n_later;
    int notes; /* test/note notifications seen */
    int responses;
    char last_response[256];
} Ctx;

static int capture(void *ud, const char *body, size_t len)
{
    Ctx *c = ud;
    sb_add(&c->out, body, len);
    sb_addc(&c->out, '\n');
    return 0;
}

static RpcStatus h_initialize(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    *out = json_pack("{s:{}}", "capabilities");
    return RPC_DONE;
}

static RpcStatus h_nothing(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    return RPC_DONE;
}

static RpcStatus h_echo(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *text;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:s}", "text", &text) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "echo: %s", params ? je.text : "no params");
    *out = json_pack("{s:s}", "text", text);
    return RPC_DONE;
}

static RpcStatus h_later(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Ctx *c = ctx;
    c->later[c->n_later++] = call;
    return RPC_LATER;
}

static RpcStatus h_note(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Ctx *c = ctx;
    c->notes++;
    return RPC_DONE;
}

static const RpcMethod methods[] = {
    {"initialize", h_initialize, RPC_REQUEST | RPC_INIT},
    {"initialized", h_nothing, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"shutdown", h_nothing, RPC_REQUEST | RPC_NEEDS_INIT | RPC_SHUTDOWN},
    {"test/echo", h_echo, RPC_REQUEST | RPC_NEEDS_INIT},
    {"test/later", h_later, RPC_REQUEST | RPC_NEEDS_INIT},
    {"test/note", h_note, RPC_NOTIFY | RPC_NEEDS_INIT},
    {"test/early", h_note, RPC_NOTIFY | RPC_REQUEST},
};

#define INIT "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"

/* Each case: messages in (fresh endpoint), exactly these messages out. */
static const struct {
    const char *name;
    const char *in[6];
    const char *out; /* expected output, one message per line */
    int notes;
} cases[] = {
    {"not initialized",
     {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/echo\",\"params\":{\"text\":\"x\"}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"test/note\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}"},
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32002,\"message\":\"test/echo before "
     "initialize: the server is not initialized\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32002,\"message\":\"no/such before "
     "initialize: the server is not initialized\"}}\n",
     0},
    {"allowed before initialize", {"{\"jsonrpc\":\"2.0\",\"method\":\"test/early\"}"}, "", 1},
    {"initialize twice",
     {INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"initialize was "
     "already received\"}}\n",
     0},
    {"echo and string ids",
     {INIT,
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"test/echo\",\"params\":{\"text\":\"hi\"}}",
      "{\"id\":7,\"method\":\"test/echo\",\"params\":{\"text\":\"no jsonrpc member\"}}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"text\":\"hi\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"text\":\"no jsonrpc member\"}}\n",
     0},
    {"unknown methods",
     {INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}", "{\"jsonrpc\":\"2.0\",\"method\":\"$/x\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"$/x\"}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"unknown method "
     "no/such\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"unknown method "
     "$/x\"}}\n",
     0},
    {"bad params",
     {INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/echo\",\"params\":{\"text\":5}}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/echo\",\"params\":7}",
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"test/echo\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"test/echo\",\"params\":null}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"echo: Expected "
     "string, got integer\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"\\\"params\\\" must "
     "be an object or an array\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"echo: no params\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":\"echo: no params\"}}\n",
     0},
    {"arrays, scalars",
     {"[]", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}]", "42", "\"s\"", "null"},
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"batches (JSON "
     "arrays) are not supported\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"batches (JSON "
     "arrays) are not supported\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"a message must be "
     "a JSON object\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"a message must be "
     "a JSON object\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"a message must be "
     "a JSON object\"}}\n",
     0},
    {"envelope errors",
     {INIT, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"test/echo\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"test/echo\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"test/echo\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":[]}", "{\"jsonrpc\":\"2.0\",\"id\":3}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"\\\"jsonrpc\\\" must "
     "be \\\"2.0\\\"\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"\\\"id\\\" must be "
     "an integer or a string\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"\\\"id\\\" must be "
     "an integer or a string\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32600,\"message\":\"\\\"method\\\" must "
     "be a string\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32600,\"message\":\"a message needs a "
     "\\\"method\\\"\"}}\n",
     0},
    {"kinds: request without id, notification with id",
     {INIT, "{\"jsonrpc\":\"2.0\",\"method\":\"test/echo\",\"params\":{\"text\":\"x\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/note\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"test/note\",\"params\":[1]}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"test/note\",\"params\":3}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"test/note is a "
     "notification; it takes no id\"}}\n",
     1},
    {"shutdown",
     {INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/echo\",\"params\":{\"text\":\"x\"}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"test/note\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"no/such\"}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32600,\"message\":\"test/echo after "
     "shutdown: only exit is accepted\"}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32600,\"message\":\"no/such after "
     "shutdown: only exit is accepted\"}}\n",
     0},
    {"cancel as a request",
     {INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$/cancelRequest\",\"params\":{\"id\":1}}"},
     "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"capabilities\":{}}}\n"
     "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"$/cancelRequest is a "
     "notification\"}}\n",
     0},
};

static void ctx_init(Ctx *c)
{
    memset(c, 0, sizeof *c);
    sb_init(&c->out);
}

static Rpc *endpoint(Ctx *c)
{
    return rpc_new(&rpc_profile_lsp, methods, sizeof methods / sizeof methods[0], c, capture, c);
}

static void feed(Rpc *rpc, const char *msg)
{
    rpc_handle(rpc, msg, strlen(msg));
}

static void test_table(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Ctx c;
        ctx_init(&c);
        Rpc *rpc = endpoint(&c);
        for (size_t k = 0; k < 6 && cases[i].in[k]; k++)
            feed(rpc, cases[i].in[k]);
        if (strcmp(c.out.buf, cases[i].out) != 0)
            fprintf(stderr, "case \"%s\":\n got: %s\nwant: %s\n", cases[i].name, c.out.buf,
                    cases[i].out);
        CHECK_STR(c.out.buf, cases[i].out);
        CHECK_INT(c.notes, cases[i].notes);
        CHECK(!rpc_exited(rpc, NULL));
        rpc_free(rpc);
        sb_release(&c.out);
    }
}

/* Not JSON: -32700 (jansson words the reason), and rpc_handle says so. */
static void test_not_json(void)
{
    static const char *const bad[] = {"{\"jsonrpc\":", "", "{\"a\":1}}", "\xff", "{'a':1}"};
    static const char want[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                               "\"message\":\"not JSON: ";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Ctx c;
        ctx_init(&c);
        Rpc *rpc = endpoint(&c);
        CHECK_INT(rpc_handle(rpc, bad[i], strlen(bad[i])), -1);
        CHECK(!strncmp(c.out.buf, want, sizeof want - 1));
        CHECK(strchr(c.out.buf, '\n') == c.out.buf + c.out.len - 1);
        CHECK_INT(rpc_handle(rpc, "[]", 2), 0);
        rpc_free(rpc);
        sb_release(&c.out);
    }
}

static void test_exit_codes(void)
{
    static const struct {
        const char *in[3];
        int code;
    } exits[] = {
        {{"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}"}, 1},
        {{INIT, "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}"}, 1},
        {{INIT, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
          "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}"},
         0},
    };
    for (size_t i = 0; i < sizeof exits / sizeof exits[0]; i++) {
        Ctx c;
        ctx_init(&c);
        Rpc *rpc = endpoint(&c);
        for (size_t k = 0; k < 3 && exits[i].in[k]; k++)
            feed(rpc, exits[i].in[k]);
        int code = -1;
        CHECK(rpc_exited(rpc, &code));
        CHECK_INT(code, exits[i].code);
        rpc_free(rpc);
        sb_release(&c.out);
    }
}

/* Deferred calls: answered later, or -32800 once cancelled. */
static void test_later_and_cancel(void)
{
    Ctx c;
    ctx_init(&c);
    Rpc *rpc = endpoint(&c);
    feed(rpc, INIT);
    sb_reset(&c.out);
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"test/later\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":\"six\",\"method\":\"test/later\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"test/later\"}");
    CHECK_STR(c.out.buf, "");
    CHECK_INT(c.n_later, 3);
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":5}}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"six\"}}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":99}}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"7\"}}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\"}");
    CHECK_STR(c.out.buf, "");
    CHECK(rpc_call_cancelled(c.later[0]));
    CHECK(rpc_call_cancelled(c.later[1]));
    CHECK(!rpc_call_cancelled(c.later[2]));
    CHECK_STR(rpc_call_method(c.later[2]), "test/later");
    rpc_call_reply(c.later[0], json_pack("{s:i}", "n", 1), NULL);
    RpcError err = {.code = RPC_REQUEST_FAILED};
    strcpy(err.message, "failed");
    rpc_call_reply(c.later[1], NULL, &err);
    rpc_call_reply(c.later[2], json_pack("{s:i}", "n", 3), NULL);
    CHECK_STR(c.out.buf,
              "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32800,\"message\":\"test/later "
              "was cancelled\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":\"six\",\"error\":{\"code\":-32800,\"message\":"
              "\"test/later was cancelled\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"n\":3}}\n");

    /* A pending call can be dropped; one left over is freed with the endpoint. */
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"test/later\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"test/later\"}");
    rpc_call_drop(c.later[3]);
    rpc_free(rpc);
    sb_release(&c.out);
}

static void on_response(void *ud, json_t *result, json_t *error)
{
    Ctx *c = ud;
    c->responses++;
    char *r = json_dumps(error ? error : result, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(c->last_response, sizeof c->last_response, "%s%s", error ? "error " : "", r);
    free(r);
}

/* Server-to-client requests and notifications, and the answers. */
static void test_outgoing(void)
{
    Ctx c;
    ctx_init(&c);
    Rpc *rpc = endpoint(&c);
    rpc_request(rpc, "window/workDoneProgress/create", json_pack("{s:s}", "token", "t"),
                on_response, &c);
    rpc_request(rpc, "client/registerCapability", NULL, on_response, &c);
    rpc_notify(rpc, "$/progress", json_pack("{s:s}", "token", "t"));
    rpc_notify(rpc, "window/logMessage", NULL);
    rpc_framing_error(rpc, RPC_PARSE_ERROR, "bad \xff header");
    CHECK_STR(c.out.buf,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"window/workDoneProgress/create\","
              "\"params\":{\"token\":\"t\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"client/registerCapability\"}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/progress\",\"params\":{\"token\":\"t\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"window/logMessage\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad "
              "%FF header\"}}\n"); /* json_text: a stray byte escaped */
    sb_reset(&c.out);
    /* Answers come before initialize too; unknown ids are ignored. */
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":\"no\"}}");
    CHECK_INT(c.responses, 1);
    CHECK_STR(c.last_response, "error {\"code\":-32601,\"message\":\"no\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
    CHECK_INT(c.responses, 2);
    CHECK_STR(c.last_response, "null");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":1}");
    CHECK_INT(c.responses, 2);
    CHECK_STR(c.out.buf, "");
    /* One still waiting is freed with the endpoint. */
    rpc_request(rpc, "client/x", NULL, on_response, &c);
    rpc_free(rpc);
    sb_release(&c.out);
}

/* The MCP profile: notifications/cancelled {requestId} makes a call
 * silent, object params only, duplicate keys are not JSON, no exit. */
static void test_mcp_profile(void)
{
    Ctx c;
    ctx_init(&c);
    Rpc *rpc =
        rpc_new(&rpc_profile_mcp, methods, sizeof methods / sizeof methods[0], &c, capture, &c);
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/echo\"}");
    feed(rpc, INIT);
    sb_reset(&c.out);
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/echo\",\"params\":[\"x\"]}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"test/echo\",\"id\":4}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}");
    CHECK(!rpc_exited(rpc, NULL));
    CHECK(!strncmp(c.out.buf,
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32600,\"message\":"
                   "\"\\\"params\\\" must be an object\"}}\n"
                   "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                   "\"not JSON: duplicate object key",
                   170));
    sb_reset(&c.out);
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"test/later\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":\"6\",\"method\":\"test/later\"}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":5}}");
    CHECK(!rpc_call_cancelled(c.later[0]));
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":5}}");
    feed(rpc, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"6\"}}");
    CHECK(rpc_call_cancelled(c.later[0]));
    CHECK(!rpc_call_cancelled(c.later[1]));
    rpc_call_reply(c.later[0], json_pack("{s:i}", "n", 5), NULL);
    rpc_call_reply(c.later[1], json_pack("{s:i}", "n", 6), NULL);
    CHECK_STR(c.out.buf, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":"
                         "\"notifications/cancelled is a notification\"}}\n"
                         "{\"jsonrpc\":\"2.0\",\"id\":\"6\",\"result\":{\"n\":6}}\n");
    rpc_free(rpc);
    sb_release(&c.out);
}

int main(void)
{
    RUN(test_table);
    RUN(test_not_json);
    RUN(test_exit_codes);
    RUN(test_later_and_cancel);
    RUN(test_outgoing);
    RUN(test_mcp_profile);
    return test_summary();
}
