/*
 * memory.h - what a workspace remembers between requests (memory.c): the
 * last answer's citations for code lenses, explanations for hovers.
 */
#ifndef CODERAG_LSP_MEMORY_H
#define CODERAG_LSP_MEMORY_H

#include "server_int.h"

/* ---- memory.c: what a workspace remembers between requests */
/* Worker: keeps the question and citations of an answer for code lenses. */
void lsp_nav_remember_answer(LspFolder *ws, const char *question, const RtvAnswer *a);
void lsp_nav_forget_answer(LspFolder *ws);
/* Worker: keeps an explanation for hovers. */
void lsp_explain_store(LspFolder *ws, const char *key, const char *markdown);
/* Worker: the cached explanation of a definition, or NULL (borrowed). */
const char *lsp_explain_cached(LspFolder *ws, IdxStore *st, const RtvDef *d);

#endif
