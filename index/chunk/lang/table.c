/* table.c - the language table: detection by extension, then shebang. */
#include "lang.h"

#include <stdio.h>
#include <string.h>

size_t idx_lang_count(void)
{
    return idx_lang_n_rows;
}

const IdxLang *idx_lang_at(size_t i)
{
    return i < idx_lang_n_rows ? idx_lang_rows[i] : NULL;
}

uint64_t idx_lang_digest(void)
{
    uint64_t h = 0;
    for (size_t i = 0; i < idx_lang_n_rows; i++) {
        const IdxLang *l = idx_lang_rows[i];
        uint64_t part[3] = {h, hash64(l->name, strlen(l->name)),
                            l->query ? hash64(l->query, strlen(l->query)) : 0};
        h = hash64(part, sizeof part);
    }
    return h;
}

const IdxLang *idx_lang_by_name(const char *name)
{
    for (size_t i = 0; i < idx_lang_n_rows; i++)
        if (!strcmp(idx_lang_rows[i]->name, name)) return idx_lang_rows[i];
    return NULL;
}

const IdxLang *idx_lang_fallback(void)
{
    for (size_t i = 0; i < idx_lang_n_rows; i++)
        if (idx_lang_rows[i]->fallback) return idx_lang_rows[i];
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
    for (size_t i = 0; i < idx_lang_n_rows; i++)
        for (const char *const *e = idx_lang_rows[i]->exts; e && *e; e++)
            if (table__ends_with(base, n, *e)) return idx_lang_rows[i];
    return NULL;
}

static int table__follows(const IdxLang *l, const char *relpath)
{
    const char *slash = strrchr(relpath, '/');
    const char *base = slash ? slash + 1 : relpath;
    size_t n = strlen(base);
    for (const char *const *e = l ? l->follow_exts : NULL; e && *e; e++)
        if (table__ends_with(base, n, *e)) return 1;
    return 0;
}

static size_t table__row(const IdxLang *l)
{
    size_t r = 0;
    while (r < idx_lang_n_rows && idx_lang_rows[r] != l)
        r++;
    return r;
}

int idx_lang_path_follows(const char *relpath)
{
    return table__follows(idx_lang_for_path(relpath), relpath);
}

const IdxLang *idx_lang_for_file(const IdxLangPick *pick, const char *relpath)
{
    const IdxLang *l = idx_lang_for_path(relpath);
    if (!pick || !table__follows(l, relpath)) return l;
    size_t r = table__row(l);
    return r < IDX_LANG_MAX_ROWS && pick->to[r] ? pick->to[r] : l;
}

const IdxLang *idx_lang_for_content(const IdxLangPick *pick, const char *relpath,
                                    const IdxLang *lang, const char *src, size_t len)
{
    size_t r = table__row(lang);
    if (!lang || !lang->refine || !pick || r >= IDX_LANG_MAX_ROWS || !pick->by_content[r] ||
        !table__follows(lang, relpath))
        return lang;
    const IdxLang *to = lang->refine(src, len);
    return to ? to : lang;
}

void idx_lang_pick_count(int64_t *others, const char *relpath)
{
    const IdxLang *l = idx_lang_for_path(relpath);
    size_t r = table__row(l);
    if (l && r < IDX_LANG_MAX_ROWS && !table__follows(l, relpath)) others[r]++;
}

void idx_lang_pick_decide(IdxLangPick *pick, const int64_t *others)
{
    memset(pick, 0, sizeof *pick);
    for (size_t r = 0; r < idx_lang_n_rows && r < IDX_LANG_MAX_ROWS; r++) {
        const IdxLang *row = idx_lang_rows[r];
        if (!row->follow_exts || !row->import) continue;
        int64_t best = others[r], any = 0;
        for (size_t k = 0; k < idx_lang_n_rows && k < IDX_LANG_MAX_ROWS; k++) {
            if (k == r || idx_lang_rows[k]->import != row->import) continue;
            any += others[k];
            if (others[k] > best) {
                best = others[k];
                pick->to[r] = idx_lang_rows[k];
            }
        }
        pick->by_content[r] = !pick->to[r] && any > 0;
    }
}

void idx_lang_pick_text(const IdxLangPick *pick, char *out, size_t cap)
{
    size_t at = 0;
    if (cap) out[0] = '\0';
    for (size_t r = 0; r < idx_lang_n_rows && r < IDX_LANG_MAX_ROWS; r++) {
        if (!pick->to[r] && !pick->by_content[r]) continue;
        int n = pick->to[r] ? snprintf(out + at, cap - at, "%s=%s;", idx_lang_rows[r]->name,
                                       pick->to[r]->name)
                            : snprintf(out + at, cap - at, "%s+;", idx_lang_rows[r]->name);
        if (n < 0 || (size_t)n >= cap - at) break;
        at += (size_t)n;
    }
}

void idx_lang_pick_parse(IdxLangPick *pick, const char *text)
{
    memset(pick, 0, sizeof *pick);
    char name[64], to[64];
    for (const char *p = text; p && *p;) {
        const char *eq = strchr(p, '='), *end = strchr(p, ';');
        if (end && end > p && end[-1] == '+' && (!eq || eq > end)) {
            size_t n = (size_t)(end - 1 - p);
            if (n < sizeof name) {
                memcpy(name, p, n);
                name[n] = '\0';
                size_t r = table__row(idx_lang_by_name(name));
                if (r < idx_lang_n_rows && r < IDX_LANG_MAX_ROWS) pick->by_content[r] = 1;
            }
            p = end + 1;
            continue;
        }
        if (!eq || !end || eq > end || (size_t)(eq - p) >= sizeof name ||
            (size_t)(end - eq - 1) >= sizeof to)
            break;
        memcpy(name, p, (size_t)(eq - p));
        name[eq - p] = '\0';
        memcpy(to, eq + 1, (size_t)(end - eq - 1));
        to[end - eq - 1] = '\0';
        const IdxLang *l = idx_lang_by_name(name), *t = idx_lang_by_name(to);
        size_t r = table__row(l);
        if (l && t && r < IDX_LANG_MAX_ROWS) pick->to[r] = t;
        p = end + 1;
    }
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
    for (size_t i = 0; i < idx_lang_n_rows; i++)
        for (const char *const *p = idx_lang_rows[i]->interps; p && *p; p++)
            if (!strncmp(word, *p, strlen(*p))) return idx_lang_rows[i];
    return NULL;
}

/* ---------------------------------------------------------------- public (idx.h) */

const char *idx_source_ext(size_t i)
{
    for (size_t r = 0; r < idx_lang_n_rows; r++)
        for (const char *const *e = idx_lang_rows[r]->exts; e && *e; e++)
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

int idx_lang_is_test_symbol(const char *relpath, const char *symbol)
{
    const IdxLang *l = idx_lang_for_path(relpath);
    for (const char *p = symbol; l && l->test_modules && p && *p;) {
        size_t n = strcspn(p, ".");
        for (const char *const *t = l->test_modules; *t; t++)
            if (strlen(*t) == n && !strncmp(p, *t, n)) return 1;
        p = p[n] ? p + n + 1 : NULL;
    }
    return 0;
}

int idx_lang_has_test_modules(const char *relpath)
{
    const IdxLang *l = idx_lang_for_path(relpath);
    return l && l->test_modules && l->test_modules[0];
}

int idx_is_test_path(const char *relpath)
{
    return idx_lang_is_test_path(relpath);
}

const char *idx_fence_tag(const char *path)
{
    const IdxLang *l = path ? idx_lang_for_path(path) : NULL;
    return l && l->fence ? l->fence : "";
}

const char *idx_graph_limits(const char *path)
{
    const IdxLang *l = path ? idx_lang_for_path(path) : NULL;
    return l ? l->graph_limits : NULL;
}

int idx_base_callers(const char *path)
{
    const IdxLang *l = path ? idx_lang_for_path(path) : NULL;
    return l && l->base_callers;
}

int idx_overloads_apart(const char *path, const char *symbol, const char *sig_a, const char *sig_b)
{
    const IdxLang *l = path ? idx_lang_for_path(path) : NULL;
    if (!l || !l->overloads) return 0;
    if (!sig_a) return 1;
    const char *dot = symbol ? strrchr(symbol, '.') : NULL;
    const char *name = dot ? dot + 1 : symbol;
    int alo = 0, ahi = 0, blo = 0, bhi = 0;
    return name && sig_b && idx_sig_params(sig_a, name, &alo, &ahi) &&
           idx_sig_params(sig_b, name, &blo, &bhi) &&
           (alo != blo || ahi != bhi || idx_sig_types_differ(l, sig_a, sig_b, name));
}

int idx_chain_on_self(const char *path, const char *chain)
{
    size_t n = strcspn(chain, ".");
    return chain[n] == '.' && idx_lang_self_word(idx_lang_for_path(path), chain, n);
}

int idx_is_syntax_word(const char *w, size_t n)
{
    for (size_t r = 0; r < idx_lang_n_rows; r++)
        for (const char *const *k = idx_lang_rows[r]->keywords; k && *k; k++)
            if (strlen(*k) == n && !memcmp(*k, w, n)) return 1;
    return 0;
}

/* Whether marker *m of row r was listed before (rows share markers). */
static int table__marker_before(size_t r, const char *const *m)
{
    for (size_t q = 0; q <= r; q++)
        for (const char *const *o = idx_lang_rows[q]->markers; o && *o; o++) {
            if (q == r && o == m) return 0;
            if (!strcmp(*o, *m)) return 1;
        }
    return 0;
}

const char *idx_project_marker(size_t i)
{
    for (size_t r = 0; r < idx_lang_n_rows; r++)
        for (const char *const *m = idx_lang_rows[r]->markers; m && *m; m++)
            if (!table__marker_before(r, m) && i-- == 0) return *m;
    return NULL;
}

int idx_may_index_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    return idx_lang_for_path(path) != NULL || (*base && !strchr(base, '.'));
}
