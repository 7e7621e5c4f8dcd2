/*
 * lsp.h - the language-server side of coderag: protocol converters between
 * coderag's structs and the JSON the editor sees (Position/Range/Location,
 * file URIs, the coderag/ask result object of SPEC.md).
 *
 * JSON values are jansson's; the header only forward-declares json_t so that
 * callers that want text need not include jansson.
 */
#ifndef CODERAG_LSP_H
#define CODERAG_LSP_H

#include "base.h"
#include "rtv.h"

#include <stddef.h>

struct json_t;

/* "file://" + root_abs + "/" + relpath, percent-encoding every byte other
 * than unreserved characters (A-Z a-z 0-9 - . _ ~) and '/'. root_abs is an
 * absolute path; a trailing '/' is ignored; relpath may be NULL or "" for the
 * root itself. Caller frees. */
char *lsp_path_to_uri(const char *root_abs, const char *relpath);

/* A JSON string from C text (NULL: ""); invalid UTF-8 bytes become U+FFFD.
 * New reference. */
struct json_t *lsp_json_string(const char *s);

/* The local path of a file URI ("file:///a%20b/c.py" -> "/a b/c.py"):
 * percent-decoded, with an optional "localhost" authority. NULL when uri is
 * not a file URI or decodes to something unusable (a NUL byte, a relative
 * path). Caller frees. */
char *lsp_uri_to_path(const char *uri);

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

#endif
