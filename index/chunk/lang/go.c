/* go.c - Go: a package is a directory; imports inside the workspace's
 * module (go.mod) resolve to that directory. */
#include "lang.h"

#include <stdlib.h>
#include <string.h>

extern const char idx_query_go[];
const TSLanguage *tree_sitter_go(void);

static void go__import(LangParse *p, TSNode spec)
{
    TSNode path = ts_node_child_by_field_name(spec, "path", 4);
    TSNode name = ts_node_child_by_field_name(spec, "name", 4);
    if (ts_node_is_null(path)) return;
    char *imp = idx_lang_string_text(p, path);
    char *alias = ts_node_is_null(name) ? NULL : idx_lang_node_text(p, name);
    if (!alias) {
        const char *slash = strrchr(imp, '/');
        alias = xstrdup(slash ? slash + 1 : imp);
    }
    if (!strcmp(alias, "."))
        idx_lang_add_import(p, spec, imp, "*", "*");
    else if (strcmp(alias, "_") != 0)
        idx_lang_add_import(p, spec, imp, NULL, alias);
    free(imp);
    free(alias);
}

/* The module path declared by root/go.mod, or NULL. Caller frees. */
static char *go__module_path(const char *root)
{
    StrBuf text;
    char *mod = NULL;
    sb_init(&text);
    /* never a go.mod linked from outside the workspace */
    if (path_read_under(root, "go.mod", &text, 1u << 20, NULL) == CR_OK) {
        for (const char *p = text.buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (strncmp(p, "module", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) continue;
            p += 6;
            while (*p == ' ' || *p == '\t' || *p == '"')
                p++;
            size_t n = strcspn(p, " \t\r\n\"");
            if (n) mod = xstrndup(p, n);
            break;
        }
    }
    sb_release(&text);
    return mod;
}

static int go__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    char *mod = go__module_path(ctx->root);
    size_t n = mod ? strlen(mod) : 0;
    int ok = 0;
    if (mod && !strncmp(r->module, mod, n) && r->module[n] == '/' && r->module[n + 1]) {
        char *rel = xstrdup(r->module + n + 1);
        for (char *p = rel; *p; p++)
            if (*p == '/') *p = '.';
        free(r->module);
        r->module = rel;
        ok = 1;
    }
    free(mod);
    return ok;
}

static const char *const go__exts[] = {".go", NULL};
static const char *const go__markers[] = {"go.mod", "go.work", NULL};
static const char *const go__comments[] = {"comment", NULL};
static const char *const go__tests[] = {"*_test.go", "testdata/", NULL};
/* `var x = ...`: the declaration holds its doc comment */
static const char *const go__wrappers[] = {"var_declaration", NULL};

static const char *const go__keywords[] = {
    "break", "case", "const", "continue", "default", "defer",  "else", "false", "for",
    "func",  "if",   "nil",   "package",  "return",  "switch", "true", "var",   NULL};

const IdxLang idx_lang_go = {
    .keywords = go__keywords,
    .name = "go",
    .exts = go__exts,
    .fence = "go",
    .markers = go__markers,
    .grammar = tree_sitter_go,
    .query = idx_query_go,
    .comments = go__comments,
    .tests = go__tests,
    .wrappers = go__wrappers,
    .module_name = idx_lang_module_dir,
    .import = go__import,
    .resolve_import = go__resolve,
};
