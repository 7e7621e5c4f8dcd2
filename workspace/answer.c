#include "ws.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

/* The coderag/ask result object (SPEC.md), the same from every door that
 * gives it: the language server's coderag/ask and `coderag ask --json`;
 * the MCP server's ask shares its citations and rejected lists. */

static json_t *jreal(double v)
{
    return json_real(isfinite(v) ? v : 0.0);
}

json_t *ws_lines_range_json(uint32_t start_line, uint32_t end_line)
{
    return json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}", "start", "line",
                     (json_int_t)(start_line ? start_line - 1 : 0), "character", (json_int_t)0,
                     "end", "line", (json_int_t)end_line, "character", (json_int_t)0);
}

static json_t *citation_json(const VfyCitation *c, const char *root_abs)
{
    json_t *o = json_object();
    char *uri = path_to_uri(root_abs, c->path);
    json_object_set_new(o, "uri", json_text(uri));
    free(uri);
    json_object_set_new(o, "range", ws_lines_range_json(c->start_line, c->end_line));
    json_object_set_new(o, "path", json_text(c->path));
    json_object_set_new(o, "startLine", json_integer(c->start_line));
    json_object_set_new(o, "endLine", json_integer(c->end_line));
    json_object_set_new(o, "symbol", json_text(c->symbol));
    json_object_set_new(o, "verified", json_boolean(c->verified));
    json_object_set_new(o, "source", json_string(c->source));
    json_object_set_new(o, "origin", json_string(c->origin));
    /* Enough for a client to re-find the lines after edits (vfy_anchor_resolve). */
    json_object_set_new(o, "anchor",
                        json_pack("{s:o, s:s}", "symbol", json_text(c->symbol), "hash", c->anchor));
    return o;
}

json_t *ws_via_json(unsigned via)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{RTV_VIA_BM25, "bm25"}, {RTV_VIA_DENSE, "dense"}, {RTV_VIA_GRAPH, "graph"}};
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (via & names[i].bit) json_array_append_new(a, json_string(names[i].name));
    return a;
}

static json_t *context_json(const RtvItem *it)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_text(it->chunk.path));
    json_object_set_new(o, "startLine", json_integer(it->start_line));
    json_object_set_new(o, "endLine", json_integer(it->end_line));
    json_object_set_new(o, "symbol", json_text(rtv_item_symbol(it)));
    json_object_set_new(o, "score", jreal(it->score));
    json_object_set_new(o, "via", ws_via_json(it->via));
    return o;
}

static json_t *timings_json(const RtvTimings *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "bm25_ms", jreal(t->bm25_ms));
    json_object_set_new(o, "dense_ms", jreal(t->dense_ms));
    json_object_set_new(o, "graph_ms", jreal(t->graph_ms));
    json_object_set_new(o, "pack_ms", jreal(t->pack_ms));
    json_object_set_new(o, "llm_ms", jreal(t->llm_ms));
    json_object_set_new(o, "verify_ms", jreal(t->verify_ms));
    json_object_set_new(o, "total_ms", jreal(t->total_ms));
    return o;
}

json_t *ws_answer_context_json(const RtvAnswer *a)
{
    json_t *ctx = json_array();
    for (size_t i = 0; i < a->n_items; i++)
        json_array_append_new(ctx, context_json(&a->items[i]));
    return ctx;
}

json_t *ws_answer_rejected_json(const RtvAnswer *a)
{
    json_t *rej = json_array();
    for (size_t i = 0; i < a->n_rejected; i++)
        json_array_append_new(rej, json_pack("{s:o, s:o}", "text", json_text(a->rejected[i].text),
                                             "reason", json_text(a->rejected[i].reason)));
    return rej;
}

json_t *ws_answer_citations_json(const RtvAnswer *a, const char *root_abs)
{
    json_t *cits = json_array();
    for (size_t i = 0; i < a->n_citations; i++)
        json_array_append_new(cits, citation_json(&a->citations[i], root_abs));
    return cits;
}

json_t *ws_answer_json(const RtvAnswer *a, const char *root_abs)
{
    json_t *o = json_object();
    json_object_set_new(o, "answer", json_text(a->answer));
    json_object_set_new(o, "mode", json_string(rtv_mode_name(a->mode)));
    json_object_set_new(o, "match", json_string(rtv_match_name(a->match)));
    json_object_set_new(o, "matchReason", json_text(a->match_reason));

    json_object_set_new(o, "citations", ws_answer_citations_json(a, root_abs));
    json_object_set_new(o, "rejected", ws_answer_rejected_json(a));
    json_object_set_new(o, "context", ws_answer_context_json(a));
    json_object_set_new(o, "timings", timings_json(&a->timings));
    return o;
}
