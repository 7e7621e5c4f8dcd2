/* memory.c - what a workspace remembers between requests: the last
 * answer's citations (as anchors, for "where was that?") and the cache of
 * explanations shown on hover. Under the handlers that fill and read it. */
#include "folder.h"
#include "memory.h"
#include "server_int.h"

#include <stdlib.h>
#include <string.h>

void lsp_nav_remember_answer(LspFolder *ws, const char *question, const RtvAnswer *a)
{
    lsp_nav_forget_answer(ws);
    ws->last_question = xstrdup(question);
    ws->last_cites = xcalloc(a->n_citations + 1, sizeof *ws->last_cites);
    for (size_t i = 0; i < a->n_citations; i++) {
        VfyAnchor *an = &ws->last_cites[i];
        vfy_citation_anchor(&a->citations[i], an);
        an->path = xstrdup(an->path);
        an->symbol = xstrdup(an->symbol ? an->symbol : "");
    }
    ws->n_last_cites = a->n_citations;
}

void lsp_nav_forget_answer(LspFolder *ws)
{
    for (size_t i = 0; i < ws->n_last_cites; i++) {
        free((char *)ws->last_cites[i].path);
        free((char *)ws->last_cites[i].symbol);
    }
    free(ws->last_cites);
    free(ws->last_question);
    ws->last_cites = NULL;
    ws->n_last_cites = 0;
    ws->last_question = NULL;
}

/* The cache key of a definition's explanation: its place and the content
 * of every piece (an edit in a long definition's last window counts). */
void lsp_explain_store(LspFolder *ws, const char *key, const char *markdown)
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

const char *lsp_explain_cached(LspFolder *ws, IdxStore *st, const RtvDef *d)
{
    char key[17];
    ws_def_key(st, d, key);
    for (size_t i = 0; i < HOVER_CACHE; i++)
        if (ws->explained[i].markdown && !strcmp(ws->explained[i].key, key))
            return ws->explained[i].markdown;
    return NULL;
}
