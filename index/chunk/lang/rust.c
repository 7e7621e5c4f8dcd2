/* rust.c - Rust: `use crate::/self::/super::` paths and `mod x;` resolve
 * inside the crate (the folder holding src/ is its root). */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

extern const char idx_query_rust[];
const TSLanguage *tree_sitter_rust(void);

/* Flattens a use tree into imports: prefix is the path so far ("a::b"). */
static void rust__use(LangParse *p, TSNode at, TSNode n, const char *prefix, int depth)
{
    const char *t = ts_node_type(n);
    StrBuf path;
    sb_init(&path);
    if (depth > 16) goto out;
    if (!strcmp(t, "scoped_use_list")) {
        TSNode pth = ts_node_child_by_field_name(n, "path", 4);
        TSNode list = ts_node_child_by_field_name(n, "list", 4);
        sb_adds(&path, prefix);
        if (!ts_node_is_null(pth)) {
            char *s = idx_lang_node_text(p, pth);
            if (path.len) sb_adds(&path, "::");
            sb_adds(&path, s);
            free(s);
        }
        if (!ts_node_is_null(list)) rust__use(p, at, list, path.buf, depth + 1);
    } else if (!strcmp(t, "use_list")) {
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
            rust__use(p, at, ts_node_named_child(n, i), prefix, depth + 1);
    } else if (!strcmp(t, "use_as_clause")) {
        TSNode pth = ts_node_child_by_field_name(n, "path", 4);
        TSNode al = ts_node_child_by_field_name(n, "alias", 5);
        if (ts_node_is_null(pth) || ts_node_is_null(al)) goto out;
        char *s = idx_lang_node_text(p, pth), *a = idx_lang_node_text(p, al);
        sb_addf(&path, "%s%s%s", prefix, *prefix ? "::" : "", s);
        if (strcmp(a, "_") != 0) idx_lang_add_import(p, at, path.buf, NULL, a);
        free(s);
        free(a);
    } else if (!strcmp(t, "use_wildcard")) {
        char *s = idx_lang_node_text(p, n);
        size_t k = strlen(s);
        if (k >= 3 && !strcmp(s + k - 3, "::*")) s[k - 3] = '\0';
        sb_addf(&path, "%s%s%s", prefix, *prefix && *s ? "::" : "", s);
        idx_lang_add_import(p, at, path.buf, "*", "*");
        free(s);
    } else if (!strcmp(t, "scoped_identifier") || !strcmp(t, "identifier") || !strcmp(t, "crate") ||
               !strcmp(t, "self") || !strcmp(t, "super")) {
        char *s = idx_lang_node_text(p, n);
        sb_addf(&path, "%s%s%s", prefix, *prefix ? "::" : "", s);
        const char *last = strrchr(path.buf, ':');
        last = last ? last + 1 : path.buf;
        if (!strcmp(last, "self")) { /* use a::b::{self} binds b */
            path.len -= 6;
            path.buf[path.len] = '\0';
            last = strrchr(path.buf, ':');
            last = last ? last + 1 : path.buf;
        }
        char *alias = xstrdup(last);
        idx_lang_add_import(p, at, path.buf, NULL, alias);
        free(alias);
        free(s);
    }
out:
    sb_release(&path);
}

static void rust__import(LangParse *p, TSNode node)
{
    if (!strcmp(ts_node_type(node), "mod_item")) {
        /* `mod x;` (no body) brings in the file x.rs or x/mod.rs */
        if (!ts_node_is_null(ts_node_child_by_field_name(node, "body", 4))) return;
        TSNode name = ts_node_child_by_field_name(node, "name", 4);
        if (ts_node_is_null(name)) return;
        char *s = idx_lang_node_text(p, name);
        StrBuf path;
        sb_init(&path);
        sb_addf(&path, "self::%s", s);
        idx_lang_add_import(p, node, path.buf, NULL, s);
        sb_release(&path);
        free(s);
        return;
    }
    TSNode arg = ts_node_child_by_field_name(node, "argument", 8);
    if (!ts_node_is_null(arg)) rust__use(p, node, arg, "", 0);
}

/* Module of the crate root: the path up to and including "src". */
static char *rust__crate_root(const char *path)
{
    const char *p = path, *src = NULL;
    while (p) {
        if (!strncmp(p, "src/", 4)) src = p;
        p = strchr(p, '/');
        if (p) p++;
    }
    size_t n = src ? (size_t)(src - path) + 3 : 0;
    char *m = xstrndup(path, n);
    for (char *q = m; *q; q++)
        if (*q == '/') *q = '.';
    return m;
}

static int rust__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    const char *spec = r->module;
    StrBuf out;
    sb_init(&out);
    const char *base = strrchr(ctx->path, '/');
    base = base ? base + 1 : ctx->path;
    int dir_module = !strcmp(base, "mod.rs") || !strcmp(base, "lib.rs") || !strcmp(base, "main.rs");
    if (!strncmp(spec, "crate::", 7) || !strcmp(spec, "crate")) {
        char *root = rust__crate_root(ctx->path);
        sb_adds(&out, root);
        free(root);
        spec += spec[5] ? 7 : 5;
    } else if (!strncmp(spec, "self::", 6)) {
        sb_adds(&out, ctx->module);
        spec += 6;
    } else if (!strncmp(spec, "super::", 7)) {
        sb_adds(&out, ctx->module);
        while (!strncmp(spec, "super::", 7)) {
            char *dot = strrchr(out.buf, '.');
            sb_truncate(&out, dot ? (size_t)(dot - out.buf) : 0);
            spec += 7;
        }
    } else {
        sb_release(&out);
        return 0; /* another crate, or a name in scope we cannot see */
    }
    (void)dir_module;
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ":");
        if (out.len) sb_addc(&out, '.');
        sb_add(&out, p, n);
        p += n;
        while (*p == ':')
            p++;
    }
    if (!out.len) {
        sb_release(&out);
        return 0;
    }
    free(r->module);
    r->module = sb_detach(&out, NULL);
    return 1;
}

static char *rust__module_name(const char *relpath)
{
    static const char *const dir_files[] = {"mod", "lib", "main", NULL};
    return idx_lang_module_strip_ext(relpath, dir_files);
}

static const char *const rust__exts[] = {".rs", NULL};
static const char *const rust__markers[] = {"Cargo.toml", NULL};
static const char *const rust__comments[] = {"line_comment", "block_comment", NULL};
static const char *const rust__tests[] = {"tests/", "benches/", "*_test.rs", "*_tests.rs", NULL};
static const char *const rust__test_modules[] = {"tests", "test", NULL};
static const char *const rust__prefixes[] = {"attribute_item", NULL};

static const char *const rust__builtin_methods[] = {
    "unwrap",    "expect",  "clone",       "iter",     "iter_mut",
    "into_iter", "map",     "and_then",    "ok",       "err",
    "is_some",   "is_none", "is_ok",       "is_err",   "unwrap_or",
    "push",      "pop",     "len",         "is_empty", "insert",
    "remove",    "get",     "get_mut",     "contains", "collect",
    "as_ref",    "as_mut",  "to_string",   "to_owned", "as_str",
    "as_bytes",  "extend",  "clear",       "next",     "fmt",
    "eq",        "cmp",     "partial_cmp", "hash",     "into",
    "from",      "borrow",  "take",        "replace",  "unwrap_or_else",
    "map_err",   "ok_or",   "ok_or_else",  "as_deref", NULL,
};

/* `Self`: the type an impl is for */
static const char *const rust__self[] = {"self", "Self", NULL};
static const char *const rust__keywords[] = {
    "as",   "break",  "const", "continue", "else",  "enum",  "false", "fn",  "for",
    "if",   "impl",   "in",    "let",      "loop",  "mod",   "mut",   "pub", "return",
    "self", "struct", "true",  "use",      "where", "while", NULL};

const IdxLang idx_lang_rust = {
    .graph_limits = "calls on a value whose type is inferred (linked only when a single definition "
                    "anywhere has that name), every implementation a trait object reaches, code "
                    "macros generate, closures passed as values",
    .keywords = rust__keywords,
    .self_words = rust__self,
    .name = "rust",
    .exts = rust__exts,
    .fence = "rust",
    .markers = rust__markers,
    .grammar = tree_sitter_rust,
    .query = idx_query_rust,
    .comments = rust__comments,
    .tests = rust__tests,
    .test_modules = rust__test_modules,
    .prefixes = rust__prefixes,
    .module_name = rust__module_name,
    .import = rust__import,
    .resolve_import = rust__resolve,
    .builtin_methods = rust__builtin_methods,
    .interface_dispatch = 1,
};
