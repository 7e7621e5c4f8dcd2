/* chunk_ts_pp.c - preprocessor facts of a file (rows whose queries capture
 * @pp.if and @pp.define): the lines of each conditional branch with its
 * whole condition (the branches around it and the earlier branches of its
 * chain, negated), and the macros defined. Read at query time (pp.c), so
 * that a #define or a build configuration changing elsewhere changes what
 * is built without indexing this file again.
 *
 * The node kinds are those of the C family's grammars (C, C++): a
 * conditional is "preproc_if" (field condition) or "preproc_ifdef" (field
 * name, its first token "#ifdef" or "#ifndef"), its later branches the
 * chain of alternative fields ("preproc_elif", "preproc_elifdef",
 * "preproc_else"). An include guard (`#ifndef X` whose first line defines
 * X, and no other branch) is no condition. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

static int pp__is(TSNode n, const char *kind)
{
    return !ts_node_is_null(n) && !strcmp(ts_node_type(n), kind);
}

static int pp__is_branch(TSNode n)
{
    return pp__is(n, "preproc_if") || pp__is(n, "preproc_ifdef") || pp__is(n, "preproc_elif") ||
           pp__is(n, "preproc_elifdef") || pp__is(n, "preproc_else");
}

static TSNode pp__field(TSNode n, const char *f)
{
    return ts_node_child_by_field_name(n, f, (uint32_t)strlen(f));
}

/* The source of n on one line: comments dropped, blanks and continued lines
 * one space. */
static void pp__text(const TsRun *r, TSNode n, StrBuf *out)
{
    const char *s = r->em.src;
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (b > r->em.len) b = (uint32_t)r->em.len;
    int space = 0;
    for (uint32_t i = a; i < b; i++) {
        char c = s[i];
        if (c == '/' && i + 1 < b && s[i + 1] == '*') {
            for (i += 2; i + 1 < b && !(s[i] == '*' && s[i + 1] == '/'); i++)
                ;
            i++;
            space = 1;
        } else if (c == '/' && i + 1 < b && s[i + 1] == '/') {
            while (i + 1 < b && s[i + 1] != '\n')
                i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\') {
            space = 1;
        } else {
            if (space && out->len) sb_addc(out, ' ');
            space = 0;
            sb_addc(out, c);
        }
    }
}

/* A branch's own condition (none for #else) into out; 0 when none. */
static int pp__own(const TsRun *r, TSNode b, int negate, StrBuf *out)
{
    if (pp__is(b, "preproc_if") || pp__is(b, "preproc_elif")) {
        TSNode c = pp__field(b, "condition");
        if (ts_node_is_null(c)) return 0;
        StrBuf t;
        sb_init(&t);
        pp__text(r, c, &t);
        int simple = 1; /* one name, number or (!)defined(name): no parentheses */
        for (size_t i = t.len && t.buf[0] == '!'; i < t.len; i++)
            simple &= t.buf[i] != ' ' && !strchr("!&|<>=+-*/%^~?:", t.buf[i]);
        if (negate && t.len > 1 && t.buf[0] == '!' && simple) {
            sb_adds(out, t.buf + 1);
        } else {
            if (negate) sb_addc(out, '!');
            sb_addf(out, simple ? "%s" : "(%s)", t.buf ? t.buf : "");
        }
        sb_release(&t);
        return 1;
    }
    if (pp__is(b, "preproc_ifdef") || pp__is(b, "preproc_elifdef")) {
        TSNode name = pp__field(b, "name");
        if (ts_node_is_null(name) || !ts_node_child_count(b)) return 0;
        const char *tok = ts_node_type(ts_node_child(b, 0));
        int not = strstr(tok, "ndef") != NULL;
        StrBuf t;
        sb_init(&t);
        pp__text(r, name, &t);
        sb_addf(out, "%sdefined(%s)", not != negate ? "!" : "", t.buf ? t.buf : "");
        sb_release(&t);
        return 1;
    }
    return 0;
}

static void pp__and(StrBuf *out, const StrBuf *part)
{
    if (!part->len) return;
    if (out->len) sb_adds(out, " && ");
    sb_add(out, part->buf, part->len);
}

/* The name an include guard tests and defines, when top is one. */
static int pp__guard(const TsRun *r, TSNode top)
{
    if (!pp__is(ts_node_parent(top), "translation_unit") ||
        !ts_node_is_null(pp__field(top, "alternative")))
        return 0;
    StrBuf want, got;
    sb_init(&want);
    sb_init(&got);
    if (pp__is(top, "preproc_ifdef") && ts_node_child_count(top) &&
        !strcmp(ts_node_type(ts_node_child(top, 0)), "#ifndef"))
        pp__text(r, pp__field(top, "name"), &want);
    /* the first definition after the test */
    uint32_t n = ts_node_named_child_count(top);
    int is = 0;
    for (uint32_t i = 0; i < n && want.len; i++) {
        TSNode c = ts_node_named_child(top, i);
        if (chunk_ts__is_comment(r, ts_node_symbol(c)) || ts_node_eq(c, pp__field(top, "name")))
            continue;
        if (pp__is(c, "preproc_def")) {
            pp__text(r, pp__field(c, "name"), &got);
            is = got.len == want.len && !memcmp(got.buf, want.buf, got.len);
        }
        break;
    }
    sb_release(&want);
    sb_release(&got);
    return is;
}

/* The first branch of b's chain. */
static TSNode pp__top(TSNode b)
{
    for (;;) {
        TSNode p = ts_node_parent(b);
        if (!pp__is_branch(p) || pp__is(p, "preproc_else") ||
            !ts_node_eq(pp__field(p, "alternative"), b))
            return b;
        b = p;
    }
}

static void pp__whole(const TsRun *r, TSNode b, StrBuf *out, int depth);

/* The first line of branch b's body. */
static uint32_t pp__first(TSNode b)
{
    TSNode head = pp__field(b, "condition");
    if (ts_node_is_null(head)) head = pp__field(b, "name");
    return (ts_node_is_null(head) ? ts_node_start_point(b).row : ts_node_end_point(head).row) + 2;
}

static int pp__word(const char *w, size_t n, const char *want)
{
    return n == strlen(want) && !memcmp(w, want, n);
}

/* The last line of the branch whose body starts at line first, read from
 * the directives themselves: the line before the #elif, #else or #endif
 * that closes it. The grammar's node can be wider: `#ifdef __cplusplus` /
 * `extern "C" {` / `#endif` opens a block that the closing `}` under the
 * header's last #ifdef ends, so the node spans the whole header. */
static uint32_t pp__last(const TsRun *r, uint32_t first)
{
    const char *s = r->em.src;
    int depth = 0;
    for (uint32_t l = first; l <= r->em.n_lines; l++) {
        uint32_t b = r->em.line_start[l], e = r->em.line_start[l + 1];
        while (b < e && (s[b] == ' ' || s[b] == '\t'))
            b++;
        if (b >= e || s[b] != '#') continue;
        for (b++; b < e && (s[b] == ' ' || s[b] == '\t'); b++)
            ;
        uint32_t w = b;
        while (b < e && s[b] >= 'a' && s[b] <= 'z')
            b++;
        const char *word = s + w;
        size_t n = b - w;
        if (pp__word(word, n, "if") || pp__word(word, n, "ifdef") || pp__word(word, n, "ifndef"))
            depth++;
        else if (pp__word(word, n, "endif") && depth-- == 0)
            return l - 1;
        else if (!depth && (pp__word(word, n, "else") || (n >= 4 && !memcmp(word, "elif", 4))))
            return l - 1;
    }
    return r->em.n_lines;
}

/* The whole condition of the branch around n (none at the top): the
 * nearest branch above it whose lines hold it. */
static void pp__outer(const TsRun *r, TSNode n, StrBuf *out, int depth)
{
    uint32_t line = ts_node_start_point(n).row + 1;
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p); p = ts_node_parent(p)) {
        if (!pp__is_branch(p)) continue;
        uint32_t first = pp__first(p);
        if (line < first || line > pp__last(r, first)) continue;
        pp__whole(r, p, out, depth + 1);
        return;
    }
}

/* The whole condition of branch b into out: the branch around its chain,
 * the earlier branches' negated, its own. */
static void pp__whole(const TsRun *r, TSNode b, StrBuf *out, int depth)
{
    if (depth > 64) return;
    TSNode top = pp__top(b);
    if (!pp__guard(r, top)) pp__outer(r, top, out, depth);
    StrBuf part;
    sb_init(&part);
    for (TSNode c = top; !ts_node_is_null(c) && !ts_node_eq(c, b);
         c = pp__field(c, "alternative")) {
        sb_reset(&part);
        if (pp__own(r, c, 1, &part)) pp__and(out, &part);
    }
    sb_reset(&part);
    if (!pp__guard(r, top) && pp__own(r, b, 0, &part)) pp__and(out, &part);
    sb_release(&part);
}

static ChunkPp *pp__push(ChunkSet *out, PpKind kind, uint32_t a, uint32_t b)
{
    ARRAY_GROW(out->pp, out->n_pp + 1, out->cap_pp);
    ChunkPp *p = &out->pp[out->n_pp++];
    *p = (ChunkPp){kind, a, b, NULL, NULL};
    return p;
}

void idx_chunk_ts_pp_if(TsRun *r, TSNode top, ChunkSet *out)
{
    if (pp__guard(r, top)) return;
    StrBuf cond;
    sb_init(&cond);
    for (TSNode b = top; !ts_node_is_null(b); b = pp__field(b, "alternative")) {
        uint32_t first = pp__first(b), last = pp__last(r, first);
        sb_reset(&cond);
        pp__whole(r, b, &cond, 0);
        if (first <= last && cond.len) {
            ChunkPp *p = pp__push(out, PP_BRANCH, first, last);
            p->name = xstrdup("");
            p->text = xstrndup(cond.buf, cond.len);
        }
    }
    sb_release(&cond);
}

void idx_chunk_ts_pp_define(TsRun *r, TSNode def, ChunkSet *out)
{
    TSNode name = pp__field(def, "name");
    if (ts_node_is_null(name)) return;
    StrBuf t;
    sb_init(&t);
    uint32_t line = ts_node_start_point(def).row + 1;
    ChunkPp *p = pp__push(out, PP_DEFINE, line, line);
    pp__text(r, name, &t);
    p->name = xstrndup(t.buf ? t.buf : "", t.len);
    sb_reset(&t);
    if (!ts_node_is_null(pp__field(def, "parameters")))
        sb_addc(&t, '(');
    else if (!ts_node_is_null(pp__field(def, "value")))
        pp__text(r, pp__field(def, "value"), &t);
    p->text = xstrndup(t.buf ? t.buf : "", t.len);
    sb_release(&t);
}

/* The innermost branch holding line (its index in set->pp), or -1. */
static long pp__branch_at(const ChunkSet *set, uint32_t line)
{
    long best = -1;
    for (size_t i = 0; set && i < set->n_pp; i++) {
        const ChunkPp *p = &set->pp[i];
        if (p->kind == PP_BRANCH && p->start_line <= line && line <= p->end_line &&
            (best < 0 || p->start_line >= set->pp[best].start_line))
            best = (long)i;
    }
    return best;
}

int idx_chunk_ts_pp_apart(const TsRun *r, uint32_t a, uint32_t b)
{
    return r->out && r->out->n_pp && pp__branch_at(r->out, a) != pp__branch_at(r->out, b);
}

/* The last component of a call's name ("obj.f" -> "f"). */
static const char *pp__last_part(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot ? dot + 1 : name;
}

void idx_chunk_ts_pp_sites(TsRun *r, ChunkSet *out)
{
    if (!out->n_pp) return;
    StrMap cond; /* "unit:name" of the calls some definition makes under a branch of its body */
    StrBuf key;
    strmap_init(&cond);
    sb_init(&key);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->em.n_refs; i++) {
            const ChunkRef *ref = &r->em.refs[i];
            if (ref->kind != REF_CALL || !ref->name || ref->line < 1 || ref->line > r->em.n_lines)
                continue;
            int o = r->em.owner[ref->line];
            if (o < 0) continue;
            sb_reset(&key);
            sb_addf(&key, "%d:%s", o, pp__last_part(ref->name));
            if (pass == 0) {
                if (pp__branch_at(out, ref->line) != pp__branch_at(out, r->em.units[o].start))
                    strmap_put(&cond, key.buf, 1);
            } else if (strmap_get(&cond, key.buf, NULL)) {
                /* end_line: the definition's first line */
                ChunkPp *p = pp__push(out, PP_SITE, ref->line, r->em.units[o].start);
                p->name = xstrdup(pp__last_part(ref->name));
                p->text = xstrdup("");
            }
        }
    strmap_release(&cond);
    sb_release(&key);
}
