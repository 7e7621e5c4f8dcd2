#include "lsp_int.h"

#include <stdlib.h>
#include <string.h>

/* A definition's doc comment or docstring as hover Markdown (text, never
 * code): the index keeps it as written, less the comment's markers. */

typedef struct Line {
    const char *s;
    size_t n;
} Line;

static int blank(Line l)
{
    for (size_t i = 0; i < l.n; i++)
        if (l.s[i] != ' ' && l.s[i] != '\t') return 0;
    return 1;
}

static size_t indent(Line l)
{
    size_t i = 0;
    while (i < l.n && (l.s[i] == ' ' || l.s[i] == '\t'))
        i++;
    return i;
}

/* Length of a leader left of a comment line ("*", "**", "*  "): stars,
 * then a blank or the end of the line; 0: none. */
static size_t leader(Line l)
{
    size_t i = indent(l), k = i;
    while (k < l.n && l.s[k] == '*')
        k++;
    if (k == i || (k < l.n && l.s[k] != ' ' && l.s[k] != '\t')) return 0;
    return k < l.n ? k + 1 : k;
}

/* Appends s[0..n) with reST's double backticks (``x``) as Markdown's
 * single ones, which every renderer pairs the same way. */
static void add_text(StrBuf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && s[i] == '`' && s[i + 1] == '`') {
            const char *end = NULL;
            for (size_t k = i + 2; k + 1 < n; k++)
                if (s[k] == '`') {
                    if (s[k + 1] == '`' && k > i + 2) end = s + k;
                    break;
                }
            if (end) {
                sb_addc(out, '`');
                sb_add(out, s + i + 2, (size_t)(end - (s + i + 2)));
                sb_addc(out, '`');
                i = (size_t)(end - s) + 1;
                continue;
            }
        }
        sb_addc(out, s[i]);
    }
}

void lsp_doc_markdown(const char *doc, StrBuf *out)
{
    size_t n = 0, cap = 16;
    Line *v = xmalloc(cap * sizeof *v);
    for (const char *p = doc; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (n == cap) v = xrealloc(v, (cap *= 2) * sizeof *v);
        v[n++] = (Line){p, len};
        p += len + (e != NULL);
    }
    /* comment leaders the index left ("** text" of a C block comment): on
     * every line that has text, or on none */
    int leaders = 1, any = 0;
    for (size_t i = 0; i < n && leaders; i++) {
        if (blank(v[i])) continue;
        any = 1;
        leaders = leader(v[i]) > 0;
    }
    for (size_t i = 0; i < n && leaders && any; i++) {
        size_t k = blank(v[i]) ? 0 : leader(v[i]);
        v[i].s += k;
        v[i].n -= k;
    }
    /* the indentation every line but the first shares (a Python
     * docstring's): kept, it would make the text an indented code block */
    size_t common = (size_t)-1;
    for (size_t i = 1; i < n; i++)
        if (!blank(v[i]) && indent(v[i]) < common) common = indent(v[i]);
    for (size_t i = 0; i < n; i++) {
        Line l = v[i];
        if (blank(l)) {
            l.n = 0;
        } else if (i == 0) {
            size_t k = indent(l);
            l.s += k, l.n -= k;
        } else {
            l.s += common, l.n -= common;
        }
        if (i) sb_addc(out, '\n');
        add_text(out, l.s, l.n);
    }
    free(v);
}
