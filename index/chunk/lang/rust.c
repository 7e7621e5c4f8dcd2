/* rust.c - Rust: `use crate::/self::/super::` paths and `mod x;` resolve
 * inside the crate (the folder holding src/ is its root). */
#include "lang.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

extern const char idx_query_rust[];
const TSLanguage *tree_sitter_rust(void);

/* Adds import spec `path` written inside the inline modules `inner` of its
 * file ("a::b": `mod a { mod b { use … } }`, "" at the file's top): a path
 * from `self` or `super` is made one from the file's own module, where
 * rust__resolve reads it (`use super::*` in `mod tests` is the file's). */
static void rust__add(LangParse *p, TSNode at, const char *path, const char *member,
                      const char *alias, const char *inner)
{
    if (!*inner || (strncmp(path, "self::", 6) != 0 && strncmp(path, "super::", 7) != 0 &&
                    strcmp(path, "self") != 0 && strcmp(path, "super") != 0)) {
        idx_lang_add_import(p, at, path, member, alias);
        return;
    }
    StrBuf mods, out;
    sb_init(&mods);
    sb_init(&out);
    sb_adds(&mods, inner);
    const char *rest = path;
    if (!strncmp(rest, "self", 4)) rest += rest[4] ? 6 : 4;
    while (!strncmp(rest, "super", 5) && (rest[5] == '\0' || rest[5] == ':') && mods.len) {
        const char *last = strstr(mods.buf, "::"), *q = last;
        while (q && (q = strstr(q + 2, "::")) != NULL)
            last = q;
        sb_truncate(&mods, last ? (size_t)(last - mods.buf) : 0);
        rest += rest[5] ? 7 : 5;
    }
    if (!strncmp(rest, "super", 5) && (rest[5] == '\0' || rest[5] == ':'))
        sb_adds(&out, rest); /* above the file's module: as written there */
    else
        sb_addf(&out, "self%s%s%s%s", mods.len ? "::" : "", mods.len ? mods.buf : "",
                *rest ? "::" : "", rest);
    idx_lang_add_import(p, at, out.buf, member, alias);
    sb_release(&mods);
    sb_release(&out);
}

/* Flattens a use tree into imports: prefix is the path so far ("a::b"),
 * inner the inline modules around it (rust__add). */
static void rust__use(LangParse *p, TSNode at, TSNode n, const char *prefix, const char *inner,
                      int depth)
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
        if (!ts_node_is_null(list)) rust__use(p, at, list, path.buf, inner, depth + 1);
    } else if (!strcmp(t, "use_list")) {
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
            rust__use(p, at, ts_node_named_child(n, i), prefix, inner, depth + 1);
    } else if (!strcmp(t, "use_as_clause")) {
        TSNode pth = ts_node_child_by_field_name(n, "path", 4);
        TSNode al = ts_node_child_by_field_name(n, "alias", 5);
        if (ts_node_is_null(pth) || ts_node_is_null(al)) goto out;
        char *s = idx_lang_node_text(p, pth), *a = idx_lang_node_text(p, al);
        sb_addf(&path, "%s%s%s", prefix, *prefix ? "::" : "", s);
        if (strcmp(a, "_") != 0) rust__add(p, at, path.buf, NULL, a, inner);
        free(s);
        free(a);
    } else if (!strcmp(t, "use_wildcard")) {
        char *s = idx_lang_node_text(p, n);
        size_t k = strlen(s);
        if (k >= 3 && !strcmp(s + k - 3, "::*")) s[k - 3] = '\0';
        sb_addf(&path, "%s%s%s", prefix, *prefix && *s ? "::" : "", s);
        rust__add(p, at, path.buf, "*", "*", inner);
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
        rust__add(p, at, path.buf, NULL, alias, inner);
        free(alias);
        free(s);
    }
out:
    sb_release(&path);
}

/* Whether the source writes `root::` in code: not in a `use` (which binds
 * its own names) nor a line comment, after no identifier character. */
static int rust__path_root(const LangParse *p, const char *root)
{
    size_t n = strlen(root);
    for (const char *q = p->src, *end = p->src + p->len;
         (q = memmem(q, (size_t)(end - q), root, n)) != NULL; q += n) {
        if (q + n + 2 > end || q[n] != ':' || q[n + 1] != ':') continue;
        if (q > p->src && (q[-1] == '_' || q[-1] == ':' || isalnum((unsigned char)q[-1]))) continue;
        const char *line = q;
        while (line > p->src && line[-1] != '\n')
            line--;
        int code = 1;
        for (const char *c = line; c < q && code; c++)
            code = !(c[0] == '/' && c[1] == '/') &&
                   !(!strncmp(c, "use ", 4) && (c == line || c[-1] == ' ' || c[-1] == ')'));
        if (code) return 1;
    }
    return 0;
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
    if (!strcmp(ts_node_type(node), "source_file")) {
        /* `crate::a::f()`, `super::f()` written in code: the path's first
         * segment bound as a `use` binds it (not `super` where the file
         * holds inline modules, in which it names another module) */
        int inline_mod = 0;
        for (uint32_t i = 0; i < ts_node_named_child_count(node) && !inline_mod; i++) {
            TSNode c = ts_node_named_child(node, i);
            inline_mod = !strcmp(ts_node_type(c), "mod_item") &&
                         !ts_node_is_null(ts_node_child_by_field_name(c, "body", 4));
        }
        static const char *const roots[] = {"crate", "super"};
        for (int k = 0; k < 2; k++)
            if ((k == 0 || !inline_mod) && rust__path_root(p, roots[k]))
                idx_lang_add_import(p, node, roots[k], NULL, roots[k]);
        return;
    }
    /* the inline modules around the declaration, outermost first */
    StrBuf inner;
    sb_init(&inner);
    for (TSNode up = ts_node_parent(node); !ts_node_is_null(up); up = ts_node_parent(up)) {
        if (strcmp(ts_node_type(up), "mod_item") != 0) continue;
        TSNode name = ts_node_child_by_field_name(up, "name", 4);
        if (ts_node_is_null(name)) continue;
        char *s = idx_lang_node_text(p, name);
        if (inner.len) {
            char *was = sb_detach(&inner, NULL);
            sb_init(&inner);
            sb_addf(&inner, "%s::%s", s, was);
            free(was);
        } else {
            sb_adds(&inner, s);
        }
        free(s);
    }
    TSNode arg = ts_node_child_by_field_name(node, "argument", 8);
    if (!ts_node_is_null(arg)) rust__use(p, node, arg, "", inner.buf ? inner.buf : "", 0);
    sb_release(&inner);
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

/* The crate a file of a package belongs to by name: its package folder is
 * the one holding the file's last src/, tests/, examples/ or benches/
 * folder, whose Cargo.toml names it (`[lib] name`, else `[package] name`
 * with '-' read as '_'). The name, and in *root the module of the
 * package's library (src/), or NULL. Caller frees both. */
static char *rust__crate_name(const char *root, const char *path, char **lib)
{
    static const char *const parts[] = {"src/", "tests/", "examples/", "benches/"};
    size_t dir = (size_t)-1;
    for (const char *p = path; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
        for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
            if (!strncmp(p, parts[i], strlen(parts[i]))) dir = (size_t)(p - path);
    *lib = NULL;
    if (dir == (size_t)-1) return NULL;
    StrBuf rel, text;
    sb_init(&rel);
    sb_init(&text);
    sb_addf(&rel, "%.*sCargo.toml", (int)dir, path);
    char *pkg = NULL, *libname = NULL;
    if (path_read_under(root, rel.buf, &text, 1u << 20, NULL) == CR_OK && text.buf) {
        int section = 0; /* 1 [package], 2 [lib] */
        for (const char *l = text.buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            while (*l == ' ' || *l == '\t')
                l++;
            if (*l == '[') {
                section = !strncmp(l, "[package]", 9) ? 1 : !strncmp(l, "[lib]", 5) ? 2 : 0;
                continue;
            }
            if (!section || strncmp(l, "name", 4) != 0) continue;
            const char *v = l + 4;
            while (*v == ' ' || *v == '\t' || *v == '=')
                v++;
            if (*v != '"') continue;
            size_t n = strcspn(v + 1, "\"\n");
            char **slot = section == 1 ? &pkg : &libname;
            if (!*slot && n) *slot = xstrndup(v + 1, n);
        }
    }
    sb_release(&text);
    char *name = libname ? libname : pkg;
    if (name != pkg) free(pkg);
    for (char *q = name; q && *q; q++)
        if (*q == '-') *q = '_';
    if (name) {
        sb_reset(&rel);
        sb_addf(&rel, "%.*ssrc", (int)dir, path);
        for (char *q = rel.buf; *q; q++)
            if (*q == '/') *q = '.';
        *lib = sb_detach(&rel, NULL);
    }
    sb_release(&rel);
    return name;
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
    } else if (!strncmp(spec, "self::", 6) || !strcmp(spec, "self")) {
        sb_adds(&out, ctx->module);
        spec += spec[4] ? 6 : 4;
    } else if (!strncmp(spec, "super::", 7) || !strcmp(spec, "super")) {
        sb_adds(&out, ctx->module);
        while (!strncmp(spec, "super::", 7) || !strcmp(spec, "super")) {
            char *dot = strrchr(out.buf, '.');
            sb_truncate(&out, dot ? (size_t)(dot - out.buf) : 0);
            spec += spec[5] ? 7 : 5;
        }
    } else {
        /* the package's own crate by its name (`use regex::Regex` in
         * tests/ or examples/, or in src/ as `crate::`); another crate, or
         * a name in scope we cannot see, is dropped */
        char *lib = NULL, *name = rust__crate_name(ctx->root, ctx->path, &lib);
        size_t seg = strcspn(spec, ":");
        int own = name && strlen(name) == seg && !strncmp(spec, name, seg);
        if (own) sb_adds(&out, lib);
        free(name);
        free(lib);
        if (!own) {
            sb_release(&out);
            return 0;
        }
        spec += seg;
        while (*spec == ':')
            spec++;
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
    .self_type = "Self",
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
