#include "rtv_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

const char rtv_prompt_system[] =
    "You answer questions about a code base. The user gives you numbered blocks of its code, "
    "each headed by a citation of the form [path:start-end] (file path and 1-based line range) "
    "and the name of the code it holds, then a question.\n"
    "- Answer briefly and precisely, in markdown, using only what the blocks show.\n"
    "- Cite every claim with a citation in square brackets, [path:start-end], copied from the "
    "header of the block that supports it; you may narrow the range to the lines that matter, "
    "inside that block.\n"
    "- Cite only the blocks shown. Never cite other files or lines, and never invent paths or "
    "line numbers.\n"
    "- If the blocks do not answer the question, say so plainly instead of guessing.";

/* A fence longer than any run of backticks in the text, at least three. */
static size_t fence_len(const char *s, size_t len)
{
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < len; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    return longest < 3 ? 3 : longest + 1;
}

static void add_fence(StrBuf *sb, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sb_addc(sb, '`');
}

void rtv_prompt_user(const RtvItem *items, size_t n, const char *question, StrBuf *out)
{
    sb_adds(out, "Code blocks:\n");
    for (size_t i = 0; i < n; i++) {
        const RtvItem *it = &items[i];
        const char *path = it->chunk.path;
        const char *text = it->text ? it->text : "";
        size_t len = strlen(text);
        /* one header line: symbols and paths come from files, so no newline may pass */
        sb_addf(out, "\n" RTV_BLOCK_HEADER " %zu [", i + 1);
        for (const char *p = path; *p; p++)
            sb_addc(out, *p == '\n' || *p == '\r' ? ' ' : *p);
        sb_addf(out, ":%u-%u]", it->start_line, it->end_line);
        const char *sym = rtv_item_symbol(it);
        if (sym[0]) {
            sb_addc(out, ' ');
            for (const char *p = sym; *p; p++)
                sb_addc(out, *p == '\n' || *p == '\r' ? ' ' : *p);
        }
        sb_addc(out, '\n');
        size_t f = fence_len(text, len);
        add_fence(out, f);
        sb_adds(out, idx_fence_tag(path));
        sb_addc(out, '\n');
        sb_add(out, text, len);
        if (len && text[len - 1] != '\n') sb_addc(out, '\n');
        add_fence(out, f);
        sb_addc(out, '\n');
    }
    if (n == 0) sb_adds(out, "\n(none)\n");
    sb_adds(out, "\nQuestion: ");
    sb_adds(out, question);
    sb_addc(out, '\n');
}

/* A turn's text cut to max bytes on a UTF-8 boundary. */
static json_t *capped(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n > max) {
        n = max;
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    return json_stringn(s ? s : "", n);
}

char *rtv_chat_body_turns(const char *model, const char *system, const RtvTurn *turns, size_t n,
                          const char *user, int stream)
{
    json_t *msgs = json_pack("[{s:s, s:s}]", "role", "system", "content", system);
    size_t first = n > RTV_MAX_TURNS ? n - RTV_MAX_TURNS : 0;
    for (size_t i = first; msgs && turns && i < n; i++) {
        json_t *q = capped(turns[i].question, RTV_TURN_QUESTION_MAX);
        json_t *a = capped(turns[i].answer, RTV_TURN_ANSWER_MAX);
        if (!q || !a) { /* not UTF-8 */
            json_decref(q);
            json_decref(a);
            json_decref(msgs);
            return NULL;
        }
        json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", "user", "content", q));
        json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", "assistant", "content", a));
    }
    json_t *last = msgs ? json_pack("{s:s, s:s}", "role", "user", "content", user) : NULL;
    if (!last) {
        json_decref(msgs);
        return NULL;
    }
    json_array_append_new(msgs, last);
    json_t *body = json_pack("{s:o, s:f, s:b}", "messages", msgs, "temperature",
                             RTV_LLM_TEMPERATURE, "stream", stream);
    if (body && model && model[0]) json_object_set_new(body, "model", json_string(model));
    /* NULL only for invalid UTF-8, which the index never hands out */
    char *s = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(body);
    return s;
}

char *rtv_chat_body(const char *model, const char *system, const char *user, int stream)
{
    return rtv_chat_body_turns(model, system, NULL, 0, user, stream);
}
