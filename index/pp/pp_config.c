/* pp_config.c - the build configuration: compile_commands.json at the
 * workspace root (or in its build/ folder), each file's -D and -U flags.
 * Read at query time and again whenever the file changes, so that answers
 * follow the configuration without indexing again. */
#include "pp_int.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct PpEntry {
    char **flags; /* "DNAME", "DNAME=VALUE", "UNAME", in command order */
    size_t n;
} PpEntry;

struct PpConfig {
    char *path;
    int64_t size, mtime;
    StrMap files; /* relative path -> index into entries */
    PpEntry *entries;
    size_t n_entries, cap_entries;
    PpEntry common; /* the flags every entry has: for files no entry compiles (headers) */
};

void idx_pp_config_free(PpConfig *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n_entries; i++) {
        for (size_t k = 0; k < c->entries[i].n; k++)
            free(c->entries[i].flags[k]);
        free(c->entries[i].flags);
    }
    for (size_t k = 0; k < c->common.n; k++)
        free(c->common.flags[k]);
    free(c->common.flags);
    free(c->entries);
    strmap_release(&c->files);
    free(c->path);
    free(c);
}

static void entry_add(PpEntry *en, size_t *cap, char kind, const char *v)
{
    if (!v[0]) return;
    ARRAY_GROW(en->flags, en->n + 1, *cap);
    size_t n = strlen(v);
    char *f = xmalloc(n + 2);
    f[0] = kind;
    memcpy(f + 1, v, n + 1);
    en->flags[en->n++] = f;
}

/* The -D and -U flags of an argument vector. */
static void entry_flags(PpEntry *en, char **argv, size_t argc)
{
    size_t cap = 0;
    for (size_t i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || (a[1] != 'D' && a[1] != 'U')) continue;
        if (a[2])
            entry_add(en, &cap, a[1], a + 2);
        else if (i + 1 < argc)
            entry_add(en, &cap, a[1], argv[++i]);
    }
}

/* A shell command split into words (quotes and backslashes as a shell
 * reads them, no expansion). Caller frees. */
static char **split_command(const char *s, size_t *n_out)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    StrBuf w;
    sb_init(&w);
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s) break;
        sb_reset(&w);
        char q = 0;
        for (; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
            if (q && *s == q)
                q = 0;
            else if (!q && (*s == '"' || *s == '\''))
                q = *s;
            else if (*s == '\\' && s[1] && q != '\'')
                sb_addc(&w, *++s);
            else
                sb_addc(&w, *s);
        }
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = xstrndup(w.buf ? w.buf : "", w.len);
    }
    sb_release(&w);
    *n_out = n;
    return v;
}

/* The file of an entry relative to root, or NULL when outside it. */
static char *entry_path(const char *root, const char *dir, const char *file)
{
    StrBuf abs;
    sb_init(&abs);
    if (file[0] != '/' && dir) sb_addf(&abs, "%s/", dir);
    sb_adds(&abs, file);
    char real[PATH_MAX];
    const char *p = realpath(abs.buf, real) ? real : abs.buf;
    size_t n = strlen(root);
    char *rel = !strncmp(p, root, n) && p[n] == '/' ? xstrdup(p + n + 1) : NULL;
    sb_release(&abs);
    return rel;
}

static void config_common(PpConfig *c)
{
    size_t cap = 0;
    if (!c->n_entries) return;
    const PpEntry *first = &c->entries[0];
    for (size_t k = 0; k < first->n; k++) {
        int all = 1;
        for (size_t i = 1; i < c->n_entries && all; i++) {
            int has = 0;
            for (size_t j = 0; j < c->entries[i].n && !has; j++)
                has = !strcmp(c->entries[i].flags[j], first->flags[k]);
            all = has;
        }
        if (all) entry_add(&c->common, &cap, first->flags[k][0], first->flags[k] + 1);
    }
}

static PpConfig *config_read(const char *path, const struct stat *sb, const char *root)
{
    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    if (!json_is_array(doc)) {
        if (doc) json_decref(doc);
        log_msg(LOG_WARN, "%s: not a compilation database (%s)", path, doc ? "no array" : err.text);
        return NULL;
    }
    PpConfig *c = xcalloc(1, sizeof *c);
    c->path = xstrdup(path);
    c->size = (int64_t)sb->st_size;
    c->mtime = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    strmap_init(&c->files);
    for (size_t i = 0; i < json_array_size(doc); i++) {
        json_t *o = json_array_get(doc, i);
        const char *file = json_string_value(json_object_get(o, "file"));
        const char *dir = json_string_value(json_object_get(o, "directory"));
        if (!file) continue;
        char *rel = entry_path(root, dir, file);
        if (!rel) continue;
        char **argv = NULL;
        size_t argc = 0;
        json_t *args = json_object_get(o, "arguments");
        if (json_is_array(args)) {
            argv = xcalloc(json_array_size(args) + 1, sizeof *argv);
            for (size_t k = 0; k < json_array_size(args); k++) {
                const char *a = json_string_value(json_array_get(args, k));
                if (a) argv[argc++] = xstrdup(a);
            }
        } else {
            const char *cmd = json_string_value(json_object_get(o, "command"));
            argv = split_command(cmd ? cmd : "", &argc);
        }
        ARRAY_GROW(c->entries, c->n_entries + 1, c->cap_entries);
        PpEntry *en = &c->entries[c->n_entries];
        *en = (PpEntry){0};
        entry_flags(en, argv, argc);
        strmap_put(&c->files, rel, (int64_t)c->n_entries++);
        for (size_t k = 0; k < argc; k++)
            free(argv[k]);
        free(argv);
        free(rel);
    }
    json_decref(doc);
    config_common(c);
    return c;
}

PpConfig *idx_pp_config_load(PpConfig *old, const char *root)
{
    static const char *const where[] = {"compile_commands.json", "build/compile_commands.json"};
    StrBuf path;
    sb_init(&path);
    struct stat sb;
    int found = 0;
    for (size_t i = 0; i < sizeof where / sizeof where[0] && !found && root; i++) {
        sb_reset(&path);
        sb_addf(&path, "%s/%s", root, where[i]);
        found = stat(path.buf, &sb) == 0 && S_ISREG(sb.st_mode);
    }
    PpConfig *c = old;
    if (!found) {
        idx_pp_config_free(old);
        c = NULL;
    } else if (!old || strcmp(old->path, path.buf) || old->size != (int64_t)sb.st_size ||
               old->mtime != (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec) {
        idx_pp_config_free(old);
        c = config_read(path.buf, &sb, root);
    }
    sb_release(&path);
    return c;
}

int idx_pp_config_flag(const PpConfig *c, const char *relpath, const char *name, const char **value)
{
    if (!c) return 0;
    int64_t at;
    const PpEntry *en =
        relpath && strmap_get(&c->files, relpath, &at) ? &c->entries[at] : &c->common;
    size_t n = strlen(name);
    for (size_t k = en->n; k-- > 0;) {
        const char *f = en->flags[k];
        if (strncmp(f + 1, name, n) || (f[n + 1] && f[n + 1] != '=')) continue;
        if (f[0] == 'U') return -1;
        *value = f[n + 1] ? f + n + 2 : "1";
        return 1;
    }
    return 0;
}
