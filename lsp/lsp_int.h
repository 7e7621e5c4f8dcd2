/*
 * lsp_int.h - what the lsp/ files share besides the server's state
 * (server_int.h): the LSP Position and Range converters and the reply to a
 * request the index could not serve (protocol.c). The
 * JSON-RPC envelope and the Content-Length framing are rpc/'s (rpc.h);
 * settings are the workspace layer's (ws.h).
 */
#ifndef CODERAG_LSP_INT_H
#define CODERAG_LSP_INT_H

#include "base.h"
#include "idx.h"
#include "rpc.h"
#include "rtv.h"
#include "ws.h"

#include <stddef.h>
#include <stdint.h>

struct json_t;

/* LSP Position and Range objects (0-based lines and characters). */
struct json_t *lsp_position(uint32_t line, uint32_t character);
struct json_t *lsp_range(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1);

/* When rc says the index could not be read (CR_EDB, CR_ECORRUPT, CR_EIO),
 * answers the call with that error (never an empty result) and returns 1;
 * otherwise does nothing and returns 0. */
int lsp_call_reply_failed(RpcCall *call, CrErr rc, const ErrInfo *e);

/* Appends a definition's doc (IdxChunk.docstring) as hover Markdown text
 * (doc_md.c): comment leaders the index left ("** " of a C block comment,
 * when every line has one) stripped, the indentation lines after the
 * first share removed (a Python docstring's, which Markdown would show as
 * code), reST's ``x`` as `x`. */
void lsp_doc_markdown(const char *doc, StrBuf *out);

#endif
