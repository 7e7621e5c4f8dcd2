/*
 * handlers.h - the handlers of the method table (handlers_*.c) and what they
 * share: open documents, the word under the cursor, position params.
 */
#ifndef CODERAG_LSP_HANDLERS_H
#define CODERAG_LSP_HANDLERS_H

#include "server_int.h"

/* An open document (reader thread only). */
struct Doc {
    char *uri;
    char *text;
    size_t len;
    struct Doc *next;
};

/* ---- handlers_ask.c (decoding, commands, status) */
RpcStatus lsp_on_ask(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                     RpcError *err);
RpcStatus lsp_on_status(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                        RpcError *err);
RpcStatus lsp_on_execute_command(void *ctx, struct json_t *params, RpcCall *call,
                                 struct json_t **out, RpcError *err);

/* ---- handlers_explain.c */
RpcStatus lsp_on_code_action(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                             RpcError *err);
RpcStatus lsp_explain_command(Server *s, struct json_t *args, RpcCall *call, RpcError *err);

/* ---- handlers_doc.c */
RpcStatus lsp_on_did_open(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                          RpcError *err);
RpcStatus lsp_on_did_change(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                            RpcError *err);
RpcStatus lsp_on_did_close(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                           RpcError *err);
RpcStatus lsp_on_did_save(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                          RpcError *err);
RpcStatus lsp_on_watched_files(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                               RpcError *err);
/* The open document's text, or NULL (borrowed; reader thread). */
const Doc *lsp_docs_find(Server *s, const char *uri);
void lsp_docs_free(Server *s);

/* ---- handlers_nav.c */
RpcStatus lsp_on_hover(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                       RpcError *err);
RpcStatus lsp_on_code_lens(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                           RpcError *err);
/* Reader: the identifier at (line, UTF-16 col) of a document (open, else
 * as saved at rel in ws, read only when it resolves inside the root), with
 * its column span; NULL when none. Caller frees. */
char *lsp_nav_word_at_uri(Server *s, const char *uri, const LspFolder *ws, const char *rel,
                          int line, int col, int *c0, int *c1);
/* Reader: decodes {textDocument: {uri}, position: {line, character}};
 * *out_ws is the workspace holding the document (NULL when none) and
 * *out_rel its root-relative path (caller frees). */
RpcStatus lsp_nav_position_params(Server *s, struct json_t *params, const char *method,
                                  const char **out_uri, int *line, int *character,
                                  LspFolder **out_ws, char **out_rel, RpcError *err);

/* ---- handlers_hier.c: workspace/symbol and call hierarchy */
RpcStatus lsp_on_workspace_symbol(void *ctx, struct json_t *params, RpcCall *call,
                                  struct json_t **out, RpcError *err);
RpcStatus lsp_on_prepare_call_hierarchy(void *ctx, struct json_t *params, RpcCall *call,
                                        struct json_t **out, RpcError *err);
/* textDocument/definition (handlers_hier.c). */
RpcStatus lsp_on_definition(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                            RpcError *err);
RpcStatus lsp_on_incoming_calls(void *ctx, struct json_t *params, RpcCall *call,
                                struct json_t **out, RpcError *err);
RpcStatus lsp_on_outgoing_calls(void *ctx, struct json_t *params, RpcCall *call,
                                struct json_t **out, RpcError *err);

#endif
