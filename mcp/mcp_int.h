/*
 * mcp_int.h - what the files of mcp/ share: the tool table and its argument
 * checks (tools.c) and the tools (tools_ask.c, tools_nav.c). Not for use
 * outside mcp/ and its tests.
 */
#ifndef CODERAG_MCP_INT_H
#define CODERAG_MCP_INT_H

#include "mcp.h"
#include "vfy.h"
#include "ws.h"

#include <jansson.h>

/* ---------------------------------------------------------------- tools */

typedef enum { MCP_T_STRING, MCP_T_INT, MCP_T_ENUM, MCP_T_ENUM_LIST } McpType;

/* One argument of a tool: its JSON Schema and its check come from here. */
typedef struct McpField {
    const char *name;
    McpType type;
    int required;
    long long min, max;         /* MCP_T_INT: bounds; MCP_T_STRING: max bytes (0: none) */
    const char *const *choices; /* MCP_T_ENUM(_LIST): NULL-terminated */
    const char *description;
} McpField;

/* What a tool call sees. */
typedef struct McpCtx {
    IdxStore *st; /* open and up to date */
    const McpOptions *opt;
    int structured;     /* the negotiated revision has structuredContent */
    RtvCancelFn cancel; /* the call was cancelled by the client */
    void *cancel_ud;
    WsEndpoint *llm_ep;     /* the LLM's health and back-off (ws_ask) */
    RtvProgressFn progress; /* the LLM writing, told to the client; NULL: not asked for */
    void *progress_ud;
} McpCtx;

/* A tool's answer: text for the model, the same as JSON, or an error. */
typedef struct McpResult {
    StrBuf text;
    json_t *structured; /* owned; NULL: none */
    int is_error;
} McpResult;

/* Sets r to an error result with a one-line reason. Returns 0. */
int mcp_fail(McpResult *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct McpTool {
    const char *name, *title, *description;
    const McpField *fields;
    size_t n_fields;
    int read_only; /* annotations.readOnlyHint */
    void (*run)(const McpCtx *c, json_t *args, McpResult *r);
} McpTool;

extern const McpTool mcp_tool_ask, mcp_tool_search, mcp_tool_definition, mcp_tool_callers,
    mcp_tool_callees, mcp_tool_read;

/* The tools/list result (new reference). */
json_t *mcp_tools_list(void);
/* The tool of that name, or NULL. */
const McpTool *mcp_tool_find(const char *name);
/* Checks args (an object, or NULL for none) against t's fields: 1 when
 * they pass, else 0 with the one-line reason in r. */
int mcp_check_args(const McpTool *t, json_t *args, McpResult *r);
/* The tools/call result object for r (new reference; r is emptied). */
json_t *mcp_result_json(McpResult *r, int structured);

/* Argument accessors after mcp_check_args: the default when absent. */
const char *mcp_arg_str(json_t *args, const char *name, const char *dflt);
long long mcp_arg_int(json_t *args, const char *name, long long dflt);

/* JSON helpers shared by the tools. */
json_t *mcp_def_json(const RtvDef *d, const char *qualified);
void mcp_via_json(json_t *obj, unsigned via);

#endif
