/* The Content-Length transport, driven through pipes: partial reads,
 * several messages in one read, header variants, huge and broken lengths,
 * end of input in a header or a body, stalled bodies, writing. */
#include "rpc.h"
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Pipe {
    int rd, wr;
} Pipe;

static Pipe pipe_new(void)
{
    int fds[2];
    if (pipe(fds) != 0) abort();
    return (Pipe){fds[0], fds[1]};
}

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

static void puts_fd(int fd, const char *s)
{
    put(fd, s, strlen(s));
}

/* Expected result of one read: kind, and the body (MSG) or a substring of
 * the error message (BAD, EOF; NULL: no message). */
typedef struct Expect {
    RpcReadResult r;
    const char *text;
} Expect;

/* Feeds input (whole, then EOF) and checks the reads in order. */
static void run_case(const char *name, const char *input, size_t input_len, const Expect *want,
                     size_t n_want)
{
    Pipe p = pipe_new();
    put(p.wr, input, input_len);
    close(p.wr);
    RpcTransport *t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    StrBuf body;
    sb_init(&body);
    for (size_t i = 0; i < n_want; i++) {
        ErrInfo e = {0};
        RpcReadResult r = rpc_transport_read(t, &body, &e);
        if (r != want[i].r) fprintf(stderr, "case %s, read %zu: %d (%s)\n", name, i, r, e.msg);
        CHECK_INT(r, want[i].r);
        if (r == RPC_READ_MSG && want[i].text) CHECK_STR(body.buf, want[i].text);
        if (r != RPC_READ_MSG && want[i].text) CHECK(strstr(e.msg, want[i].text) != NULL);
        if (r != RPC_READ_MSG && !want[i].text) CHECK_STR(e.msg, "");
        if (r == RPC_READ_BAD) CHECK(body.cap < ((size_t)1 << 20)); /* nothing big allocated */
    }
    sb_release(&body);
    rpc_transport_free(t);
    close(p.rd);
}

#define M(body) "Content-Length: " #body
#define RUN_CASE(name, input, ...)                                                                 \
    do {                                                                                           \
        static const Expect w_[] = {__VA_ARGS__};                                                  \
        run_case(name, input, sizeof input - 1, w_, sizeof w_ / sizeof w_[0]);                     \
    } while (0)

static void test_framing_table(void)
{
    RUN_CASE("two in one read", "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n{\"a\":1}",
             {RPC_READ_MSG, "{}"}, {RPC_READ_MSG, "{\"a\":1}"}, {RPC_READ_EOF, NULL});
    RUN_CASE("header case, Content-Type, unknown headers",
             "content-LENGTH:   2  \r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
             "X-Other: yes\r\n\r\n{}",
             {RPC_READ_MSG, "{}"}, {RPC_READ_EOF, NULL});
    RUN_CASE("bare LF and blank lines between messages",
             "\r\n\nContent-Length: 2\n\n{}\r\n\r\nContent-Length: 2\r\n\r\n[]",
             {RPC_READ_MSG, "{}"}, {RPC_READ_MSG, "[]"}, {RPC_READ_EOF, NULL});
    RUN_CASE("empty body", "Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}",
             {RPC_READ_MSG, ""}, {RPC_READ_MSG, "{}"});
    RUN_CASE("missing Content-Length",
             "Content-Type: x\r\n\r\n{\"id\":1}Content-Length: 2\r\n\r\n{}",
             {RPC_READ_BAD, "missing Content-Length"}, {RPC_READ_MSG, "{}"}, {RPC_READ_EOF, NULL});
    RUN_CASE(
        "bad values",
        "Content-Length: abc\r\n\r\n{}Content-Length: -1\r\n\r\n{}Content-Length: 1 2\r\n\r\n{}"
        "Content-Length:\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
        {RPC_READ_BAD, "invalid"}, {RPC_READ_BAD, "invalid"}, {RPC_READ_BAD, "invalid"},
        {RPC_READ_BAD, "invalid"}, {RPC_READ_MSG, "{}"});
    RUN_CASE("conflicting lengths",
             "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
             "Content-Length: 2\r\nContent-Length: 2\r\n\r\n[]",
             {RPC_READ_BAD, "conflicting"}, {RPC_READ_MSG, "[]"});
    RUN_CASE("2 GB", "Content-Length: 2147483648\r\n\r\n{\"big\":1}Content-Length: 2\r\n\r\n{}",
             {RPC_READ_BAD, "exceeds the limit"}, {RPC_READ_MSG, "{}"}, {RPC_READ_EOF, NULL});
    RUN_CASE("overflowing length",
             "Content-Length: 999999999999999999999999999999\r\n\r\nxContent-Length: 2\r\n\r\n{}",
             {RPC_READ_BAD, "exceeds the limit"}, {RPC_READ_MSG, "{}"});
    RUN_CASE("junk line", "hello world\r\nContent-Length: 2\r\n\r\n{}",
             {RPC_READ_BAD, "malformed header"}, {RPC_READ_MSG, "{}"});
    RUN_CASE("header glued to junk", "xx}Content-Length: 2\r\n\r\n{}",
             {RPC_READ_BAD, "malformed header"}, {RPC_READ_MSG, "{}"});
    RUN_CASE("junk then end", "garbage without newline", {RPC_READ_EOF, "inside a message header"});
    RUN_CASE("EOF in header", "Content-Length: 5\r\n", {RPC_READ_EOF, "inside a message header"});
    RUN_CASE("EOF in body", "Content-Length: 10\r\n\r\n{}",
             {RPC_READ_EOF, "inside a message body"});
    RUN_CASE("header without body", "Content-Length: 10\r\n\r\n",
             {RPC_READ_EOF, "inside a message body"});
    RUN_CASE("nothing", "", {RPC_READ_EOF, NULL});
    RUN_CASE("EOF after bad", "Content-Length: x\r\n\r\nnothing follows", {RPC_READ_BAD, "invalid"},
             {RPC_READ_EOF, NULL});
}

static void test_header_too_long(void)
{
    StrBuf in;
    sb_init(&in);
    sb_adds(&in, "X-Long: ");
    for (int i = 0; i < 20000; i++)
        sb_addc(&in, 'a');
    sb_adds(&in, "\r\nContent-Length: 2\r\n\r\n{}");
    /* The long line itself starts with a header name: must not loop. */
    sb_adds(&in, "Content-Length: 1");
    for (int i = 0; i < 20000; i++)
        sb_addc(&in, ' ');
    sb_adds(&in, "\r\n\r\nxContent-Length: 2\r\n\r\n[]");
    Expect want[] = {{RPC_READ_BAD, "longer than"},
                     {RPC_READ_MSG, "{}"},
                     {RPC_READ_BAD, "longer than"},
                     {RPC_READ_MSG, "[]"},
                     {RPC_READ_EOF, NULL}};
    run_case("long header", in.buf, in.len, want, sizeof want / sizeof want[0]);
    sb_release(&in);
}

/* A writer thread that sends its input one byte at a time. */
typedef struct Dribble {
    int fd;
    const char *data;
    size_t len;
    size_t step;
} Dribble;

static void *dribble(void *arg)
{
    Dribble *d = arg;
    for (size_t i = 0; i < d->len; i += d->step) {
        size_t n = d->len - i < d->step ? d->len - i : d->step;
        put(d->fd, d->data + i, n);
        if (d->step == 1) usleep(50);
    }
    close(d->fd);
    return NULL;
}

static void test_partial_reads(void)
{
    static const char in[] =
        "Content-Length: 13\r\n\r\n{\"a\":\"b c d\"}Content-Length: 2\r\n\r\n[]";
    Pipe p = pipe_new();
    Dribble d = {p.wr, in, sizeof in - 1, 1};
    pthread_t th;
    pthread_create(&th, NULL, dribble, &d);
    RpcTransport *t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    rpc_transport_set_limits(t, 0, -1); /* however slowly the writer runs */
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{\"a\":\"b c d\"}");
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "[]");
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_EOF);
    pthread_join(th, NULL);
    sb_release(&body);
    rpc_transport_free(t);
    close(p.rd);
}

static void test_big_body(void)
{
    size_t n = (size_t)3 << 20;
    StrBuf in;
    sb_init(&in);
    sb_addf(&in, "Content-Length: %zu\r\n\r\n", n);
    size_t start = in.len;
    for (size_t i = 0; i < n; i++)
        sb_addc(&in, (char)('a' + i % 26));
    sb_adds(&in, "Content-Length: 2\r\n\r\n{}");
    Pipe p = pipe_new();
    Dribble d = {p.wr, in.buf, in.len, 4093};
    pthread_t th;
    pthread_create(&th, NULL, dribble, &d);
    RpcTransport *t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    rpc_transport_set_limits(t, 0, -1); /* however slowly the writer runs */
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_INT(body.len, n);
    CHECK(body.len == n && !memcmp(body.buf, in.buf + start, n));
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{}");
    CHECK(body.cap < ((size_t)1 << 20)); /* a big buffer is not kept */

    /* Over a small cap: refused and skipped. */
    rpc_transport_free(t);
    pthread_join(th, NULL);
    close(p.rd);
    p = pipe_new();
    d = (Dribble){p.wr, in.buf, in.len, 4093};
    pthread_create(&th, NULL, dribble, &d);
    t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    rpc_transport_set_limits(t, 1000, -1);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_BAD);
    CHECK_INT(e.code, CR_ETOOBIG);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{}");
    pthread_join(th, NULL);
    sb_release(&body);
    sb_release(&in);
    rpc_transport_free(t);
    close(p.rd);
}

/* A body that stops arriving while the client waits: abandoned after the
 * stall time; what arrived is scanned for the next header. */
static void test_stall(void)
{
    Pipe p = pipe_new();
    RpcTransport *t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    rpc_transport_set_limits(t, 0, 50);
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    puts_fd(p.wr, "Content-Length: 100\r\n\r\n{\"id\":1}");
    double t0 = now_ms();
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_BAD);
    CHECK(strstr(e.msg, "incomplete") != NULL);
    CHECK(now_ms() - t0 >= 45);
    puts_fd(p.wr, "Content-Length: 2\r\n\r\n{}");
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{}");

    /* Too long a length swallowing the next message's header: recovered
     * once the stall ends, from what arrived. */
    puts_fd(p.wr, "Content-Length: 40\r\n\r\n{}Content-Length: 7\r\n\r\n{\"a\":1}");
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_BAD);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{\"a\":1}");
    close(p.wr);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_EOF);
    sb_release(&body);
    rpc_transport_free(t);
    close(p.rd);
}

/* rpc_transport_reject: a body that swallowed the next header. */
static void test_reject(void)
{
    static const char in[] =
        "Content-Length: 24\r\n\r\n{\"a\":1}Content-Length: 7\r\n\r\n{\"b\":2}";
    Pipe p = pipe_new();
    put(p.wr, in, sizeof in - 1);
    close(p.wr);
    RpcTransport *t = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{\"a\":1}Content-Length: 7");
    CHECK_INT(rpc_transport_reject(t, body.buf, body.len), 1);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_MSG);
    CHECK_STR(body.buf, "{\"b\":2}");
    CHECK_INT(rpc_transport_reject(t, body.buf, body.len), 0);
    CHECK_INT(rpc_transport_read(t, &body, &e), RPC_READ_EOF);
    sb_release(&body);
    rpc_transport_free(t);
    close(p.rd);
}

typedef struct Writer {
    RpcTransport *t;
    int id;
} Writer;

static void *write_many(void *arg)
{
    Writer *w = arg;
    char msg[64];
    for (int i = 0; i < 200; i++) {
        int n = snprintf(msg, sizeof msg, "{\"writer\":%d,\"n\":%d}", w->id, i);
        rpc_transport_write(w->t, msg, (size_t)n, NULL);
    }
    return NULL;
}

/* Writes from several threads arrive as whole messages, each in order. */
static void test_write(void)
{
    Pipe p = pipe_new();
    RpcTransport *out = rpc_transport_new(&rpc_framing_content_length, -1, p.wr);
    ErrInfo e = {0};
    CHECK_INT(rpc_transport_write(out, "{}", 2, &e), CR_OK);
    char buf[64] = {0};
    CHECK(read(p.rd, buf, sizeof buf - 1) == 23);
    CHECK_STR(buf, "Content-Length: 2\r\n\r\n{}");

    Writer w[4];
    pthread_t th[4];
    RpcTransport *in = rpc_transport_new(&rpc_framing_content_length, p.rd, -1);
    for (int i = 0; i < 4; i++) {
        w[i] = (Writer){out, i};
        pthread_create(&th[i], NULL, write_many, &w[i]);
    }
    int next[4] = {0};
    StrBuf body;
    sb_init(&body);
    for (int k = 0; k < 800; k++) {
        int id = -1, n = -1;
        CHECK_INT(rpc_transport_read(in, &body, &e), RPC_READ_MSG);
        CHECK(sscanf(body.buf, "{\"writer\":%d,\"n\":%d}", &id, &n) == 2);
        CHECK(id >= 0 && id < 4 && n == next[id]);
        if (id >= 0 && id < 4) next[id]++;
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);

    /* The reader goes away: EPIPE, the transport is broken. */
    close(p.rd);
    CHECK(!rpc_transport_broken(out));
    CHECK_INT(rpc_transport_write(out, "{}", 2, &e), CR_EIO);
    CHECK(rpc_transport_broken(out));
    CHECK_INT(rpc_transport_write(out, "{}", 2, &e), CR_EIO);
    sb_release(&body);
    rpc_transport_free(in);
    rpc_transport_free(out);
    close(p.wr);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_framing_table);
    RUN(test_header_too_long);
    RUN(test_partial_reads);
    RUN(test_big_body);
    RUN(test_stall);
    RUN(test_reject);
    RUN(test_write);
    return test_summary();
}
