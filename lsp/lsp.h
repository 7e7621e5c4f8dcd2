/*
 * lsp.h - the language-server side of coderag: the server itself
 * (lsp_server_run), and protocol converters between
 * coderag's structs and the JSON the editor sees (Position/Range/Location,
 * the coderag/ask result object of SPEC.md; file URIs are base.h's path_*).
 *
 * JSON values are jansson's; the header only forward-declares json_t so that
 * callers that want text need not include jansson.
 */
#ifndef CODERAG_LSP_H
#define CODERAG_LSP_H

#include "base.h"
#include "rtv.h"
#include "ws.h"

#include <stddef.h>

struct json_t;

/* The coderag/ask result object for a (keys answer, mode, citations,
 * rejected, context, timings; see SPEC.md). Line ranges become LSP ranges:
 * start {line: startLine-1, character: 0}, end {line: endLine, character: 0}.
 * Invalid UTF-8 in strings is replaced by U+FFFD. Returns a new reference
 * (caller json_decref's). */
struct json_t *lsp_answer_to_json(const RtvAnswer *a, const char *root_abs);
/* The result's "context" array alone. New reference. */
struct json_t *lsp_context_json(const RtvAnswer *a);

/* The same object as compact JSON text, NUL-terminated; its length (without
 * the NUL) in *out_len when out_len is not NULL. Caller frees with free(). */
char *lsp_answer_json(const RtvAnswer *a, const char *root_abs, size_t *out_len);

/* Runs the language server over the two descriptors until exit or end of
 * input; cfg holds the CLI and environment settings (initializationOptions
 * are applied over a copy). Returns the process exit code: 0 after
 * shutdown + exit, 1 when the client exits or disappears without shutdown,
 * 2 when the output broke before that. */
int lsp_server_run(const WsConfig *cfg, int in_fd, int out_fd);

#endif
