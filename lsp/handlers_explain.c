#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LLM explanations, only when asked for: the coderag.explain command (an
 * ask in mode llm about the definition under the cursor, streamed and
 * cancellable like any ask, a newer one superseding it), the code action
 * that offers it, and the cache hovers show explanations from. A hover
 * never calls the LLM. */

#define EXPLAIN_BUDGET 6000 /* an explanation is a glance, not a report */

static int llm_configured(const Workspace *ws)
{
    return ws && ws->cfg.llm_url && ws->cfg.llm_url[0];
}

static const char *display_name(const IdxChunk *c)
{
    return c->symbol[0] ? c->symbol : c->module;
}

/* The cache key of a definition's explanation: its place and content. */
static void explain_key(const IdxChunk *d, char key[17])
{
    StrBuf k;
    sb_init(&k);
    sb_addf(&k, "%s\n%s\n%s", d->path, d->symbol, d->hash);
    idx_hash_text(k.buf, k.len, key);
    sb_release(&k);
}

LspStatus lsp_on_code_action(void *ctx, json_t *params, LspCall *call, json_t **out, LspError *err)
{
    Server *s = ctx;
    const char *uri;
    int line = 0, character = 0, c0 = 0, c1 = 0;
    json_error_t je;
    if (!params ||
        json_unpack_ex(params, &je, 0, "{s:{s:s}, s:{s:{s:i, s:i}}}", "textDocument", "uri", &uri,
                       "range", "start", "line", &line, "character", &character) != 0)
        return lsp_error(err, LSP_INVALID_PARAMS, "textDocument/codeAction: %s",
                         params ? je.text : "no params");
    *out = json_array();
    char *path = NULL, *rel = NULL;
    path_from_uri(uri, &path);
    Workspace *ws = path ? lsp_ws_for_path(s, path, &rel) : NULL;
    free(path);
    char *word = llm_configured(ws) && line >= 0 && character >= 0
                     ? lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1)
                     : NULL;
    free(rel);
    if (!word) return LSP_DONE;
    char title[300];
    snprintf(title, sizeof title, "Explain `%.200s` with the LLM (CodeRAG)", word);
    json_t *arg = json_pack("{s:{s:s}, s:{s:i, s:i}}", "textDocument", "uri", uri, "position",
                            "line", line, "character", character);
    json_t *cmd = json_pack("{s:o, s:s, s:[o]}", "title", lsp_json_string(title), "command",
                            "coderag.explain", "arguments", arg);
    json_array_append_new(*out, json_pack("{s:o, s:s, s:o}", "title", lsp_json_string(title),
                                          "kind", "", "command", cmd));
    free(word);
    return LSP_DONE;
}

LspStatus lsp_explain_command(Server *s, json_t *args, LspCall *call, LspError *err)
{
    const char *uri;
    int line = 0, character = 0, c0 = 0, c1 = 0;
    json_t *token = NULL, *partial = NULL;
    json_error_t je;
    if (!json_is_object(args) ||
        json_unpack_ex(args, &je, 0, "{s:{s:s}, s:{s:i, s:i}, s?o, s?o}", "textDocument", "uri",
                       &uri, "position", "line", &line, "character", &character, "workDoneToken",
                       &token, "partialResultToken", &partial) != 0)
        return lsp_error(err, LSP_INVALID_PARAMS,
                         "coderag.explain takes one argument: {textDocument, position}");
    if (line < 0 || character < 0)
        return lsp_error(err, LSP_INVALID_PARAMS, "coderag.explain: negative position");
    if ((token && !json_is_string(token) && !json_is_integer(token)) ||
        (partial && !json_is_string(partial) && !json_is_integer(partial)))
        return lsp_error(err, LSP_INVALID_PARAMS, "tokens must be integers or strings");
    char *path = NULL, *rel = NULL;
    path_from_uri(uri, &path);
    Workspace *ws = path ? lsp_ws_for_path(s, path, &rel) : NULL;
    free(path);
    if (!ws || !rel) {
        free(rel);
        return lsp_error(err, LSP_INVALID_PARAMS,
                         "coderag.explain: the document is not in a "
                         "workspace folder");
    }
    if (!llm_configured(ws)) {
        free(rel);
        return lsp_error(err, LSP_REQUEST_FAILED, "no LLM endpoint configured (llm.url)");
    }
    char *word = lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1);
    if (!word) {
        free(rel);
        return lsp_error(err, LSP_REQUEST_FAILED, "no identifier under the cursor");
    }
    AskJob *j = lsp_ask_job_new(ws, call);
    j->explain_word = word;
    j->explain_rel = rel;
    j->mode = xstrdup("llm");
    j->budget = EXPLAIN_BUDGET;
    j->uri = xstrdup(uri);
    j->line = line;
    j->character = character;
    j->wd_token = token ? json_deep_copy(token) : NULL;
    j->partial_token = partial ? json_deep_copy(partial) : NULL;
    pthread_mutex_lock(&s->mu);
    j->explain_gen = ++s->explain_gen; /* the previous explanation is superseded */
    if (!j->explain_gen) j->explain_gen = ++s->explain_gen;
    pthread_mutex_unlock(&s->mu);
    lsp_ask_queue(s, j);
    return LSP_LATER;
}

int lsp_explain_resolve(Server *s, AskJob *j, IdxStore *st, LspError *err)
{
    int64_t *ids = NULL;
    size_t n = 0;
    IdxChunk d;
    int found = 0;
    if (idx_lookup_symbol(st, j->explain_word, &ids, &n, NULL) != CR_OK) n = 0;
    /* a definition in this file first, then the others in index order */
    for (int pass = 0; pass < 2 && !found; pass++)
        for (size_t i = 0; i < n && !found; i++) {
            if (idx_chunk_get(st, ids[i], &d, NULL) != CR_OK) continue;
            int here = !strcmp(d.path, j->explain_rel);
            if ((pass == 0) == here && d.window == 0)
                found = 1;
            else
                idx_chunk_release(&d);
        }
    free(ids);
    if (!found) {
        lsp_error(err, LSP_REQUEST_FAILED, "no indexed definition of `%s`", j->explain_word);
        return 0;
    }
    StrBuf q;
    sb_init(&q);
    sb_addf(&q, "What does %s `%s` in %s do, and how is it used?", idx_kind_name(d.kind),
            display_name(&d), d.path);
    free(j->question);
    j->question = sb_detach(&q, NULL);
    sb_release(&q);
    explain_key(&d, j->explain_key);
    j->explain_symbol = xstrdup(display_name(&d));
    idx_chunk_release(&d);
    return 1;
}

void lsp_explain_store(Workspace *ws, const char *key, const char *markdown)
{
    for (size_t i = 0; i < HOVER_CACHE; i++)
        if (ws->explained[i].markdown && !strcmp(ws->explained[i].key, key)) {
            free(ws->explained[i].markdown);
            ws->explained[i].markdown = xstrdup(markdown);
            return;
        }
    size_t slot = ws->explained_next++ % HOVER_CACHE;
    free(ws->explained[slot].markdown);
    memcpy(ws->explained[slot].key, key, sizeof ws->explained[slot].key);
    ws->explained[slot].markdown = xstrdup(markdown);
}

const char *lsp_explain_cached(Workspace *ws, const IdxChunk *d)
{
    char key[17];
    explain_key(d, key);
    for (size_t i = 0; i < HOVER_CACHE; i++)
        if (ws->explained[i].markdown && !strcmp(ws->explained[i].key, key))
            return ws->explained[i].markdown;
    return NULL;
}
