/* Argument types at a call site and the parameter types of a signature:
 * what tells overloads of one arity apart (rows with `overloads`). */
#include "lang.h"

#include <stdint.h>
#include <string.h>

static int at_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int in_list(const char *const *list, const char *w, size_t n)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], w, n)) return 1;
    return 0;
}

uint32_t idx_argt_code(const IdxLang *lang, const char *base, size_t n, int ptr)
{
    if (!n) return 0;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)base[i]) * 16777619u;
    h = (h % (IDX_ARGT_HASH - IDX_ARGT_FIRST)) + IDX_ARGT_FIRST;
    if (ptr > 3) ptr = 3;
    if (lang && in_list(lang->scalar_types, base, n)) h |= IDX_ARGT_SCALAR;
    return h | ((uint32_t)ptr << IDX_ARGT_PTR_SHIFT);
}

/* One parameter's text [p, e): its type's last word (*base, *bn), how
 * many pointer levels it has (`*`, `[]`); 0 when it holds no word. */
static int param_type(const IdxLang *lang, const char *p, const char *e, const char **base,
                      size_t *bn, int *ptr)
{
    const char *w[16];
    size_t wn[16], nw = 0;
    int depth = 0, stars = 0, marks = 0; /* marks: qualifiers, `*`, `&` */
    int qualified_any = 0;
    for (const char *q = p; q < e; q++) {
        char c = *q;
        if (c == '<' || c == '(' || c == '[') {
            if (c == '[' && !depth) stars++;
            depth++;
        } else if ((c == '>' || c == ')' || c == ']') && depth) {
            depth--;
        } else if (!depth && c == '=') {
            break; /* a default value */
        } else if (!depth && (c == '*' || c == '&')) {
            stars += c == '*';
            marks++;
        } else if (!depth && at_ident(c) && !(c >= '0' && c <= '9')) {
            const char *s = q;
            while (q + 1 < e && at_ident(q[1]))
                q++;
            size_t n = (size_t)(q - s + 1);
            int qualified = s >= p + 2 && s[-1] == ':' && s[-2] == ':';
            qualified_any |= qualified;
            if (in_list(lang->type_qualifiers, s, n)) {
                marks++;
                continue;
            }
            if (qualified && nw) { /* std::string: its last part */
                w[nw - 1] = s;
                wn[nw - 1] = n;
            } else if (nw < 16) {
                w[nw] = s;
                wn[nw++] = n;
            }
        } else if (!depth && c == '.') {
            return 0; /* variadic */
        }
    }
    /* a bare word: a macro's argument (`TEST_F(Suite, Name)`) as much as
     * an unnamed parameter's type: not read */
    if (!nw || (nw == 1 && !marks && !qualified_any)) return 0;
    /* `const char* s`: the last word names the parameter */
    size_t k = nw >= 2 ? nw - 2 : 0;
    *base = w[k];
    *bn = wn[k];
    *ptr = stars;
    return 1;
}

/* How well a parameter of type (base, ptr) takes an argument of code a:
 * 3 its own type, 2 a standard conversion, 0 maybe (a class that may
 * convert, a template's parameter), -1 never. */
static int arg_score(const IdxLang *lang, uint32_t a, const char *base, size_t bn, int ptr)
{
    uint32_t pc = idx_argt_code(lang, base, bn, ptr);
    int pscalar = (pc & IDX_ARGT_SCALAR) != 0;
    if (a == IDX_ARGT_NULL) return ptr ? 3 : pscalar ? -1 : 0;
    if (a == pc) return 3;
    int aptr = (int)(a >> IDX_ARGT_PTR_SHIFT), ascalar = (a & IDX_ARGT_SCALAR) != 0;
    if (!ptr && !pscalar) {
        /* a class: a string class takes its literal; else maybe */
        for (size_t i = 0; lang->string_classes && lang->string_classes[i]; i += 2) {
            if (strlen(lang->string_classes[i]) != bn || memcmp(lang->string_classes[i], base, bn))
                continue;
            const char *lit = lang->string_classes[i + 1];
            size_t ln = strcspn(lit, "*");
            if (a == idx_argt_code(lang, lit, ln, (int)strlen(lit + ln))) return 2;
            return ascalar ? -1 : 0;
        }
        return 0;
    }
    if (!ptr) /* a scalar */
        return ascalar && !aptr ? 2 : aptr ? -1 : 0;
    /* a pointer: a class's value maybe (a template's parameter, a
     * conversion) */
    if (aptr != ptr) return !aptr && !ascalar ? 0 : -1;
    return ascalar && pscalar ? -1 : 1;
}

int idx_sig_arg_score(const IdxLang *lang, const char *sig, const char *name, uint64_t argt)
{
    if (!lang || !argt || !sig || !name) return 0;
    const char *p = idx_sig_paren(sig, name);
    if (!p) return 0;
    p++;
    int total = 0;
    for (int k = 0; k < IDX_ARGT_MAX && *p && *p != ')'; k++) {
        const char *e = idx_sig_param_end(p);
        uint32_t a = idx_argt_get(argt, k);
        const char *base;
        size_t bn;
        int ptr;
        if (a && param_type(lang, p, e, &base, &bn, &ptr)) {
            int s = arg_score(lang, a, base, bn, ptr);
            if (s < 0) return -1;
            total += s;
        }
        p = *e == ',' ? e + 1 : e;
    }
    return total;
}

int idx_sig_param_codes(const IdxLang *lang, const char *sig, const char *name, uint32_t *codes)
{
    memset(codes, 0, IDX_ARGT_MAX * sizeof *codes);
    if (!lang || !lang->scalar_types || !sig || !name) return 0;
    const char *p = idx_sig_paren(sig, name);
    if (!p) return 0;
    p++;
    for (int k = 0; k < IDX_ARGT_MAX && *p && *p != ')'; k++) {
        const char *e = idx_sig_param_end(p);
        const char *base;
        size_t bn;
        int ptr;
        if (param_type(lang, p, e, &base, &bn, &ptr)) codes[k] = idx_argt_code(lang, base, bn, ptr);
        p = *e == ',' ? e + 1 : e;
    }
    return 1;
}

int idx_codes_differ(const uint32_t *a, const uint32_t *b)
{
    for (int k = 0; k < IDX_ARGT_MAX; k++) {
        /* (two scalars taken by value: a number converts to either) */
        int scalars = a[k] & b[k] & IDX_ARGT_SCALAR && !(a[k] >> IDX_ARGT_PTR_SHIFT) &&
                      !(b[k] >> IDX_ARGT_PTR_SHIFT);
        if (a[k] && b[k] && a[k] != b[k] && !scalars) return 1;
    }
    return 0;
}

int idx_sig_const(const char *sig, const char *name)
{
    const char *p = NULL;
    size_t n = strlen(name);
    for (const char *q = sig ? strstr(sig, name) : NULL; q && !p; q = strstr(q + 1, name)) {
        const char *x = q + n;
        while (*x == ' ' || *x == '\t' || *x == '\n')
            x++;
        if (*x == '(') p = x;
    }
    int depth = 0;
    for (; p && *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && !--depth)
            break;
    }
    if (!p || *p != ')') return 0;
    for (p++; *p == ' ' || *p == '\t' || *p == '\n'; p++)
        ;
    return !strncmp(p, "const", 5) && !at_ident(p[5]);
}

int idx_sig_types_differ(const IdxLang *lang, const char *a, const char *b, const char *name)
{
    uint32_t ca[IDX_ARGT_MAX], cb[IDX_ARGT_MAX];
    if (!idx_sig_param_codes(lang, a, name, ca) || !idx_sig_param_codes(lang, b, name, cb))
        return 0;
    return idx_codes_differ(ca, cb) || idx_sig_const(a, name) != idx_sig_const(b, name);
}
