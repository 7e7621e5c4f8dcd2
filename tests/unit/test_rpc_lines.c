/* The newline-delimited framing (rpc_framing_lines), driven through pipes,
 * and the reader loop rpc_serve over both framings with both profiles. */
#include "rpc.h"
#include "test.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) abort();
        s += w;
        n -= (size_t)w;
    }
}

typedef struct Feed {
    int fd;
    const char *data;
    size_t len;
} Feed;

/* Writes the input then closes: a thread, so inputs larger than a pipe. */
static void *feeder(void *arg)
{
    Feed *f = arg;
    put(f->fd, f->data, f->len);
    close(f->fd);
    return NULL;
}

typedef struct Expect {
    RpcReadResult r;
    const char *text; /* the body (MSG) or a part of e->msg */
    CrErr code;       /* BAD: e->code */
} Expect;

static void run_case(const char *name, const char *input, size_t len, size_t cap,
                     const Expect *want, size_t n_want)
{
    int fds[2];
    if (pipe(fds) != 0) abort();
    Feed f = {fds[1], input, len};
    pthread_t th;
    pthread_create(&th, NULL, feeder, &f);
    RpcTransport *t = rpc_transport_new(&rpc_framing_lines, fds[0], -1);
    rpc_transport_set_limits(t, cap, 0);
    StrBuf body;
    sb_init(&body);
    for (size_t i = 0; i < n_want; i++) {
        ErrInfo e = {0};
        RpcReadResult r = rpc_transport_read(t, &body, &e);
        if (r != want[i].r) fprintf(stderr, "case %s, read %zu: %d (%s)\n", name, i, r, e.msg);
        CHECK_INT(r, want[i].r);
        if (r == RPC_READ_MSG) CHECK_STR(body.buf, want[i].text);
        if (r != RPC_READ_MSG && want[i].text) CHECK(strstr(e.msg, want[i].text) != NULL);
        if (r == RPC_READ_BAD) {
            CHECK_INT(e.code, want[i].code);
            CHECK(body.cap < ((size_t)1 << 20)); /* the long line was never copied */
        }
    }
    pthread_join(th, NULL);
    sb_release(&body);
    rpc_transport_free(t);
    close(fds[0]);
}

#define RUN_CASE(name, input, cap, ...)                                                            \
    do {                                                                                           \
        static const Expect w_[] = {__VA_ARGS__};                                                  \
        run_case(name, input, sizeof input - 1, cap, w_, sizeof w_ / sizeof w_[0]);                \
    } while (0)

#define MSG(text)                                                                                  \
    {                                                                                              \
        RPC_READ_MSG, text, CR_OK                                                                  \
    }
#define LONG(text)                                                                                 \
    {                                                                                              \
        RPC_READ_BAD, text, CR_ETOOBIG                                                             \
    }
#define END                                                                                        \
    {                                                                                              \
        RPC_READ_EOF, NULL, CR_OK                                                                  \
    }

static void test_lines_table(void)
{
    RUN_CASE("plain", "{\"a\":1}\n{}\n", 0, MSG("{\"a\":1}"), MSG("{}"), END);
    RUN_CASE("CRLF and blank lines", "\n\r\n\na\r\n\r\nb\n\n", 0, MSG("a"), MSG("b"), END);
    RUN_CASE("last line without its newline", "a\nb", 0, MSG("a"), MSG("b"), END, END);
    RUN_CASE("last line a lone CR", "a\n\r", 0, MSG("a"), END);
    RUN_CASE("at the cap, CR aside", "12345678\r\n12345678", 8, MSG("12345678"), MSG("12345678"),
             END);
    RUN_CASE("over the cap", "123456789\nok\n1234\r56789\nok2\n", 8, LONG("longer than 8 bytes"),
             MSG("ok"), LONG("longer than 8"), MSG("ok2"), END);
    RUN_CASE("last line over the cap", "ok\n123456789", 8, MSG("ok"), LONG("longer than"), END);
}

/* A line far over the cap and over the read buffer: dropped as it arrives
 * (never buffered whole), answered once; the next line reads. */
static void test_long_line(void)
{
    size_t n = (size_t)3 << 20;
    char *in = malloc(n + 16);
    memset(in, 'x', n);
    memcpy(in + n, "\n{\"next\":1}\n", 12);
    Expect want[] = {{RPC_READ_BAD, "longer than 4096", CR_ETOOBIG},
                     {RPC_READ_MSG, "{\"next\":1}", 0},
                     {RPC_READ_EOF, NULL, 0}};
    run_case("3 MiB line", in, n + 12, 4096, want, 3);
    /* the input ends inside it: end of input, said so */
    Expect cut[] = {{RPC_READ_EOF, "input ended inside", 0}};
    run_case("cut short", in, n, 4096, cut, 1);
    free(in);
}

static void test_lines_write(void)
{
    int fds[2];
    if (pipe(fds) != 0) abort();
    RpcTransport *out = rpc_transport_new(&rpc_framing_lines, -1, fds[1]);
    ErrInfo e = {0};
    CHECK_INT(rpc_transport_write(out, "{}", 2, &e), CR_OK);
    CHECK_INT(rpc_transport_write(out, "{\"a\":1}", 7, &e), CR_OK);
    char buf[64] = {0};
    CHECK(read(fds[0], buf, sizeof buf - 1) == 11);
    CHECK_STR(buf, "{}\n{\"a\":1}\n");
    rpc_transport_free(out);
    close(fds[0]);
    close(fds[1]);
}

/* ---------------------------------------------------------------- rpc_serve */

static RpcStatus h_ok(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    *out = json_string("ok");
    return RPC_DONE;
}

static const RpcMethod methods[] = {
    {"initialize", h_ok, RPC_REQUEST | RPC_INIT},
    {"shutdown", h_ok, RPC_REQUEST | RPC_NEEDS_INIT | RPC_SHUTDOWN},
    {"ping", h_ok, RPC_REQUEST},
};

/* Serves input over framing and profile; *out gets what was written. */
static RpcEnd serve(const RpcFraming *fr, const RpcProfile *pf, const char *input, size_t cap,
                    StrBuf *out)
{
    int in[2], res[2];
    if (pipe(in) != 0 || pipe(res) != 0) abort();
    Feed f = {in[1], input, strlen(input)};
    pthread_t th;
    pthread_create(&th, NULL, feeder, &f);
    RpcTransport *t = rpc_transport_new(fr, in[0], res[1]);
    if (cap) rpc_transport_set_limits(t, cap, 0);
    Rpc *rpc =
        rpc_new(pf, methods, sizeof methods / sizeof methods[0], NULL, rpc_transport_send, t);
    RpcEnd end = rpc_serve(rpc, t);
    pthread_join(th, NULL);
    rpc_free(rpc);
    rpc_transport_free(t);
    close(res[1]);
    char buf[4096];
    ssize_t n;
    sb_reset(out);
    while ((n = read(res[0], buf, sizeof buf)) > 0)
        sb_add(out, buf, (size_t)n);
    close(in[0]);
    close(res[0]);
    return end;
}

#define INIT "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"

static void test_serve(void)
{
    StrBuf out;
    sb_init(&out);
    /* MCP over lines: no exit method, the end of input ends the loop. */
    CHECK_INT(serve(&rpc_framing_lines, &rpc_profile_mcp,
                    INIT "\nnot json\n"
                         "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n"
                         "0123456789012345678901234567890123456789012345678901234567890123456789"
                         "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
                    64, &out),
              RPC_END_EOF);
    CHECK(!strncmp(out.buf,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"ok\"}\n"
                   "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"not "
                   "JSON: ",
                   105));
    CHECK(strstr(out.buf, "\n{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                          "\"message\":\"message longer than 64 bytes\"}}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"ok\"}\n") != NULL);

    /* LSP over Content-Length: exit ends the loop before the rest is read. */
    CHECK_INT(serve(&rpc_framing_content_length, &rpc_profile_lsp,
                    "Content-Length: 58\r\n\r\n" INIT "Content-Length: 33\r\n\r\n"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}"
                    "Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
                    0, &out),
              RPC_END_EXIT);
    CHECK_STR(out.buf,
              "Content-Length: 38\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"ok\"}");
    /* A Content-Length over the cap: -32600; a broken header: -32700. */
    CHECK_INT(serve(&rpc_framing_content_length, &rpc_profile_lsp,
                    "Content-Length: 99999\r\n\r\nxx Content-Length: 2\r\nBad\r\n\r\n", 64, &out),
              RPC_END_EOF);
    CHECK(strstr(out.buf, "{\"code\":-32600,\"message\":\"Content-Length exceeds") != NULL);
    CHECK(strstr(out.buf, "{\"code\":-32700,\"message\":\"malformed header line") != NULL);
    sb_release(&out);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_lines_table);
    RUN(test_long_line);
    RUN(test_lines_write);
    RUN(test_serve);
    return test_summary();
}
