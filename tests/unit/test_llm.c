/* LLM answers: the prompt, the event-stream reader, and rtv_ask end to end
 * against the loopback fake OpenAI server (tests/fake_openai.py) over a
 * small fixture workspace (tests/fixtures/answers) with a symlink to a
 * folder outside it made at run time. Every scripted answer's citations
 * and rejections are checked exactly, and the two figures that matter are
 * printed: fabricated citations accepted and valid citations rejected. */
#include "fake_server.h"
#include "capture.h"
#include "retrieve/rtv_int.h"
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>

#define QUESTION "How does withdraw refuse an overdraft?"
#define KEY_ENV "CODERAG_TEST_LLM_KEY"
#define KEY "sk-test-0123456789abcdef"

static Fake fake;
static char root[128], outside[128], index_dir[160];
static IdxStore *st;

/* Over all scripted cases. */
static int n_valid, n_fabricated, valid_rejected, fabricated_accepted;

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    if (system(cmd) != 0) fprintf(stderr, "command failed: %s\n", cmd);
}

/* ---------------------------------------------------------------- pure parts */

static RtvItem item(const char *path, const char *symbol, uint32_t a, uint32_t b, const char *text)
{
    RtvItem it = {0};
    it.chunk.path = xstrdup(path);
    it.chunk.module = xstrdup("m");
    it.chunk.symbol = xstrdup(symbol);
    it.chunk.signature = xstrdup("");
    it.chunk.docstring = xstrdup("");
    it.chunk.start_line = a;
    it.chunk.end_line = b;
    it.start_line = a;
    it.end_line = b;
    it.text = xstrdup(text);
    return it;
}

static void test_prompt(void)
{
    RtvItem v[] = {
        item("pkg/a.py", "f", 3, 4, "def f():\n    return 1\n"),
        item("pkg/b.py", "Weird\nname", 7, 7, "x = '```'"),
        item("notes/c.txt", "", 1, 1, "plain\n"),
    };
    StrBuf sb;
    sb_init(&sb);
    rtv_prompt_user(v, 3, "What does f return?", &sb);
    CHECK_STR(sb.buf, "Code blocks:\n"
                      "\n## Block 1 [pkg/a.py:3-4] f\n```python\ndef f():\n    return 1\n```\n"
                      "\n## Block 2 [pkg/b.py:7-7] Weird name\n````python\nx = '```'\n````\n"
                      "\n## Block 3 [notes/c.txt:1-1] m\n```\nplain\n```\n"
                      "\nQuestion: What does f return?\n");
    sb_reset(&sb);
    rtv_prompt_user(NULL, 0, "q", &sb);
    CHECK_STR(sb.buf, "Code blocks:\n\n(none)\n\nQuestion: q\n");
    for (size_t i = 0; i < 3; i++)
        rtv_item_release(&v[i]);
    sb_release(&sb);

    CHECK(strstr(rtv_prompt_system, "[path:start-end]") != NULL);
    CHECK(strstr(rtv_prompt_system, "Cite only the blocks shown") != NULL);

    char *body = rtv_chat_body("m1", "sys", "usr \"q\"", 1);
    json_t *j = body ? json_loads(body, 0, NULL) : NULL;
    const char *model = NULL, *r0 = NULL, *c0 = NULL, *r1 = NULL, *c1 = NULL;
    double temp = 0;
    int stream = 0;
    CHECK(j != NULL);
    CHECK_INT(json_unpack(j, "{s:s, s:F, s:b, s:[{s:s, s:s}, {s:s, s:s}]}", "model", &model,
                          "temperature", &temp, "stream", &stream, "messages", "role", &r0,
                          "content", &c0, "role", &r1, "content", &c1),
              0);
    CHECK_STR(model, "m1");
    CHECK(temp > 0.09 && temp < 0.11);
    CHECK_INT(stream, 1);
    CHECK_STR(r0, "system");
    CHECK_STR(c0, "sys");
    CHECK_STR(r1, "user");
    CHECK_STR(c1, "usr \"q\"");
    json_decref(j);
    free(body);
    body = rtv_chat_body(NULL, "s", "u", 0);
    CHECK(body && !strstr(body, "\"model\"") && strstr(body, "\"stream\":false"));
    free(body);
    CHECK(rtv_chat_body(NULL, "s", "bad \xff utf-8", 1) == NULL);
}

/* Feeds s to a fresh reader in pieces of `step` bytes (0: at once). */
static CrErr sse_run(const char *s, size_t step, char **out_text, size_t *out_tokens, char *msg,
                     size_t msg_len)
{
    RtvSse p;
    ErrInfo e = {0};
    rtv_sse_init(&p, NULL, NULL);
    size_t n = strlen(s);
    if (!step) step = n ? n : 1;
    for (size_t i = 0; i < n; i += step) {
        size_t k = n - i < step ? n - i : step;
        if (rtv_sse_feed(&p, s + i, k)) break;
    }
    CrErr rc = rtv_sse_finish(&p, &e);
    if (out_text) *out_text = rc ? NULL : xstrdup(p.content.buf);
    if (out_tokens) *out_tokens = p.tokens;
    if (msg) snprintf(msg, msg_len, "%s", e.msg);
    rtv_sse_release(&p);
    return rc;
}

#define DELTA(t) "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" t "\"}}]}\n\n"
#define FINISH(r) "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"" r "\"}]}\n\n"

static void test_sse_streams(void)
{
    static const struct {
        const char *name, *wire, *text;
        size_t tokens;
    } ok[] = {
        {"plain", DELTA("Hel") DELTA("lo") FINISH("stop") "data: [DONE]\n\n", "Hello", 2},
        {"role chunk, comments, id and retry fields",
         ": ping\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
         "id: 7\nretry: 100\nevent: message\n" DELTA("a [x.py:1-2]") ": keep-alive\n" DELTA(
             "!") "data: [DONE]\n\n",
         "a [x.py:1-2]!", 2},
        {"CRLF",
         "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n", "x",
         1},
        {"bare CR", "data: {\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\r\rdata: [DONE]\r\r",
         "y", 1},
        {"JSON over two data lines",
         "data: {\"choices\":[{\"delta\":\n"
         "data: {\"content\":\"two\"}}]}\n\ndata: [DONE]\n\n",
         "two", 1},
        {"no space after the colon",
         "data:{\"choices\":[{\"delta\":{\"content\":\"z\"}}]}\n\n"
         "data:[DONE]\n\n",
         "z", 1},
        {"finish_reason without [DONE]", DELTA("done") FINISH("stop"), "done", 1},
        {"[DONE] without its blank line", DELTA("k") "data: [DONE]", "k", 1},
        {"usage chunk and events after [DONE]",
         DELTA("u") "data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\ndata: "
                    "[DONE]\n\n" DELTA("ignored"),
         "u", 1},
        {"escapes and UTF-8", DELTA("line\\nnext \\u00e9 \\\"q\\\"") "data: [DONE]\n\n",
         "line\nnext \xC3\xA9 \"q\"", 1},
        {"server ignored stream: one JSON object",
         "\n{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"whole "
         "[a.py:1]\"},\"finish_reason\":\"stop\"}]}",
         "whole [a.py:1]", 1},
        {"content as parts",
         "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\","
         "\"text\":\"p1 \"},{\"type\":\"text\",\"text\":\"p2\"}]}}]}",
         "p1 p2", 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        static const size_t steps[] = {0, 1, 2, 5};
        for (size_t k = 0; k < 4; k++) {
            int before = test_state_.failed_checks;
            char *text = NULL;
            size_t tokens = 0;
            char msg[512];
            CHECK_INT(sse_run(ok[i].wire, steps[k], &text, &tokens, msg, sizeof msg), CR_OK);
            CHECK_STR(text, ok[i].text);
            CHECK_INT(tokens, ok[i].tokens);
            if (test_state_.failed_checks != before)
                fprintf(stderr, "  in stream '%s' fed %zu bytes at a time (%s)\n", ok[i].name,
                        steps[k], msg);
            free(text);
        }
    }

    static const struct {
        const char *name, *wire;
        CrErr rc;
        const char *msg;
    } bad[] = {
        {"cut before [DONE]", DELTA("part"), CR_EPARSE, "cut short"},
        {"cut inside an event", DELTA("part") "data: {\"choices\":[{\"delta\":{\"con", CR_EPARSE,
         "cut short"},
        {"invalid JSON in an event", DELTA("a") "data: {oops}\n\n" DELTA("b"), CR_EPARSE,
         "invalid JSON"},
        {"an event that is not an object", "data: [1, 2]\n\n", CR_EPARSE, "not an object"},
        {"an error object", DELTA("a") "data: {\"error\":{\"message\":\"overloaded\"}}\n\n",
         CR_EHTTP, "overloaded"},
        {"an error event", "event: error\ndata: boom\n\n", CR_EHTTP, "boom"},
        {"a refusal",
         "data: {\"choices\":[{\"delta\":{\"refusal\":\"I can't\"}}]}\n\n" FINISH(
             "stop") "data: [DONE]\n\n",
         CR_EHTTP, "refused"},
        {"a content filter", DELTA("x") FINISH("content_filter") "data: [DONE]\n\n", CR_EHTTP,
         "content filter"},
        {"an empty answer", DELTA(" \\n ") FINISH("stop") "data: [DONE]\n\n", CR_EHTTP,
         "empty answer"},
        {"nothing", "", CR_EPARSE, "empty body"},
        {"only blank lines", "\n\n  \r\n", CR_EPARSE, "empty body"},
        {"neither events nor JSON", "<html>502 Bad Gateway</html>", CR_EPARSE, "neither"},
        {"invalid JSON body", "{\"choices\": [{\"message\": ", CR_EPARSE, "invalid JSON"},
        {"JSON body without choices", "{\"object\": \"chat.completion\"}", CR_EPARSE, "no choices"},
        {"JSON body with an error", "{\"error\": {\"message\": \"bad model\"}}", CR_EHTTP,
         "bad model"},
        {"JSON refusal", "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"no\"}}]}",
         CR_EHTTP, "refused"},
        {"JSON null content", "{\"choices\":[{\"message\":{\"content\":null}}]}", CR_EHTTP,
         "empty answer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t step = 0; step < 3; step++) {
            int before = test_state_.failed_checks;
            char msg[512] = "";
            CHECK_INT(sse_run(bad[i].wire, step, NULL, NULL, msg, sizeof msg), bad[i].rc);
            CHECK(strstr(msg, bad[i].msg) != NULL);
            CHECK(!strchr(msg, '\n'));
            if (test_state_.failed_checks != before)
                fprintf(stderr, "  in stream '%s' (message: %s)\n", bad[i].name, msg);
        }
    }
}

/* ---------------------------------------------------------------- end to end */

typedef struct Case {
    const char *name;
    const char
        *content; /* the answer; {root} and {outside} are filled in here, {ctxK...} by the fake */
    const char *extra;   /* more members of the one action, e.g. "\"stream\": false" */
    const char *actions; /* or the whole chat script */
    RtvMode mode;        /* 0: auto */
    const char *url;     /* NULL: the fake */
    long timeout_ms;     /* 0: 3000 */
    int retries;         /* as llm_max_retries */
    CrErr rc;
    int extractive;       /* no LLM configured: extractive without a fallback */
    const char *reason;   /* in fallback_reason (or in e->msg when rc fails); NULL: no fallback */
    const char *cites[6]; /* "path:a-b source"; "ALL auto": each packed item */
    const char *rejected[6]; /* "text => reason" */
    int requests;            /* chat requests the fake must see; 0: unchecked */
} Case;

/* Fills {root}, {outside} and (with a) {ctxK}, {ctxK.path}, {ctxK.start}, {ctxK.end}. */
static void expand(StrBuf *out, const char *t, const RtvAnswer *a)
{
    while (*t) {
        unsigned k = 0;
        int used = 0;
        char part[8] = "";
        if (!strncmp(t, "{root}", 6)) {
            sb_adds(out, idx_root(st));
            t += 6;
            continue;
        }
        if (!strncmp(t, "{outside}", 9)) {
            sb_adds(out, outside);
            t += 9;
            continue;
        }
        if (a && !strncmp(t, "{ctx", 4) &&
            ((sscanf(t, "{ctx%u}%n", &k, &used) == 1 && used > 0) ||
             (part[0] = '\0', sscanf(t, "{ctx%u.%7[a-z]}%n", &k, part, &used) == 2 && used > 0)) &&
            k < a->n_items) {
            const RtvItem *it = &a->items[k];
            if (!part[0])
                sb_addf(out, "%s:%u-%u", it->chunk.path, it->start_line, it->end_line);
            else if (!strcmp(part, "path"))
                sb_adds(out, it->chunk.path);
            else if (!strcmp(part, "start"))
                sb_addf(out, "%u", it->start_line);
            else
                sb_addf(out, "%u", it->end_line);
            t += used;
            continue;
        }
        sb_addc(out, *t++);
    }
}

static int in_list(const char *s, char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, v[i])) return 1;
    return 0;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

static int chat_requests(json_t **out_last)
{
    json_t *log = fake_log(&fake);
    int n = 0;
    for (size_t i = 0; log && i < json_array_size(log); i++) {
        const char *ep = NULL;
        json_t *r = json_array_get(log, i);
        if (!json_unpack(r, "{s:s}", "endpoint", &ep) && !strcmp(ep, "chat/completions")) {
            n++;
            if (out_last) {
                json_decref(*out_last);
                *out_last = json_incref(r);
            }
        }
    }
    json_decref(log);
    return n;
}

static void run_case(const Case *c)
{
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    StrBuf sb, actions;
    char *want_c[16], *want_r[16], *got_c[64], *got_r[64];
    size_t n_wc = 0, n_wr = 0, n_gc = 0, n_gr = 0;
    int before = test_state_.failed_checks;

    sb_init(&sb);
    sb_init(&actions);
    if (c->content) {
        expand(&sb, c->content, NULL);
        json_t *s = json_stringn(sb.buf, sb.len);
        char *q = json_dumps(s, JSON_ENCODE_ANY);
        sb_addf(&actions, "[{\"content\": %s%s%s}]", q, c->extra ? ", " : "",
                c->extra ? c->extra : "");
        free(q);
        json_decref(s);
    } else {
        expand(&actions, c->actions ? c->actions : "[]", NULL);
    }
    fake_script_chat(&fake, actions.buf);

    rtv_request_init(&req);
    req.question = QUESTION;
    req.mode = c->mode;
    req.llm_url = c->url ? c->url : fake.base;
    req.llm_model = "test-model";
    req.llm_timeout_ms = c->timeout_ms ? c->timeout_ms : 3000;
    req.llm_max_retries = c->retries;
    CrErr rc = rtv_ask(st, &req, &a, &e);
    CHECK_INT(rc, c->rc);
    if (rc != CR_OK) {
        CHECK(c->reason && strstr(e.msg, c->reason) != NULL);
        CHECK(a.answer == NULL && a.n_citations == 0);
        goto out;
    }
    CHECK(a.n_items >= 3);
    CHECK_INT(a.mode, c->reason || c->extractive ? RTV_MODE_EXTRACTIVE : RTV_MODE_LLM);
    if (c->reason) {
        CHECK(a.fallback_reason && strstr(a.fallback_reason, c->reason));
        CHECK(!strncmp(a.answer, "**No LLM answer:** ", 19));
        CHECK(strstr(a.answer, "This is the extractive answer instead.") != NULL);
    } else {
        CHECK(a.fallback_reason == NULL);
    }
    if (!c->url || c->url[0]) CHECK(a.timings.llm_ms > 0);

    /* exact citations and rejections, in any order */
    for (size_t i = 0; i < 6 && c->cites[i]; i++) {
        if (!strcmp(c->cites[i], "ALL auto")) {
            for (size_t k = 0; k < a.n_items && n_wc < 16; k++) {
                sb_reset(&sb);
                sb_addf(&sb, "%s:%u-%u auto", a.items[k].chunk.path, a.items[k].start_line,
                        a.items[k].end_line);
                want_c[n_wc++] = xstrdup(sb.buf);
            }
            continue;
        }
        sb_reset(&sb);
        expand(&sb, c->cites[i], &a);
        want_c[n_wc++] = xstrdup(sb.buf);
    }
    for (size_t i = 0; i < 6 && c->rejected[i]; i++) {
        sb_reset(&sb);
        expand(&sb, c->rejected[i], &a);
        want_r[n_wr++] = xstrdup(sb.buf);
    }
    for (size_t i = 0; i < a.n_citations && n_gc < 64; i++) {
        const VfyCitation *x = &a.citations[i];
        sb_reset(&sb);
        sb_addf(&sb, "%s:%u-%u %s", x->path, x->start_line, x->end_line, x->source);
        got_c[n_gc++] = xstrdup(sb.buf);
        CHECK_INT(x->verified, 1);
    }
    for (size_t i = 0; i < a.n_rejected && n_gr < 64; i++) {
        sb_reset(&sb);
        sb_addf(&sb, "%s => %s", a.rejected[i].text, a.rejected[i].reason);
        got_r[n_gr++] = xstrdup(sb.buf);
    }
    CHECK_INT(n_gc, n_wc);
    CHECK_INT(n_gr, n_wr);
    for (size_t i = 0; i < n_wc; i++)
        if (!in_list(want_c[i], got_c, n_gc)) {
            CHECK(!"expected citation missing");
            fprintf(stderr, "  missing citation %s\n", want_c[i]);
        }
    for (size_t i = 0; i < n_gc; i++)
        if (!in_list(got_c[i], want_c, n_wc)) {
            CHECK(!"unexpected citation");
            fprintf(stderr, "  unexpected citation %s\n", got_c[i]);
        }
    for (size_t i = 0; i < n_wr; i++)
        if (!in_list(want_r[i], got_r, n_gr)) {
            CHECK(!"expected rejection missing");
            fprintf(stderr, "  missing rejection %s\n", want_r[i]);
        }
    for (size_t i = 0; i < n_gr; i++)
        if (!in_list(got_r[i], want_r, n_wr)) {
            CHECK(!"unexpected rejection");
            fprintf(stderr, "  unexpected rejection %s\n", got_r[i]);
        }

    /* The figures: the expected model citations are the valid ones written,
     * the expected rejections the fabricated ones. */
    for (size_t i = 0; i < n_wc; i++) {
        if (!strstr(want_c[i], " model")) continue;
        n_valid++;
        if (!in_list(want_c[i], got_c, n_gc)) valid_rejected++;
    }
    n_fabricated += (int)n_wr;
    for (size_t i = 0; i < n_gc; i++)
        if (strstr(got_c[i], " model") && !in_list(got_c[i], want_c, n_wc)) fabricated_accepted++;

    /* rejected citations are gone from the text; kept ones are there, canonical */
    for (size_t i = 0; i < a.n_rejected; i++)
        CHECK(strstr(a.answer, a.rejected[i].text) == NULL);
    for (size_t i = 0; i < a.n_citations; i++) {
        const VfyCitation *x = &a.citations[i];
        if (strcmp(x->source, "model")) continue;
        sb_reset(&sb);
        if (x->start_line == x->end_line)
            sb_addf(&sb, "%s:%u", x->path, x->start_line);
        else
            sb_addf(&sb, "%s:%u-%u", x->path, x->start_line, x->end_line);
        CHECK(strstr(a.answer, sb.buf) != NULL);
    }
out:
    if (c->requests) CHECK_INT(chat_requests(NULL), c->requests);
    if (test_state_.failed_checks != before) {
        fprintf(stderr, "  in case '%s' (rc %d: %s)\n", c->name, (int)rc, e.msg);
        if (rc == CR_OK) fprintf(stderr, "  answer: %s\n", a.answer);
        for (size_t i = 0; i < n_gc; i++)
            fprintf(stderr, "  got citation %s\n", got_c[i]);
        for (size_t i = 0; i < n_gr; i++)
            fprintf(stderr, "  got rejection %s\n", got_r[i]);
    }
    free_list(want_c, n_wc);
    free_list(want_r, n_wr);
    free_list(got_c, n_gc);
    free_list(got_r, n_gr);
    rtv_answer_release(&a);
    sb_release(&sb);
    sb_release(&actions);
}

static const Case cases[] = {
    {.name = "correct citations",
     .content = "Withdrawing more than the balance raises InsufficientFunds [{ctx0}], which "
                "keeps both amounts [{ctx1}]. The check is one line [{ctx0.path}:{ctx0.start}]; "
                "the same spans written otherwise: [./{ctx0}], [{root}/{ctx1}].",
     .cites = {"{ctx0} model", "{ctx1} model", "{ctx0.path}:{ctx0.start}-{ctx0.start} model"}},
    {.name = "correct citations, the server ignores stream",
     .content = "Withdraw raises InsufficientFunds [{ctx0}; {ctx1}].",
     .extra = "\"stream\": false",
     .cites = {"{ctx0} model", "{ctx1} model"}},
    {.name = "correct citations, unusual event framing",
     .content = "Withdraw raises InsufficientFunds [{ctx0}], a BankError [{ctx2}].",
     .extra = "\"chunk\": 1, \"comments\": true, \"multiline\": true, \"crlf\": true, "
              "\"no_done\": true",
     .cites = {"{ctx0} model", "{ctx2} model"}},
    {.name = "correct citations in other notations",
     .content = "Withdraw refuses in `{ctx0}`, raising {ctx1.path}#L{ctx1.start}-L{ctx1.end}, "
                "a [bank error]({ctx2.path}#L{ctx2.start}-L{ctx2.end}); the comparison is in "
                "bank/accounts.py, lines 22-23.",
     .cites = {"{ctx0} model", "{ctx1} model", "{ctx2} model", "bank/accounts.py:22-23 model"}},
    {.name = "a fabricated file",
     .content = "Overdrafts are logged in the ledger [bank/ledger.py:1-10] and refused [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/ledger.py:1-10] => file-not-found"}},
    {.name = "lines past the end of a file",
     .content = "See [bank/accounts.py:900-910] and [{ctx0.path}:{ctx0.start}-99].",
     .cites = {"{ctx0} auto"},
     .rejected = {"[bank/accounts.py:900-910] => out-of-range",
                  "[{ctx0.path}:{ctx0.start}-99] => out-of-range"}},
    {.name = "real lines not in the context",
     .content = "Deposits are checked too [bank/accounts.py:13-18] and statements printed "
                "[bank/report.py:4-9]; withdraw refuses [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/accounts.py:13-18] => not-in-context",
                  "[bank/report.py:4-9] => not-in-context"}},
    {.name = "paths outside the workspace",
     .content = "It reads [../../etc/passwd:1-3], [/etc/passwd:1-3] and [{outside}/secret.py:1-2]; "
                "InsufficientFunds is raised [{ctx1}].",
     .cites = {"{ctx1} model"},
     .rejected = {"[../../etc/passwd:1-3] => outside-workspace",
                  "[/etc/passwd:1-3] => outside-workspace",
                  "[{outside}/secret.py:1-2] => outside-workspace"}},
    {.name = "a symlink inside the workspace pointing outside",
     .content = "The token is in [bank/secret.py:1-2] and [vendor/secret.py:1-2]; withdraw "
                "refuses [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/secret.py:1-2] => outside-workspace",
                  "[vendor/secret.py:1-2] => outside-workspace"}},
    {.name = "malformed citations",
     .content = "Withdraw refuses [bank/accounts.py:21-x] and [bank/accounts.py:25-20]; see "
                "[{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/accounts.py:21-x] => malformed", "[bank/accounts.py:25-20] => malformed"}},
    {.name = "no citations",
     .content = "Withdraw compares the amount with the balance and raises when it is larger.",
     .cites = {"{ctx0} auto"}},
    {.name = "HTTP 500, then success",
     .actions = "[{\"status\": 500}, {\"content\": \"Withdraw refuses overdrafts [{ctx0}].\"}]",
     .cites = {"{ctx0} model"},
     .requests = 2},
    {.name = "HTTP 503 on every attempt",
     .actions = "[{\"status\": 503, \"times\": 5}]",
     .reason = "HTTP 503",
     .cites = {"ALL auto"},
     .requests = 3},
    {.name = "a timeout",
     .actions = "[{\"delay_ms\": 60000, \"content\": \"late [{ctx0}]\"}]",
     .timeout_ms = 300,
     .reason = "timed out",
     .cites = {"ALL auto"},
     .requests = 1},
    {.name = "a timeout, mode llm",
     .actions = "[{\"delay_ms\": 60000, \"content\": \"late [{ctx0}]\"}]",
     .mode = RTV_MODE_LLM,
     .timeout_ms = 300,
     .rc = CR_ETIMEOUT,
     .reason = "timed out"},
    {.name = "invalid JSON",
     .actions = "[{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": \"}]",
     .reason = "invalid JSON",
     .cites = {"ALL auto"}},
    {.name = "invalid JSON, mode llm",
     .actions = "[{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": \"}]",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "invalid JSON"},
    {.name = "invalid JSON in an event",
     .actions = "[{\"raw\": \"data: {\\\"choices\\\": oops}\\n\\n\"}]",
     .reason = "invalid JSON",
     .cites = {"ALL auto"}},
    {.name = "neither events nor JSON",
     .actions = "[{\"raw\": \"<html>502 Bad Gateway</html>\"}]",
     .reason = "neither",
     .cites = {"ALL auto"}},
    {.name = "a truncated stream",
     .content = "Withdraw refuses an overdraft by raising InsufficientFunds [{ctx0}].",
     .extra = "\"truncate\": true",
     .reason = "cut short",
     .cites = {"ALL auto"}},
    {.name = "a truncated stream, mode llm",
     .content = "Withdraw refuses an overdraft by raising InsufficientFunds [{ctx0}].",
     .extra = "\"truncate\": true",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "cut short"},
    {.name = "a 10 MB body",
     .actions = "[{\"big\": 10485760}]",
     .reason = "over the size cap",
     .cites = {"ALL auto"}},
    {.name = "a 10 MB body, chunked",
     .actions = "[{\"big\": 10485760, \"chunked\": true}]",
     .reason = "over the size cap",
     .cites = {"ALL auto"}},
    {.name = "a 10 MB body, mode llm",
     .actions = "[{\"big\": 10485760}]",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "over the size cap"},
    {.name = "a refusal",
     .content = "",
     .extra = "\"refusal\": \"I cannot help with that.\"",
     .reason = "refused",
     .cites = {"ALL auto"}},
    {.name = "a refusal, not streamed",
     .content = "",
     .extra = "\"refusal\": \"I cannot help with that.\", \"stream\": false",
     .reason = "refused",
     .cites = {"ALL auto"}},
    {.name = "an empty answer", .content = "", .reason = "empty answer", .cites = {"ALL auto"}},
    {.name = "a content filter",
     .content = "Withdraw [{ctx0}]",
     .extra = "\"finish_reason\": \"content_filter\"",
     .reason = "content filter",
     .cites = {"ALL auto"}},
    {.name = "an error event in the stream",
     .content = "Withdraw refuses [{ctx0}] because",
     .extra = "\"error_event\": \"model overloaded\"",
     .reason = "model overloaded",
     .cites = {"ALL auto"}},
    {.name = "the endpoint is down",
     .url = "http://127.0.0.1:1",
     .retries = -1,
     .reason = "unreachable",
     .cites = {"ALL auto"}},
    {.name = "the endpoint is down, mode llm",
     .url = "http://127.0.0.1:1",
     .retries = -1,
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "unreachable"},
    {.name = "no endpoint, mode llm",
     .url = "",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "no LLM endpoint configured (llm.url)"},
    {.name = "no endpoint, mode auto: extractive, no fallback",
     .url = "",
     .extractive = 1,
     .cites = {"ALL auto"}},
};

static void test_context_is_pinned(void)
{
    /* the cases' literal line numbers rely on this context */
    static const char *const want[] = {"bank/accounts.py:20-25 Account.withdraw",
                                       "bank/errors.py:8-9 InsufficientFunds",
                                       "bank/errors.py:4-5 BankError"};
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = QUESTION;
    req.mode = RTV_MODE_EXTRACTIVE;
    CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
    CHECK_INT(a.n_items, 3);
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < a.n_items && i < 3; i++) {
        sb_reset(&sb);
        sb_addf(&sb, "%s:%u-%u %s", a.items[i].chunk.path, a.items[i].start_line,
                a.items[i].end_line, rtv_item_symbol(&a.items[i]));
        CHECK_STR(sb.buf, want[i]);
    }
    CHECK(a.fallback_reason == NULL);
    CHECK_INT(a.mode, RTV_MODE_EXTRACTIVE);
    sb_release(&sb);
    rtv_answer_release(&a);
}

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    printf("LLM citation cases: %zu; valid citations written %d, fabricated %d\n",
           sizeof cases / sizeof cases[0], n_valid, n_fabricated);
    printf("fabricated citations accepted: %d\n", fabricated_accepted);
    printf("valid citations rejected: %d\n", valid_rejected);
    CHECK_INT(fabricated_accepted, 0);
    CHECK_INT(valid_rejected, 0);
}

/* What goes over the wire: the model, a low temperature, streaming, the
 * system instructions and exactly the packed blocks, no other file content;
 * the key only in the Authorization header, and only when one is set. */
static void test_request(void)
{
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    json_t *last = NULL;

    fake_script_chat(&fake, "[{\"content\": \"Withdraw refuses [{ctx0}].\"}]");
    rtv_request_init(&req);
    req.question = QUESTION;
    req.llm_url = fake.base;
    req.llm_model = "test-model";
    req.llm_api_key_env = "CODERAG_TEST_UNSET_KEY";
    unsetenv("CODERAG_TEST_UNSET_KEY");
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
    last = NULL;

    /* with a key, logging everything to a file */
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
    rest = NULL;
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

    /* not streamed when asked so; "/v1" already in the URL is not doubled */
    char url[96];
    snprintf(url, sizeof url, "%s/v1/", fake.base);
    req.llm_url = url;
    req.llm_no_stream = 1;
    fake_script_chat(&fake, "[{\"content\": \"Withdraw refuses [{ctx0}].\"}]");
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_LLM);
    CHECK_INT(chat_requests(&last), 1);
    stream = 1;
    CHECK_INT(json_unpack(last, "{s:s, s:{s:b}}", "path", &path, "json", "stream", &stream), 0);
    CHECK_STR(path, "/v1/chat/completions");
    CHECK_INT(stream, 0);
    json_decref(last);
    rtv_answer_release(&a);
    sb_release(&want);
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

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    /* the fallbacks warn on stderr; the test checks them itself */
    setenv("CODERAG_LOG", "error", 0);
    RUN(test_prompt);
    RUN(test_sse_streams);

    if (fake_start(&fake) != 0) {
        fprintf(stderr, "cannot start the fake server\n");
        fake_stop(&fake);
        return 1;
    }
    fake_script(&fake, 8, "[]");
    snprintf(root, sizeof root, "/tmp/coderag-test-llm-XXXXXX");
    snprintf(outside, sizeof outside, "/tmp/coderag-test-llm-out-XXXXXX");
    if (!mkdtemp(root) || !mkdtemp(outside)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    sh("cp -R '%s/answers/.' '%s'", FIXTURE_DIR, root);
    char path[256], target[256];
    snprintf(path, sizeof path, "%s/secret.py", outside);
    write_text(path, "TOKEN = 'outside-the-workspace'\n\n\ndef leak():\n    return TOKEN\n");
    snprintf(path, sizeof path, "%s/bank/secret.py", root);
    snprintf(target, sizeof target, "%s/secret.py", outside);
    CHECK(symlink(target, path) == 0);
    snprintf(path, sizeof path, "%s/vendor", root);
    CHECK(symlink(outside, path) == 0);

    /* the LLM cases pin the lexical context; the dense leg is tested elsewhere */
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1, .embed_provider = "none"};
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (!rc) rc = idx_update(st, NULL, NULL, NULL, &e);
    if (rc) {
        fprintf(stderr, "indexing the fixture: %s\n", e.msg);
        CHECK_INT(rc, CR_OK);
    } else {
        RUN(test_context_is_pinned);
        RUN(test_cases);
        RUN(test_request);
        RUN(test_progress_and_cancel);
    }
    idx_close(st);
    sh("rm -rf '%s' '%s'", root, index_dir);
    sh("rm -rf '%s' '%s'", outside, "/nonexistent");
    fake_stop(&fake);
    return test_summary();
}
