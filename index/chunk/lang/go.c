/* go.c - Go: a package is a directory; imports inside the workspace's
 * module (go.mod) resolve to that directory. */
#include "lang.h"

#include <dirent.h>
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

/* Whether root/rel is a folder holding a .go file. */
static int go__package_dir(const char *root, const char *rel)
{
    StrBuf sb;
    sb_init(&sb);
    sb_addf(&sb, "%s/%s", root, rel);
    DIR *d = opendir(sb.buf);
    int ok = 0;
    for (struct dirent *de; d && !ok && (de = readdir(d)) != NULL;) {
        size_t n = strlen(de->d_name);
        ok = n > 3 && !strcmp(de->d_name + n - 3, ".go");
    }
    if (d) closedir(d);
    sb_release(&sb);
    return ok;
}

static void go__set_module(ChunkRef *r, const char *rel)
{
    char *m = xstrdup(rel);
    for (char *p = m; *p; p++)
        if (*p == '/') *p = '.';
    free(r->module);
    r->module = m;
}

/* An import inside the workspace's module (go.mod) is the folder it names
 * (the module's own path: its root folder);
 * without a go.mod (a GOPATH checkout, a vendored copy), a path whose
 * first element is a domain ("github.com/x/y/binding") is the longest
 * tail of it that is a package folder of the workspace ("binding"), or
 * the root folder when the path ends with that folder's name. Any
 * other import is a library's package (the standard library's paths have
 * no domain): it binds its name to the path as written, which names no
 * workspace module, so that a call through it (`json.Marshal`,
 * `http.HandlerFunc`) is the library's and never a workspace definition's
 * that shares the name. */
static int go__resolve(const LangImportCtx *ctx, ChunkRef *r)
{
    char *mod = go__module_path(ctx->root);
    size_t n = mod ? strlen(mod) : 0;
    /* (the module's own path is its root folder's package) */
    if (mod && !strncmp(r->module, mod, n) &&
        (!r->module[n] || (r->module[n] == '/' && r->module[n + 1]))) {
        go__set_module(r, r->module[n] ? r->module + n + 1 : "");
        free(mod);
        return 1;
    }
    size_t first = strcspn(r->module, "/");
    if (!mod && memchr(r->module, '.', first) && r->module[first]) {
        for (const char *p = r->module + first; p; p = strchr(p + 1, '/')) {
            if (p[1] && go__package_dir(ctx->root, p + 1)) {
                char *rel = xstrdup(p + 1);
                go__set_module(r, rel);
                free(rel);
                free(mod);
                return 1;
            }
        }
        /* the workspace's root package itself: a checkout lies at
         * GOPATH/src/<import path>, its folder named as the path ends */
        const char *last = strrchr(r->module, '/') + 1;
        const char *base = strrchr(ctx->root, '/');
        base = base ? base + 1 : ctx->root;
        if (!strcmp(last, base) && go__package_dir(ctx->root, ".")) {
            go__set_module(r, "");
            free(mod);
            return 1;
        }
    }
    free(mod);
    return 1; /* a library's: as written */
}

static const char *const go__exts[] = {".go", NULL};
static const char *const go__markers[] = {"go.mod", "go.work", NULL};
static const char *const go__comments[] = {"comment", NULL};
static const char *const go__tests[] = {"*_test.go", "testdata/", NULL};
/* `var x = ...`: the declaration holds its doc comment */
static const char *const go__wrappers[] = {"var_declaration", NULL};

/* Methods of the standard library's types (http.Header, io.Writer,
 * sync.Mutex, context.Context, bytes.Buffer, time.Time, error): a call on
 * a receiver the indexer cannot type names one of these far more often
 * than a workspace method of that name. */
static const char *const go__builtin_methods[] = {
    "Add",         "Del",    "Get",     "Set",      "Values",    "Write",   "WriteString",
    "WriteHeader", "Read",   "ReadAll", "Close",    "Flush",     "String",  "Error",
    "Header",      "Len",    "Lock",    "Unlock",   "RLock",     "RUnlock", "Wait",
    "Done",        "Err",    "Value",   "Deadline", "Bytes",     "Reset",   "Load",
    "Store",       "Format", "Unix",    "Sub",      "Before",    "After",   "Equal",
    "Query",       "Scan",   "Exec",    "Cookie",   "FormValue", "Unwrap",  NULL,
};

static const char *const go__keywords[] = {
    "break", "case", "const", "continue", "default", "defer",  "else", "false", "for",
    "func",  "if",   "nil",   "package",  "return",  "switch", "true", "var",   NULL};

const IdxLang idx_lang_go = {
    .builtin_methods = go__builtin_methods,
    .graph_limits = "calls on a value whose type is not written (a range variable, a table's "
                    "field: linked only when a single method anywhere has that name; through "
                    "an interface: only when the value's type is written), calls through function "
                    "values, reflection",
    .call_chains = 1,
    .package_vars = 1,
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
