/* LLM answers: what goes over the wire to the loopback fake OpenAI server
 * (tests/fake_openai.py) and what comes back: the request's members, the
 * key only in its header and never in a log, a message or a result, the
 * streamed progress and a cancel mid-stream or while waiting to retry.
 * The workspace is test_llm.c's (llm_util.h). */
#include "capture.h"
#include "llm_util.h"

#define KEY_ENV "CODERAG_TEST_LLM_KEY"
#define KEY "sk-test-0123456789abcdef"

/* Without a key: the model, a low temperature, streaming, the system
 * instructions and exactly the packed blocks, no other file content, no
 * Authorization header. */
static void request_plain(RtvRequest *r)
{
    RtvRequest req = *r;
    RtvAnswer a;
    ErrInfo e = {0};
    json_t *last = NULL;

    fake_script_chat(&fake, "[{\"content\": \"Withdraw refuses [{ctx0}].\"}]");
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_LLM);
    CHECK_INT(chat_requests(&last), 1);
    const char *path = NULL, *model = NULL, *rest = NULL, *r0 = NULL, *c0 = NULL, *r1 = NULL,
               *c1 = NULL;
    json_t *auth = NULL;
    double temp = 0;
    int stream = 0;
    CHECK_INT(json_unpack(last, "{s:s, s:o, s:s, s:{s:s, s:F, s:b, s:[{s:s, s:s}, {s:s, s:s}!]}}",
                          "path", &path, "auth", &auth, "rest", &rest, "json", "model", &model,
                          "temperature", &temp, "stream", &stream, "messages", "role", &r0,
                          "content", &c0, "role", &r1, "content", &c1),
              0);
    CHECK_STR(path, "/v1/chat/completions");
    CHECK(json_is_null(auth));
    CHECK_STR(model, "test-model");
    CHECK(temp > 0.09 && temp < 0.11);
    CHECK_INT(stream, 1);
    CHECK_STR(r0, "system");
    CHECK_STR(c0, rtv_prompt_system);
    CHECK_STR(r1, "user");
    StrBuf want;
    sb_init(&want);
    rtv_prompt_user(a.items, a.n_items, QUESTION, &want);
    CHECK_STR(c1, want.buf);
    for (size_t i = 0; i < a.n_items; i++)
        CHECK(c1 && strstr(c1, a.items[i].text) != NULL);
    /* nothing else from the workspace, nor from outside it */
    CHECK(rest && !strstr(rest, "outside-the-workspace"));
    CHECK(rest && !strstr(rest, "render_statement"));
    CHECK(rest && !strstr(rest, "def deposit"));
    CHECK(rest && !strstr(rest, "Accounts that hold a balance"));
    rtv_answer_release(&a);
    json_decref(last);
    sb_release(&want);
}

/* With a key, logging everything to a file: the key only in the
 * Authorization header, never in the answer, an error message, a fallback
 * reason (whole or cut) or the log. */
static void request_key(RtvRequest *r)
{
    RtvRequest req = *r;
    RtvAnswer a;
    ErrInfo e = {0};
    json_t *last = NULL;
    const char *rest = NULL;

    char log_path[] = "/tmp/coderag-test-llm-log-XXXXXX";
    int log_fd = mkstemp(log_path), saved_err = dup(2);
    CHECK(log_fd >= 0 && saved_err >= 0);
    fflush(stderr);
    dup2(log_fd, 2);
    setenv("CODERAG_LOG", "debug", 1);
    setenv(KEY_ENV, KEY, 1);
    req.llm_api_key_env = KEY_ENV;
    fake_script_chat(&fake, "[{\"content\": \"The key " KEY " is not for answers [{ctx0}].\"}]");
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK_INT(chat_requests(&last), 1);
    const char *auth_s = NULL;
    CHECK_INT(json_unpack(last, "{s:s, s:s}", "auth", &auth_s, "rest", &rest), 0);
    CHECK_STR(auth_s, "Bearer " KEY);
    CHECK(rest && !strstr(rest, KEY));
    CHECK(a.answer && !strstr(a.answer, KEY)); /* an echoing server cannot put it in a result */
    CHECK_INT(a.n_citations, 1);
    rtv_answer_release(&a);
    json_decref(last);
    last = NULL;

    /* a server that echoes the key in an error: not in messages either */
    fake_script_chat(&fake, "[{\"status\": 401, \"echo_auth\": true, \"times\": 2}]");
    req.mode = RTV_MODE_LLM;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_EHTTP);
    CHECK(strstr(e.msg, "HTTP 401") != NULL);
    CHECK(!strstr(e.msg, KEY));
    req.mode = RTV_MODE_AUTO;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK(a.fallback_reason && strstr(a.fallback_reason, "HTTP 401") &&
          !strstr(a.fallback_reason, KEY));
    CHECK(a.answer && !strstr(a.answer, KEY));
    rtv_answer_release(&a);
    fake_script_chat(&fake, "[{\"content\": \"\", \"error_event\": \"bad key " KEY "\"}]");
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK(a.fallback_reason && strstr(a.fallback_reason, "bad key") &&
          !strstr(a.fallback_reason, KEY));
    CHECK(a.answer && !strstr(a.answer, KEY));
    rtv_answer_release(&a);
    /* ... nor a part of it where a quoted message is cut */
    StrBuf echo;
    sb_init(&echo);
    sb_adds(&echo, "[{\"content\": \"\", \"error_event\": \"");
    for (int i = 0; i < 150; i++)
        sb_addc(&echo, 'x');
    sb_adds(&echo, " " KEY "\"}]");
    fake_script_chat(&fake, echo.buf);
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK(a.fallback_reason && strstr(a.fallback_reason, "xxxx") &&
          !strstr(a.fallback_reason, "sk-te"));
    rtv_answer_release(&a);
    sb_release(&echo);
    unsetenv(KEY_ENV);
    req.llm_api_key_env = NULL;
    setenv("CODERAG_LOG", "error", 1);
    fflush(stderr);
    dup2(saved_err, 2);
    close(saved_err);
    close(log_fd);
    StrBuf logged;
    sb_init(&logged);
    CHECK_INT(sb_read_file(&logged, log_path, 0, NULL), CR_OK);
    CHECK(strstr(logged.buf, "HTTP 401") != NULL); /* it did log the failures */
    CHECK(!strstr(logged.buf, KEY));
    sb_release(&logged);
    unlink(log_path);
    *r = req; /* no key, mode auto: as the next part expects */
}

/* Not streamed when asked so; "/v1" already in the URL is not doubled. */
static void request_no_stream(RtvRequest *r)
{
    RtvRequest req = *r;
    char url[96];
    snprintf(url, sizeof url, "%s/v1/", fake.base);
    req.llm_url = url;
    req.llm_no_stream = 1;
    fake_script_chat(&fake, "[{\"content\": \"Withdraw refuses [{ctx0}].\"}]");
    RtvAnswer a;
    ErrInfo e = {0};
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_LLM);
    json_t *last = NULL;
    const char *path = NULL;
    int stream = 1;
    CHECK_INT(chat_requests(&last), 1);
    CHECK_INT(json_unpack(last, "{s:s, s:{s:b}}", "path", &path, "json", "stream", &stream), 0);
    CHECK_STR(path, "/v1/chat/completions");
    CHECK_INT(stream, 0);
    json_decref(last);
    rtv_answer_release(&a);
}

/* What goes over the wire: the model, a low temperature, streaming, the
 * system instructions and exactly the packed blocks, no other file content;
 * the key only in the Authorization header, and only when one is set. */
static void test_request(void)
{
    RtvRequest req;
    rtv_request_init(&req);
    req.question = QUESTION;
    req.llm_url = fake.base;
    req.llm_model = "test-model";
    req.llm_api_key_env = "CODERAG_TEST_UNSET_KEY";
    unsetenv("CODERAG_TEST_UNSET_KEY");
    request_plain(&req);
    request_key(&req);
    request_no_stream(&req);
}

typedef struct Progress {
    size_t calls, tokens, chars;
    size_t cancel_after; /* 0: never */
} Progress;

static void on_progress(void *ud, size_t tokens, size_t chars)
{
    Progress *p = ud;
    p->calls++;
    p->tokens = tokens;
    p->chars = chars;
}

static int on_cancel(void *ud)
{
    const Progress *p = ud;
    return p->cancel_after && p->calls >= p->cancel_after;
}

static void test_progress_and_cancel(void)
{
    static const char text[] = "Withdraw raises InsufficientFunds when the amount is larger.";
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    Progress p = {0};

    fake_script_chat(&fake, "[{\"content\": \"Withdraw raises InsufficientFunds when the amount "
                            "is larger.\", \"chunk\": 5}]");
    rtv_request_init(&req);
    req.question = QUESTION;
    req.llm_url = fake.base;
    req.progress = on_progress;
    req.progress_ud = &p;
    req.cancel = on_cancel;
    req.cancel_ud = &p;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    size_t pieces = (sizeof text - 1 + 4) / 5;
    CHECK_INT(p.calls, pieces);
    CHECK_INT(p.tokens, pieces);
    CHECK_INT(p.chars, sizeof text - 1);
    CHECK_INT(a.mode, RTV_MODE_LLM);
    CHECK_INT(a.n_citations, 1); /* none written: the best item, "auto" */
    if (a.n_citations) CHECK_STR(a.citations[0].source, "auto");
    if (a.n_citations) CHECK_STR(a.citations[0].origin, "fallback");
    rtv_answer_release(&a);

    /* canceled mid-stream: no fallback, the request fails. The fake sends
     * six events and then holds the stream open, so only the cancel (after
     * the third piece) can end it, however slow the machine. */
    memset(&p, 0, sizeof p);
    p.cancel_after = 3;
    fake_script_chat(&fake, "[{\"content\": \"Withdraw raises InsufficientFunds when the amount "
                            "is larger.\", \"chunk\": 2, \"stall_after\": 6}]");
    long timeout = req.llm_timeout_ms;
    req.llm_timeout_ms = 3600 * 1000;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_ECANCELED);
    CHECK(a.answer == NULL);
    CHECK(p.calls >= 3 && p.calls <= 6);
    rtv_answer_release(&a);
    req.llm_timeout_ms = timeout;

    /* canceled while waiting to retry after a 503 with Retry-After: 5: the
     * hook cancels once the wait has begun (it is logged); not heard during
     * the wait, the retry would succeed */
    fake_script_chat(&fake, "[{\"status\": 503, \"retry_after\": 5}]");
    req.progress = NULL;
    Capture cap;
    req.cancel = capture_cancel_on_retry;
    req.cancel_ud = &cap;
    capture_start(&cap);
    CrErr rc = rtv_ask(st, &req, &a, &e);
    free(capture_stop(&cap));
    CHECK_INT(rc, CR_ECANCELED);
    CHECK_INT(chat_requests(NULL), 1);
    rtv_answer_release(&a);
}

static void run_tests(void)
{
    RUN(test_request);
    RUN(test_progress_and_cancel);
}

int main(void)
{
    return llm_main(run_tests);
}
