/* LLM answers, the parts without a server: the prompt of numbered context
 * blocks and the event-stream (SSE) reader, fed whole and byte by byte. */
#include "retrieve/rtv_int.h"
#include "test.h"

#include <jansson.h>
#include <stdlib.h>

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

/* Streams (and whole JSON bodies) that give an answer, fed whole and in
 * pieces of 1, 2 and 5 bytes. */
static void sse_good_streams(void)
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
}

/* Streams that fail, each with a one-line message that says why. */
static void sse_bad_streams(void)
{
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

static void test_sse_streams(void)
{
    sse_good_streams();
    sse_bad_streams();
}

int main(void)
{
    setenv("CODERAG_LOG", "error", 0);
    RUN(test_prompt);
    RUN(test_sse_streams);
    return test_summary();
}
