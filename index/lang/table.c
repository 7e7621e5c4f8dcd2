/* table.c - the language table: detection by extension, then shebang. */
#include "lang.h"

#include <string.h>

extern const IdxLang idx_lang_python, idx_lang_c, idx_lang_cpp, idx_lang_go, idx_lang_rust,
    idx_lang_java, idx_lang_javascript, idx_lang_typescript, idx_lang_tsx, idx_lang_markdown,
    idx_lang_rst, idx_lang_text;

static const IdxLang *const table__rows[] = {
    &idx_lang_python, &idx_lang_c,        &idx_lang_cpp,        &idx_lang_go,
    &idx_lang_rust,   &idx_lang_java,     &idx_lang_javascript, &idx_lang_typescript,
    &idx_lang_tsx,    &idx_lang_markdown, &idx_lang_rst,        &idx_lang_text,
};
#define TABLE__N (sizeof table__rows / sizeof table__rows[0])

size_t idx_lang_count(void)
{
    return TABLE__N;
}

const IdxLang *idx_lang_at(size_t i)
{
    return i < TABLE__N ? table__rows[i] : NULL;
}

uint64_t idx_lang_digest(void)
{
    uint64_t h = 0;
    for (size_t i = 0; i < TABLE__N; i++) {
        const IdxLang *l = table__rows[i];
        uint64_t part[3] = {h, hash64(l->name, strlen(l->name)),
                            l->query ? hash64(l->query, strlen(l->query)) : 0};
        h = hash64(part, sizeof part);
    }
    return h;
}

const IdxLang *idx_lang_by_name(const char *name)
{
    for (size_t i = 0; i < TABLE__N; i++)
        if (!strcmp(table__rows[i]->name, name)) return table__rows[i];
    return NULL;
}

static int table__ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && !memcmp(s + n - k, suffix, k);
}

const IdxLang *idx_lang_for_path(const char *relpath)
{
    const char *slash = strrchr(relpath, '/');
    const char *base = slash ? slash + 1 : relpath;
    size_t n = strlen(base);
    for (size_t i = 0; i < TABLE__N; i++)
        for (const char *const *e = table__rows[i]->exts; e && *e; e++)
            if (table__ends_with(base, n, *e)) return table__rows[i];
    return NULL;
}

const IdxLang *idx_lang_for_shebang(const char *line, size_t len)
{
    if (len < 3 || line[0] != '#' || line[1] != '!') return NULL;
    const char *end = memchr(line, '\n', len);
    size_t n = end ? (size_t)(end - line) : len;
    /* "#!/usr/bin/env python3" or "#!/usr/bin/node": the interpreter's name */
    char buf[128];
    if (n > sizeof buf - 1) n = sizeof buf - 1;
    memcpy(buf, line + 2, n - 2);
    buf[n - 2] = '\0';
    char *tok = buf, *word = NULL;
    while (*tok) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        if (!*tok) break;
        char *w = tok;
        while (*tok && *tok != ' ' && *tok != '\t')
            tok++;
        if (*tok) *tok++ = '\0';
        char *s = strrchr(w, '/');
        w = s ? s + 1 : w;
        if (!strcmp(w, "env") || w[0] == '-') continue;
        word = w;
        break;
    }
    if (!word) return NULL;
    for (size_t i = 0; i < TABLE__N; i++)
        for (const char *const *p = table__rows[i]->interps; p && *p; p++)
            if (!strncmp(word, *p, strlen(*p))) return table__rows[i];
    return NULL;
}

/* ---------------------------------------------------------------- public (idx.h) */

const char *idx_source_ext(size_t i)
{
    for (size_t r = 0; r < TABLE__N; r++)
        for (const char *const *e = table__rows[r]->exts; e && *e; e++)
            if (i-- == 0) return *e;
    return NULL;
}

int idx_is_source_path(const char *path)
{
    return idx_lang_for_path(path) != NULL;
}

int idx_lang_is_test_path(const char *relpath)
{
    const IdxLang *l = idx_lang_for_path(relpath);
    const char *slash = strrchr(relpath, '/');
    const char *base = slash ? slash + 1 : relpath;
    size_t bn = strlen(base);
    for (const char *const *t = l ? l->tests : NULL; t && *t; t++) {
        size_t k = strlen(*t);
        if ((*t)[k - 1] == '/') { /* a directory anywhere on the path */
            for (const char *p = relpath; p < base; p = strchr(p, '/') + 1)
                if (!strncmp(p, *t, k)) return 1;
        } else if ((*t)[0] == '*') {
            if (bn > k - 1 && !strcmp(base + bn - (k - 1), *t + 1)) return 1;
        } else if ((*t)[k - 1] == '*') {
            if (!strncmp(base, *t, k - 1)) return 1;
        } else if (strstr(base, *t)) {
            return 1;
        }
    }
    return 0;
}

int idx_is_test_path(const char *relpath)
{
    return idx_lang_is_test_path(relpath);
}
