#include "idx_int.h"

#include <stdint.h>
#include <string.h>

const char *idx_kind_name(IdxKind k)
{
    static const char *const names[] = {"module", "class", "function", "method", "section"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

const char *idx_edge_kind_name(IdxEdgeKind k)
{
    static const char *const names[] = {"import", "call", "inherit",   "contain",
                                        "raise",  "type", "reference", "expand"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

void idx_hash_text(const char *text, size_t len, char out[17])
{
    hash64_hex(hash64(text, len), out);
}

static const char *const vcs_dirs[] = {".git", ".hg", ".svn", ".jj", NULL};

const char *idx_vcs_dir(size_t i)
{
    return i < sizeof vcs_dirs / sizeof vcs_dirs[0] ? vcs_dirs[i] : NULL;
}

int idx_is_vcs_dir(const char *name, size_t len)
{
    for (size_t i = 0; vcs_dirs[i]; i++)
        if (strlen(vcs_dirs[i]) == len && !memcmp(name, vcs_dirs[i], len)) return 1;
    return 0;
}

const char *idx_sig_paren(const char *sig, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = strstr(sig, name); q; q = strstr(q + 1, name)) {
        const char *a = q + n;
        while (*a == ' ' || *a == '\t' || *a == '\n')
            a++;
        if (*a == '(') return a;
    }
    return NULL;
}

const char *idx_sig_param_end(const char *p)
{
    int depth = 0;
    for (; *p && !(depth == 0 && (*p == ',' || *p == ')')); p++) {
        if (*p == '(' || *p == '<' || *p == '[' || *p == '{')
            depth++;
        else if ((*p == ')' || *p == '>' || *p == ']' || *p == '}') && depth)
            depth--;
    }
    return p;
}

int idx_sig_params(const char *sig, const char *name, int *lo, int *hi)
{
    const char *p = idx_sig_paren(sig, name);
    if (!p) return 0;
    int depth = 0, commas = 0, defaults = 0, words = 0, variadic = 0;
    const char *w = p + 1;
    for (p++; *p && !(depth == 0 && *p == ')'); p++) {
        char c = *p;
        if (c == '(' || c == '<' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth)
            depth--;
        else if (depth == 0 && c == ',')
            commas++;
        else if (depth == 0 && c == '=' && p[1] != '=' &&
                 (p == w || (p[-1] != '=' && p[-1] != '!')))
            defaults++;
        else if (c == '.' && p[1] == '.' && p[2] == '.')
            variadic = 1;
        if (c != ' ' && c != '\t' && c != '\n') words = 1;
    }
    if (*p != ')') return 0;
    /* `()` and `(void)` take none */
    size_t len = (size_t)(p - w);
    while (len && (*w == ' ' || *w == '\t')) {
        w++;
        len--;
    }
    while (len && (w[len - 1] == ' ' || w[len - 1] == '\t'))
        len--;
    int total = !words || (len == 4 && !memcmp(w, "void", 4)) ? 0 : commas + 1;
    *hi = variadic ? INT32_MAX : total;
    *lo = total - defaults - variadic;
    if (*lo < 0) *lo = 0;
    return 1;
}
