#include "rtv_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest signature or docstring shown, in characters. */
#define RTV_SHOW_CHARS 160
/* Longest doc sentence, and signature, in the lead. */
#define RTV_LEAD_CHARS 120
#define RTV_SIG_CHARS 72
/* A header or folded line's width as shown, and the shortest note on it. */
#define RTV_LINE_CHARS 96
#define RTV_NOTE_MIN 24
/* Lines quoted of the first definition (one fewer of the others). */
#define RTV_QUOTE_LINES 4
/* Longest quoted line, in characters after its indent is dropped. */
#define RTV_QUOTE_CHARS 88
/* Items (by score) that the folded list names first, before ordering the
 * rest by their names. */
#define RTV_FOLD_BY_SCORE 6
/* Spaces a tab becomes in a quoted line. */
#define RTV_TAB 4

/* Appends s[0..len) cut to at most max characters on a UTF-8 boundary;
 * with escape, '[', ']' and '\\' outside code spans escaped (inside one a
 * backslash is shown as it is, and no citation is read there). */
static void add_capped(StrBuf *sb, const char *s, size_t len, size_t max, int escape)
{
    size_t chars = 0, end = 0;
    for (; end < len; end++)
        if (((unsigned char)s[end] & 0xC0) != 0x80 && chars++ == max) break;
    for (size_t i = 0; i < end; i++) {
        char c = s[i];
        if (escape && c == '`') {
            /* a run of backticks, and the code span it opens when the
             * same run closes it on this line, as they are */
            size_t run = 1, j;
            while (i + run < end && s[i + run] == '`')
                run++;
            size_t to = i + run;
            for (j = to; j < end && s[j] != '\n'; j++) {
                size_t r = 0;
                while (j + r < end && s[j + r] == '`')
                    r++;
                if (r == run) {
                    to = j + r;
                    break;
                }
                j += r ? r - 1 : 0;
            }
            sb_add(sb, s + i, to - i);
            i = to - 1;
            continue;
        }
        if (escape && (c == '[' || c == ']' || c == '\\')) sb_addc(sb, '\\');
        sb_addc(sb, c);
    }
    if (end < len) sb_adds(sb, "\xE2\x80\xA6"); /* U+2026 ellipsis */
}

void rtv_add_escaped(StrBuf *sb, const char *s, size_t max_chars)
{
    size_t len = strlen(s);
    /* one line: a reason may quote a server's multi-line body */
    char *tmp = xstrndup(s, len);
    for (size_t i = 0; i < len; i++)
        if (tmp[i] == '\n' || tmp[i] == '\r') tmp[i] = ' ';
    add_capped(sb, tmp, len, max_chars, 1);
    free(tmp);
}

/* Appends s as a markdown code span, fenced with more backticks than it holds. */
static void add_code(StrBuf *sb, const char *s, size_t len, size_t max)
{
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < len; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    int pad = longest > 0;
    for (size_t i = 0; i <= longest; i++)
        sb_addc(sb, '`');
    if (pad) sb_addc(sb, ' ');
    add_capped(sb, s, len, max, 0);
    if (pad) sb_addc(sb, ' ');
    for (size_t i = 0; i <= longest; i++)
        sb_addc(sb, '`');
}

static void add_code_str(StrBuf *sb, const char *s)
{
    add_code(sb, s, strlen(s), RTV_SHOW_CHARS);
}

/* A name in the lead: its last two parts ("RunnersFactory.createRunners"
 * of "Parameterized.RunnersFactory.createRunners"); the citations below
 * give it whole. */
static void add_lead_name(StrBuf *sb, const char *s)
{
    const char *p = s + strlen(s), *keep = s;
    int parts = 0;
    while (p > s) {
        p--;
        if ((*p == '.' || *p == ':') && p[1] != ':' && p[1] != '.' && p[1]) {
            if (++parts == 2) {
                keep = p + 1;
                break;
            }
        }
    }
    add_code_str(sb, keep);
}

/* For a piece of a split definition: the packed piece of the same
 * definition that ends nearest before it, or NULL. */
static const RtvItem *piece_before(const RtvItem *items, size_t n, const RtvItem *it)
{
    const RtvItem *best = NULL;
    const IdxChunk *c = &it->chunk;
    for (size_t i = 0; c->window > 0 && i < n; i++) {
        const IdxChunk *o = &items[i].chunk;
        if (&items[i] == it || o->window == 0 || o->kind != c->kind ||
            strcmp(o->symbol, c->symbol) || strcmp(o->path, c->path) ||
            items[i].end_line >= it->start_line)
            continue;
        if (!best || items[i].end_line > best->end_line) best = &items[i];
    }
    return best;
}

/* A relation the graph holds between two context items. */
typedef struct Rel {
    size_t from, to;
    IdxEdgeKind kind;
} Rel;

typedef struct Ans {
    const RtvAnswerIn *in;
    StrBuf *sb;
    int64_t *head;       /* per item: the id its definition is known by (its first piece) */
    uint32_t *def_start; /* per item: its definition's first line */
    uint32_t *def_end;   /* and last line */
    char *caller;        /* per item: it calls the focus */
    Rel *rels;
    size_t n_rels;
    char *word_buf;
    const char *words[64];
    size_t wl[64];
    size_t n_words;
} Ans;

/* The name a call of the item is written with: its symbol's last part. */
static const char *short_name(const RtvItem *it, size_t *len)
{
    const char *s = it->chunk.symbol ? it->chunk.symbol : "";
    const char *p = s + strlen(s);
    while (p > s && p[-1] != '.' && p[-1] != ':')
        p--;
    *len = strlen(p);
    return p;
}

static const char *item_name(const RtvItem *it)
{
    return it->chunk.symbol && it->chunk.symbol[0] ? it->chunk.symbol : NULL;
}

/* Each item's definition: its first piece and lines; the store is asked
 * only about pieces of split definitions. */
static void load_defs(Ans *a)
{
    const RtvAnswerIn *in = a->in;
    for (size_t i = 0; i < in->n; i++) {
        const IdxChunk *c = &in->items[i].chunk;
        a->head[i] = c->id;
        a->def_start[i] = c->start_line;
        a->def_end[i] = c->end_line;
        if (!in->st) continue;
        RtvDef d;
        if ((c->window || c->cont) && c->id > 0 &&
            rtv_def_of_chunk(in->st, c->id, &d, NULL) == CR_OK) {
            if (d.n_pieces) a->head[i] = d.pieces[0];
            a->def_start[i] = d.start_line;
            a->def_end[i] = d.end_line;
            rtv_def_release(&d);
        }
        /* the index's lines are the disk's: where they are in an unsaved
         * buffer, as the item's are */
        uint32_t s = a->def_start[i], e = a->def_end[i];
        if (rtv_buffer_lines(in->st, in->req, c->path, &s, &e, NULL) == CR_OK) {
            a->def_start[i] = s;
            a->def_end[i] = e;
        }
    }
}

static size_t item_of(const Ans *a, int64_t id)
{
    for (size_t j = 0; j < a->in->n; j++)
        if (a->head[j] == id || a->in->items[j].chunk.id == id) return j;
    return (size_t)-1;
}

static void add_rel(Ans *a, size_t from, size_t to, IdxEdgeKind kind)
{
    if (from == to) return;
    for (size_t k = 0; k < a->n_rels; k++)
        if (a->rels[k].from == from && a->rels[k].to == to && a->rels[k].kind == kind) return;
    a->rels = xrealloc(a->rels, (a->n_rels + 1) * sizeof *a->rels);
    a->rels[a->n_rels++] = (Rel){from, to, kind};
}

/* The relations leaving the shown items (every piece of theirs) towards
 * any context item. */
static void load_rels(Ans *a, const size_t *shown, size_t n_shown)
{
    const RtvAnswerIn *in = a->in;
    if (!in->st) return;
    for (size_t s = 0; s < n_shown; s++) {
        size_t i = shown[s];
        const IdxChunk *c = &in->items[i].chunk;
        if (c->id <= 0) continue;
        int64_t one = c->id, *pieces = &one;
        size_t n_pieces = 1;
        RtvDef d = {0};
        if ((c->window || c->cont) && rtv_def_of_chunk(in->st, c->id, &d, NULL) == CR_OK &&
            d.n_pieces) {
            pieces = d.pieces;
            n_pieces = d.n_pieces;
        }
        /* and for the first, the context's calls into it */
        for (int out = 1; out >= (s == 0 ? 0 : 1); out--)
            for (size_t p = 0; p < n_pieces; p++) {
                IdxEdge *ev = NULL;
                size_t ne = 0;
                if (idx_edges(in->st, pieces[p], out, &ev, &ne, NULL) != CR_OK) continue;
                for (size_t k = 0; k < ne; k++) {
                    IdxEdgeKind kind = ev[k].kind;
                    if (kind != IDX_EDGE_CALL && kind != IDX_EDGE_RAISE &&
                        kind != IDX_EDGE_INHERIT && kind != IDX_EDGE_IMPORT)
                        continue;
                    if (!out && kind != IDX_EDGE_CALL) continue;
                    size_t j = item_of(a, out ? ev[k].dst : ev[k].src);
                    if (j == (size_t)-1) continue;
                    if (out)
                        add_rel(a, i, j, kind);
                    else
                        add_rel(a, j, i, kind);
                }
                free(ev);
            }
        rtv_def_release(&d);
    }
}

/* The items that call the focus (the code graph's callers). */
static void load_callers(Ans *a)
{
    const RtvAnswerIn *in = a->in;
    if (!in->st || !in->focus_chunk) return;
    RtvCand *cs = NULL;
    size_t n = 0;
    if (rtv_focus_callers(in->st, in->focus_chunk, RTV_MAX_CANDIDATES, &cs, &n, NULL) == CR_OK)
        for (size_t k = 0; k < n; k++)
            for (size_t j = 1; j < in->n; j++)
                if (in->items[j].chunk.id == cs[k].chunk_id) a->caller[j] = 1;
    free(cs);
}

static void load_words(Ans *a)
{
    if (!a->in->words) return;
    a->word_buf = xstrdup(a->in->words);
    for (char *w = strtok(a->word_buf, " "); w && a->n_words < 64; w = strtok(NULL, " ")) {
        size_t n = strlen(w);
        if (n < 3) continue;
        a->words[a->n_words] = w;
        a->wl[a->n_words++] = n;
    }
}

static int has_rel(const Ans *a, size_t from, size_t to, IdxEdgeKind kind)
{
    for (size_t k = 0; k < a->n_rels; k++)
        if (a->rels[k].from == from && a->rels[k].to == to && a->rels[k].kind == kind) return 1;
    return 0;
}

/* Whether item i is, for the lead, a target of from of a kind: a named
 * item; a call of what from also raises is said as the raise. */
static int lead_target(const Ans *a, size_t from, size_t i, IdxEdgeKind kind)
{
    if (!item_name(&a->in->items[i]) || !has_rel(a, from, i, kind)) return 0;
    return kind != IDX_EDGE_CALL || !has_rel(a, from, i, IDX_EDGE_RAISE);
}

/* "`A`", "`A` and `B`", "`A`, `B` and `C`" of the targets of rels from i
 * of a kind (at most 3, best ranked first); returns how many were named. */
static size_t add_targets(Ans *a, size_t from, IdxEdgeKind kind, size_t *first)
{
    size_t to[3], n = 0;
    for (size_t j = 0; j < a->in->n && n < 3; j++)
        if (lead_target(a, from, j, kind)) to[n++] = j;
    for (size_t k = 0; k < n; k++) {
        if (k) sb_adds(a->sb, k + 1 == n ? " and " : ", ");
        add_lead_name(a->sb, a->in->items[to[k]].chunk.symbol);
    }
    if (first && n) *first = to[0];
    return n;
}

static size_t count_rels(const Ans *a, size_t from, IdxEdgeKind kind)
{
    size_t n = 0;
    for (size_t j = 0; j < a->in->n; j++)
        n += lead_target(a, from, j, kind);
    return n;
}

/* "`A`", "`A` and `B`" ... of the named items that call item to (at most
 * 3, best ranked first); returns how many. */
static size_t add_callers_of(Ans *a, size_t to)
{
    size_t from[3], n = 0;
    for (size_t j = 0; j < a->in->n && n < 3; j++)
        if (j != to && item_name(&a->in->items[j]) && has_rel(a, j, to, IDX_EDGE_CALL))
            from[n++] = j;
    for (size_t k = 0; k < n; k++) {
        if (k) sb_adds(a->sb, k + 1 == n ? " and " : ", ");
        add_lead_name(a->sb, a->in->items[from[k]].chunk.symbol);
    }
    return n;
}

/* A doc comment's first sentence (to ". " or a blank line), on one line. */
static void add_doc_sentence(StrBuf *sb, const char *d, size_t max)
{
    while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r' || *d == '*' || *d == '/')
        d++;
    size_t n = 0;
    while (d[n] && !(d[n] == '.' && (d[n + 1] == ' ' || d[n + 1] == '\n' || !d[n + 1])) &&
           !(d[n] == '\n' && (d[n + 1] == '\n' || (d[n + 1] == '\r' && d[n + 2] == '\n'))))
        n++;
    char *one = xstrndup(d, n);
    for (size_t i = 0; i < n; i++)
        if (one[i] == '\n' || one[i] == '\r' || one[i] == '\t') one[i] = ' ';
    /* runs of blanks from a wrapped comment become one */
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!(one[i] == ' ' && w && one[w - 1] == ' ')) one[w++] = one[i];
    while (w && one[w - 1] == ' ')
        w--;
    add_capped(sb, one, w, max, 1);
    free(one);
}

/* Whether line s (to its end or '\n') is a heading's underline: a run of
 * '=', '-' or '~' alone (reST, numpydoc). */
static int underline(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char u = *s;
    if (u != '=' && u != '-' && u != '~') return 0;
    size_t n = 0;
    while (s[n] == u)
        n++;
    while (s[n] == ' ' || s[n] == '\t' || s[n] == '\r')
        n++;
    return n >= 3 && (s[n] == '\n' || !s[n]);
}

/* A doc comment that says what the definition is: it has letters, and its
 * first line is not a section heading ("Parameters" over "=========="). */
static int has_doc(const IdxChunk *c)
{
    const char *d = c->docstring ? c->docstring : "";
    int letters = 0;
    for (const char *p = d; *p && !letters; p++)
        letters = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z');
    if (!letters) return 0;
    while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r')
        d++;
    const char *nl = strchr(d, '\n');
    return !(nl && underline(nl + 1));
}

/* What a definition is: its doc comment's first sentence, else its
 * signature as code; nothing for module code. */
static void add_what(StrBuf *sb, const IdxChunk *c, size_t max)
{
    if (has_doc(c))
        add_doc_sentence(sb, c->docstring, max);
    else if (c->signature && c->signature[0]) /* the quote below shows it whole */
        add_code(sb, c->signature, strlen(c->signature), max < RTV_SIG_CHARS ? max : RTV_SIG_CHARS);
}

static int has_what(const IdxChunk *c)
{
    return has_doc(c) || (c->signature && c->signature[0]);
}

/* A sentence's end: "." unless the text ends with one already. */
static void end_sentence(StrBuf *sb)
{
    char last = sb->len ? sb->buf[sb->len - 1] : 0;
    if (last != '.' && last != '?' && last != '!') sb_addc(sb, '.');
}

static void add_lead(Ans *a, const size_t *shown, size_t n_shown)
{
    const RtvItem *top = &a->in->items[0];
    StrBuf *sb = a->sb;
    if (a->in->focus_chunk)
        sb_adds(sb, "About ");
    else
        sb_adds(sb, a->in->weak ? "The closest match is " : "The best match is ");
    /* its file is in its citation, below */
    if (item_name(top)) {
        add_lead_name(sb, top->chunk.symbol);
    } else {
        sb_adds(sb, "module code of ");
        add_code(sb, top->chunk.path, strlen(top->chunk.path), RTV_SHOW_CHARS * 2);
    }
    /* what it is: its doc comment's sentence (a signature is quoted below) */
    if (has_doc(&top->chunk)) {
        sb_adds(sb, ": ");
        add_doc_sentence(sb, top->chunk.docstring, RTV_LEAD_CHARS);
    }
    end_sentence(sb);
    size_t sentences = 1;
    if (a->in->focus_chunk) {
        /* the callers shown (with their call lines), then those folded */
        size_t callers = 0, named = 0, order[3];
        for (size_t k = 1; k < n_shown; k++)
            callers += a->caller[shown[k]];
        size_t in_shown = callers;
        for (size_t k = 1; k < n_shown && named < 3; k++)
            if (a->caller[shown[k]]) order[named++] = shown[k];
        for (size_t j = 1; j < a->in->n; j++) {
            int is_shown = 0;
            for (size_t k = 0; k < n_shown && !is_shown; k++)
                is_shown = shown[k] == j;
            if (is_shown || !a->caller[j]) continue;
            callers++;
            if (named < 3) order[named++] = j;
        }
        if (callers) {
            sb_adds(sb, " It is called by ");
            for (size_t k = 0; k < named; k++) {
                if (k) sb_adds(sb, k + 1 == named && callers == named ? " and " : ", ");
                add_lead_name(sb, rtv_item_symbol(&a->in->items[order[k]]));
            }
            if (callers > named) sb_addf(sb, " and %zu more", callers - named);
            if (in_shown)
                sb_adds(sb, in_shown == 1 ? " (below, with the line that calls it)."
                                          : " (below, with the lines that call it).");
            else
                sb_adds(sb, ".");
        } else {
            sb_adds(sb, " No indexed code calls it.");
        }
        sb_addc(sb, '\n');
        return;
    }
    /* the top definition's relations and the context's calls into it;
     * when it has none, the next shown one's relations */
    static const struct {
        IdxEdgeKind kind;
        const char *verb;
    } verbs[] = {{IDX_EDGE_CALL, "calls"},
                 {IDX_EDGE_RAISE, "raises or catches"},
                 {IDX_EDGE_INHERIT, "subclasses"},
                 {IDX_EDGE_IMPORT, "imports"}};
    for (size_t k = 0; k < n_shown && sentences < 3; k++) {
        size_t i = shown[k];
        if (i != 0 && !item_name(&a->in->items[i])) continue;
        for (size_t v = 0; v < sizeof verbs / sizeof verbs[0] && sentences < 3; v++) {
            if (count_rels(a, i, verbs[v].kind) &&
                !(verbs[v].kind == IDX_EDGE_IMPORT && count_rels(a, i, IDX_EDGE_CALL))) {
                sb_addc(sb, ' ');
                if (i == 0)
                    sb_adds(sb, "It");
                else
                    add_lead_name(sb, a->in->items[i].chunk.symbol);
                sb_addf(sb, " %s ", verbs[v].verb);
                size_t first = 0, n = add_targets(a, i, verbs[v].kind, &first);
                if (n == 1 && verbs[v].kind == IDX_EDGE_CALL &&
                    count_rels(a, first, IDX_EDGE_CALL)) {
                    sb_adds(sb, ", which calls ");
                    add_targets(a, first, IDX_EDGE_CALL, NULL);
                }
                sb_adds(sb, ".");
                sentences++;
            }
            if (i == 0 && v == 0 && sentences < 3) { /* what it calls, then who calls it */
                size_t at = sb->len;
                sb_addc(sb, ' ');
                size_t n = add_callers_of(a, 0);
                if (n) {
                    sb_adds(sb, n == 1 ? " calls it." : " call it.");
                    sentences++;
                } else {
                    sb_truncate(sb, at);
                }
            }
        }
        if (k == 0 && sentences > 1) break; /* the top one's relations are enough */
    }
    sb_addc(sb, '\n');
}

/* Lines [off[l], off[l+1]) of an item's text. */
typedef struct Lines {
    const char *text;
    size_t *off;
    size_t n;
} Lines;

static void lines_init(Lines *L, const char *text)
{
    L->text = text ? text : "";
    size_t len = strlen(L->text), n = 0;
    for (size_t i = 0; i < len; i++)
        n += L->text[i] == '\n';
    if (len && L->text[len - 1] != '\n') n++;
    L->off = xmalloc((n + 1) * sizeof *L->off);
    L->n = 0;
    L->off[0] = 0;
    for (size_t i = 0; i < len; i++)
        if (L->text[i] == '\n') L->off[++L->n] = i + 1;
    if (L->n < n) L->off[++L->n] = len;
}

static size_t line_len(const Lines *L, size_t l)
{
    size_t n = L->off[l + 1] - L->off[l];
    while (n && (L->text[L->off[l] + n - 1] == '\n' || L->text[L->off[l] + n - 1] == '\r'))
        n--;
    return n;
}

static int blank_line(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

static int triple_quote(const char *s)
{
    return !memcmp(s, "\"\"\"", 3) || !memcmp(s, "'''", 3);
}

/* Whether a block comment or a triple-quoted string is open where the
 * text of an item starts. */
typedef struct Open {
    int block, triple;
} Open;

/* Per line of an item's text: whether it is a comment or a doc string
 * (a line comment, a line in a block comment or a triple-quoted string),
 * the text starting in the state *o says; *o becomes the state after it.
 * v may be NULL (the state only). */
static void scan_comments(const Lines *L, Open *o, char *v)
{
    int block = o->block, triple = o->triple;
    for (size_t l = 0; l < L->n; l++) {
        const char *s = L->text + L->off[l];
        size_t n = line_len(L, l), i = 0;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
        int starts_in = block || triple;
        int line_comment =
            i < n &&
            (s[i] == '#' || (s[i] == '/' && i + 1 < n && (s[i + 1] == '/' || s[i + 1] == '*')));
        int doc = n - i >= 3 && triple_quote(s + i);
        for (size_t k = 0; k + 1 < n; k++) {
            if (!triple && !block && s[k] == '/' && s[k + 1] == '*') {
                block = 1;
                k++;
            } else if (block && s[k] == '*' && s[k + 1] == '/') {
                block = 0;
                k++;
            } else if (!block && k + 2 < n && triple_quote(s + k)) {
                triple = !triple;
                k += 2;
            }
        }
        if (v) v[l] = (char)(starts_in || line_comment || doc);
    }
    o->block = block;
    o->triple = triple;
}

static char *comment_lines(const Lines *L, Open o)
{
    char *v = xcalloc(L->n ? L->n : 1, 1);
    scan_comments(L, &o, v);
    return v;
}

/* Words that mark an error or a return path, at a word start in any
 * language the index reads. */
static const char *const path_words[] = {"return", "raise", "throw",  "panic", "abort", "error",
                                         "err",    "fail",  "except", "catch", "goto"};

/* The line of item i's text its definition's signature starts on, or
 * its first line when that is the definition's first; n when neither. */
static size_t head_line(const Ans *a, size_t i, const Lines *L)
{
    const RtvItem *it = &a->in->items[i];
    uint32_t ds = a->def_start[i];
    if (ds < it->start_line || ds > it->end_line || ds - it->start_line >= L->n) return L->n;
    size_t first = ds - it->start_line;
    const char *sig = it->chunk.signature ? it->chunk.signature : "";
    while (*sig == ' ' || *sig == '\t')
        sig++;
    size_t want = strcspn(sig, "\n(");
    if (want > 12) want = 12;
    for (size_t l = first; want >= 3 && l < L->n && l < first + 8; l++) {
        const char *s = L->text + L->off[l];
        size_t n = line_len(L, l), k = 0;
        while (k < n && (s[k] == ' ' || s[k] == '\t'))
            k++;
        if (n - k >= want && !memcmp(s + k, sig, want)) {
            /* a C return type on a line of its own: the name is on the next */
            size_t nl;
            const char *name = short_name(it, &nl);
            if (nl && l + 1 < L->n && !rtv_calls_name(s, n, name, nl) &&
                rtv_calls_name(L->text + L->off[l + 1], line_len(L, l + 1), name, nl))
                return l + 1;
            return l;
        }
    }
    return blank_line(L->text + L->off[first], line_len(L, first)) ? L->n : first;
}

/* The lines of item i worth quoting (indexes into its text), at most max,
 * in line order: its first line when it is the definition's; then by
 * score: the question's words, calls into related items (the focus, for
 * a caller), error and return paths; short ones whole. */
static size_t pick_lines(const Ans *a, size_t i, const Lines *L, Open open, size_t max, size_t *out)
{
    size_t n = L->n, picked = 0, nonblank = 0;
    for (size_t l = 0; l < n; l++)
        nonblank += !blank_line(L->text + L->off[l], line_len(L, l));
    double *score = xcalloc(n ? n : 1, sizeof *score);
    char *comment = comment_lines(L, open), *said = xcalloc(n ? n : 1, 1);
    size_t pwl[sizeof path_words / sizeof path_words[0]];
    for (size_t w = 0; w < sizeof path_words / sizeof path_words[0]; w++)
        pwl[w] = strlen(path_words[w]);
    for (size_t l = 0; l < n; l++) {
        const char *s = L->text + L->off[l];
        size_t len = line_len(L, l);
        if (blank_line(s, len)) {
            score[l] = -1;
            continue;
        }
        int met = rtv_line_mentions(s, len, a->words, a->wl, a->n_words);
        double sc = 3.0 * met;
        for (size_t k = 0; k < a->n_rels; k++) {
            if (a->rels[k].from != i || a->rels[k].kind != IDX_EDGE_CALL) continue;
            size_t nl;
            const char *name = short_name(&a->in->items[a->rels[k].to], &nl);
            if (rtv_calls_name(s, len, name, nl)) {
                sc += 4;
                break;
            }
        }
        if (a->caller[i]) {
            size_t nl;
            const char *name = short_name(&a->in->items[0], &nl);
            if (rtv_calls_name(s, len, name, nl)) sc += 8;
        }
        if (rtv_line_mentions(s, len, path_words, pwl, sizeof path_words / sizeof path_words[0]))
            sc += 2;
        /* the doc comment's first sentence is said already: code only
         * (a comment line that holds the question's words may still fill
         * a quote that has too little code) */
        if (comment[l]) {
            said[l] = (char)(met < 100 ? met : 100);
            sc = 0;
        }
        score[l] = sc;
    }
    char *take = xcalloc(n ? n : 1, 1);
    if (nonblank <= max) { /* short: all of it */
        for (size_t l = 0; l < n; l++)
            take[l] = score[l] >= 0;
    } else {
        size_t want = max;
        /* the definition's first line when the text holds it: the one its
         * signature starts on (past decorators and attributes) */
        size_t head = head_line(a, i, L);
        if (head < n) {
            take[head] = 1;
            want--;
        }
        while (want) {
            size_t best = n;
            for (size_t l = 0; l < n; l++)
                if (!take[l] && score[l] > 0 && (best == n || score[l] > score[best])) best = l;
            if (best == n) break;
            take[best] = 1;
            want--;
        }
        /* at least three lines: the first code lines not taken, then the
         * comment lines with the most of the question's words, then any */
        for (size_t l = 0; l < n && want && max - want < 3; l++)
            if (!take[l] && score[l] >= 0 && !comment[l]) {
                take[l] = 1;
                want--;
            }
        while (want && max - want < 3) {
            size_t best = n;
            for (size_t l = 0; l < n; l++)
                if (!take[l] && said[l] && (best == n || said[l] > said[best])) best = l;
            if (best == n) break;
            take[best] = 1;
            want--;
        }
        for (size_t l = 0; l < n && want && max - want < 3; l++)
            if (!take[l] && score[l] >= 0) {
                take[l] = 1;
                want--;
            }
    }
    for (size_t l = 0; l < n; l++)
        if (take[l]) out[picked++] = l;
    free(take);
    free(score);
    free(comment);
    free(said);
    return picked;
}

/* Columns of leading blanks, tabs as RTV_TAB. */
static size_t indent_of(const char *s, size_t n)
{
    size_t col = 0;
    for (size_t i = 0; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
        col += s[i] == '\t' ? RTV_TAB : 1;
    return col;
}

static void add_quoted(StrBuf *sb, uint32_t line, const char *s, size_t n, size_t drop)
{
    StrBuf t;
    sb_init(&t);
    size_t col = 0, i = 0;
    for (; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
        col += s[i] == '\t' ? RTV_TAB : 1;
    for (size_t c = drop; c < col; c++)
        sb_addc(&t, ' ');
    for (; i < n; i++) {
        if (s[i] == '\t')
            sb_adds(&t, "    ");
        else if (s[i] != '\r')
            sb_addc(&t, s[i]);
    }
    sb_addf(sb, "%5u \xE2\x94\x82 ", line); /* U+2502 box drawing light vertical */
    add_capped(sb, t.buf ? t.buf : "", t.len, RTV_QUOTE_CHARS, 0);
    sb_addc(sb, '\n');
    sb_release(&t);
}

/* Characters text[0..len) shows (markup not counted). */
static size_t shown_chars(const char *text, size_t len)
{
    size_t shown = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c & 0xC0) != 0x80 && c != '`' && c != '*' && c != '[' && c != ']') shown++;
    }
    return shown;
}

/* Characters left for a note (after " — ") on a line started at
 * sb->buf[line_at] so that it stays within RTV_LINE_CHARS as shown; 0 when
 * fewer than RTV_NOTE_MIN are: the line goes without. */
static size_t note_room(const StrBuf *sb, size_t line_at)
{
    size_t shown = shown_chars(sb->buf + line_at, sb->len - line_at) + 3;
    return shown + RTV_NOTE_MIN <= RTV_LINE_CHARS ? RTV_LINE_CHARS - shown : 0;
}

/* An item's name as code, its leading qualifiers dropped ("A.B.f" as
 * "B.f", then "f") while the line would pass RTV_LINE_CHARS with `others`
 * characters beside it; "module code" when it has none. */
static void add_name_fit(StrBuf *sb, const RtvItem *it, size_t others)
{
    const char *s = item_name(it);
    if (!s) {
        sb_adds(sb, "module code");
        return;
    }
    while (strlen(s) + others > RTV_LINE_CHARS) {
        const char *dot = strpbrk(s, ".:");
        if (!dot) break;
        while (*dot == '.' || *dot == ':')
            dot++;
        if (!*dot) break;
        s = dot;
    }
    add_code_str(sb, s);
}

static void add_cite(StrBuf *sb, const char *path, uint32_t a, uint32_t b)
{
    if (a == b)
        sb_addf(sb, "[%s:%u]", path, a);
    else
        sb_addf(sb, "[%s:%u-%u]", path, a, b);
}

/* A shown definition: its header line, cited, then its lines quoted. */
static void add_shown(Ans *a, size_t rank, size_t i, size_t max_lines)
{
    const RtvAnswerIn *in = a->in;
    const RtvItem *it = &in->items[i];
    StrBuf *sb = a->sb;
    uint32_t ds = a->def_start[i], de = a->def_end[i];
    uint32_t from = it->start_line;
    int part = 0;
    if (ds && ds < it->start_line) {
        if (it->end_line - ds + 1 <= RTV_ANSWER_FIT)
            from = ds; /* the definition from its first line */
        else
            part = 1;
    }
    if (rank == 0) sb_addc(sb, '\n'); /* the next follows its quote: a screen holds more */
    size_t line_at = sb->len;
    /* what follows the name: its part, its citation, a gap before it */
    StrBuf tail;
    sb_init(&tail);
    if (part && de >= ds) {
        uint32_t span = it->end_line - it->start_line + 1, len = de - ds + 1;
        uint32_t parts = (len + span - 1) / span, k = (it->start_line - ds) / span + 1;
        if (parts < 2) parts = 2;
        if (k < 2) k = 2;
        if (k > parts) k = parts;
        sb_addf(&tail, " (part %u of %u)", k, parts);
    } else if (it->chunk.window > 0 && from == it->start_line) {
        sb_addf(&tail, " (part %u)", it->chunk.window);
    }
    sb_addc(&tail, ' ');
    add_cite(&tail, it->chunk.path, from, it->end_line);
    const RtvItem *prev = piece_before(in->items, in->n, it);
    if (prev && prev->end_line + 1 < it->start_line)
        sb_addf(&tail, " (lines %u-%u of it, between the parts shown, are not in the context)",
                prev->end_line + 1, it->start_line - 1);
    char num[24];
    snprintf(num, sizeof num, "%zu. ", rank + 1);
    sb_addf(sb, "**%s", num);
    add_name_fit(sb, it, strlen(num) + shown_chars(tail.buf, tail.len));
    sb_adds(sb, "**");
    sb_add(sb, tail.buf, tail.len);
    sb_release(&tail);
    if (a->caller[i] && item_name(&in->items[0])) {
        sb_adds(sb, " calls ");
        add_code_str(sb, in->items[0].chunk.symbol);
    } else if (rank > 0 && has_doc(&it->chunk) && note_room(sb, line_at)) {
        /* the signature is quoted: the doc comment's sentence */
        size_t room = note_room(sb, line_at);
        sb_adds(sb, " \xE2\x80\x94 "); /* em dash */
        add_doc_sentence(sb, it->chunk.docstring, room);
    }
    sb_addc(sb, '\n');

    /* the definition's own first line (its signature's) when the packed
     * text starts after it, and whether the text starts inside a comment
     * or a doc string (the lines before it, read from the definition's
     * first) */
    StrBuf first;
    sb_init(&first);
    uint32_t first_at = 0;
    Open open = {0, 0};
    if (ds && ds < it->start_line && in->st) {
        uint32_t to = ds + 7 < it->start_line ? ds + 7 : it->start_line - 1;
        if (rtv_read_lines(in->st, in->req, it->chunk.path, ds, it->start_line - 1, &first, NULL,
                           NULL) == CR_OK) {
            Lines F;
            lines_init(&F, first.buf);
            scan_comments(&F, &open, NULL);
            if (F.n > to - ds + 1) F.n = to - ds + 1;
            RtvItem head = *it;
            head.start_line = ds;
            head.end_line = to;
            Ans one = *a;
            one.in = &(RtvAnswerIn){.items = &head, .n = 1};
            uint32_t ds0 = a->def_start[i];
            one.def_start = &ds0;
            size_t l = head_line(&one, 0, &F);
            if (l >= F.n) l = 0;
            if (F.n) {
                first_at = ds + (uint32_t)l;
                size_t len = line_len(&F, l);
                memmove(first.buf, first.buf + F.off[l], len);
                first.len = len;
                first.buf[len] = '\0';
            }
            free(F.off);
        }
    }
    int with_first = first_at && first.len && !blank_line(first.buf, first.len);
    Lines L;
    lines_init(&L, it->text);
    size_t *pick = xcalloc(L.n + 1, sizeof *pick);
    size_t n = pick_lines(a, i, &L, open, max_lines, pick);
    if (n || with_first) {
        size_t drop = (size_t)-1;
        if (with_first) drop = indent_of(first.buf, first.len);
        for (size_t k = 0; k < n; k++) {
            size_t ind = indent_of(L.text + L.off[pick[k]], line_len(&L, pick[k]));
            if (ind < drop) drop = ind;
        }
        sb_adds(sb, "```\n");
        if (with_first) add_quoted(sb, first_at, first.buf, first.len, drop);
        for (size_t k = 0; k < n; k++)
            add_quoted(sb, it->start_line + (uint32_t)pick[k], L.text + L.off[pick[k]],
                       line_len(&L, pick[k]), drop);
        sb_adds(sb, "```\n");
    }
    sb_release(&first);
    free(pick);
    free(L.off);
}

static void add_folded(Ans *a, size_t i)
{
    const RtvItem *it = &a->in->items[i];
    StrBuf *sb = a->sb;
    size_t line_at = sb->len;
    StrBuf tail;
    sb_init(&tail);
    if (it->chunk.window > 0) sb_addf(&tail, " (part %u)", it->chunk.window);
    sb_addc(&tail, ' ');
    add_cite(&tail, it->chunk.path, it->start_line, it->end_line);
    const RtvItem *prev = piece_before(a->in->items, a->in->n, it);
    if (prev && prev->end_line + 1 < it->start_line)
        sb_addf(&tail, " (lines %u-%u of it, between the parts shown, are not in the context)",
                prev->end_line + 1, it->start_line - 1);
    sb_adds(sb, "- ");
    add_name_fit(sb, it, 2 + shown_chars(tail.buf, tail.len));
    sb_add(sb, tail.buf, tail.len);
    sb_release(&tail);
    if (a->caller[i] && item_name(&a->in->items[0])) {
        sb_adds(sb, " calls ");
        add_code_str(sb, a->in->items[0].chunk.symbol);
    } else if (has_what(&it->chunk) && note_room(sb, line_at)) {
        size_t room = note_room(sb, line_at);
        sb_adds(sb, " \xE2\x80\x94 ");
        add_what(sb, &it->chunk, room);
    }
    sb_addc(sb, '\n');
}

/* The order of the items not shown, as the folded list names them: those
 * of the best RTV_FOLD_BY_SCORE in score order; then those whose name
 * (with its class) holds the most of the question's words, then fewer,
 * then none, score order within each. A folded line shows little more
 * than the name, and a screen holds a dozen of them: a name that says
 * what was asked for is the one worth its line. Returns how many are in
 * out. */
static size_t fold_order(const Ans *a, const char *is_shown, size_t *out)
{
    const RtvAnswerIn *in = a->in;
    size_t n = in->n, n_out = 0;
    int *hits = xcalloc(n, sizeof *hits);
    int most = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = item_name(&in->items[i]);
        hits[i] = s ? rtv_line_mentions(s, strlen(s), a->words, a->wl, a->n_words) : 0;
        if (!is_shown[i] && hits[i] > most) most = hits[i];
    }
    for (size_t i = 0; i < n && i < RTV_FOLD_BY_SCORE; i++)
        if (!is_shown[i]) {
            out[n_out++] = i;
            hits[i] = -1;
        }
    for (int want = most; want >= 0; want--)
        for (size_t i = 0; i < n; i++)
            if (!is_shown[i] && hits[i] == want) out[n_out++] = i;
    free(hits);
    return n_out;
}

char *rtv_extractive_answer(const RtvAnswerIn *in)
{
    StrBuf sb;
    sb_init(&sb);
    size_t n = in->n;
    if (n == 0) {
        sb_adds(&sb, "No indexed code matched the question.");
        if (in->why_empty && in->why_empty[0]) sb_addf(&sb, " %s", in->why_empty);
        sb_addc(&sb, '\n');
    } else {
        Ans a = {in, &sb, NULL, NULL, NULL, NULL, NULL, 0, NULL, {0}, {0}, 0};
        a.head = xcalloc(n, sizeof *a.head);
        a.def_start = xcalloc(n, sizeof *a.def_start);
        a.def_end = xcalloc(n, sizeof *a.def_end);
        a.caller = xcalloc(n, 1);
        load_words(&a);
        load_defs(&a);
        load_callers(&a);

        /* the definitions shown: rank order; for an explanation, the focus
         * and then its callers */
        size_t shown[RTV_ANSWER_SHOWN], n_shown = 0;
        char *is_shown = xcalloc(n, 1);
        shown[n_shown++] = 0;
        is_shown[0] = 1;
        for (size_t pass = in->focus_chunk ? 0 : 1; pass < 2; pass++)
            for (size_t i = 1; i < n && n_shown < RTV_ANSWER_SHOWN; i++)
                if (!is_shown[i] && (pass || a.caller[i])) {
                    shown[n_shown++] = i;
                    is_shown[i] = 1;
                }
        load_rels(&a, shown, n_shown);
        add_lead(&a, shown, n_shown);
        for (size_t k = 0; k < n_shown; k++)
            add_shown(&a, k, shown[k], k == 0 ? RTV_QUOTE_LINES : RTV_QUOTE_LINES - 1);

        size_t rest = n - n_shown, listed = 0;
        size_t *order = xcalloc(n, sizeof *order);
        size_t n_order = fold_order(&a, is_shown, order);
        if (rest) sb_adds(&sb, "\nAlso relevant:\n");
        for (size_t oi = 0; oi < n_order; oi++) {
            size_t i = order[oi];
            if (is_shown[i]) continue;
            if (!in->all && listed == RTV_ANSWER_FOLDED && rest > RTV_ANSWER_FOLDED + 1) break;
            add_folded(&a, i);
            listed++;
        }
        if (listed < rest) sb_addf(&sb, "- and %zu more in the context list\n", rest - listed);
        free(order);
        free(is_shown);
        free(a.head);
        free(a.def_start);
        free(a.def_end);
        free(a.caller);
        free(a.rels);
        free(a.word_buf);
    }
    if (in->notice && in->notice[0]) {
        sb_adds(&sb, "\n_Note: ");
        add_capped(&sb, in->notice, strlen(in->notice), 400, 1);
        sb_adds(&sb, "._\n");
    }
    char *s = sb_detach(&sb, NULL);
    sb_release(&sb);
    return s;
}
