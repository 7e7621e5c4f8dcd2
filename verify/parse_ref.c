/*
 * parse_ref.c - the pieces of a citation the scanner (parse.c) reads: what
 * looks like a path, line numbers and ranges, "PATH:LINES" and ", lines A-B".
 */
#include "vfy_int.h"

#include <string.h>
#include <strings.h>

void vfy_trim(const char *s, size_t *b, size_t *e)
{
    for (;;) {
        while (*b < *e && vfy_is_blank(s[*b]))
            (*b)++;
        while (*e > *b && vfy_is_blank(s[*e - 1]))
            (*e)--;
        if (*e > *b && (vfy_is_quote(s[*b]) || vfy_is_quote(s[*e - 1]))) {
            if (vfy_is_quote(s[*b])) (*b)++;
            if (*e > *b && vfy_is_quote(s[*e - 1])) (*e)--;
            continue;
        }
        break;
    }
}

static int starts_with(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && strncasecmp(s, prefix, k) == 0;
}

/* The file name of path s[0..n): after its last '/'. */
static const char *base_of(const char *s, size_t n, size_t *bn)
{
    const char *slash = memrchr(s, '/', n);
    const char *base = slash ? slash + 1 : s;
    *bn = (size_t)(s + n - base);
    return base;
}

/* Whether a file name has an extension ("main.c", "x.test.tsx", "README.md")
 * or is a dot-file (".env"): a '.' followed by a letter, and then only name
 * bytes. "1.5", "v1.2" and "a." are none. */
static int has_ext(const char *base, size_t bn)
{
    const char *dot = memrchr(base, '.', bn);
    if (!dot || (size_t)(dot - base) + 1 >= bn || !vfy_is_alpha(dot[1])) return 0;
    for (const char *p = dot + 1; p < base + bn; p++)
        if (!vfy_is_ident(*p) && *p != '+' && *p != '-') return 0;
    return 1;
}

int vfy_path_like(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == ' ' || c == '[' || c == ']') return 0;
    }
    const char *scheme = memmem(s, n, "://", 3);
    if (scheme && !(scheme - s == 4 && strncasecmp(s, "file", 4) == 0)) return 0;
    size_t bn;
    const char *base = base_of(s, n, &bn);
    return memchr(s, '/', n) != NULL || has_ext(base, bn);
}

int vfy_bare_name(const char *s, size_t n)
{
    if (n == 0 || n > 255 || !vfy_is_alpha(s[0])) return 0;
    for (size_t i = 0; i < n; i++)
        if (!vfy_is_ident(s[i]) && s[i] != '-') return 0;
    return 1;
}

/* The stricter test of paths in prose (see vfy_parse): a word with a dot
 * and a colon is often no file ("example.com:8080"), so a path with no
 * folder in it must have an extension the index reads. */
int vfy_file_like(const char *s, size_t n)
{
    if (!vfy_path_like(s, n)) return 0;
    if (starts_with(s, n, "file://") || s[0] == '/' || starts_with(s, n, "./") ||
        starts_with(s, n, "../") || starts_with(s, n, "~/"))
        return 1;
    size_t bn;
    const char *base = base_of(s, n, &bn);
    if (!has_ext(base, bn)) return 0;
    if (memchr(s, '/', n)) return 1;
    char name[256];
    if (bn >= sizeof name) return 0;
    memcpy(name, base, bn);
    name[bn] = '\0';
    return idx_is_source_path(name);
}

/* ---------------------------------------------------------------- line ranges */

/* Reads "[L]digits" at s[*i]; 0 (leaving *i) when no digit is there. Sets
 * *bad when the number does not fit 32 bits (reading all its digits). */
static int scan_num(const char *s, size_t n, size_t *i, uint32_t *out, int *bad)
{
    size_t j = *i;
    if (j < n && (s[j] == 'L' || s[j] == 'l')) j++;
    if (j >= n || !vfy_is_digit(s[j])) return 0;
    uint64_t v = 0;
    for (; j < n && vfy_is_digit(s[j]); j++)
        if (v <= UINT32_MAX) v = v * 10 + (uint64_t)(s[j] - '0');
    if (v > UINT32_MAX) *bad = 1;
    *out = v > UINT32_MAX ? 0 : (uint32_t)v;
    *i = j;
    return 1;
}

/* Steps over a range separator at s[*i] ('-', en or em dash, "..", " to ")
 * and the blanks around it; 0 when there is none. */
static int scan_range_sep(const char *s, size_t n, size_t *i)
{
    size_t j = *i;
    while (j < n && vfy_is_blank(s[j]))
        j++;
    if (j < n && s[j] == '-')
        j++;
    else if (n - j >= 3 && (unsigned char)s[j] == 0xE2 && (unsigned char)s[j + 1] == 0x80 &&
             ((unsigned char)s[j + 2] == 0x93 || (unsigned char)s[j + 2] == 0x94))
        j += 3;
    else if (n - j >= 2 && s[j] == '.' && s[j + 1] == '.')
        j += 2;
    else if (j > *i && n - j >= 3 && strncasecmp(s + j, "to", 2) == 0 && vfy_is_blank(s[j + 2]))
        j += 2;
    else
        return 0;
    while (j < n && vfy_is_blank(s[j]))
        j++;
    *i = j;
    return 1;
}

/* Reads LINES at s[*i]; 0 when no number starts there. The range part is
 * only taken when a number follows its separator. *bad: a number overflows,
 * or the range runs backwards. */
int vfy_scan_lines(const char *s, size_t n, size_t *i, uint32_t *a, uint32_t *b, int *bad)
{
    size_t j = *i;
    if (!scan_num(s, n, &j, a, bad)) return 0;
    *b = *a;
    size_t k = j;
    if (scan_range_sep(s, n, &k) && scan_num(s, n, &k, b, bad)) j = k;
    if (*b < *a) *bad = 1;
    *i = j;
    return 1;
}

/* Whether the lines that ended at t[*k] end at a word boundary. "a.py:12:5"
 * (line and column) reads as no line range: *bad, and the column is taken. */
int vfy_at_boundary(const char *t, size_t n, size_t *k, int *bad)
{
    if (*k >= n) return 1;
    char c = t[*k];
    if (c == ':' && *k + 1 < n && vfy_is_digit(t[*k + 1])) {
        *bad = 1;
        for ((*k)++; *k < n && vfy_is_digit(t[*k]); (*k)++)
            ;
        return *k >= n || !vfy_is_ident(t[*k]);
    }
    if (c == '.' && *k + 1 < n && vfy_is_digit(t[*k + 1])) return 0;
    return !vfy_is_ident(c);
}

/* All of s[0..n) as LINES (blanks around allowed). */
int vfy_parse_lines(const char *s, size_t n, uint32_t *a, uint32_t *b)
{
    size_t i = 0;
    int bad = 0;
    while (i < n && vfy_is_blank(s[i]))
        i++;
    if (!vfy_scan_lines(s, n, &i, a, b, &bad)) return 0;
    while (i < n && vfy_is_blank(s[i]))
        i++;
    return !bad && i == n;
}

/* The separator between path and lines: the first ':' or '#' after a
 * file:// scheme. */
const char *vfy_find_sep(const char *s, size_t n)
{
    size_t i = starts_with(s, n, "file://") ? 7 : 0;
    for (; i < n; i++)
        if (s[i] == ':' || s[i] == '#') return s + i;
    return NULL;
}

/* Reads all of s[b..e) as PATH SEP LINES, the lines starting with a number.
 * 0: not a citation. */
int vfy_split_ref(const char *s, size_t b, size_t e, size_t *pb, size_t *pe, uint32_t *a,
                  uint32_t *z, int *bad)
{
    const char *sep = vfy_find_sep(s + b, e - b);
    if (!sep) return 0;
    size_t p0 = b, p1 = (size_t)(sep - s);
    vfy_trim(s, &p0, &p1);
    if (!vfy_path_like(s + p0, p1 - p0)) return 0;
    size_t k = (size_t)(sep - s) + 1;
    while (k < e && vfy_is_blank(s[k]))
        k++;
    *bad = 0;
    if (!vfy_scan_lines(s, e, &k, a, z, bad)) return 0;
    while (k < e && vfy_is_blank(s[k]))
        k++;
    if (k != e) return 0;
    *pb = p0;
    *pe = p1;
    return 1;
}

/* ", lines a-b", " line a", " (lines a-b)" at t[j]; *end is one past it. */
int vfy_scan_prose_lines(const char *t, size_t n, size_t j, uint32_t *a, uint32_t *b, int *bad,
                         size_t *end)
{
    size_t k = j;
    int comma = 0, paren = 0;
    if (k < n && t[k] == ',') {
        comma = 1;
        k++;
    }
    size_t blanks = k;
    while (k < n && vfy_is_blank(t[k]))
        k++;
    if (!comma && k == blanks) return 0;
    if (k < n && t[k] == '(') {
        paren = 1;
        for (k++; k < n && vfy_is_blank(t[k]); k++)
            ;
    }
    if (n - k < 4 || strncasecmp(t + k, "line", 4) != 0) return 0;
    k += 4;
    if (k < n && (t[k] == 's' || t[k] == 'S')) k++;
    blanks = k;
    while (k < n && vfy_is_blank(t[k]))
        k++;
    if (k == blanks) return 0;
    *bad = 0;
    if (!vfy_scan_lines(t, n, &k, a, b, bad)) return 0;
    if (paren) {
        while (k < n && vfy_is_blank(t[k]))
            k++;
        if (k >= n || t[k] != ')') return 0;
        k++;
    } else if (!vfy_at_boundary(t, n, &k, bad)) {
        return 0;
    }
    *end = k;
    return 1;
}
