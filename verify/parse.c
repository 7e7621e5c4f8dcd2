#include "vfy_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest bracket content, code span or link target considered; longer is prose. */
#define VFY_MAX_GROUP 2048
/* Longest bare path considered. */
#define VFY_MAX_PATH 1024

/* ---------------------------------------------------------------- the scanner */

typedef struct Parser {
    const char *t;
    size_t len;
    unsigned flags;
    size_t max;
    VfyMention *v;
    size_t n, cap;
    int full;    /* max reached: stop */
    size_t stop; /* where the first citation left out starts */
} Parser;

static int room_for(Parser *p, size_t k, size_t group_off)
{
    if (p->n + k <= p->max) return 1;
    p->full = 1;
    p->stop = group_off;
    return 0;
}

static void push(Parser *p, VfyForm form, size_t gb, size_t ge, size_t pb, size_t pe, uint32_t a,
                 uint32_t b, int bad)
{
    VfyMention m = {.group_off = gb,
                    .group_len = ge - gb,
                    .off = gb,
                    .len = ge - gb,
                    .form = form,
                    .path = xstrndup(p->t + pb, pe - pb),
                    .start_line = bad ? 0 : a,
                    .end_line = bad ? 0 : b,
                    .malformed = bad};
    ARRAY_GROW(p->v, p->n + 1, p->cap);
    p->v[p->n++] = m;
}

/* Parses the bracket text[gb..ge) ('[' to one past ']') into mentions;
 * returns 0 (adding nothing) unless every part is a citation. */
static int parse_group(Parser *p, size_t gb, size_t ge)
{
    const char *text = p->t;
    size_t first = p->n;
    const char *inherit = NULL;
    size_t inherit_len = 0;
    size_t pb = gb + 1;
    while (pb <= ge - 1) {
        size_t pe = pb;
        while (pe < ge - 1 && text[pe] != ';' && text[pe] != ',')
            pe++;
        size_t b = pb, e = pe;
        vfy_trim(text, &b, &e);
        pb = pe + 1;
        if (b == e) goto not_citation;

        VfyMention m = {.group_off = gb,
                        .group_len = ge - gb,
                        .off = b,
                        .len = e - b,
                        .form = VFY_FORM_BRACKET};
        const char *sep = vfy_find_sep(text + b, e - b);
        if (sep) {
            size_t p0 = b, p1 = (size_t)(sep - text);
            vfy_trim(text, &p0, &p1);
            size_t l0 = (size_t)(sep - text) + 1, l1 = e;
            vfy_trim(text, &l0, &l1);
            if (!vfy_path_like(text + p0, p1 - p0)) {
                /* "[cli:3]", "[Makefile:2]": a bracket of its own, read as
                 * a citation only if it names an indexed file (vfy_check) */
                if (first != p->n || b != gb + 1 || e != ge - 1 ||
                    !vfy_bare_name(text + p0, p1 - p0) ||
                    !vfy_parse_lines(text + l0, l1 - l0, &m.start_line, &m.end_line))
                    goto not_citation;
                m.weak = 1;
            }
            m.path = xstrndup(text + p0, p1 - p0);
            if (!m.weak)
                m.malformed = !vfy_parse_lines(text + l0, l1 - l0, &m.start_line, &m.end_line);
            if (m.malformed) m.start_line = m.end_line = 0;
            inherit = text + p0;
            inherit_len = p1 - p0;
        } else if (inherit && vfy_parse_lines(text + b, e - b, &m.start_line, &m.end_line)) {
            m.path = xstrndup(inherit, inherit_len);
        } else {
            goto not_citation;
        }
        ARRAY_GROW(p->v, p->n + 1, p->cap);
        p->v[p->n++] = m;
    }
    if (p->n <= p->max) return 1;
    p->full = 1; /* the whole bracket is left out */
    p->stop = gb;

not_citation:
    for (size_t i = first; i < p->n; i++)
        free(p->v[i].path);
    p->n = first;
    return 0;
}

/* The bracket text[gb..ge) as "[PATH, lines A-B]" (PATH maybe quoted). */
static int bracket_prose(Parser *p, size_t gb, size_t ge)
{
    const char *t = p->t;
    size_t b = gb + 1, e = ge - 1, pb, pe, j, k;
    while (b < e && vfy_is_blank(t[b]))
        b++;
    if (b < e && vfy_is_quote(t[b])) {
        const char *q = memchr(t + b + 1, t[b], e - b - 1);
        if (!q) return 0;
        pb = b + 1;
        pe = (size_t)(q - t);
        j = pe + 1;
    } else {
        for (pb = pe = b; pe < e && vfy_is_path_char(t[pe]); pe++)
            ;
        j = pe;
    }
    uint32_t a = 0, z = 0;
    int bad = 0;
    if (!vfy_file_like(t + pb, pe - pb) || !vfy_scan_prose_lines(t, e, j, &a, &z, &bad, &k))
        return 0;
    while (k < e && vfy_is_blank(t[k]))
        k++;
    if (k != e || !room_for(p, 1, gb)) return 0;
    push(p, VFY_FORM_PROSE, gb, ge, pb, pe, a, z, bad);
    return 1;
}

/* At '[': a markdown link to a citation, or a bracket of citations. *end is
 * where scanning goes on; an ordinary link's target goes to *skip_b/e. */
static int at_bracket(Parser *p, size_t gb, size_t *end, size_t *skip_b, size_t *skip_e)
{
    const char *t = p->t;
    size_t len = p->len;
    if (gb > 0 && (t[gb - 1] == '\\' || vfy_is_ident(t[gb - 1]) || t[gb - 1] == ')')) return 0;
    size_t ge = gb + 1;
    while (ge < len && ge - gb <= VFY_MAX_GROUP && t[ge] != ']' && t[ge] != '[' && t[ge] != '\n')
        ge++;
    if (ge >= len || t[ge] != ']') return 0;
    ge++;

    if (!(p->flags & VFY_PARSE_BRACKETS_ONLY) && ge < len && t[ge] == '(') {
        size_t te = ge + 1;
        while (te < len && te - ge <= VFY_MAX_GROUP && !strchr(")([\n", t[te]))
            te++;
        if (te < len && t[te] == ')') {
            size_t t0 = ge + 1, t1 = te, pb, pe;
            while (t0 < t1 && vfy_is_blank(t[t0]))
                t0++;
            if (t0 < t1 && t[t0] == '<') {
                const char *gt = memchr(t + t0, '>', t1 - t0);
                if (gt) t1 = (size_t)(gt - t);
                t0++;
            } else {
                const char *sp = memchr(t + t0, ' ', t1 - t0);
                if (sp) t1 = (size_t)(sp - t); /* a "title" follows */
            }
            uint32_t a = 0, b = 0;
            int bad = 0;
            if (vfy_split_ref(t, t0, t1, &pb, &pe, &a, &b, &bad)) {
                if (!room_for(p, 1, gb)) return 0;
                push(p, VFY_FORM_LINK, gb, te + 1, pb, pe, a, b, bad);
                p->v[p->n - 1].label_off = gb + 1;
                p->v[p->n - 1].label_len = ge - 1 - (gb + 1);
                *end = te + 1;
                return 1;
            }
            *skip_b = ge;
            *skip_e = te + 1;
        }
    }
    if (parse_group(p, gb, ge) ||
        (!p->full && !(p->flags & VFY_PARSE_BRACKETS_ONLY) && bracket_prose(p, gb, ge))) {
        *end = ge;
        return 1;
    }
    return 0;
}

/* At '`': a code span that is a citation, or a path in code followed by its
 * lines. *end is past the span (or the citation) either way; 0 when no
 * citation was found. */
static int at_code(Parser *p, size_t cb, size_t *end)
{
    const char *t = p->t;
    size_t len = p->len, k = cb;
    while (k < len && t[k] == '`')
        k++;
    size_t run = k - cb, j = k;
    *end = k; /* unclosed: the backticks are literal */
    for (;;) {
        while (j < len && t[j] != '`' && t[j] != '\n' && j - k <= VFY_MAX_GROUP)
            j++;
        if (j >= len || t[j] != '`') return 0;
        size_t r = j;
        while (r < len && t[r] == '`')
            r++;
        if (r - j == run) break;
        j = r;
    }
    size_t ce = j + run;
    *end = ce;
    if (p->flags & VFY_PARSE_BRACKETS_ONLY) return 0;

    size_t b = k, e = j, pb, pe, le;
    vfy_trim(t, &b, &e);
    if (e - b >= 2 && t[b] == '[' && t[e - 1] == ']') {
        b++;
        e--;
    }
    uint32_t a = 0, z = 0;
    int bad = 0;
    VfyForm form = VFY_FORM_CODE;
    if (vfy_split_ref(t, b, e, &pb, &pe, &a, &z, &bad)) {
        le = ce;
    } else if (vfy_file_like(t + b, e - b)) {
        /* "`a.py`:3", "`a.py`, lines 3-5" */
        pb = b;
        pe = e;
        le = ce;
        if (ce < len && (t[ce] == ':' || t[ce] == '#')) {
            le = ce + 1;
            if (!vfy_scan_lines(t, len, &le, &a, &z, &bad) || !vfy_at_boundary(t, len, &le, &bad))
                return 0;
        } else if (vfy_scan_prose_lines(t, len, ce, &a, &z, &bad, &le)) {
            form = VFY_FORM_PROSE;
        } else {
            return 0;
        }
    } else {
        return 0;
    }
    if (!room_for(p, 1, cb)) return 0;
    push(p, form, cb, le, pb, pe, a, z, bad);
    *end = le;
    return 1;
}

static int word_start(const char *t, size_t i)
{
    if (i == 0) return 1;
    char c = t[i - 1];
    /* right after '[' the bracket form's own rules apply ("[a.py:1, note]") */
    return (unsigned char)c < 0x80 && !vfy_is_path_char(c) && !strchr(":#\\[", c);
}

/* At the start of a word: "PATH:LINES", "PATH#LINES", "PATH, lines A-B". */
static int at_word(Parser *p, size_t tb, size_t *end)
{
    const char *t = p->t;
    size_t len = p->len, te = tb;
    while (te < len && vfy_is_path_char(t[te]))
        te++;
    *end = te;
    if (te - tb > VFY_MAX_PATH) return 0;
    if (len - te >= 3 && memcmp(t + te, "://", 3) == 0) {
        if (te - tb != 4 || strncasecmp(t + tb, "file", 4) != 0) {
            for (te += 3; te < len && !vfy_is_blank(t[te]) && !strchr("\n)]>\"'`<", t[te]); te++)
                ;
            *end = te;
            return 0;
        }
        for (te += 3; te < len && vfy_is_path_char(t[te]) && te - tb <= VFY_MAX_PATH; te++)
            ;
        *end = te;
    }
    if (!vfy_file_like(t + tb, te - tb)) return 0;

    uint32_t a = 0, b = 0;
    int bad = 0;
    size_t k = te + 1;
    if (te < len && (t[te] == ':' || t[te] == '#')) {
        if (!vfy_scan_lines(t, len, &k, &a, &b, &bad) || !vfy_at_boundary(t, len, &k, &bad))
            return 0;
        if (!room_for(p, 1, tb)) return 0;
        push(p, VFY_FORM_BARE, tb, k, tb, te, a, b, bad);
        *end = k;
        return 1;
    }
    size_t gb = tb, j = te;
    if (tb > 0 && (t[tb - 1] == '"' || t[tb - 1] == '\'') && te < len && t[te] == t[tb - 1]) {
        gb = tb - 1;
        j = te + 1;
    }
    if (!vfy_scan_prose_lines(t, len, j, &a, &b, &bad, &k)) return 0;
    if (!room_for(p, 1, gb)) return 0;
    push(p, VFY_FORM_PROSE, gb, k, tb, te, a, b, bad);
    *end = k;
    return 1;
}

/* A fence line: "```" or "~~~" after at most three spaces; a "```" line with
 * another backtick on it is inline code ("```x```"), not a fence. */
static int fence_at(const char *t, size_t len, size_t i)
{
    size_t k = i;
    while (k < len && k - i < 3 && t[k] == ' ')
        k++;
    if (len - k < 3) return 0;
    if (memcmp(t + k, "~~~", 3) == 0) return 1;
    if (memcmp(t + k, "```", 3) != 0) return 0;
    for (k += 3; k < len && t[k] == '`'; k++)
        ;
    for (; k < len && t[k] != '\n'; k++)
        if (t[k] == '`') return 0;
    return 1;
}

size_t vfy_parse_ex(const char *text, size_t len, unsigned flags, size_t max, VfyMention **out,
                    size_t *out_stop)
{
    Parser p = {.t = text, .len = len, .flags = flags, .max = max, .stop = len};
    size_t i = 0, skip_b = 0, skip_e = 0;
    int fence = 0;
    while (i < len && !p.full) {
        if (i == 0 || text[i - 1] == '\n') {
            if (fence_at(text, len, i)) fence = !fence;
            if (fence || fence_at(text, len, i)) {
                const char *nl = memchr(text + i, '\n', len - i);
                i = nl ? (size_t)(nl - text) + 1 : len;
                continue;
            }
        }
        if (i >= skip_b && i < skip_e) {
            i = skip_e;
            continue;
        }
        char c = text[i];
        size_t end = i + 1;
        if (c == '[') {
            if (!at_bracket(&p, i, &end, &skip_b, &skip_e)) end = i + 1;
        } else if (c == '`') {
            at_code(&p, i, &end);
        } else if (!(flags & VFY_PARSE_BRACKETS_ONLY) && vfy_is_path_char(c) &&
                   word_start(text, i)) {
            at_word(&p, i, &end);
        }
        i = end > i ? end : i + 1;
    }
    if (out_stop) *out_stop = p.full ? p.stop : len;
    *out = p.v;
    return p.n;
}

size_t vfy_parse(const char *text, size_t len, VfyMention **out)
{
    return vfy_parse_ex(text, len, 0, SIZE_MAX, out, NULL);
}

void vfy_mentions_free(VfyMention *v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

int vfy_label_is_ref(const char *s, size_t n)
{
    size_t b = 0, e = n;
    vfy_trim(s, &b, &e);
    if (vfy_path_like(s + b, e - b)) return 1;
    VfyMention *m = NULL;
    size_t k = vfy_parse_ex(s, n, 0, 1, &m, NULL);
    vfy_mentions_free(m, k);
    if (k) return 1;
    /* "a.py:3" alone is a citation too, though a word may follow it */
    const char *sep = vfy_find_sep(s + b, e - b);
    if (!sep) return 0;
    size_t p0 = b, p1 = (size_t)(sep - s);
    vfy_trim(s, &p0, &p1);
    return vfy_path_like(s + p0, p1 - p0);
}
