#include "mcp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* definition, callers, callees and read: deterministic queries over the
 * index and the code graph (retrieve/nav.c), and source lines behind the
 * same path checks as citations (verify/). */

#define MAX_DEFS_SHOWN 5
#define READ_MAX_LINES 400
#define READ_MAX_BYTES ((size_t)100 << 10)

static char *qualified(const RtvDef *d)
{
    const IdxChunk *c = &d->head;
    StrBuf sb;
    sb_init(&sb);
    if (c->module[0]) sb_adds(&sb, c->module);
    if (c->module[0] && c->symbol[0]) sb_addc(&sb, '.');
    sb_adds(&sb, c->symbol);
    return sb_detach(&sb, NULL);
}

static const char *shown_name(const RtvDef *d)
{
    return d->head.symbol[0] ? d->head.symbol : d->head.module;
}

/* ---------------------------------------------------------------- preprocessor conditions */

static json_t *built_json(IdxBuilt b)
{
    return b == IDX_BUILT_UNKNOWN ? json_null() : json_boolean(b == IDX_BUILT_YES);
}

/* "condition" (as written) and "built" (true, false, null: unknown) on o,
 * and the same after the line of text. */
static void cond_out(json_t *o, StrBuf *text, const char *cond, IdxBuilt b)
{
    if (!cond) return;
    json_object_set_new(o, "condition", json_text(cond));
    json_object_set_new(o, "built", built_json(b));
    sb_addf(text, " [#if %s: %s]", cond, idx_built_name(b));
}

/* A definition's variants (its pieces under distinct #if branches) on o:
 * one as its condition, several as "variants" with the condition of each. */
static void variants_out(const WsNavDef *d, json_t *o, StrBuf *text)
{
    const RtvVariant *v = d->variants;
    size_t n = d->n_variants;
    if (!n) return;
    if (n == 1) {
        cond_out(o, text, v[0].cond, v[0].built);
    } else {
        json_t *list = json_array();
        json_object_set_new(o, "built", built_json(d->built));
        for (size_t i = 0; i < n; i++) {
            json_t *x = json_pack("{s:i, s:i}", "startLine", (int)v[i].start_line, "endLine",
                                  (int)v[i].end_line);
            if (v[i].cond) {
                json_object_set_new(x, "condition", json_text(v[i].cond));
                json_object_set_new(x, "built", built_json(v[i].built));
            }
            json_array_append_new(list, x);
            sb_addf(text, "\n    variant %u-%u", v[i].start_line, v[i].end_line);
            if (v[i].cond) sb_addf(text, " [#if %s: %s]", v[i].cond, idx_built_name(v[i].built));
        }
        json_object_set_new(o, "variants", list);
    }
}

/* ---------------------------------------------------------------- definition */

/* vfy_check_path, and for a name the server wrote escaped (a path that is
 * not UTF-8: "%XX" for each stray byte, json_text) the name it stands for. */
static VfyReason check_path(const McpCtx *c, const char *path, char **rel)
{
    VfySource src;
    vfy_source_for_store(&src, c->st);
    VfyReason why = vfy_check_path(&src, path, rel);
    if (why == VFY_OK || !strchr(path, '%')) return why;
    StrBuf raw;
    sb_init(&raw);
    if (path_percent_decode(path, strlen(path), &raw) && !utf8_valid(raw.buf, raw.len)) {
        char *r2 = NULL;
        if (vfy_check_path(&src, raw.buf, &r2) == VFY_OK) {
            free(*rel);
            *rel = r2;
            why = VFY_OK;
        } else {
            free(r2);
        }
    }
    sb_release(&raw);
    return why;
}

/* A `path` argument as every tool takes it (docs/mcp.md): a workspace file
 * the index holds, through the one check citations and `read` use (a path
 * outside the root, or a link leading out of it, refused). 1 with *rel
 * (caller frees; NULL when no path was given), 0 when refused (r says
 * why). */
static int path_arg(const McpCtx *c, const char *tool, const char *path, char **rel, McpResult *r)
{
    *rel = NULL;
    if (!path) return 1;
    VfyReason why = check_path(c, path, rel);
    if (why == VFY_OK) return 1;
    free(*rel);
    *rel = NULL;
    if (tool)
        mcp_fail(r, "%s: path '%.200s': %s", tool, path, vfy_reason_name(why));
    else
        mcp_fail(r, "path '%.200s': %s", path, vfy_reason_name(why));
    return 0;
}

static int nav_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c >= 0x80;
}

/* The name written at a call site: the identifier at column (1-based, in
 * characters) of line (1-based) of the workspace file rel, as the editor's
 * cursor names it (the LSP's word under the cursor). NULL when there is
 * none there. Caller frees. */
static char *site_word(const McpCtx *c, const char *rel, long long line, long long column)
{
    StrBuf text;
    sb_init(&text);
    char *word = NULL;
    if (path_read_under(ws_store_root(c->st), rel, &text, (size_t)16 << 20, NULL) != CR_OK) {
        sb_release(&text);
        return NULL;
    }
    const char *p = text.buf, *end = text.buf + text.len;
    for (long long l = 1; p && l < line; l++) {
        p = memchr(p, '\n', (size_t)(end - p));
        if (p) p++;
    }
    if (p) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p), at = 0;
        for (long long k = 1; k < column && at < ll; k++) /* a character: a UTF-8 sequence */
            for (at++; at < ll && ((unsigned char)p[at] & 0xC0) == 0x80; at++)
                ;
        size_t a = at, b = at;
        while (a > 0 && nav_ident_char((unsigned char)p[a - 1]))
            a--;
        while (b < ll && nav_ident_char((unsigned char)p[b]))
            b++;
        if (a < b && !(p[a] >= '0' && p[a] <= '9')) word = xstrndup(p + a, b - a);
    }
    sb_release(&text);
    return word;
}

/* With path, line and column: the workspace-relative path (*rel) and the
 * name written there (*word); 1 when both are given and found, 0 when no
 * column is given, -1 with r failed. */
static int call_site(const McpCtx *c, json_t *args, McpResult *r, char **rel, char **word)
{
    const char *path = mcp_arg_str(args, "path", NULL);
    long long line = mcp_arg_int(args, "line", 0), column = mcp_arg_int(args, "column", 0);
    *rel = *word = NULL;
    if (!column) return 0;
    if (!path || !line) {
        mcp_fail(r, "column needs a path and a line (the call site)");
        return -1;
    }
    VfyReason why = check_path(c, path, rel);
    if (why != VFY_OK) {
        free(*rel);
        *rel = NULL;
        mcp_fail(r, "path '%.200s': %s", path, vfy_reason_name(why));
        return -1;
    }
    *word = site_word(c, *rel, line, column);
    if (!*word) {
        mcp_fail(r, "no name at %s:%lld:%lld", *rel, line, column);
        free(*rel);
        *rel = NULL;
        return -1;
    }
    return 1;
}

static void run_definition(const McpCtx *c, json_t *args, McpResult *r)
{
    WsNavDefs got;
    ErrInfo e = {0};
    const char *name = mcp_arg_str(args, "symbol", "");
    char *path = NULL;
    size_t limit = (size_t)mcp_arg_int(args, "limit", 10);
    char *word = NULL;
    int site = call_site(c, args, r, &path, &word);
    if (site < 0) return;
    if (site) { /* the name written at the call site, looked up from there */
        name = word;
    } else if (!path_arg(c, "definition", mcp_arg_str(args, "path", NULL), &path, r)) {
        return;
    } else if (!name[0]) {
        mcp_fail(r, "give a symbol, or a call site (path, line and column)");
        free(path);
        return;
    }
    if (ws_nav_definitions(c->st, name, path, (uint32_t)mcp_arg_int(args, "line", 0), limit, &got,
                           &e) != CR_OK) {
        mcp_fail(r, "definition: %s", e.msg);
        free(path);
        free(word);
        return;
    }
    size_t n = got.n, total = got.total;
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const RtvDef *d = &got.v[i].def;
        char *q = qualified(d);
        json_t *o = mcp_def_json(d, q);
        json_array_append_new(list, o);
        const IdxChunk *h = &d->head;
        sb_addf(&r->text, "%s:%u-%u %s `%s`", h->path, d->start_line, d->end_line,
                idx_kind_name(h->kind), q);
        if (h->signature[0]) sb_addf(&r->text, " — %s", h->signature);
        variants_out(&got.v[i], o, &r->text);
        if (h->docstring[0])
            sb_addf(&r->text, "\n    %.*s", (int)strcspn(h->docstring, "\n"), h->docstring);
        sb_addc(&r->text, '\n');
        free(q);
    }
    if (!n) sb_addf(&r->text, "No indexed definition is named `%s`.\n", name);
    if (total > n) sb_addf(&r->text, "(%zu of %zu definitions shown)\n", n, total);
    r->structured = json_pack("{s:o, s:I}", "definitions", list, "total", (json_int_t)total);
    ws_nav_defs_release(&got);
    free(path);
    free(word);
}

static const McpField definition_fields[] = {
    {"symbol", MCP_T_STRING, 0, 0, 1000, NULL,
     "A name (`make_response`) or a qualified name, whole or in part (`Flask.make_response`, "
     "`flask.app.Flask.make_response`; `::` reads as `.`). Required unless a call site (path, "
     "line and column) is given."},
    {"path", MCP_T_STRING, 0, 0, 4096, NULL,
     "Optional: a file whose own definitions are listed first."},
    {"limit", MCP_T_INT, 0, 1, 100, NULL, "Most definitions returned (default 10)."},
    {"line", MCP_T_INT, 0, 1, 100000000, NULL,
     "Optional, with path: the line (1-based) where the name is used; the definition that use "
     "reaches (a call on `self.headers` finds `Headers.get`) is listed first, as the editor's "
     "go-to-definition finds it."},
    {"column", MCP_T_INT, 0, 1, 100000000, NULL,
     "Optional, with path and line: a call site. The name written at that column (1-based, in "
     "characters) is looked up from there, as the editor's go-to-definition looks up the word "
     "under the cursor; symbol is then not needed."},
};

const McpTool mcp_tool_definition = {
    "definition",
    "Find definitions",
    "Where a name is defined: every function, method or class with that name (or the one "
    "dotted qualified name), with its lines, signature and first docstring line. C/C++: a "
    "definition under #if carries `condition` and `built` (true, false, null: unknown; "
    "compile_commands.json decides when the workspace has one), one written per branch its "
    "`variants`; what the build compiles is listed first.",
    definition_fields,
    sizeof definition_fields / sizeof definition_fields[0],
    1,
    run_definition,
};

/* ---------------------------------------------------------------- callers / callees */

static const char *const edge_names[] = {"import", "call",      "inherit", "raise",
                                         "type",   "reference", NULL};

static unsigned kinds_mask(json_t *args)
{
    json_t *v = args ? json_object_get(args, "kinds") : NULL;
    unsigned m = 0;
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++) {
        const char *k = json_string_value(json_array_get(v, i));
        for (int e = IDX_EDGE_IMPORT; e <= IDX_EDGE_REFERENCE; e++)
            if (!strcmp(k, idx_edge_kind_name((IdxEdgeKind)e))) m |= RTV_REF_BIT(e);
    }
    return m & RTV_REFS_ANY;
}

/* The definitions a references call is about (*t): the one the name at a
 * call site reaches, the one at path:line, or those of the symbol (path's
 * first); the strings it points to are *own (caller frees). 0, or -1 with
 * r failed. */
static int target(const McpCtx *c, json_t *args, WsNavTarget *t, char **own, char **own_word,
                  McpResult *r)
{
    const char *name = mcp_arg_str(args, "symbol", NULL);
    const char *path = mcp_arg_str(args, "path", NULL);
    long long line = mcp_arg_int(args, "line", 0);
    memset(t, 0, sizeof *t);
    *own = *own_word = NULL;
    int site = call_site(c, args, r, own, own_word);
    if (site < 0) return -1;
    if (site) { /* the definition the name at the call site reaches */
        t->rel = *own;
        t->word = *own_word;
        t->line = (uint32_t)line;
        return 0;
    }
    if (line && path) {
        VfyReason why = check_path(c, path, own);
        if (why != VFY_OK) {
            free(*own);
            *own = NULL;
            mcp_fail(r, "path '%.200s': %s", path, vfy_reason_name(why));
            return -1;
        }
        t->rel = *own;
        t->line = (uint32_t)line;
        return 0;
    }
    if (!name) {
        mcp_fail(r, "give a symbol, or a path and a line inside the definition");
        return -1;
    }
    if (!path_arg(c, NULL, path, own, r)) return -1;
    t->name = name;
    t->rel = *own;
    t->max_defs = MAX_DEFS_SHOWN;
    return 0;
}

static void run_refs(const McpCtx *c, json_t *args, McpResult *r, int outgoing)
{
    WsNavTarget t;
    WsNavDefs got;
    char *own = NULL, *own_word = NULL;
    ErrInfo e = {0};
    const char *tool = outgoing ? "callees" : "callers";
    if (target(c, args, &t, &own, &own_word, r) < 0) return;
    size_t limit = (size_t)mcp_arg_int(args, "limit", 50);
    CrErr rc = ws_nav_references(c->st, &t, outgoing, kinds_mask(args), limit, &got, &e);
    free(own);
    free(own_word);
    if (rc) {
        mcp_fail(r, "%s: %s", tool, e.msg);
        return;
    }
    size_t n = got.n, total = got.total;
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const WsNavDef *nd = &got.v[i];
        const RtvRef *refs = nd->refs;
        size_t nr = nd->n_refs, tr = nd->total_refs;
        char *q = qualified(&nd->def);
        json_t *d = mcp_def_json(&nd->def, q), *rl = json_array();
        StrBuf vt;
        sb_init(&vt);
        variants_out(nd, d, &vt);
        sb_addf(&r->text, "%s `%s` (%s:%u-%u)%s: ", outgoing ? "Referenced from" : "References to",
                q, nd->def.head.path, nd->def.start_line, nd->def.end_line,
                vt.buf && vt.buf[0] == ' ' ? vt.buf : "");
        /* a method's callers are partial where a receiver's type is not
         * known: say so rather than "none" */
        int partial = !outgoing && nd->def.head.kind == IDX_KIND_METHOD;
        if (tr)
            sb_addf(&r->text, "%zu %s", tr, tr == 1 ? "definition" : "definitions");
        else
            sb_adds(&r->text, "no resolved references");
        if (partial) {
            sb_adds(&r->text, "; callers may be incomplete (a call on a receiver whose type the "
                              "indexer cannot tell is not linked)");
            json_object_set_new(d, "mayBeIncomplete", json_true());
        }
        sb_addf(&r->text, "%s\n", vt.buf && vt.buf[0] == '\n' ? vt.buf : "");
        sb_release(&vt);
        for (size_t k = 0; k < nr; k++) {
            const RtvRef *x = &refs[k];
            json_t *o = mcp_def_json(&x->other, NULL);
            json_object_set_new(o, "relation", json_string(idx_edge_kind_name(x->kind)));
            if (x->via) json_object_set_new(o, "via", json_string(x->via));
            json_object_set_new(
                o, "at",
                json_pack("{s:i, s:i}", "startLine", (int)x->at_start, "endLine", (int)x->at_end));
            json_array_append_new(rl, o);
            sb_addf(&r->text, "- %s %s `%s` %s:%u-%u", idx_edge_kind_name(x->kind),
                    outgoing ? "to" : "from", shown_name(&x->other), x->other.head.path,
                    x->other.start_line, x->other.end_line);
            if (x->via) sb_addf(&r->text, " (through macro `%s`)", x->via);
            cond_out(o, &r->text, x->cond, x->built);
            sb_addc(&r->text, '\n');
        }
        if (tr > nr) sb_addf(&r->text, "- … %zu more (raise limit)\n", tr - nr);
        json_object_set_new(d, "references", rl);
        json_object_set_new(d, "total", json_integer((json_int_t)tr));
        json_array_append_new(list, d);
        free(q);
    }
    if (!n) sb_adds(&r->text, "No indexed definition matches.\n");
    if (total > n)
        sb_addf(&r->text, "(%zu of %zu definitions of that name shown; pass path)\n", n, total);
    sb_addf(&r->text, "\nNote: %s\n", got.limits);
    r->structured = json_pack("{s:o, s:I, s:s}", "definitions", list, "totalDefinitions",
                              (json_int_t)total, "limits", got.limits);
    ws_nav_defs_release(&got);
}

static void run_callers(const McpCtx *c, json_t *args, McpResult *r)
{
    run_refs(c, args, r, 0);
}

static void run_callees(const McpCtx *c, json_t *args, McpResult *r)
{
    run_refs(c, args, r, 1);
}

static const McpField refs_fields[] = {
    {"symbol", MCP_T_STRING, 0, 0, 1000, NULL,
     "A name or dotted qualified name (required unless path and line are given)."},
    {"path", MCP_T_STRING, 0, 0, 4096, NULL,
     "A file: with line, the definition containing that line; alone, prefers that file's "
     "definitions of the symbol."},
    {"line", MCP_T_INT, 0, 1, 100000000, NULL, "A line (1-based) inside the definition."},
    {"column", MCP_T_INT, 0, 1, 100000000, NULL,
     "Optional, with path and line: a call site; the definition the name written at that "
     "column (1-based, in characters) reaches, as go-to-definition finds it, instead of the "
     "one containing the line."},
    {"kinds", MCP_T_ENUM_LIST, 0, 0, 0, edge_names,
     "Edge kinds to include (default: call, import, inherit, raise): also type (a type "
     "named) and reference (a function named as a value, not called)."},
    {"limit", MCP_T_INT, 0, 1, 500, NULL, "Most references per definition (default 50)."},
};

const McpTool mcp_tool_callers = {
    "callers",
    "Who references a definition",
    "From the static code graph: the definitions that call, import, subclass or raise/catch "
    "the given one, with locations. Says what the graph cannot see in the definition's "
    "language (dynamic dispatch, names looked up at run time); an edge is only listed when "
    "the indexer resolved it. C/C++: a reference written under #if carries `condition` and "
    "`built` (true, false, null: unknown).",
    refs_fields,
    sizeof refs_fields / sizeof refs_fields[0],
    1,
    run_callers,
};

const McpTool mcp_tool_callees = {
    "callees",
    "What a definition references",
    "From the static code graph: the definitions the given one calls, imports, subclasses "
    "or raises/catches, with the lines the reference is written in. Unresolved references "
    "(dynamic dispatch, names looked up at run time, library code) are not listed. C/C++: a "
    "reference written under #if carries `condition` and `built` (true, false, null: "
    "unknown).",
    refs_fields,
    sizeof refs_fields / sizeof refs_fields[0],
    1,
    run_callees,
};

/* ---------------------------------------------------------------- read */

static void run_read(const McpCtx *c, json_t *args, McpResult *r)
{
    const char *path = mcp_arg_str(args, "path", "");
    long long a = mcp_arg_int(args, "startLine", 1);
    long long b = mcp_arg_int(args, "endLine", a + 199);
    char *rel = NULL;
    StrBuf text;
    ErrInfo e = {0};
    uint32_t total = 0;
    if (b < a) {
        mcp_fail(r, "read: endLine %lld is before startLine %lld", b, a);
        return;
    }
    VfyReason why = check_path(c, path, &rel);
    if (why != VFY_OK) {
        mcp_fail(r, "read: '%.200s' is %s", path,
                 why == VFY_OUTSIDE          ? "outside the workspace"
                 : why == VFY_FILE_NOT_FOUND ? "not an indexed file"
                                             : "not a usable path");
        return;
    }
    sb_init(&text);
    CrErr rc = ws_read_lines(c->st, rel, 1, 1, &text, &total, &e);
    if (!rc && a > total) rc = err_set(&e, CR_EINVAL, "%s has %u lines", rel, total);
    int truncated = 0;
    if (!rc) {
        if (b > total) b = total;
        if (b - a + 1 > READ_MAX_LINES) {
            b = a + READ_MAX_LINES - 1;
            truncated = 1;
        }
        sb_reset(&text);
        rc = ws_read_lines(c->st, rel, (uint32_t)a, (uint32_t)b, &text, NULL, &e);
    }
    if (rc) {
        mcp_fail(r, "read: %s", e.msg[0] ? e.msg : cr_strerror(rc));
        sb_release(&text);
        free(rel);
        return;
    }
    if (text.len > READ_MAX_BYTES) { /* cut at a line end under the cap */
        size_t cut = READ_MAX_BYTES;
        while (cut > 0 && text.buf[cut - 1] != '\n')
            cut--;
        b = a + (long long)count_lines(text.buf, cut) - 1;
        sb_truncate(&text, cut);
        truncated = 1;
    }
    long long line = a;
    sb_addf(&r->text, "%s:%lld-%lld (of %u lines)%s\n", rel, a, b, total,
            truncated ? ", cut at the size cap" : "");
    for (size_t i = 0; i < text.len;) {
        size_t nl = strcspn(text.buf + i, "\n");
        sb_addf(&r->text, "%6lld\t%.*s\n", line++, (int)nl, text.buf + i);
        i += nl + 1;
    }
    r->structured =
        json_pack("{s:o, s:I, s:I, s:I, s:b, s:o}", "path", json_text(rel), "startLine",
                  (json_int_t)a, "endLine", (json_int_t)b, "totalLines", (json_int_t)total,
                  "truncated", truncated, "text", json_text(text.buf ? text.buf : ""));
    sb_release(&text);
    free(rel);
}

static const McpField read_fields[] = {
    {"path", MCP_T_STRING, 1, 0, 4096, NULL,
     "An indexed file, relative to the workspace root (or absolute inside it)."},
    {"startLine", MCP_T_INT, 0, 1, 100000000, NULL, "First line, 1-based (default 1)."},
    {"endLine", MCP_T_INT, 0, 1, 100000000, NULL,
     "Last line, inclusive (default startLine + 199; at most 400 lines and 100 KB are "
     "returned)."},
};

const McpTool mcp_tool_read = {
    "read",
    "Read source lines",
    "Lines of an indexed source file as they are on disk now, numbered. Only files inside the "
    "workspace that the index holds; at most 400 lines or 100 KB per call.",
    read_fields,
    sizeof read_fields / sizeof read_fields[0],
    1,
    run_read,
};
