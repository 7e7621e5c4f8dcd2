/* result.c - what every tool shares: reading its arguments, failing with a
 * one-line message, and the JSON of strings, definitions and "via" lists. */
#include "mcp_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mcp_fail(McpResult *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_reset(&r->text);
    sb_vaddf(&r->text, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < r->text.len; i++) /* one line */
        if (r->text.buf[i] == '\n' || r->text.buf[i] == '\r') r->text.buf[i] = ' ';
    json_decref(r->structured);
    r->structured = NULL;
    r->is_error = 1;
    return 0;
}

const char *mcp_arg_str(json_t *args, const char *name, const char *dflt)
{
    json_t *v = args ? json_object_get(args, name) : NULL;
    return json_is_string(v) ? json_string_value(v) : dflt;
}

long long mcp_arg_int(json_t *args, const char *name, long long dflt)
{
    json_t *v = args ? json_object_get(args, name) : NULL;
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

/* ---------------------------------------------------------------- shared JSON */

json_t *mcp_def_json(const RtvDef *d, const char *qualified)
{
    const IdxChunk *c = &d->head;
    json_t *o =
        json_pack("{s:o, s:i, s:i, s:o, s:s}", "path", json_text(c->path), "startLine",
                  (int)d->start_line, "endLine", (int)d->end_line, "symbol",
                  json_text(c->symbol[0] ? c->symbol : c->module), "kind", idx_kind_name(c->kind));
    if (qualified) json_object_set_new(o, "qualifiedName", json_text(qualified));
    if (c->signature[0]) json_object_set_new(o, "signature", json_text(c->signature));
    if (c->docstring[0]) {
        size_t n = strcspn(c->docstring, "\n");
        char *line = xstrndup(c->docstring, n > 300 ? 300 : n);
        json_object_set_new(o, "docstring", json_text(line));
        free(line);
    }
    return o;
}

void mcp_via_json(json_t *obj, unsigned via)
{
    json_object_set_new(obj, "via", ws_via_json(via));
}
