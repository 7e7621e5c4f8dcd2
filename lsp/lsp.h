/*
 * lsp.h - the language-server side of coderag: the server itself
 * (lsp_server_run). The coderag/ask result object is the workspace's
 * (ws_answer_json); the LSP-only converters are internal (lsp_int.h).
 */
#ifndef CODERAG_LSP_H
#define CODERAG_LSP_H

#include "base.h"
#include "rtv.h"
#include "ws.h"

#include <stddef.h>

/* Runs the language server over the two descriptors until exit or end of
 * input; cfg holds the CLI and environment settings (initializationOptions
 * are applied over a copy). Returns the process exit code: 0 after
 * shutdown + exit, 1 when the client exits or disappears without shutdown,
 * 2 when the output broke before that. */
int lsp_server_run(const WsConfig *cfg, int in_fd, int out_fd);

#endif
