#include "base.h"
#include "test.h"
#include "fake_server.h"
#include "capture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SECRET "sk-SECRET-0123456789abcdef"

/* Number of requests the fake saw since the last script. */
static int fake_count(const Fake *f)
{
    json_t *reqs = fake_log(f);
    int n = reqs ? (int)json_array_size(reqs) : -1;
    json_decref(reqs);
    return n;
}

static Fake fake;
static char url[128]; /* fake.base + "/v1/embeddings" */

static const char *const json_headers[] = {"Content-Type: application/json",
                                           "Authorization: Bearer " SECRET};

static HttpRequest base_req(void)
{
    static const char body[] = "{\"input\": [\"hello\"]}";
    return (HttpRequest){
        .url = url,
        .headers = json_headers,
        .n_headers = 2,
        .body = body,
        .body_len = sizeof body - 1,
        .timeout_ms = 5000,
        .retry_base_ms = 10,
        .seed = 42,
    };
}

/* ---------------------------------------------------------------- tests */

static void test_endpoint_url(void)
{
    static const struct {
        const char *base, *endpoint, *want;
    } cases[] = {
        {"http://h:8080", "embeddings", "http://h:8080/v1/embeddings"},
        {"http://h:8080/", "embeddings", "http://h:8080/v1/embeddings"},
        {"http://h:8080/v1", "embeddings", "http://h:8080/v1/embeddings"},
        {"http://h:8080/v1/", "embeddings", "http://h:8080/v1/embeddings"},
        {"https://api.openai.com/v1", "chat/completions",
         "https://api.openai.com/v1/chat/completions"},
        {"http://h/openai/v1", "embeddings", "http://h/openai/v1/embeddings"},
        {"http://h/api", "embeddings", "http://h/api/v1/embeddings"},
        {"http://h/v1beta", "embeddings", "http://h/v1beta/v1/embeddings"},
        {"http://v1", "embeddings", "http://v1/v1/embeddings"}, /* a host named v1 */
        {"http://h", "/embeddings", "http://h/v1/embeddings"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = http_endpoint_url(cases[i].base, cases[i].endpoint);
        CHECK_STR(got, cases[i].want);
        free(got);
    }
}

static void test_redact_url(void)
{
    static const struct {
        const char *url, *want;
    } cases[] = {
        {"http://h:1/v1/embeddings", "http://h:1/v1/embeddings"},
        {"https://user:pw@h/v1?key=abc#frag", "https://***@h/v1?key=***"},
        {"http://a@b@h:2/x", "http://***@h:2/x"},
        {"http://h/p\xc3\xa9\n", "http://h/p???"},
        {"h/x?y", "h/x?y"},
        /* credential-looking parameters masked, others kept */
        {"http://bob:PASSWORD@host/v1?api_key=TOKEN", "http://***@host/v1?api_key=***"},
        {"http://h/v1?model=m&access_token=T1&x&Password=P&sig=S&apikey=K&SECRET=Z&n=1",
         "http://h/v1?model=m&access_token=***&x&Password=***&sig=***&apikey=***&SECRET=***&n=1"},
        {"http://h/v1?token=#frag", "http://h/v1?token=***"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        StrBuf sb;
        sb_init(&sb);
        http_redact_url(&sb, cases[i].url);
        CHECK_STR(sb.buf, cases[i].want);
        sb_release(&sb);
    }
}

static void test_post_ok(void)
{
    fake_script(&fake, 4, "[]");
    HttpRequest req = base_req();
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_OK);
    CHECK_INT(r.status, 200);
    CHECK_INT(r.attempts, 1);
    CHECK(strstr(r.body.buf, "\"embedding\"") != NULL);
    CHECK_INT(strlen(r.body.buf), r.body.len);
    http_response_release(&r);
    http_response_release(&r);
    http_response_release(NULL);
}

static void test_no_expect_delay(void)
{
    /* bodies over 1 KiB must not wait for "100 Continue" */
    fake_script(&fake, 4, "[]");
    StrBuf body;
    sb_init(&body);
    sb_adds(&body, "{\"input\": [\"");
    for (int i = 0; i < 5000; i++)
        sb_addc(&body, 'a');
    sb_adds(&body, "\"]}");
    HttpRequest req = base_req();
    req.body = body.buf;
    req.body_len = body.len;
    HttpResponse r;
    CHECK_INT(http_post(&req, &r, NULL), CR_OK);
    http_response_release(&r);
    sb_release(&body);
    /* what would make the client wait: an "Expect" header */
    json_t *reqs = fake_log(&fake);
    CHECK(reqs && json_array_size(reqs) == 1);
    const char *rest = json_string_value(json_object_get(json_array_get(reqs, 0), "rest"));
    CHECK(rest != NULL && strcasestr(rest, "\nexpect:") == NULL);
    json_decref(reqs);
}

static void test_retry_5xx(void)
{
    fake_script(&fake, 4, "[{\"status\": 500, \"times\": 2}]");
    HttpRequest req = base_req();
    req.max_retries = 3;
    req.retry_base_ms = 50;
    HttpResponse r;
    Capture cap;
    capture_start(&cap);
    double t0 = now_ms();
    CrErr rc = http_post(&req, &r, NULL);
    double took = now_ms() - t0;
    char *log = capture_stop(&cap);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(r.attempts, 3);
    CHECK_INT(r.status, 200);
    /* exponential backoff with up to a quarter of jitter: 50, then 100 */
    long w0 = capture_retry_wait(log, 0), w1 = capture_retry_wait(log, 1);
    CHECK(w0 >= 50 && w0 <= 62);
    CHECK(w1 >= 100 && w1 <= 125);
    CHECK(took >= (double)(w0 + w1) - 1); /* it did wait them */
    free(log);
    CHECK_INT(fake_count(&fake), 3);
    http_response_release(&r);
}

static void test_retry_exhausted(void)
{
    fake_script(&fake, 4, "[{\"status\": 503, \"times\": 5}]");
    HttpRequest req = base_req();
    req.max_retries = 2;
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK_INT(r.attempts, 3);
    CHECK_INT(r.status, 503);
    CHECK(strstr(e.msg, "HTTP 503") != NULL);
    CHECK(strstr(e.msg, "after 3 attempts") != NULL);
    CHECK(strstr(e.msg, "scripted failure") != NULL);
    CHECK(strchr(e.msg, '\n') == NULL);
    http_response_release(&r);
}

static void test_no_retry_4xx(void)
{
    fake_script(&fake, 4, "[{\"status\": 400, \"body\": \"{\\\"error\\\": \\\"bad input\\\"}\"}]");
    HttpRequest req = base_req();
    req.max_retries = 3;
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK_INT(r.attempts, 1);
    CHECK_INT(r.status, 400);
    CHECK_STR(r.body.buf, "{\"error\": \"bad input\"}");
    CHECK(strstr(e.msg, "HTTP 400") != NULL);
    CHECK_INT(fake_count(&fake), 1);
    http_response_release(&r);
}

static void test_retry_after(void)
{
    /* honoured: base 1 ms, but the server asks for a second */
    fake_script(&fake, 4, "[{\"status\": 429, \"retry_after\": \"1\"}]");
    HttpRequest req = base_req();
    req.max_retries = 2;
    req.retry_base_ms = 1;
    HttpResponse r;
    Capture cap;
    capture_start(&cap);
    double t0 = now_ms();
    CrErr rc = http_post(&req, &r, NULL);
    double took = now_ms() - t0;
    char *log = capture_stop(&cap);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(capture_retry_wait(log, 0), 1000);
    CHECK(took >= 999);
    CHECK_INT(r.attempts, 2);
    http_response_release(&r);
    free(log);

    /* capped by retry_max_ms */
    fake_script(&fake, 4, "[{\"status\": 429, \"retry_after\": \"30\"}]");
    req.retry_max_ms = 200;
    capture_start(&cap);
    t0 = now_ms();
    rc = http_post(&req, &r, NULL);
    took = now_ms() - t0;
    log = capture_stop(&cap);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(capture_retry_wait(log, 0), 200);
    CHECK(took >= 199);
    CHECK_INT(r.attempts, 2);
    http_response_release(&r);
    free(log);
}

static void test_timeout(void)
{
    /* the fake answers after a minute: only the timeout can end this */
    fake_script(&fake, 4, "[{\"delay_ms\": 60000}]");
    HttpRequest req = base_req();
    req.timeout_ms = 300;
    req.max_retries = 3; /* timeouts are not retried */
    HttpResponse r;
    ErrInfo e = {0};
    double t0 = now_ms();
    CHECK_INT(http_post(&req, &r, &e), CR_ETIMEOUT);
    CHECK(now_ms() - t0 >= 290);
    CHECK_INT(r.attempts, 1);
    CHECK(strstr(e.msg, url) != NULL);
    CHECK(strstr(e.msg, SECRET) == NULL);
    http_response_release(&r);
}

static void test_size_cap(void)
{
    static const struct {
        const char *script;
        size_t cap;
        CrErr rc;
    } cases[] = {
        {"[{\"big\": 100000}]", 4096, CR_ETOOBIG},                    /* Content-Length */
        {"[{\"big\": 100000, \"chunked\": true}]", 4096, CR_ETOOBIG}, /* counted as it comes */
        {"[{\"big\": 4096, \"chunked\": true}]", 4096, CR_OK},
        {"[{\"big\": 4097, \"chunked\": true}]", 4096, CR_ETOOBIG},
        {"[{\"big\": 4096}]", 4096, CR_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_script(&fake, 4, cases[i].script);
        HttpRequest req = base_req();
        req.max_response_bytes = cases[i].cap;
        req.max_retries = 2; /* not retried */
        HttpResponse r;
        ErrInfo e = {0};
        CrErr rc = http_post(&req, &r, &e);
        if (rc != cases[i].rc) fprintf(stderr, "size case %zu: %s\n", i, e.msg);
        CHECK_INT(rc, cases[i].rc);
        CHECK_INT(r.attempts, 1);
        CHECK(r.body.cap <= cases[i].cap + 1); /* never allocated past the cap */
        if (rc == CR_OK) CHECK_INT(r.body.len, cases[i].cap);
        if (rc) CHECK(strstr(e.msg, "larger than 4096 bytes") != NULL);
        http_response_release(&r);
    }
}

static void test_cut_short(void)
{
    fake_script(&fake, 4, "[{\"cut\": true}]");
    HttpRequest req = base_req();
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK_INT(r.attempts, 1);
    http_response_release(&r);

    fake_script(&fake, 4, "[{\"cut\": true}]");
    req.max_retries = 1;
    CHECK_INT(http_post(&req, &r, &e), CR_OK);
    CHECK_INT(r.attempts, 2);
    http_response_release(&r);
}

static void test_refused(void)
{
    /* a bound socket that does not listen refuses connections */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
    char dead[128];
    snprintf(dead, sizeof dead, "http://127.0.0.1:%d/v1/embeddings", ntohs(a.sin_port));
    HttpRequest req = base_req();
    req.url = dead;
    req.max_retries = 2;
    req.retry_base_ms = 1;
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK_INT(r.attempts, 3);
    CHECK_INT(r.status, 0);
    CHECK(strstr(e.msg, dead) != NULL);
    CHECK(strstr(e.msg, "unreachable") != NULL);
    CHECK(strstr(e.msg, SECRET) == NULL);
    http_response_release(&r);
    close(s);
}

static void test_secrets_stay_out(void)
{
    /* a server that echoes the key in its error body */
    fake_script(&fake, 4, "[{\"status\": 401, \"echo_auth\": true}]");
    HttpRequest req = base_req();
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK_INT(r.status, 401);
    CHECK(strstr(r.body.buf, SECRET) != NULL); /* the caller has it ... */
    CHECK(strstr(e.msg, "HTTP 401") != NULL);
    CHECK(strstr(e.msg, "Incorrect API key provided") != NULL);
    CHECK(strstr(e.msg, SECRET) == NULL); /* ... the message does not */
    CHECK(strstr(e.msg, "0123456789abcdef") == NULL);
    http_response_release(&r);

    /* credentials and query in the URL */
    char creds[256];
    snprintf(creds, sizeof creds, "http://user:hunter22@%s/v1/embeddings?key=qwerty123",
             fake.base + 7);
    fake_script(&fake, 4, "[{\"status\": 500}]");
    req.url = creds;
    CHECK_INT(http_post(&req, &r, &e), CR_EHTTP);
    CHECK(strstr(e.msg, "hunter22") == NULL);
    CHECK(strstr(e.msg, "qwerty123") == NULL);
    CHECK(strstr(e.msg, "/v1/embeddings") != NULL);
    http_response_release(&r);
}

typedef struct Sink {
    StrBuf got;
    int calls;
    int stop;
} Sink;

static int sink_data(void *ud, const char *data, size_t len)
{
    Sink *s = ud;
    s->calls++;
    sb_add(&s->got, data, len);
    return s->stop;
}

static void test_on_data(void)
{
    Sink s = {0};
    sb_init(&s.got);
    fake_script(&fake, 4, "[]");
    HttpRequest req = base_req();
    req.on_data = sink_data;
    req.data_ud = &s;
    HttpResponse r;
    CHECK_INT(http_post(&req, &r, NULL), CR_OK);
    CHECK(s.calls >= 1);
    CHECK(strstr(s.got.buf, "\"embedding\"") != NULL);
    CHECK_INT(r.body.len, 0);
    http_response_release(&r);

    /* error bodies are kept in the response, not streamed */
    sb_reset(&s.got);
    s.calls = 0;
    fake_script(&fake, 4, "[{\"status\": 404}]");
    CHECK_INT(http_post(&req, &r, NULL), CR_EHTTP);
    CHECK_INT(s.calls, 0);
    CHECK(strstr(r.body.buf, "scripted failure") != NULL);
    http_response_release(&r);

    /* the consumer stops the transfer */
    s.stop = 1;
    fake_script(&fake, 4, "[]");
    req.max_retries = 2;
    CHECK_INT(http_post(&req, &r, NULL), CR_ECANCELED);
    CHECK_INT(r.attempts, 1);
    http_response_release(&r);
    sb_release(&s.got);
}

static void test_cancel(void)
{
    /* canceled during a backoff wait of an hour: the hook says cancel once
     * the wait has begun (it is logged), and only being heard during the
     * wait ends the call before the test's time limit */
    fake_script(&fake, 4, "[{\"status\": 500}]");
    HttpRequest req = base_req();
    req.max_retries = 3;
    req.retry_base_ms = 3600 * 1000;
    req.retry_max_ms = 3600 * 1000;
    Capture cap;
    req.cancel = capture_cancel_on_retry;
    req.cancel_ud = &cap;
    HttpResponse r;
    ErrInfo e = {0};
    capture_start(&cap);
    CrErr rc = http_post(&req, &r, &e);
    free(capture_stop(&cap));
    CHECK_INT(rc, CR_ECANCELED);
    CHECK_INT(r.attempts, 1);
    CHECK_INT(fake_count(&fake), 1);
    CHECK(strstr(e.msg, "canceled") != NULL);
    http_response_release(&r);
}

static int sink_has_data(void *ud)
{
    const Sink *s = ud;
    return s->calls > 0;
}

static void test_cancel_mid_stream(void)
{
    /* canceled once part of a 2xx stream was delivered: the fake sends two
     * events and holds the connection open until the client closes it, so
     * only the cancel can end the call, and it must come back as a cancel,
     * not as a finished response nor as a stream cut short */
    static const char body[] = "{\"stream\": true, \"messages\": []}";
    char chat[160];
    snprintf(chat, sizeof chat, "%s/v1/chat/completions", fake.base);
    fake_script_chat(&fake, "[{\"content\": \"one two three four\", \"chunk\": 3, "
                            "\"stall_after\": 2}]");
    Sink s = {0};
    sb_init(&s.got);
    HttpRequest req = base_req();
    req.url = chat;
    req.body = body;
    req.body_len = sizeof body - 1;
    req.timeout_ms = 3600 * 1000;
    req.max_retries = 2;
    req.on_data = sink_data;
    req.data_ud = &s;
    req.cancel = sink_has_data;
    req.cancel_ud = &s;
    HttpResponse r;
    ErrInfo e = {0};
    CHECK_INT(http_post(&req, &r, &e), CR_ECANCELED);
    CHECK_INT(r.attempts, 1);
    CHECK(s.calls >= 1);
    CHECK(strstr(s.got.buf, "data: ") != NULL);
    CHECK(strstr(s.got.buf, "[DONE]") == NULL);
    CHECK(strstr(e.msg, "canceled") != NULL);
    http_response_release(&r);
    sb_release(&s.got);
    /* and the connection is closed (already, when http_post returns; the
     * fake notices within milliseconds; no other test here uses chat) */
    CHECK_INT(fake_post(&fake, "/_control/wait",
                        "{\"kind\": \"closed\", \"count\": 1, \"timeout_s\": 4}", &r),
              CR_OK);
    CHECK(r.body.buf && strstr(r.body.buf, "\"ok\": true") != NULL);
    http_response_release(&r);
}

static void test_bad_requests(void)
{
    HttpRequest req = base_req();
    HttpResponse r;
    ErrInfo e = {0};
    req.url = NULL;
    CHECK_INT(http_post(&req, &r, &e), CR_EINVAL);
    http_response_release(&r);

    req = base_req();
    const char *const injected[] = {"X-Test: a\r\nX-Evil: b"};
    req.headers = injected;
    req.n_headers = 1;
    CHECK_INT(http_post(&req, &r, &e), CR_EINVAL);
    http_response_release(&r);

    req = base_req();
    req.url = "ftp://127.0.0.1/x";
    CHECK_INT(http_post(&req, &r, &e), CR_EINVAL);
    CHECK_INT(r.attempts, 1);
    http_response_release(&r);
}

int main(void)
{
    RUN(test_endpoint_url);
    RUN(test_redact_url);
    if (fake_start(&fake) != 0) {
        fprintf(stderr, "could not start %s\n", FAKE_SCRIPT);
        fake_stop(&fake);
        return 1;
    }
    snprintf(url, sizeof url, "%s/v1/embeddings", fake.base);
    RUN(test_post_ok);
    RUN(test_no_expect_delay);
    RUN(test_retry_5xx);
    RUN(test_retry_exhausted);
    RUN(test_no_retry_4xx);
    RUN(test_retry_after);
    RUN(test_timeout);
    RUN(test_size_cap);
    RUN(test_cut_short);
    RUN(test_refused);
    RUN(test_secrets_stay_out);
    RUN(test_on_data);
    RUN(test_cancel);
    RUN(test_cancel_mid_stream);
    RUN(test_bad_requests);
    fake_stop(&fake);
    return test_summary();
}
