#include "vfy_int.h"

#include <stdlib.h>
#include <string.h>

const char *vfy_anchor_status_name(VfyAnchorStatus s)
{
    static const char *const names[] = {"unchanged", "shifted", "moved", "lost"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "lost";
}

void vfy_citation_anchor(const VfyCitation *c, VfyAnchor *a)
{
    a->path = c->path;
    a->start_line = c->start_line;
    a->end_line = c->end_line;
    a->symbol = c->symbol;
    memcpy(a->hash, c->anchor, sizeof a->hash);
    a->hash[16] = '\0';
}

/* ---------------------------------------------------------------- lines */

/* A text cut into lines as count_lines counts them: line i starts at
 * start[i]; start[n] is the end of the text. */
typedef struct Lines {
    const char *t;
    size_t n;
    size_t *start;
    int has_cr;
} Lines;

static void lines_init(Lines *l, const char *t, size_t len)
{
    l->t = t;
    l->n = count_lines(t, len);
    l->start = xmalloc((l->n + 1) * sizeof *l->start);
    l->has_cr = len && memchr(t, '\r', len) != NULL;
    size_t i = 0;
    for (size_t k = 0; k < l->n; k++) {
        l->start[k] = i;
        const char *nl = memchr(t + i, '\n', len - i);
        i = nl ? (size_t)(nl - t) + 1 : len;
    }
    l->start[l->n] = len;
}

/* Line k without its "\n" or "\r\n". */
static void line_span(const Lines *l, size_t k, size_t *b, size_t *e)
{
    *b = l->start[k];
    *e = l->start[k + 1];
    if (*e > *b && l->t[*e - 1] == '\n') (*e)--;
    if (*e > *b && l->t[*e - 1] == '\r') (*e)--;
}

/* Hash of lines [s, s+n) as vfy_anchor_hash takes it; buf is scratch. */
static uint64_t block_hash(const Lines *l, size_t s, size_t n, StrBuf *buf)
{
    size_t b = l->start[s], e = l->start[s + n];
    if (!l->has_cr && e > b && l->t[e - 1] == '\n') return hash64(l->t + b, e - b);
    sb_reset(buf);
    for (size_t k = s; k < s + n; k++) {
        size_t lb, le;
        line_span(l, k, &lb, &le);
        sb_add(buf, l->t + lb, le - lb);
        sb_addc(buf, '\n');
    }
    return hash64(buf->buf, buf->len);
}

void vfy_anchor_hash(const char *text, size_t len, char out[17])
{
    Lines l;
    StrBuf buf;
    sb_init(&buf);
    lines_init(&l, text, len);
    hash64_hex(l.n ? block_hash(&l, 0, l.n, &buf) : hash64("", 0), out);
    free(l.start);
    sb_release(&buf);
}

/* ---------------------------------------------------------------- definitions */

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* Indentation of line k, and where its text starts; *empty for a line that
 * is blank or only a comment. */
static size_t indent_of(const Lines *l, size_t k, size_t *text_at, int *empty)
{
    size_t b, e, i;
    line_span(l, k, &b, &e);
    for (i = b; i < e && is_blank(l->t[i]); i++)
        ;
    *text_at = i;
    *empty = i == e || l->t[i] == '#';
    return i - b;
}

/* Whether a word w (of length n) followed by a blank starts at *i; steps
 * over both. */
static int word(const char *t, size_t e, size_t *i, const char *w, size_t n)
{
    if (e - *i <= n || memcmp(t + *i, w, n) != 0 || !is_blank(t[*i + n])) return 0;
    for (*i += n; *i < e && is_blank(t[*i]); (*i)++)
        ;
    return 1;
}

/* Whether line k is "def name", "async def name" or "class name". */
static int defines(const Lines *l, size_t k, const char *name, size_t n)
{
    size_t b, e, i;
    int empty;
    line_span(l, k, &b, &e);
    indent_of(l, k, &i, &empty);
    if (empty) return 0;
    word(l->t, e, &i, "async", 5);
    if (!word(l->t, e, &i, "def", 3) && !word(l->t, e, &i, "class", 5)) return 0;
    return e - i >= n && memcmp(l->t + i, name, n) == 0 && (i + n == e || !is_ident(l->t[i + n]));
}

/* Whether the block enclosing line k (indented by ind) is "class parent"
 * or "def parent". */
static int enclosed_by(const Lines *l, size_t k, size_t ind, const char *parent, size_t n)
{
    while (k-- > 0) {
        size_t at;
        int empty;
        size_t i = indent_of(l, k, &at, &empty);
        if (empty || i >= ind) continue;
        return defines(l, k, parent, n);
    }
    return 0;
}

static int paren_delta(const Lines *l, size_t k)
{
    size_t b, e;
    int d = 0;
    line_span(l, k, &b, &e);
    for (size_t i = b; i < e && l->t[i] != '#'; i++) {
        char c = l->t[i];
        d += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
    }
    return d;
}

/* The last line of the definition at line k: its header (brackets
 * balanced), then every line indented deeper (blank lines and comments
 * inside included). */
static size_t def_end(const Lines *l, size_t k)
{
    size_t at, j = k;
    int empty;
    size_t ind = indent_of(l, k, &at, &empty);
    for (int depth = paren_delta(l, k); depth > 0 && j + 1 < l->n; depth += paren_delta(l, j))
        j++;
    size_t end = j;
    for (size_t i = j + 1; i < l->n; i++) {
        if (indent_of(l, i, &at, &empty) <= ind && !empty) break;
        if (!empty) end = i;
    }
    return end;
}

/* The definition of the symbol's last component nearest to line near
 * (0-based): one inside a class (or function) named by the previous
 * component first. */
static int find_def(const Lines *l, const char *symbol, size_t near, size_t *out)
{
    const char *dot = strrchr(symbol, '.');
    const char *name = dot ? dot + 1 : symbol;
    size_t n = strlen(name), pn = 0;
    const char *parent = NULL;
    if (dot) {
        parent = dot;
        while (parent > symbol && parent[-1] != '.')
            parent--;
        pn = (size_t)(dot - parent);
    }
    if (n == 0) return 0;
    int found = 0, best_in = 0;
    size_t best = 0, best_dist = 0;
    for (size_t k = 0; k < l->n; k++) {
        if (!defines(l, k, name, n)) continue;
        size_t at;
        int empty;
        int in = parent && enclosed_by(l, k, indent_of(l, k, &at, &empty), parent, pn);
        size_t dist = k > near ? k - near : near - k;
        if (!found || in > best_in || (in == best_in && dist < best_dist)) {
            found = 1;
            best = k;
            best_in = in;
            best_dist = dist;
        }
    }
    *out = best;
    return found;
}

/* Whether symbol names the module at path ("pkg/b.py", "pkg/__init__.py"
 * and "pkg.b", "pkg"): the context item of module-level code is named so,
 * and it has no definition to look for. */
static int names_module(const char *path, const char *symbol)
{
    if (!path) return 0;
    size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".pyi") == 0)
        n -= 4;
    else if (n > 3 && strcmp(path + n - 3, ".py") == 0)
        n -= 3;
    if (n >= 9 && strncmp(path + n - 9, "/__init__", 9) == 0) n -= 9;
    if (strlen(symbol) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (symbol[i] != (path[i] == '/' ? '.' : path[i])) return 0;
    return 1;
}

/* ---------------------------------------------------------------- resolving */

static int parse_hash(const char *hex, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return hex[16] == '\0';
}

VfyAnchorStatus vfy_anchor_resolve(const VfyAnchor *a, const char *text, size_t len,
                                   VfyAnchorMatch *out)
{
    Lines l;
    StrBuf buf;
    uint64_t want;
    sb_init(&buf);
    lines_init(&l, text, len);
    VfyAnchorMatch r = {VFY_ANCHOR_LOST, 0, 0};
    size_t near = a->start_line ? a->start_line - 1 : 0;

    if (a->start_line >= 1 && a->end_line >= a->start_line && parse_hash(a->hash, &want) &&
        (size_t)(a->end_line - a->start_line) < l.n) {
        /* nearest first, below before above at the same distance */
        size_t n = (size_t)(a->end_line - a->start_line) + 1, last = l.n - n;
        size_t s0 = near < last ? near : last;
        size_t max_d = s0 > last - s0 ? s0 : last - s0;
        for (size_t d = 0; d <= max_d; d++) {
            size_t s = SIZE_MAX;
            if (s0 + d <= last && block_hash(&l, s0 + d, n, &buf) == want)
                s = s0 + d;
            else if (d && d <= s0 && block_hash(&l, s0 - d, n, &buf) == want)
                s = s0 - d;
            if (s == SIZE_MAX) continue;
            r.status = s == near ? VFY_ANCHOR_UNCHANGED : VFY_ANCHOR_SHIFTED;
            r.start_line = (uint32_t)(s + 1);
            r.end_line = (uint32_t)(s + n);
            goto out;
        }
    }
    size_t k;
    if (a->symbol && a->symbol[0] && !names_module(a->path, a->symbol) &&
        find_def(&l, a->symbol, near, &k)) {
        r.status = VFY_ANCHOR_MOVED;
        r.start_line = (uint32_t)(k + 1);
        r.end_line = (uint32_t)(def_end(&l, k) + 1);
    }

out:
    free(l.start);
    sb_release(&buf);
    *out = r;
    return r.status;
}
