#include "rtv_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest piece of a server's text quoted in a message. */
#define RTV_EXCERPT 160

/* Overwrites every occurrence of secret in s (NUL-terminated) with '*'. */
static void mask_secret(char *s, const char *secret)
{
    if (s && secret) text_mask(s, strlen(s), secret, strlen(secret));
}

static void sse_fail(RtvSse *s, CrErr code, const char *what, const char *text, size_t len)
{
    if (s->err) return;
    StrBuf m;
    sb_init(&m);
    sb_adds(&m, what);
    if (text && len) {
        /* masked before it is cut, so that no part of a key shows */
        char *t = xstrndup(text, len);
        mask_secret(t, s->secret);
        sb_adds(&m, ": ");
        sb_add_excerpt(&m, t, strlen(t), RTV_EXCERPT);
        free(t);
    }
    s->err = code;
    snprintf(s->msg, sizeof s->msg, "%s", m.buf);
    sb_release(&m);
}

void rtv_sse_init(RtvSse *s, RtvProgressFn progress, void *ud)
{
    memset(s, 0, sizeof *s);
    sb_init(&s->line);
    sb_init(&s->data);
    sb_init(&s->content);
    s->progress = progress;
    s->progress_ud = ud;
}

void rtv_sse_release(RtvSse *s)
{
    if (!s) return;
    sb_release(&s->line);
    sb_release(&s->data);
    sb_release(&s->content);
    free(s->refusal);
    s->refusal = NULL;
}

/* Appends a JSON string's bytes without its U+0000s: the answer is text
 * every door passes on as a C string (a model that writes "\u0000" made
 * `ask --mode llm` fail whole). The bodies are parsed with JSON_ALLOW_NUL. */
static void add_no_nul(StrBuf *sb, const char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        const char *z = memchr(t + i, '\0', n - i);
        size_t k = z ? (size_t)(z - (t + i)) : n - i;
        sb_add(sb, t + i, k);
        i += k + (z != NULL);
    }
}

/* Appends a content value: a string, or an array of {"type":"text","text":...} parts. */
static void add_content(RtvSse *s, json_t *c)
{
    size_t before = s->content.len;
    if (json_is_string(c)) {
        add_no_nul(&s->content, json_string_value(c), json_string_length(c));
    } else if (json_is_array(c)) {
        for (size_t i = 0; i < json_array_size(c); i++) {
            const char *t = NULL;
            if (!json_unpack(json_array_get(c, i), "{s:s}", "text", &t)) sb_adds(&s->content, t);
        }
    }
    if (s->content.len > before) {
        s->tokens++;
        if (s->progress) s->progress(s->progress_ud, s->tokens, s->content.len);
        if (s->on_text) s->on_text(s->text_ud, s->content.buf, s->content.len);
    }
}

static void add_refusal(RtvSse *s, json_t *r)
{
    if (!json_is_string(r) || json_string_length(r) == 0) return;
    StrBuf sb;
    sb_init(&sb);
    if (s->refusal) sb_adds(&sb, s->refusal);
    add_no_nul(&sb, json_string_value(r), json_string_length(r));
    free(s->refusal);
    s->refusal = sb_detach(&sb, NULL);
}

/* Takes what one chunk (delta) or a whole response (message) says. */
static void take_object(RtvSse *s, json_t *root, const char *raw, size_t raw_len)
{
    json_t *error = NULL, *choices = NULL;
    if (!json_is_object(root)) {
        sse_fail(s, CR_EPARSE, "the LLM endpoint sent JSON that is not an object", raw, raw_len);
        return;
    }
    json_unpack(root, "{s?o s?o}", "error", &error, "choices", &choices);
    if (error && !json_is_null(error)) {
        const char *msg = json_is_string(error) ? json_string_value(error) : NULL;
        if (!msg) json_unpack(error, "{s:s}", "message", &msg);
        sse_fail(s, CR_EHTTP, "the LLM endpoint reported an error", msg ? msg : raw,
                 msg ? strlen(msg) : raw_len);
        return;
    }
    if (s->mode == 2 && (!json_is_array(choices) || json_array_size(choices) == 0)) {
        sse_fail(s, CR_EPARSE, "the LLM response has no choices", raw, raw_len);
        return;
    }
    json_t *first = json_is_array(choices) ? json_array_get(choices, 0) : NULL;
    if (!first) return; /* e.g. a usage chunk */
    json_t *delta = NULL, *message = NULL, *finish = NULL;
    json_unpack(first, "{s?o s?o s?o}", "delta", &delta, "message", &message, "finish_reason",
                &finish);
    json_t *holder = delta ? delta : message;
    if (holder) {
        json_t *content = NULL, *refusal = NULL;
        json_unpack(holder, "{s?o s?o}", "content", &content, "refusal", &refusal);
        if (content) add_content(s, content);
        if (refusal) add_refusal(s, refusal);
    }
    if (json_is_string(finish)) {
        s->finished = 1;
        snprintf(s->finish_reason, sizeof s->finish_reason, "%s", json_string_value(finish));
    }
}

static void dispatch(RtvSse *s)
{
    if (!s->has_data || s->done) goto out;
    if (s->data.len == 6 && !memcmp(s->data.buf, "[DONE]", 6)) {
        s->done = 1;
        goto out;
    }
    if (s->error_event) {
        sse_fail(s, CR_EHTTP, "the LLM endpoint sent an error event", s->data.buf, s->data.len);
        goto out;
    }
    json_error_t je;
    json_t *root = json_loadb(s->data.buf, s->data.len, JSON_ALLOW_NUL, &je);
    if (!root)
        sse_fail(s, CR_EPARSE, "the LLM endpoint sent invalid JSON in its event stream",
                 s->data.buf, s->data.len);
    else
        take_object(s, root, s->data.buf, s->data.len);
    json_decref(root);
out:
    sb_reset(&s->data);
    s->has_data = 0;
    s->error_event = 0;
}

static void take_line(RtvSse *s, const char *l, size_t n)
{
    if (n == 0) {
        dispatch(s);
        return;
    }
    if (l[0] == ':') return; /* comment, e.g. a keep-alive */
    const char *colon = memchr(l, ':', n);
    size_t flen = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    if (colon && v < l + n && *v == ' ') v++;
    size_t vlen = (size_t)(l + n - v);
    if (flen == 4 && !memcmp(l, "data", 4)) {
        if (s->has_data) sb_addc(&s->data, '\n');
        sb_add(&s->data, v, vlen);
        s->has_data = s->saw_data = 1;
    } else if (flen == 5 && !memcmp(l, "event", 5)) {
        s->error_event = vlen == 5 && !memcmp(v, "error", 5);
    }
    /* "id", "retry" and unknown fields are ignored, as the SSE spec says */
}

int rtv_sse_feed(void *ud, const char *data, size_t len)
{
    RtvSse *s = ud;
    size_t i = 0;
    if (s->err) return -1;
    if (s->mode == 0) {
        /* leading blank lines and a byte-order mark say nothing */
        while (i < len && data[i] && strchr(" \t\r\n\xEF\xBB\xBF", data[i]))
            i++;
        if (i == len) return 0;
        s->mode = data[i] == '{' ? 2 : 1;
    }
    if (s->mode == 2) {
        sb_add(&s->data, data + i, len - i);
        return 0;
    }
    while (i < len && !s->err) {
        char c = data[i];
        if (c == '\n' && s->after_cr) {
            s->after_cr = 0;
            i++;
            continue;
        }
        s->after_cr = 0;
        if (c == '\r' || c == '\n') {
            s->after_cr = c == '\r';
            take_line(s, s->line.buf, s->line.len);
            sb_reset(&s->line);
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && data[j] != '\r' && data[j] != '\n')
            j++;
        sb_add(&s->line, data + i, j - i);
        i = j;
    }
    return s->err ? -1 : 0;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

CrErr rtv_sse_finish(RtvSse *s, ErrInfo *e)
{
    if (!s->err && s->mode == 0)
        sse_fail(s, CR_EPARSE, "the LLM endpoint sent an empty body", NULL, 0);
    if (!s->err && s->mode == 2) {
        json_error_t je;
        json_t *root = json_loadb(s->data.buf, s->data.len, JSON_ALLOW_NUL, &je);
        if (!root)
            sse_fail(s, CR_EPARSE, "the LLM endpoint sent invalid JSON", s->data.buf, s->data.len);
        else
            take_object(s, root, s->data.buf, s->data.len);
        json_decref(root);
        if (!s->err) s->done = 1;
    }
    if (!s->err && s->mode == 1) {
        /* the SSE spec drops an event the stream ends inside; a last
         * "data: [DONE]" without its blank line is still the end */
        if (s->line.len) take_line(s, s->line.buf, s->line.len);
        if (s->has_data && s->data.len == 6 && !memcmp(s->data.buf, "[DONE]", 6)) s->done = 1;
        if (!s->done && !s->finished && !s->saw_data)
            sse_fail(s, CR_EPARSE, "the LLM endpoint sent neither server-sent events nor JSON",
                     s->line.len ? s->line.buf : s->data.buf,
                     s->line.len ? s->line.len : s->data.len);
        else if (!s->done && !s->finished)
            sse_fail(s, CR_EPARSE, "the LLM's event stream was cut short (no [DONE])", NULL, 0);
    }
    if (!s->err && s->refusal)
        sse_fail(s, CR_EHTTP, "the model refused to answer", s->refusal, strlen(s->refusal));
    if (!s->err && !strcmp(s->finish_reason, "content_filter"))
        sse_fail(s, CR_EHTTP, "the endpoint's content filter withheld the answer", NULL, 0);
    if (!s->err && blank(s->content.buf, s->content.len))
        sse_fail(s, CR_EHTTP, "the LLM returned an empty answer", NULL, 0);
    if (s->err) return err_set(e, s->err, "%s", s->msg);
    return CR_OK;
}

CrErr rtv_llm_complete(const RtvRequest *req, const char *system, const char *user, char **out,
                       ErrInfo *e)
{
    CrErr rc = CR_OK;
    char *url = NULL, *body = NULL, *auth = NULL;
    const char *key = NULL;
    HttpResponse resp = {0};
    ErrInfo he = {0};
    StrBuf shown;
    RtvSse sse;

    *out = NULL;
    sb_init(&shown);
    rtv_sse_init(&sse, req->progress, req->progress_ud);
    sse.on_text = req->on_text;
    sse.text_ud = req->text_ud;
    if (!req->llm_url || !req->llm_url[0]) {
        rc = err_set(e, CR_EHTTP, "no LLM endpoint configured (llm.url)");
        goto out;
    }
    url = http_endpoint_url(req->llm_url, "chat/completions");
    http_redact_url(&shown, url);
    if ((rc = http_bearer_from_env(req->llm_api_key_env, "llm", &auth, &key, e))) goto out;
    sse.secret = key;
    int stream = !req->llm_no_stream;
    body = rtv_chat_body_turns(req->llm_model, system, req->history, req->n_history, user, stream);
    if (!body) {
        rc = err_set(e, CR_EINVAL, "the question or its context is not valid UTF-8");
        goto out;
    }
    const char *headers[3] = {"Content-Type: application/json",
                              stream ? "Accept: text/event-stream" : "Accept: application/json",
                              auth};
    HttpRequest hr = {
        .url = url,
        .headers = headers,
        .n_headers = auth ? 3 : 2,
        .body = body,
        .body_len = strlen(body),
        .connect_timeout_ms = req->llm_connect_timeout_ms > 0 ? req->llm_connect_timeout_ms
                                                              : RTV_LLM_CONNECT_TIMEOUT_MS,
        .timeout_ms = req->llm_timeout_ms > 0 ? req->llm_timeout_ms : RTV_LLM_TIMEOUT_MS,
        .max_response_bytes = RTV_LLM_MAX_RESPONSE,
        .max_retries = req->llm_max_retries > 0   ? req->llm_max_retries
                       : req->llm_max_retries < 0 ? 0
                                                  : RTV_LLM_RETRIES,
        .on_data = rtv_sse_feed,
        .data_ud = &sse,
        .cancel = req->cancel,
        .cancel_ud = req->cancel_ud,
    };
    double t0 = now_ms();
    rc = http_post(&hr, &resp, &he);
    if (sse.err) /* the parser stopped the transfer: its reason, not "canceled" */
        rc = err_set(e, sse.err, "%s: %s", shown.buf, sse.msg);
    else if (rc)
        err_set(e, rc, "%s", he.msg);
    else if ((rc = rtv_sse_finish(&sse, &he)))
        err_set(e, rc, "%s: %s", shown.buf, he.msg);
    if (rc) goto out;
    log_msg(LOG_INFO, "llm: %s answered in %.0f ms (%zu pieces, %zu bytes, %d attempt%s)",
            shown.buf, now_ms() - t0, sse.tokens, sse.content.len, resp.attempts,
            resp.attempts == 1 ? "" : "s");
    mask_secret(sse.content.buf, key);
    *out = sb_detach(&sse.content, NULL);

out:
    if (rc && e) mask_secret(e->msg, key);
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    http_response_release(&resp);
    rtv_sse_release(&sse);
    sb_release(&shown);
    free(url);
    free(body);
    return rc;
}
