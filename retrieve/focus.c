#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* The definition at a line (rtv_def_at), the one a word at a place in a
 * file names (rtv_def_under) and the focus item an explanation packs first
 * (rtv_focus_item). Scopes are read
 * from the index's qualified names ("Class.method"), which every language's
 * row produces, so one rule serves them all: a method's body reaches its
 * class's members, a Go or Rust method (outside its type's lines) its type's,
 * a C++ out-of-line definition its class's. */

static int named(const RtvDef *d, const char *word)
{
    return d->head.symbol &&
           (!strcmp(d->head.symbol, word) || !strcmp(rtv_last_part(d->head.symbol), word));
}

static int contains(const RtvDef *d, uint32_t line)
{
    return line >= d->start_line && line <= d->end_line;
}

static uint32_t span(const RtvDef *d)
{
    return d->end_line - d->start_line;
}

/* The innermost of defs containing line (named word, when word is set);
 * -1 when none. */
static long innermost(const RtvDef *v, size_t n, uint32_t line, const char *word)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!contains(&v[i], line) || (word && !named(&v[i], word))) continue;
        if (best < 0 || span(&v[i]) < span(&v[best])) best = (long)i;
    }
    return best;
}

static long by_symbol(const RtvDef *v, size_t n, const char *symbol)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].head.symbol && !strcmp(v[i].head.symbol, symbol)) return (long)i;
    return -1;
}

/* The definition of word reachable from the scope of `scope` (a qualified
 * name, "" at module level): scope.word, then each enclosing scope's. */
static long in_scopes(const RtvDef *v, size_t n, const char *scope, const char *word)
{
    StrBuf q;
    sb_init(&q);
    long at = -1;
    size_t len = strlen(scope);
    for (;;) {
        sb_reset(&q);
        if (len) sb_addf(&q, "%.*s.", (int)len, scope);
        sb_adds(&q, word);
        if ((at = by_symbol(v, n, q.buf)) >= 0 || !len) break;
        while (len && scope[len - 1] != '.')
            len--;
        if (len) len--; /* the dot */
    }
    sb_release(&q);
    return at;
}

/* Whether d is a member of something ("Class.method"), not a top-level
 * definition. */
static int member(const RtvDef *d)
{
    return d->head.symbol && strchr(d->head.symbol, '.') != NULL;
}

/* Of the file's definitions named word (members only, when set), the
 * nearest to line. */
static long nearest_named(const RtvDef *v, size_t n, uint32_t line, const char *word, int members)
{
    long best = -1;
    uint32_t best_d = 0;
    for (size_t i = 0; i < n; i++) {
        if (!named(&v[i], word) || (members && !member(&v[i]))) continue;
        uint32_t d = line < v[i].start_line ? v[i].start_line - line
                     : line > v[i].end_line ? line - v[i].end_line
                                            : 0;
        if (best < 0 || d < best_d) {
            best = (long)i;
            best_d = d;
        }
    }
    return best;
}

CrErr rtv_def_at(IdxStore *st, const char *path, uint32_t line, RtvDef *out, ErrInfo *e)
{
    RtvDef *v = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    CrErr rc = rtv_file_defs(st, path, &v, &n, e);
    if (rc) return rc;
    long at = innermost(v, n, line, NULL);
    if (at < 0) {
        rc = err_set(e, CR_ENOENT, "%s:%u is in no definition", path, line);
    } else {
        *out = v[at];
        memset(&v[at], 0, sizeof v[at]);
    }
    rtv_defs_free(v, n);
    return rc;
}

static int ident_char(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
           (unsigned char)c >= 0x80;
}

/* The length of the member separator ending at text[a] (exclusive): 1
 * for `.`, 2 for `->` and `::` (C++, Rust), else 0. */
static size_t member_sep(const char *text, size_t a)
{
    if (a >= 1 && text[a - 1] == '.') return 1;
    if (a >= 2 &&
        ((text[a - 2] == '-' && text[a - 1] == '>') || (text[a - 2] == ':' && text[a - 1] == ':')))
        return 2;
    return 0;
}

/* The first whole-word use of word in text, or len. */
static size_t word_at(const char *text, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= len; i++)
        if (!memcmp(text + i, word, w) && !(i && ident_char(text[i - 1])) &&
            !(i + w < len && ident_char(text[i + w])))
            return i;
    return len;
}

/* The dotted expression ending with the w bytes at i, `->` and `::` written
 * as `.`; on a receiver that is no name (`(T{…}).m`, `f(x).m`), "?.m" as
 * the index writes an unknown receiver. Caller frees. */
static char *chain_before(const char *text, size_t i, size_t w)
{
    size_t a = i, sep;
    int unknown = 0, global = 0;
    while ((sep = member_sep(text, a)) != 0) {
        size_t b = a - sep;
        if (b >= 2 && text[b - 1] == ')' && text[b - 2] == '(') b -= 2; /* super() */
        while (b > 0 && ident_char(text[b - 1]))
            b--;
        if (b == a - sep) {
            unknown = b > 0 && (text[b - 1] == ')' || text[b - 1] == ']' || text[b - 1] == '}');
            /* `::f`: the global scope's f, as the index writes it */
            global = sep == 2 && text[a - 1] == ':' && !unknown;
            break;
        }
        a = b;
    }
    StrBuf sb;
    sb_init(&sb);
    if (unknown) sb_adds(&sb, "?.");
    if (global) sb_adds(&sb, IDX_REF_GLOBAL);
    for (size_t k = a; k < i + w; k++) {
        if (k + 2 <= i + w && member_sep(text, k + 2) == 2) {
            sb_addc(&sb, '.');
            k++;
        } else {
            sb_addc(&sb, text[k]);
        }
    }
    return sb_detach(&sb, NULL);
}

/* The dotted expression written up to word's first whole-word use on a
 * line ("self.headers.get", "super().copy"; `edge->GetBinding` and
 * `Lexer::TokenName` as the index writes them, "edge.GetBinding"), or
 * NULL. Caller frees. */
static char *chain_to(const char *text, size_t len, const char *word)
{
    size_t i = word_at(text, len, word);
    return i < len ? chain_before(text, i, strlen(word)) : NULL;
}

/* The chain of word's use on path's line continued from the lines above
 * (`return this.cache` over `  .build(…)`: "this.cache.build"), up to 3
 * lines back, into *chain; unchanged when the line does not start with
 * `.word`. */
static void chain_over_lines(IdxStore *st, const char *path, uint32_t line, const char *word,
                             const StrBuf *text, char **chain)
{
    size_t at = 0, w = strlen(word);
    while (at < text->len && (text->buf[at] == ' ' || text->buf[at] == '\t'))
        at++;
    if (at + 1 + w > text->len || text->buf[at] != '.' || memcmp(text->buf + at + 1, word, w))
        return;
    StrBuf joined, prev;
    sb_init(&joined);
    sb_init(&prev);
    sb_add(&joined, text->buf + at, text->len - at);
    for (uint32_t back = 1; back <= 3 && line > back && joined.len && joined.buf[0] == '.';
         back++) {
        sb_reset(&prev);
        if (idx_read_lines(st, path, line - back, line - back, &prev, NULL, NULL) != CR_OK ||
            !prev.buf)
            break;
        size_t a = 0, n = prev.len;
        while (n > 0 && (prev.buf[n - 1] == '\n' || prev.buf[n - 1] == '\r' ||
                         prev.buf[n - 1] == ' ' || prev.buf[n - 1] == '\t'))
            n--;
        while (a < n && (prev.buf[a] == ' ' || prev.buf[a] == '\t'))
            a++;
        char *rest = xstrndup(joined.buf, joined.len);
        sb_reset(&joined);
        sb_add(&joined, prev.buf + a, n - a);
        sb_adds(&joined, rest);
        free(rest);
    }
    /* the word after the last line's leading dot */
    size_t i = joined.len >= text->len - at ? joined.len - (text->len - at) + 1 : 0;
    if (i && i + w <= joined.len) {
        free(*chain);
        *chain = chain_before(joined.buf, i, w);
    }
    sb_release(&prev);
    sb_release(&joined);
}

/* The definition the call of word at path:line reaches in the call graph
 * (idx_call_target): *found 1 with *out, else 0 with *out untouched;
 * *recv 1 when word is written on a receiver other than the object the
 * method runs on (`obj.word`, not `self.word`): a member's name, never a
 * top-level definition's. */
static CrErr call_target(IdxStore *st, const char *path, uint32_t line, const char *word,
                         RtvDef *out, int *found, int *recv, ErrInfo *e)
{
    StrBuf text;
    sb_init(&text);
    *found = 0;
    char *chain = NULL;
    if (idx_read_lines(st, path, line, line, &text, NULL, NULL) == CR_OK && text.buf)
        chain = chain_to(text.buf, text.len, word);
    if (chain && !strcmp(chain, word)) chain_over_lines(st, path, line, word, &text, &chain);
    *recv = chain && strchr(chain, '.') && !idx_chain_on_self(path, chain) &&
            strncmp(chain, IDX_REF_GLOBAL, IDX_REF_GLOBAL_LEN) != 0;
    int64_t id = 0;
    CrErr rc = idx_call_target(st, path, line, word, chain, &id, e);
    if (!rc && id && rtv_def_of_chunk(st, id, out, NULL) == CR_OK) *found = 1;
    free(chain);
    sb_release(&text);
    return rc;
}

/* Whether line is where definition d names itself: the first line of it
 * (decorators, then the header) using word as a whole word. */
static int names_at(IdxStore *st, const RtvDef *d, uint32_t line, const char *word)
{
    StrBuf text;
    sb_init(&text);
    int at = 0;
    if (line >= d->start_line &&
        idx_read_lines(st, d->head.path, d->start_line, line, &text, NULL, NULL) == CR_OK &&
        text.buf) {
        uint32_t l = d->start_line;
        for (const char *p = text.buf; p && *p; l++) {
            const char *eol = strchr(p, '\n');
            size_t len = eol ? (size_t)(eol - p) : strlen(p);
            char *c = chain_to(p, len, word);
            int hit = c != NULL;
            free(c);
            if (hit) {
                at = l == line;
                break;
            }
            p = eol ? eol + 1 : NULL;
        }
    }
    sb_release(&text);
    return at;
}

CrErr rtv_def_under(IdxStore *st, const char *path, uint32_t line, const char *word, RtvDef *out,
                    ErrInfo *e)
{
    RtvDef *v = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    if (!path || !word || !word[0]) return err_set(e, CR_EINVAL, "no path or word");
    CrErr rc = rtv_file_defs(st, path, &v, &n, e);
    if (rc == CR_ENOENT) {
        n = 0;
        rc = CR_OK;
    }
    if (rc) return rc;
    long at = innermost(v, n, line, word); /* on its name, or inside itself */
    /* on the definition's own name: itself; else a call there, as the call
     * graph resolved it (`super().__init__` inside an __init__ is the base's) */
    int found = 0, recv = 0;
    if ((at < 0 || !names_at(st, &v[at], line, word)) &&
        ((rc = call_target(st, path, line, word, out, &found, &recv, e)) != CR_OK || found)) {
        rtv_defs_free(v, n);
        return rc;
    }
    if (at >= 0 && recv && !member(&v[at])) at = -1; /* `obj.render()` inside def render */
    if (at < 0) {
        long here = innermost(v, n, line, NULL);
        at = in_scopes(v, n, here >= 0 ? v[here].head.symbol : "", word);
        if (at >= 0 && recv && !member(&v[at])) at = -1;
    }
    if (at < 0) at = nearest_named(v, n, line, word, recv);
    if (at >= 0) {
        *out = v[at];
        memset(&v[at], 0, sizeof v[at]);
        rtv_defs_free(v, n);
        return CR_OK;
    }
    rtv_defs_free(v, n);
    /* none in this file: the index's first definition of that name */
    RtvDef *any = NULL;
    size_t n_any = 0;
    rc = rtv_defs_named(st, word, path, line, recv ? 16 : 1, &any, &n_any, NULL, e);
    if (rc) return rc;
    if (!n_any) return err_set(e, CR_ENOENT, "no indexed definition of `%s`", word);
    size_t pick = 0;
    while (recv && pick + 1 < n_any && !member(&any[pick]))
        pick++;
    if (recv && !member(&any[pick])) pick = 0;
    *out = any[pick];
    memset(&any[pick], 0, sizeof any[pick]);
    rtv_defs_free(any, n_any);
    return CR_OK;
}

CrErr rtv_focus_item(IdxStore *st, const RtvRequest *req, int64_t chunk_id, RtvItem *out,
                     ErrInfo *e)
{
    RtvDef d;
    StrBuf sb;
    memset(out, 0, sizeof *out);
    CrErr rc = rtv_def_of_chunk(st, chunk_id, &d, e);
    if (rc) return rc;
    sb_init(&sb);
    rc = rtv_buffer_lines(st, req, d.head.path, &d.start_line, &d.end_line, e);
    if (!rc) rc = rtv_read_lines(st, req, d.head.path, d.start_line, d.end_line, &sb, NULL, e);
    if (!rc) {
        out->chunk = d.head;
        memset(&d.head, 0, sizeof d.head);
        out->start_line = d.start_line;
        out->end_line = d.end_line;
        out->score = 1.0;
        size_t len = sb.len;
        if (len > RTV_FOCUS_MAX_CHARS) { /* whole lines up to the cap, at least one */
            uint32_t lines = 0;
            const char *p = sb.buf, *end = sb.buf + sb.len, *nl;
            len = 0;
            while ((nl = memchr(p, '\n', (size_t)(end - p))) &&
                   (!lines || (size_t)(nl + 1 - sb.buf) <= RTV_FOCUS_MAX_CHARS)) {
                len = (size_t)(nl + 1 - sb.buf);
                lines++;
                p = nl + 1;
            }
            if (!lines) len = RTV_FOCUS_MAX_CHARS; /* one line longer than the cap */
            out->end_line = d.start_line + (lines ? lines - 1 : 0);
        }
        out->text = xstrndup(sb.buf, len);
    }
    sb_release(&sb);
    rtv_def_release(&d);
    return rc;
}

CrErr rtv_focus_callers(IdxStore *st, int64_t chunk_id, size_t max, RtvCand **out, size_t *n_out,
                        ErrInfo *e)
{
    RtvDef d;
    RtvRef *refs = NULL;
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    CrErr rc = rtv_def_of_chunk(st, chunk_id, &d, e);
    if (rc) return rc;
    rc = rtv_refs(st, &d, 0, RTV_REF_BIT(IDX_EDGE_CALL), max, &refs, &n, NULL, e);
    *out = n ? xcalloc(n, sizeof **out) : NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        const RtvDef *o = &refs[i].other;
        int64_t piece = o->pieces[0]; /* the piece the call is written in */
        for (size_t k = 1; k < o->n_pieces; k++) {
            IdxChunk c;
            if (idx_chunk_get(st, o->pieces[k], &c, NULL) != CR_OK) continue;
            if (c.start_line == refs[i].at_start) piece = c.id;
            idx_chunk_release(&c);
        }
        RtvCand *c = &(*out)[(*n_out)++];
        c->chunk_id = piece;
        c->file_id = o->head.file_id;
        c->kind = o->head.kind;
        c->score = 1.0;
        c->via = RTV_VIA_GRAPH;
    }
    rtv_refs_free(refs, n);
    rtv_def_release(&d);
    if (rc) {
        free(*out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}
