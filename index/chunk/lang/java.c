/* java.c - Java: a package is a directory below a source root, found from
 * the file's own package declaration. */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

extern const char idx_query_java[];
const TSLanguage *tree_sitter_java(void);

static void java__import(LangParse *p, TSNode node)
{
    char *text = idx_lang_node_text(p, node);
    StrBuf path;
    sb_init(&path);
    /* "import static a.b.C.m;" / "import a.b.*;": keep the dotted path */
    const char *s = text + 6;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (!strncmp(s, "static", 6) && (s[6] == ' ' || s[6] == '\t')) s += 6;
    for (; *s && *s != ';'; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') sb_addc(&path, *s);
    size_t n = path.len;
    if (n > 2 && !strcmp(path.buf + n - 2, ".*")) {
        path.buf[n - 2] = '\0';
        idx_lang_add_import(p, node, path.buf, "*", "*");
    } else if (n) {
        const char *last = strrchr(path.buf, '.');
        idx_lang_add_import(p, node, path.buf, NULL, last ? last + 1 : path.buf);
    }
    sb_release(&path);
    free(text);
}

/* a.b.C -> <source root>.a.b + member C (the class, defined in the
 * directory module a.b); a static member a.b.C.m -> member C.m. */
static int java__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    char *dir = idx_lang_dirname(ctx->path);
    size_t dn = strlen(dir), pn = strlen(ctx->package);
    StrBuf root, pkg_path;
    sb_init(&root);
    sb_init(&pkg_path);
    sb_adds(&pkg_path, ctx->package);
    for (size_t i = 0; i < pkg_path.len; i++)
        if (pkg_path.buf[i] == '.') pkg_path.buf[i] = '/';
    if (pn && dn >= pn && !strcmp(dir + dn - pn, pkg_path.buf) &&
        (dn == pn || dir[dn - pn - 1] == '/'))
        sb_add(&root, dir, dn == pn ? 0 : dn - pn - 1);
    for (size_t i = 0; i < root.len; i++)
        if (root.buf[i] == '/') root.buf[i] = '.';
    int ok = 0;
    if (r->member && !strcmp(r->member, "*")) {
        if (root.len) sb_addc(&root, '.');
        sb_adds(&root, r->module);
        ok = 1;
    } else {
        /* the package is the lowercase prefix; the rest names a class and members */
        const char *m = r->module, *cls = NULL;
        for (const char *p = m; *p; p = strchr(p, '.') ? strchr(p, '.') + 1 : p + strlen(p))
            if (*p >= 'A' && *p <= 'Z') {
                cls = p;
                break;
            }
        if (cls && cls > m) {
            if (root.len) sb_addc(&root, '.');
            sb_add(&root, m, (size_t)(cls - m - 1));
            free(r->member);
            r->member = xstrdup(cls);
            ok = 1;
        }
    }
    if (ok) {
        free(r->module);
        r->module = sb_detach(&root, NULL);
    }
    sb_release(&root);
    sb_release(&pkg_path);
    free(dir);
    return ok;
}

static const char *const java__exts[] = {".java", NULL};
static const char *const java__tests[] = {"test/", "tests/", "*Test.java", "*Tests.java", NULL};
static const char *const java__comments[] = {"line_comment", "block_comment", NULL};

static const char *const java__builtin_methods[] = {
    "add",        "addAll",   "get",      "put",    "remove",   "contains",  "containsKey",
    "size",       "isEmpty",  "clear",    "equals", "hashCode", "toString",  "iterator",
    "hasNext",    "next",     "append",   "length", "charAt",   "substring", "indexOf",
    "startsWith", "endsWith", "trim",     "split",  "getClass", "stream",    "forEach",
    "keySet",     "values",   "entrySet", "getKey", "getValue", "compareTo", NULL,
};

/* Classes of java.lang, in scope without an import, whose static members a
 * call names (`Math.max`, `System.nanoTime`) */
static const char *const java__builtin_objects[] = {
    "Boolean", "Byte",    "Character", "Class",      "Double", "Float",  "Integer", "Long", "Math",
    "Object",  "Runtime", "Short",     "StrictMath", "String", "System", "Thread",  NULL,
};

static const char *const java__markers[] = {
    "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", NULL};
static const char *const java__self[] = {"this", NULL};
static const char *const java__keywords[] = {
    "boolean", "break",   "case",   "catch",   "class",     "continue", "default",
    "else",    "extends", "final",  "finally", "for",       "if",       "implements",
    "int",     "new",     "null",   "private", "protected", "public",   "return",
    "static",  "super",   "switch", "this",    "throw",     "throws",   "true",
    "false",   "try",     "void",   "while",   NULL};

const IdxLang idx_lang_java = {
    .graph_limits =
        "overrides a call through a base type or an interface reaches, calls on a value whose type "
        "is inferred (var, lambda parameters: linked only when a single definition anywhere has "
        "that name), reflection, lambdas and method references passed as values",
    .keywords = java__keywords,
    .self_words = java__self,
    .parent_word = "super",
    .name = "java",
    .exts = java__exts,
    .fence = "java",
    .markers = java__markers,
    .grammar = tree_sitter_java,
    .query = idx_query_java,
    .comments = java__comments,
    .tests = java__tests,
    .module_name = idx_lang_module_dir,
    .import = java__import,
    .resolve_import = java__resolve,
    .implicit_this = 1,
    .inherited_members = 1,
    .builtin_methods = java__builtin_methods,
    .builtin_objects = java__builtin_objects,
};
