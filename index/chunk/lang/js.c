/* js.c - JavaScript and TypeScript (and TSX): ES imports and require() of
 * relative paths, resolved with the usual extensions and index files. */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

extern const char idx_query_javascript[], idx_query_typescript[];
const TSLanguage *tree_sitter_javascript(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);

static void js__named(LangParse *p, TSNode at, TSNode list, const char *spec)
{
    for (uint32_t i = 0; i < ts_node_named_child_count(list); i++) {
        TSNode s = ts_node_named_child(list, i);
        const char *t = ts_node_type(s);
        TSNode name = ts_node_child_by_field_name(s, "name", 4);
        TSNode alias = ts_node_child_by_field_name(s, "alias", 5);
        if (!strcmp(t, "shorthand_property_identifier_pattern"))
            name = s;
        else if (!strcmp(t, "pair_pattern")) {
            name = ts_node_child_by_field_name(s, "key", 3);
            alias = ts_node_child_by_field_name(s, "value", 5);
        } else if (strcmp(t, "import_specifier") != 0 && strcmp(t, "export_specifier") != 0)
            continue;
        if (ts_node_is_null(name)) continue;
        char *n = idx_lang_node_text(p, name);
        char *a = ts_node_is_null(alias) ? xstrdup(n) : idx_lang_node_text(p, alias);
        idx_lang_add_import(p, at, spec, n, a);
        free(n);
        free(a);
    }
}

static void js__import_statement(LangParse *p, TSNode node)
{
    TSNode src = ts_node_child_by_field_name(node, "source", 6);
    if (ts_node_is_null(src)) return;
    char *spec = idx_lang_string_text(p, src);
    for (uint32_t i = 0; i < ts_node_named_child_count(node); i++) {
        TSNode c = ts_node_named_child(node, i);
        if (strcmp(ts_node_type(c), "import_clause") != 0) continue;
        for (uint32_t k = 0; k < ts_node_named_child_count(c); k++) {
            TSNode g = ts_node_named_child(c, k);
            const char *t = ts_node_type(g);
            if (!strcmp(t, "identifier")) {
                char *a = idx_lang_node_text(p, g);
                idx_lang_add_import(p, node, spec, NULL, a);
                free(a);
            } else if (!strcmp(t, "namespace_import")) {
                TSNode id = ts_node_named_child(g, 0);
                if (ts_node_is_null(id)) continue;
                char *a = idx_lang_node_text(p, id);
                idx_lang_add_import(p, node, spec, NULL, a);
                free(a);
            } else if (!strcmp(t, "named_imports")) {
                js__named(p, node, g, spec);
            }
        }
    }
    free(spec);
}

/* const x = require('./y'), const {a, b: c} = require('./y'),
 * const x = require('./y').z */
static void js__require(LangParse *p, TSNode decl)
{
    TSNode name = ts_node_child_by_field_name(decl, "name", 4);
    TSNode call = ts_node_child_by_field_name(decl, "value", 5);
    if (ts_node_is_null(name) || ts_node_is_null(call)) return;
    /* const x = require('./y').z: x is y's z */
    TSNode prop = {0};
    if (!strcmp(ts_node_type(call), "member_expression")) {
        prop = ts_node_child_by_field_name(call, "property", 8);
        call = ts_node_child_by_field_name(call, "object", 6);
        if (ts_node_is_null(prop) || ts_node_is_null(call) ||
            strcmp(ts_node_type(call), "call_expression") != 0 ||
            strcmp(ts_node_type(name), "identifier") != 0)
            return;
    }
    TSNode fn = ts_node_child_by_field_name(call, "function", 8);
    TSNode args = ts_node_child_by_field_name(call, "arguments", 9);
    if (ts_node_is_null(fn) || ts_node_is_null(args) || ts_node_named_child_count(args) != 1)
        return;
    char *f = idx_lang_node_text(p, fn);
    TSNode arg = ts_node_named_child(args, 0);
    if (strcmp(f, "require") != 0 || strcmp(ts_node_type(arg), "string") != 0) {
        free(f);
        return;
    }
    char *spec = idx_lang_string_text(p, arg);
    if (!strcmp(ts_node_type(name), "identifier")) {
        char *a = idx_lang_node_text(p, name);
        char *m = ts_node_is_null(prop) ? NULL : idx_lang_node_text(p, prop);
        idx_lang_add_import(p, decl, spec, m, a);
        free(m);
        free(a);
    } else if (!strcmp(ts_node_type(name), "object_pattern")) {
        js__named(p, decl, name, spec);
    }
    free(spec);
    free(f);
}

/* A re-export: `export * from './x'` makes every name of x one of this
 * module's (a star import), `export { a, b as c } from './x'` binds a
 * and c, `export * as ns from './x'` binds ns to the module: a name
 * imported through an index file (`import { f } from './internal'`) is
 * followed to where it is defined. */
static void js__export(LangParse *p, TSNode node)
{
    TSNode src = ts_node_child_by_field_name(node, "source", 6);
    if (ts_node_is_null(src)) return;
    char *spec = idx_lang_string_text(p, src);
    int named = 0;
    for (uint32_t i = 0; i < ts_node_named_child_count(node); i++) {
        TSNode c = ts_node_named_child(node, i);
        const char *t = ts_node_type(c);
        if (!strcmp(t, "export_clause")) {
            js__named(p, node, c, spec);
            named = 1;
        } else if (!strcmp(t, "namespace_export")) {
            TSNode id = ts_node_named_child(c, 0);
            if (ts_node_is_null(id)) continue;
            char *a = idx_lang_node_text(p, id);
            idx_lang_add_import(p, node, spec, NULL, a);
            free(a);
            named = 1;
        }
    }
    if (!named) idx_lang_add_import(p, node, spec, "*", "*");
    free(spec);
}

/* `module.exports = f` (and `exports = module.exports = f`): the module's
 * value is f, a name of its own, or the function or class assigned there
 * (defined under its own name, `module.exports = function f (…)`, else
 * under `module.exports`, by the query): a call of the module imported
 * whole is a call of it (IDX_LANG_MODULE_VALUE). `exports.x = y` and
 * `module.exports.x = function (…) {…}` export x: y, or the function
 * defined under the property's name, is what `require('./m').x` and
 * `const { x } = require('./m')` name (IDX_LANG_MODULE_VALUE "x"). */
static void js__module_value(LangParse *p, TSNode node)
{
    static const char *const holders[] = {"module.exports", "exports", NULL};
    TSNode left = ts_node_child_by_field_name(node, "left", 4);
    TSNode right = ts_node_child_by_field_name(node, "right", 5);
    if (ts_node_is_null(left) || ts_node_is_null(right)) return;
    char *l = idx_lang_node_text(p, left);
    const char *t = ts_node_type(right), *x = NULL;
    for (size_t i = 0; holders[i] && !x; i++) {
        size_t n = strlen(holders[i]);
        if (!strncmp(l, holders[i], n) && l[n] == '.' && l[n + 1] && !strchr(l + n + 1, '.'))
            x = l + n + 1;
    }
    int whole = !strcmp(l, "module.exports");
    char *v = NULL;
    if (!strcmp(t, "identifier")) {
        v = idx_lang_node_text(p, right);
    } else if (whole && !strcmp(t, "function_expression")) {
        TSNode fname = ts_node_child_by_field_name(right, "name", 4);
        v = ts_node_is_null(fname) ? xstrdup(l) : idx_lang_node_text(p, fname);
    } else if (strcmp(t, "call_expression") != 0) {
        v = xstrdup(l); /* a function or class the query defines under l */
    }
    StrBuf alias;
    sb_init(&alias);
    sb_addf(&alias, "%s%s", IDX_LANG_MODULE_VALUE, x ? x : "");
    if (v && (whole || (x && strcmp(v, x) != 0)))
        idx_lang_add_import(p, node, IDX_LANG_OWN_MODULE, v, alias.buf);
    sb_release(&alias);
    free(v);
    free(l);
}

static void js__import(LangParse *p, TSNode node)
{
    const char *t = ts_node_type(node);
    if (!strcmp(t, "import_statement"))
        js__import_statement(p, node);
    else if (!strcmp(t, "export_statement"))
        js__export(p, node);
    else if (!strcmp(t, "assignment_expression"))
        js__module_value(p, node);
    else
        js__require(p, node);
}

static const char *const js__exts[] = {".js", ".jsx", ".mjs", ".cjs", NULL};
static const char *const ts__exts[] = {".ts", ".mts", ".cts", NULL};
static const char *const tsx__exts[] = {".tsx", NULL};

/* Whether path is a source file of this family (by the rows' extensions). */
static int js__is_source(const char *path)
{
    static const char *const *const all[] = {js__exts, ts__exts, tsx__exts};
    size_t n = strlen(path);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        for (const char *const *e = all[k]; *e; e++) {
            size_t m = strlen(*e);
            if (n > m && !strcmp(path + n - m, *e)) return 1;
        }
    return 0;
}

static char *js__module_name(const char *relpath);

static int js__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    static const char *const sfx[] = {
        "",          ".ts",        ".tsx",      ".js",        ".jsx",       ".mjs", ".cjs",
        "/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs", NULL};
    /* A bare specifier is a path from the workspace root where a file is
     * there (TypeScript's baseUrl; a package the workspace holds as a
     * folder at its root), else a library's package. */
    int relative = r->module[0] == '.';
    char *dir = relative ? idx_lang_dirname(ctx->path) : xstrdup("");
    char *base = r->module[0] && r->module[0] != '/' ? idx_lang_join(dir, r->module) : NULL;
    free(dir);
    if (!base) return 0;
    StrBuf cand;
    sb_init(&cand);
    int ok = 0;
    for (size_t i = 0; sfx[i] && !ok; i++) {
        sb_reset(&cand);
        sb_addf(&cand, "%s%s", base, sfx[i]);
        if (!js__is_source(cand.buf) || !idx_lang_file_exists(ctx->root, cand.buf)) continue;
        free(r->module);
        r->module = js__module_name(cand.buf);
        ok = r->module[0] != '\0';
    }
    sb_release(&cand);
    free(base);
    /* A library's module bound whole (`const iconv = require('iconv-lite')`,
     * `import * as fs from 'fs'`) stays as written: a call on it
     * (`iconv.decode()`) is none of the workspace's. A name imported from
     * one is dropped (found by the name alone where it is unique). */
    if (!ok && !relative && !r->member) ok = IDX_IMPORT_LIBRARY;
    return ok;
}

static char *js__module_name(const char *relpath)
{
    static const char *const dir_files[] = {"index", NULL};
    return idx_lang_module_strip_ext(relpath, dir_files);
}

static const char *const js__interps[] = {"node", NULL};
static const char *const js__markers[] = {"package.json", "deno.json", NULL};
static const char *const ts__markers[] = {"tsconfig.json", "package.json", "deno.json", NULL};
static const char *const js__tests[] = {"test/", "tests/", "__tests__/", ".test.", ".spec.", NULL};
static const char *const js__comments[] = {"comment", NULL};
static const char *const js__wrappers[] = {"export_statement", "expression_statement", NULL};
static const char *const ts__prefixes[] = {"decorator", NULL};

static const char *const js__builtin_methods[] = {
    "push",
    "pop",
    "shift",
    "unshift",
    "slice",
    "splice",
    "concat",
    "join",
    "split",
    "replace",
    "indexOf",
    "includes",
    "map",
    "filter",
    "reduce",
    "forEach",
    "find",
    "some",
    "every",
    "sort",
    "keys",
    "values",
    "entries",
    "get",
    "set",
    "has",
    "delete",
    "clear",
    "add",
    "then",
    "catch",
    "finally",
    "toString",
    "trim",
    "toLowerCase",
    "toUpperCase",
    "startsWith",
    "endsWith",
    "charAt",
    "substring",
    "match",
    "test",
    "call",
    "apply",
    "bind",
    "hasOwnProperty",
    /* Node's streams, emitters and HTTP messages (`req.pipe(…)`,
     * `res.setHeader(…)`) */
    "pipe",
    "on",
    "once",
    "emit",
    "write",
    "end",
    "setHeader",
    "getHeader",
    "removeHeader",
    "writeHead",
    NULL,
};

/* Global functions and constructors of JavaScript and its hosts (browsers,
 * Node): a bare call of one the module neither defines nor imports is not
 * a workspace definition that shares the name. */
static const char *const js__builtins[] = {
    "Array",
    "Boolean",
    "Date",
    "Error",
    "Function",
    "Map",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RegExp",
    "Set",
    "String",
    "Symbol",
    "TypeError",
    "WeakMap",
    "WeakSet",
    "clearInterval",
    "clearTimeout",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "fetch",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "queueMicrotask",
    "require",
    "setImmediate",
    "setInterval",
    "setTimeout",
    "structuredClone",
    NULL,
};

/* Built-in objects a call names a member of (`JSON.stringify`), JavaScript's
 * and Node's */
static const char *const js__builtin_objects[] = {
    "Array",  "Atomics", "Buffer",     "Date",    "Intl",    "JSON",
    "Math",   "Number",  "Object",     "Promise", "Reflect", "String",
    "Symbol", "console", "globalThis", "process", NULL,
};

/* JavaScript and TypeScript */
static const char *const js__self[] = {"this", NULL};
/* Array methods whose callback takes each element first. */
static const char *const js__element_methods[] = {
    "forEach",       "map",  "filter", "find",    "findIndex", "findLast",
    "findLastIndex", "some", "every",  "flatMap", NULL};
static const char *const js__keywords[] = {
    "break", "case",     "catch", "const",     "continue", "default", "else",   "false",
    "for",   "function", "if",    "let",       "new",      "null",    "return", "switch",
    "this",  "true",     "try",   "undefined", "var",      "while",   NULL};

const IdxLang idx_lang_javascript = {
    .graph_limits = "calls on a value whose class is not known statically (linked only when a "
                    "single definition anywhere has that name), computed member calls "
                    "(obj[name]()), callbacks passed as values, eval",
    .keywords = js__keywords,
    .self_words = js__self,
    .prototype_word = "prototype",
    .parent_word = "super",
    .constructor_name = "constructor",
    .name = "javascript",
    .exts = js__exts,
    .fence = "javascript",
    .markers = js__markers,
    .interps = js__interps,
    .grammar = tree_sitter_javascript,
    .query = idx_query_javascript,
    .comments = js__comments,
    .tests = js__tests,
    .wrappers = js__wrappers,
    .module_name = js__module_name,
    .import = js__import,
    .resolve_import = js__resolve,
    .inherited_members = 1,
    .base_callers = 1,
    .builtin_methods = js__builtin_methods,
    .builtins = js__builtins,
    .builtin_objects = js__builtin_objects,
};

static const char *const ts__keywords[] = {
    "break", "case",    "catch",     "const",    "continue",  "default", "else",
    "false", "for",     "function",  "if",       "interface", "let",     "new",
    "null",  "private", "public",    "readonly", "return",    "switch",  "this",
    "true",  "try",     "undefined", "var",      "while",     NULL};

/* TypeScript and TSX are one row's data on two grammars (the tsx grammar has
 * TypeScript's node types, and JSX's): the same query and hooks; the name, the
 * suffixes, the fence and the grammar are each row's own. */
#define TS_ROW_SHARED                                                                              \
    .graph_limits = "calls on a value whose type is inferred rather than written (a callback's "   \
                    "parameter its callee does not declare, an array's element, a module-level "   \
                    "constant: linked only when a single definition "                              \
                    "anywhere has that name), overrides a call through a base class reaches, "     \
                    "computed member calls (obj[name]()), callbacks passed as values",             \
    .call_chains = 1, .keywords = ts__keywords, .self_words = js__self, .parent_word = "super",    \
    .prototype_word = "prototype", .constructor_name = "constructor",                              \
    .element_methods = js__element_methods, .markers = ts__markers, .query = idx_query_typescript, \
    .comments = js__comments, .tests = js__tests, .wrappers = js__wrappers,                        \
    .prefixes = ts__prefixes, .module_name = js__module_name, .import = js__import,                \
    .resolve_import = js__resolve, .inherited_members = 1, .base_callers = 1,                      \
    .builtin_methods = js__builtin_methods, .builtins = js__builtins,                              \
    .builtin_objects = js__builtin_objects

const IdxLang idx_lang_typescript = {
    TS_ROW_SHARED,
    .name = "typescript",
    .exts = ts__exts,
    .fence = "typescript",
    .grammar = tree_sitter_typescript,
};

const IdxLang idx_lang_tsx = {
    TS_ROW_SHARED, .name = "tsx", .exts = tsx__exts, .fence = "tsx", .grammar = tree_sitter_tsx,
};
