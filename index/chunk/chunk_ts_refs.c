/* chunk_ts_refs.c - references once the units are known: members named
 * without `this`, calls in macro bodies, calls outside definitions, and the
 * order a chunk's edges are stored in. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

/* With an implicit `this`, a bare name used in a method that names a
 * member of the method's class (or of a class around it) defined in this
 * file is that member: the reference becomes its qualified symbol. */
void idx_chunk_ts_member_refs(TsRun *r)
{
    StrMap syms;
    StrBuf q;
    strmap_init(&syms);
    sb_init(&q);
    for (size_t i = 0; i < r->em.n_units; i++)
        strmap_put(&syms, r->em.units[i].symbol, 1);
    for (size_t i = 0; i < r->em.n_refs; i++) {
        ChunkRef *ref = &r->em.refs[i];
        if ((ref->kind != REF_CALL && ref->kind != REF_TYPE) || !ref->name ||
            strchr(ref->name, '.') || ref->line < 1 || ref->line > r->em.n_lines)
            continue;
        int o = r->em.owner[ref->line];
        if (o < 0) continue;
        const EmitUnit *u = &r->em.units[o];
        if (u->kind != IDX_KIND_METHOD) continue;
        /* the method's class, then the classes around it (Java's inner
         * classes see their outer class's members) */
        size_t n = strlen(u->symbol);
        int found = 0;
        while (!found && n) {
            while (n && u->symbol[n - 1] != '.')
                n--;
            if (!n) break;
            sb_reset(&q);
            sb_add(&q, u->symbol, n);
            sb_adds(&q, ref->name);
            found = strmap_get(&syms, q.buf, NULL);
            n--;
        }
        if (!found) continue;
        free(ref->name);
        ref->name = sb_detach(&q, NULL); /* "Outer.Inner.name": resolved in the file's module */
    }
    sb_release(&q);
    strmap_release(&syms);
}

/* Calls of functions this file defines lead a chunk's calls: a
 * function's own module's helpers are the steps of what it does, more
 * often than the calls it makes into other modules' interfaces. */
void idx_chunk_ts_local_calls_first(TsRun *r)
{
    if (!r->first_type) return;
    StrMap names;
    strmap_init(&names);
    for (size_t i = 0; i < r->em.n_units; i++)
        if (r->em.units[i].kind != IDX_KIND_CLASS) strmap_put(&names, r->em.units[i].name, 1);
    size_t n = r->first_type, k = 0;
    ChunkRef *v = xmalloc((n + 1) * sizeof *v);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            const ChunkRef *ref = &r->em.refs[i];
            const char *last = ref->name ? strrchr(ref->name, '.') : NULL;
            last = last ? last + 1 : ref->name;
            int local = ref->kind == REF_CALL && last && strmap_get(&names, last, NULL);
            if (local == !pass) v[k++] = *ref;
        }
    memcpy(r->em.refs, v, n * sizeof *v);
    free(v);
    strmap_release(&names);
}

static int refs__ident(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

/* Where the plain name a member call's `.` or `->` follows starts (`g->m(`:
 * g), when nothing but blanks comes before that name since `a`, an operator
 * or an opening bracket; else UINT32_MAX (a chain, a call's result, a
 * pasted token: an unknown receiver). */
static uint32_t refs__receiver(const char *src, uint32_t a, uint32_t s0)
{
    uint32_t k = s0;
    while (k > a && (src[k - 1] == ' ' || src[k - 1] == '\t'))
        k--;
    k -= k > a && src[k - 1] == '.'                             ? 1
         : k >= a + 2 && src[k - 1] == '>' && src[k - 2] == '-' ? 2
                                                                : 0;
    while (k > a && (src[k - 1] == ' ' || src[k - 1] == '\t'))
        k--;
    uint32_t e = k;
    while (k > a && refs__ident(src[k - 1], 0))
        k--;
    if (k == e || !refs__ident(src[k], 1)) return UINT32_MAX;
    uint32_t p = k;
    while (p > a && (src[p - 1] == ' ' || src[p - 1] == '\t'))
        p--;
    if (p > a && (src[p - 1] == '.' || src[p - 1] == '>' || src[p - 1] == '#' ||
                  src[p - 1] == ')' || src[p - 1] == ']' || src[p - 1] == ':'))
        return UINT32_MAX;
    return k;
}

/* Whether the n bytes at w are a word after which a name starts an
 * expression (`return f(x)`), not a declarator (`void f(x)`). */
static int refs__expr_word(const char *w, size_t n)
{
    static const char *const words[] = {"return", "else",     "case",  "do",        "new",
                                        "throw",  "delete",   "not",   "and",       "or",
                                        "await",  "co_await", "yield", "co_return", NULL};
    for (size_t i = 0; words[i]; i++)
        if (strlen(words[i]) == n && !memcmp(words[i], w, n)) return 1;
    return 0;
}

/* Whether the `(` at src[open] closes before a `{` (blanks and `const`
 * between): a function the macro defines, not one it calls. */
static int refs__defines(const char *src, uint32_t open, uint32_t b)
{
    int depth = 0;
    uint32_t i = open;
    for (; i < b; i++) {
        depth += src[i] == '(';
        depth -= src[i] == ')';
        if (!depth) break;
    }
    if (i >= b) return 0;
    for (i++; i < b && src[i] && strchr(" \t\r\n\\", src[i]); i++)
        ;
    if (i + 5 < b && !memcmp(src + i, "const", 5) && !refs__ident(src[i + 5], 0))
        for (i += 5; i < b && src[i] && strchr(" \t\r\n\\", src[i]); i++)
            ;
    return i < b && src[i] == '{';
}

/* A macro body is tokens the grammar does not parse: a name followed by
 * `(` is a call its users make, unless it follows `.`, `->` (a field) or
 * `#` (pasted, stringified), or, in rows whose macros declare, declares a
 * function (after a type word, `virtual void Run();`, or before its body,
 * `Create() {…}`); where the language's member calls are
 * methods (rows without field_calls), `g->m(` on a plain name g is kept as
 * "g.m", typed as calls are (chunk_ts_types.c). Strings, characters and comments are skipped;
 * names nothing defines (keywords, parameters called) resolve to nothing. */
void idx_chunk_ts_expand_refs(TsRun *r, TSNode body)
{
    const char *src = r->em.src;
    uint32_t a = ts_node_start_byte(body), b = ts_node_end_byte(body);
    if (b > r->em.len) b = (uint32_t)r->em.len;
    /* the grammar ends the body at a comment; the macro goes on to the
     * last line not continued by a backslash */
    for (uint32_t i = a; i < r->em.len && src[i] != '\n'; i++) {
        uint32_t j = i;
        while (j < r->em.len && src[j] != '\n')
            j++;
        uint32_t k = j;
        while (k > i && (src[k - 1] == '\r' || src[k - 1] == ' ' || src[k - 1] == '\t'))
            k--;
        if (j > b) b = j;
        if (j >= r->em.len || k == i || src[k - 1] != '\\') break;
        i = j;
    }
    TSNode def = ts_node_parent(body);
    uint32_t def_line = ts_node_start_point(ts_node_is_null(def) ? body : def).row + 1;
    /* every ref on the definition's first line: the unit may end before
     * the body does (where the grammar ends it) */
    ChunkRef *mark = idx_emit_ref_push(&r->em, REF_EXPAND, -1, def_line);
    mark->name = xstrdup(IDX_REF_MACRO_MARK);
    char prev = ' ';               /* the last non-blank byte before the token */
    uint32_t word = 0, word_n = 0; /* the word before it, where prev is 'a' */
    int in_declarator = 0;         /* that word names what a declaration declares */
    for (uint32_t i = a; i < b;) {
        char c = src[i];
        if (c == '\n') {
            i++;
        } else if (c == '"' || c == '\'') {
            for (i++; i < b && src[i] != c && src[i] != '\n'; i++)
                if (src[i] == '\\') i++;
            i++;
            prev = c;
        } else if (c == '/' && i + 1 < b && src[i + 1] == '*') {
            for (i += 2; i + 1 < b && !(src[i] == '*' && src[i + 1] == '/'); i++)
                ;
            i += 2;
        } else if (c == '/' && i + 1 < b && src[i + 1] == '/') {
            while (i < b && src[i] != '\n')
                i++;
        } else if (refs__ident(c, 1)) {
            uint32_t s0 = i;
            while (i < b && refs__ident(src[i], 0))
                i++;
            uint32_t j = i;
            while (j < b && (src[j] == ' ' || src[j] == '\t' || src[j] == '\\' || src[j] == '\r' ||
                             src[j] == '\n'))
                j++;
            int member =
                prev == '.' || prev == '#' || (prev == '>' && s0 >= 2 && src[s0 - 2] == '-');
            uint32_t recv = member && prev != '#' && !r->lang->field_calls
                                ? refs__receiver(src, a, s0)
                                : UINT32_MAX;
            /* after a type word, or qualified after one (`void y::Run()`) */
            int declarator = (prev == 'a' && !refs__expr_word(src + word, word_n)) ||
                             (prev == ':' && s0 >= 2 && src[s0 - 2] == ':' && in_declarator);
            int declares = r->lang->macro_declares && j < b && src[j] == '(' && !member &&
                           (declarator || refs__defines(src, j, b));
            if (j < b && src[j] == '(' && (!member || recv != UINT32_MAX) && !declares) {
                ChunkRef *ref = idx_emit_ref_push(&r->em, REF_EXPAND, -1, def_line);
                sb_reset(&r->sb);
                if (recv != UINT32_MAX) {
                    for (uint32_t k = recv; refs__ident(src[k], k == recv); k++)
                        sb_addc(&r->sb, src[k]);
                    sb_addc(&r->sb, '.');
                }
                sb_add(&r->sb, src + s0, i - s0);
                ref->name = xstrndup(r->sb.buf, r->sb.len);
            }
            prev = 'a';
            in_declarator = declarator;
            word = s0;
            word_n = i - s0;
        } else {
            if (c != ' ' && c != '\t' && c != '\\' && c != '\r') prev = c;
            i++;
        }
    }
}

void idx_chunk_ts_fix_refs(TsRun *r)
{
    size_t k = 0, first_type = r->first_type;
    StrMap locals; /* "unit:name" of the variables each unit declares */
    StrBuf key;
    strmap_init(&locals);
    sb_init(&key);
    for (size_t i = 0; i < r->n_locals; i++) {
        uint32_t l = r->locals[i].line;
        if (l < 1 || l > r->em.n_lines || !r->locals[i].name) continue;
        sb_reset(&key);
        sb_addi(&key, r->em.owner[l]);
        sb_addc(&key, ':');
        sb_adds(&key, r->locals[i].name);
        strmap_put(&locals, key.buf, 1);
    }
    for (size_t i = 0; i < r->em.n_refs; i++) {
        ChunkRef *ref = &r->em.refs[i];
        int in = ref->line >= 1 && ref->line <= r->em.n_lines;
        int o = in ? r->em.owner[ref->line] : -1;
        int drop = r->lang->no_module_calls && in && o < 0 && ref->chunk < 0 &&
                   (ref->kind == REF_CALL || ref->kind == REF_VALUE);
        /* a macro defined inside a function is part of it: its calls are the
         * function's, but the mark would make the function a macro */
        if (ref->kind == REF_EXPAND && ref->name && !strcmp(ref->name, IDX_REF_MACRO_MARK))
            drop = o < 0 || r->em.units[o].start != ref->line;
        if ((ref->kind == REF_VALUE || ref->kind == REF_STORE) && ref->name && !drop) {
            /* a store's value is its name's last part ("open.f") */
            const char *v = ref->kind == REF_STORE ? strrchr(ref->name, '.') : NULL;
            sb_reset(&key);
            sb_addi(&key, o);
            sb_addc(&key, ':');
            sb_adds(&key, v ? v + 1 : ref->name);
            drop = strmap_get(&locals, key.buf, NULL);
        }
        if (drop) {
            free(ref->name);
            free(ref->module);
            free(ref->member);
            free(ref->alias);
            if (i < r->first_type) first_type--;
            continue;
        }
        r->em.refs[k++] = *ref;
    }
    r->em.n_refs = k;
    r->first_type = first_type;
    strmap_release(&locals);
    sb_release(&key);
}
