#include "mcp_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The tool table, the JSON Schema of each tool's input and the checks of a
 * call's arguments, both generated from the same McpField rows. */

static const McpTool mcp_tool_status;

static const McpTool *const tools[] = {
    &mcp_tool_search,  &mcp_tool_ask,  &mcp_tool_definition, &mcp_tool_callers,
    &mcp_tool_callees, &mcp_tool_read, &mcp_tool_status,
};
#define N_TOOLS (sizeof tools / sizeof tools[0])

/* ---------------------------------------------------------------- schema */

static json_t *field_schema(const McpField *f)
{
    json_t *p = json_object();
    json_object_set_new(p, "description", json_string(f->description));
    if (f->type == MCP_T_STRING) {
        json_object_set_new(p, "type", json_string("string"));
        json_object_set_new(p, "minLength", json_integer(1));
        if (f->max) json_object_set_new(p, "maxLength", json_integer(f->max));
    } else if (f->type == MCP_T_INT) {
        json_object_set_new(p, "type", json_string("integer"));
        json_object_set_new(p, "minimum", json_integer(f->min));
        json_object_set_new(p, "maximum", json_integer(f->max));
    } else {
        json_t *e = json_array();
        for (const char *const *c = f->choices; *c; c++)
            json_array_append_new(e, json_string(*c));
        if (f->type == MCP_T_ENUM) {
            json_object_set_new(p, "type", json_string("string"));
            json_object_set_new(p, "enum", e);
        } else {
            json_object_set_new(p, "type", json_string("array"));
            json_object_set_new(p, "items", json_pack("{s:s, s:o}", "type", "string", "enum", e));
            json_object_set_new(p, "uniqueItems", json_true());
        }
    }
    return p;
}

json_t *mcp_tools_list(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < N_TOOLS; i++) {
        const McpTool *t = tools[i];
        json_t *props = json_object(), *req = json_array();
        for (size_t k = 0; k < t->n_fields; k++) {
            json_object_set_new(props, t->fields[k].name, field_schema(&t->fields[k]));
            if (t->fields[k].required) json_array_append_new(req, json_string(t->fields[k].name));
        }
        json_t *schema = json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
                                   "additionalProperties", 0);
        if (json_array_size(req))
            json_object_set_new(schema, "required", req);
        else
            json_decref(req);
        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b, s:b}}", "name",
                                              t->name, "title", t->title, "description",
                                              t->description, "inputSchema", schema, "annotations",
                                              "readOnlyHint", t->read_only, "idempotentHint", 1,
                                              "openWorldHint", !t->read_only));
    }
    return json_pack("{s:o}", "tools", list);
}

const McpTool *mcp_tool_find(const char *name)
{
    for (size_t i = 0; i < N_TOOLS; i++)
        if (!strcmp(tools[i]->name, name)) return tools[i];
    return NULL;
}

/* ---------------------------------------------------------------- checks */

static int in_choices(const McpField *f, const char *s)
{
    for (const char *const *c = f->choices; *c; c++)
        if (!strcmp(*c, s)) return 1;
    return 0;
}

static void add_choices(StrBuf *sb, const McpField *f)
{
    for (const char *const *c = f->choices; *c; c++)
        sb_addf(sb, "%s%s", c == f->choices ? "" : ", ", *c);
}

static int check_field(const McpTool *t, const McpField *f, json_t *v, McpResult *r)
{
    StrBuf ch;
    switch (f->type) {
    case MCP_T_STRING:
        if (!json_is_string(v))
            return mcp_fail(r, "%s: argument '%s' must be a string", t->name, f->name);
        if (json_string_length(v) == 0)
            return mcp_fail(r, "%s: argument '%s' is empty", t->name, f->name);
        if (f->max && json_string_length(v) > (size_t)f->max)
            return mcp_fail(r, "%s: argument '%s' is %zu bytes long; at most %lld are accepted",
                            t->name, f->name, json_string_length(v), f->max);
        if (memchr(json_string_value(v), '\0', json_string_length(v)))
            return mcp_fail(r, "%s: argument '%s' contains a NUL character", t->name, f->name);
        return 1;
    case MCP_T_INT:
        if (!json_is_integer(v))
            return mcp_fail(r, "%s: argument '%s' must be an integer", t->name, f->name);
        if (json_integer_value(v) < f->min || json_integer_value(v) > f->max)
            return mcp_fail(r, "%s: argument '%s' must be between %lld and %lld, not %lld", t->name,
                            f->name, f->min, f->max, (long long)json_integer_value(v));
        return 1;
    case MCP_T_ENUM:
        if (json_is_string(v) && in_choices(f, json_string_value(v))) return 1;
        sb_init(&ch);
        add_choices(&ch, f);
        mcp_fail(r, "%s: argument '%s' must be one of %s", t->name, f->name, ch.buf);
        sb_release(&ch);
        return 0;
    case MCP_T_ENUM_LIST: {
        int ok = json_is_array(v);
        for (size_t i = 0; ok && i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            ok = json_is_string(x) && in_choices(f, json_string_value(x));
        }
        if (ok) return 1;
        sb_init(&ch);
        add_choices(&ch, f);
        mcp_fail(r, "%s: argument '%s' must be a list of %s", t->name, f->name, ch.buf);
        sb_release(&ch);
        return 0;
    }
    }
    return 0;
}

int mcp_check_args(const McpTool *t, json_t *args, McpResult *r)
{
    if (args && !json_is_object(args))
        return mcp_fail(r, "%s: arguments must be an object", t->name);
    const char *key;
    json_t *v;
    json_object_foreach(args, key, v)
    {
        size_t k = 0;
        while (k < t->n_fields && strcmp(t->fields[k].name, key) != 0)
            k++;
        if (k == t->n_fields) return mcp_fail(r, "%s: unknown argument '%.100s'", t->name, key);
    }
    for (size_t k = 0; k < t->n_fields; k++) {
        const McpField *f = &t->fields[k];
        json_t *x = args ? json_object_get(args, f->name) : NULL;
        if (!x) {
            if (f->required) return mcp_fail(r, "%s: argument '%s' is missing", t->name, f->name);
            continue;
        }
        if (!check_field(t, f, x, r)) return 0;
    }
    return 1;
}

json_t *mcp_result_json(McpResult *r, int structured)
{
    json_t *res = json_object();
    json_t *text =
        json_pack("{s:s, s:o}", "type", "text", "text", json_text(r->text.buf ? r->text.buf : ""));
    json_object_set_new(res, "content", json_pack("[o]", text));
    if (r->structured && structured)
        json_object_set_new(res, "structuredContent", r->structured);
    else
        json_decref(r->structured);
    r->structured = NULL;
    if (r->is_error) json_object_set_new(res, "isError", json_true());
    return res;
}

/* ---------------------------------------------------------------- status */

static void run_status(const McpCtx *c, json_t *args, McpResult *r)
{
    WsStatusReport rep;
    ErrInfo e = {0};
    if (ws_status_report(c->st, 0, &rep, &e) != CR_OK) {
        mcp_fail(r, "status: %s", e.msg);
        return;
    }
    const IdxStatus s = rep.s;
    ws_status_report_release(&rep); /* nothing owned: no skipped files asked for */
    char when[32];
    utc_iso8601(s.last_update, when);
    StrBuf llm;
    sb_init(&llm);
    ws_config_llm_label(c->opt->cfg, &llm);
    r->structured = ws_status_json(ws_store_root(c->st), &s);
    json_object_set_new(r->structured, "llm", json_text(llm.buf));
    json_object_set_new(r->structured, "protocolVersion", json_string(MCP_PROTOCOL_VERSION));
    sb_addf(&r->text,
            "root: %s\nfiles: %lld indexed, %lld skipped\nchunks: %lld, symbols: %lld, graph "
            "edges: %lld, vectors: %lld\nlast update: %s\nembedder: %s\nLLM: %s\n",
            ws_store_root(c->st), (long long)s.files, (long long)s.skipped, (long long)s.chunks,
            (long long)s.symbols, (long long)s.edges, (long long)s.vectors, when, s.embedder,
            llm.buf);
    sb_release(&llm);
}

static const McpTool mcp_tool_status = {
    "status",
    "Index status",
    "What the index holds: the workspace root, files indexed and skipped, chunks, symbols, "
    "graph edges, vectors, when it was last updated, the embedder and the LLM in use.",
    NULL,
    0,
    1,
    run_status,
};
