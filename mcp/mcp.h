/*
 * mcp.h - coderag as a Model Context Protocol server for coding agents:
 * newline-delimited JSON-RPC 2.0 over a pair of file descriptors (stdio),
 * protocol revision MCP_PROTOCOL_VERSION (older revisions negotiated down),
 * tools over retrieve/ (ask, search, definition, callers, callees, read,
 * status). See docs/mcp.md for the tools and their results.
 *
 * The server indexes the root when it starts, on a thread of its own, and
 * brings the index up to date before answering a tool call whenever a file
 * under the root changed (inotify; without it, a stat pass per call).
 * Nothing but protocol is written to out_fd; logging goes to stderr.
 */
#ifndef CODERAG_MCP_H
#define CODERAG_MCP_H

#include "ws.h"

/* The revision this server speaks natively. */
#define MCP_PROTOCOL_VERSION "2025-11-25"
/* Longest message line accepted, in bytes; a longer one is answered with a
 * JSON-RPC error (id null) and skipped. Larger than any valid tool call
 * needs, so that an oversized argument (a 10 MB question) still gets a
 * tool error naming the argument. */
#define MCP_MAX_LINE ((size_t)32 << 20)

typedef struct McpOptions {
    const WsConfig
        *cfg; /* the workspace's settings (the LLM's too); borrowed for the server's life */
} McpOptions;

/* Serves one client until in_fd reaches end of file (or a read fails):
 * the calls already queued are answered, an initial indexing with nothing
 * waiting for it is stopped, and the exit code is returned: 0, or 2 when
 * the worker thread cannot start. An index that cannot be opened does not
 * end the server: every tool call is answered with that error (isError). */
int mcp_server_run(const McpOptions *o, int in_fd, int out_fd);

#endif
