/* graph_member.c - members a class inherits, and calls on untyped
 * receivers dispatched through an interface (rows that say so). */
#include "graph_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Member `name` of a class that class `cls` (a symbol of module, in file
 * file_id) inherits: each base is resolved as the class's own inheritance
 * reference is, then looked into, then its bases, a few levels up. */
static int64_t inherited_member(Resolver *r, int64_t file_id, const char *module, const char *cls,
                                const char *name, int depth)
{
    if (depth > 4) return 0;
    StrBuf q;
    sb_init(&q);
    if (module[0]) sb_addf(&q, "%s.", module);
    sb_adds(&q, cls);
    int64_t class_id = idx_graph_symbol_by_qual(r, q.buf), v = 0;
    size_t n = 0;
    char *const *bases = class_id ? idx_graph_chunk_refs(r, class_id, REF_INHERIT, &n) : NULL;
    for (size_t i = 0; i < n && !v && r->rc == CR_OK; i++) {
        RefRow base = {.file_id = file_id,
                       .chunk_id = class_id,
                       .kind = REF_INHERIT,
                       .name = bases[i],
                       .module = (char *)module,
                       .symbol = (char *)cls};
        int64_t bid = idx_graph_resolve_expr(r, &base);
        sqlite3_stmt *s = bid ? idx_graph_stmt(r, STMT_CHUNK_QUAL) : NULL;
        if (!s) continue;
        sqlite3_bind_int64(s, 1, bid);
        if (idx_graph_step(r, s)) {
            int64_t bfile = sqlite3_column_int64(s, 0);
            char *bmod = idx_store_col_dup(s, 1), *bsym = idx_store_col_dup(s, 2);
            sqlite3_reset(s);
            sb_reset(&q);
            if (bmod[0]) sb_addf(&q, "%s.", bmod);
            sb_addf(&q, "%s.%s", bsym, name);
            v = idx_graph_resolve_qualified(r, q.buf, 0);
            if (!v) v = inherited_member(r, bfile, bmod, bsym, name, depth + 1);
            free(bmod);
            free(bsym);
        } else {
            sqlite3_reset(s);
        }
    }
    sb_release(&q);
    return v;
}

int64_t idx_graph_inherited_member(Resolver *r, int64_t file_id, const char *module,
                                   const char *cls, const char *name)
{
    GraphMemo m;
    int64_t v;
    if (idx_graph_memo_held(r, &m, &v, "\x03%lld\x1f%s\x1f%s\x1f%s", (long long)file_id, module,
                            cls, name))
        return v;
    return idx_graph_memo_keep(r, &m, inherited_member(r, file_id, module, cls, name, 0));
}

/* A class chunk's file, module and qualified symbol (both freed by the
 * caller): 1, or 0 when there is no such chunk. */
static int class_row(Resolver *r, int64_t cls, int64_t *file, char **mod, char **sym)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_QUAL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, cls);
    int found = idx_graph_step(r, s);
    if (found) {
        *file = sqlite3_column_int64(s, 0);
        *mod = idx_store_col_dup(s, 1);
        *sym = idx_store_col_dup(s, 2);
    }
    sqlite3_reset(s);
    return found;
}

static int64_t member(Resolver *r, int64_t cls, const char *name)
{
    int64_t file;
    char *mod, *sym;
    if (!class_row(r, cls, &file, &mod, &sym)) return 0;
    StrBuf q;
    sb_init(&q);
    if (mod[0]) sb_addf(&q, "%s.", mod);
    sb_addf(&q, "%s.%s", sym, name);
    int64_t v = idx_graph_resolve_qualified(r, q.buf, 0);
    if (!v) v = inherited_member(r, file, mod, sym, name, 0);
    sb_release(&q);
    free(mod);
    free(sym);
    return v;
}

int64_t idx_graph_member(Resolver *r, int64_t cls, const char *name)
{
    GraphMemo m;
    int64_t v;
    if (idx_graph_memo_held(r, &m, &v, "\x02%lld\x1f%s", (long long)cls, name)) return v;
    return idx_graph_memo_keep(r, &m, member(r, cls, name));
}

/* "Class.name" defined once anywhere for class cls, else in its bases
 * (their methods defined out of line too), a few levels up; or 0. */
static int64_t out_of_line(Resolver *r, int64_t cls, const char *name, int depth)
{
    int64_t file, v = 0;
    char *mod, *sym;
    if (depth > 4 || !class_row(r, cls, &file, &mod, &sym)) return 0;
    int64_t m = depth ? 0 : idx_graph_member(r, cls, name);
    sqlite3_stmt *s = m ? NULL : idx_graph_stmt(r, STMT_SYMBOL_BY_SUFFIX);
    if (s) {
        StrBuf tail;
        sb_init(&tail);
        sb_addf(&tail, "%s.%s", sym, name);
        sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, 2);
        sqlite3_bind_text(s, 3, tail.buf, -1, SQLITE_STATIC);
        /* in a mixed workspace, only the class's own language's */
        const IdxLang *lang = NULL;
        int n = 0, asked = 0;
        while (idx_graph_step(r, s)) {
            int64_t id = sqlite3_column_int64(s, 0);
            if (!asked++) lang = idx_graph_chunk_lang(r, cls);
            if (idx_graph_chunk_lang(r, id) != lang) continue;
            if (!n++) v = id; /* the first by path and position */
        }
        sqlite3_reset(s);
        sb_release(&tail);
        /* two classes of that name: neither; one method defined in two
         * files (a build variant each): the first, and the call reaches
         * the other too (idx_graph_twins) */
        int64_t twins[8];
        if (n > 1 && idx_graph_twins(r, v, twins, 8) + 1 != (size_t)n) v = 0;
    }
    free(mod);
    free(sym);
    if (m || v) return m ? m : v;
    int64_t bases[4];
    size_t nb = idx_graph_base_ids(r, cls, bases, 4);
    for (size_t i = 0; i < nb && !v && r->rc == CR_OK; i++)
        v = out_of_line(r, bases[i], name, depth + 1);
    return v;
}

char *idx_graph_chunk_symbol(Resolver *r, int64_t id)
{
    sqlite3_stmt *q = idx_graph_stmt(r, STMT_CHUNK_QUAL);
    if (!q) return NULL;
    sqlite3_bind_int64(q, 1, id);
    char *sym = idx_graph_step(r, q) ? idx_store_col_dup(q, 2) : NULL;
    sqlite3_reset(q);
    return sym;
}

const IdxLang *idx_graph_chunk_lang(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_GET);
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, id);
    const IdxLang *lang =
        idx_graph_step(r, s)
            ? idx_lang_for_file(&r->st->lang_pick, (const char *)sqlite3_column_text(s, 2))
            : NULL;
    sqlite3_reset(s);
    return lang;
}

/* Whether signatures a and b of name take as many parameters (either
 * unread: taken as the same). */
static int same_params(const char *a, const char *b, const char *name)
{
    int alo = 0, ahi = 0, blo = 0, bhi = 0;
    if (!a || !b || !idx_sig_params(a, name, &alo, &ahi) || !idx_sig_params(b, name, &blo, &bhi))
        return 1;
    return alo == blo && ahi == bhi;
}

/* A definition of chunk id's symbol in another file (an overload defined
 * apart: a header's inline `f() const`, the .cc's `f(a, b)`; or one of a
 * file's own overloads there) whose parameters take argc arguments (of
 * types argt where known: the first that takes them best), or 0. */
static int64_t overload_elsewhere(Resolver *r, int64_t id, const char *name, int argc,
                                  const IdxLang *lang, uint64_t argt)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_TWINS);
    int64_t files[8], v = 0;
    int best = -1;
    size_t nf = 0;
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, 8);
    const IdxLangPick *pick = &r->st->lang_pick;
    while (nf < 8 && idx_graph_step(r, s))
        if (idx_lang_for_file(pick, (const char *)sqlite3_column_text(s, 1)) ==
            idx_lang_for_file(pick, (const char *)sqlite3_column_text(s, 2)))
            files[nf++] = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    /* each file's definitions of the symbol (its overloads) */
    for (size_t i = 0; i < nf && (!v || argt) && r->rc == CR_OK; i++) {
        sqlite3_stmt *o = idx_graph_stmt(r, STMT_CHUNK_OVERLOADS);
        if (!o) break;
        sqlite3_bind_int64(o, 1, files[i]);
        while ((!v || argt) && idx_graph_step(r, o)) {
            const char *sig = (const char *)sqlite3_column_text(o, 1);
            int lo = 0, hi = 0;
            if (!sig || !idx_sig_params(sig, name, &lo, &hi) || argc < lo || argc > hi) continue;
            int score = argt ? idx_sig_arg_score(lang, sig, name, argt) : 0;
            if (score > best) {
                best = score;
                v = sqlite3_column_int64(o, 0);
            }
        }
        sqlite3_reset(o);
    }
    return v;
}

size_t idx_graph_twins(Resolver *r, int64_t id, int64_t *out, size_t max)
{
    char *sym = max ? idx_graph_chunk_symbol(r, id) : NULL;
    const char *dot = sym ? strrchr(sym, '.') : NULL;
    sqlite3_stmt *s = dot ? idx_graph_stmt(r, STMT_CHUNK_TWINS) : NULL;
    size_t n = 0;
    if (s) {
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_text(s, 2, dot + 1, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, (int64_t)max * 4);
        /* a twin is a build variant: written in the same language (a
         * mixed workspace holds a Headers.render in each), taking as many
         * parameters (else an overload defined in another file: a
         * header's inline `f() const` beside the .cc's `f(a, b)`) */
        const IdxLangPick *pick = &r->st->lang_pick;
        while (n < max && idx_graph_step(r, s))
            if (idx_lang_for_file(pick, (const char *)sqlite3_column_text(s, 1)) ==
                    idx_lang_for_file(pick, (const char *)sqlite3_column_text(s, 2)) &&
                same_params((const char *)sqlite3_column_text(s, 3),
                            (const char *)sqlite3_column_text(s, 4), dot + 1))
                out[n++] = sqlite3_column_int64(s, 0);
        sqlite3_reset(s);
    }
    free(sym);
    return n;
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether signature sig names one of the row's forwarded types (a word
 * of it, after the name's `(`). */
static int takes_forwarded(const IdxLang *lang, const char *sig, const char *name)
{
    const char *p = lang && lang->forwarded_types ? strstr(sig, name) : NULL;
    p = p ? strchr(p, '(') : NULL;
    for (size_t i = 0; p && lang->forwarded_types[i]; i++) {
        size_t n = strlen(lang->forwarded_types[i]);
        for (const char *q = strstr(p, lang->forwarded_types[i]); q;
             q = strstr(q + 1, lang->forwarded_types[i]))
            if (!ident_char(q[-1]) && !ident_char(q[n])) return 1;
    }
    return 0;
}

/* Whether the definition holding row (its chunk) takes a variable number
 * of arguments (what a forwarded type's parameter receives), and whether
 * it is a const method (*is_const). */
static int caller_variadic(Resolver *r, const RefRow *row, int *is_const)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_OVERLOADS);
    const char *name = row->symbol ? strrchr(row->symbol, '.') : NULL;
    name = name ? name + 1 : row->symbol;
    int lo = 0, hi = 0, v = 0;
    if (is_const) *is_const = 0;
    if (!s || !name) return 0;
    sqlite3_bind_int64(s, 1, row->chunk_id);
    while (idx_graph_step(r, s))
        if (sqlite3_column_int64(s, 0) == row->chunk_id) {
            const char *sig = (const char *)sqlite3_column_text(s, 1);
            v = sig && idx_sig_params(sig, name, &lo, &hi) && hi == INT32_MAX;
            if (is_const) *is_const = sig && idx_sig_const(sig, name);
        }
    sqlite3_reset(s);
    return v;
}

/* Whether call row is made on the object its method runs on (a bare
 * member's name, `this->m()`, `Class::m()` of its own class). */
static int on_own_object(const RefRow *row)
{
    const char *dot = strchr(row->name, '.');
    if (!dot) return 1;
    if (strstr(row->name, "().")) return 0;
    size_t n = (size_t)(dot - row->name);
    if (n == IDX_RECEIVER_LEN && !memcmp(row->name, IDX_RECEIVER, n)) return !strchr(dot + 1, '.');
    const char *cls_end = row->symbol ? strrchr(row->symbol, '.') : NULL;
    return cls_end && strrchr(row->name, '.') == dot && !memcmp(row->name, row->symbol, n) &&
           (size_t)(cls_end - row->symbol) >= n &&
           (row->symbol + n == cls_end || row->symbol[n] == '.');
}

/* One of a definition's overloads taking a call's arity. */
typedef struct Cand {
    int64_t id;
    int score;                    /* by the call's argument types: -1 cannot take them */
    int fwd;                      /* takes a forwarded type */
    uint32_t codes[IDX_ARGT_MAX]; /* its parameters' types */
    int is_const;                 /* a const method */
} Cand;

int64_t idx_graph_overload(Resolver *r, int64_t id, const RefRow *row, int64_t *also, size_t max,
                           size_t *n_also)
{
    int argc = row->argc;
    *n_also = 0;
    sqlite3_stmt *s = argc >= 0 ? idx_graph_stmt(r, STMT_CHUNK_OVERLOADS) : NULL;
    if (!s) return id;
    char *sym = idx_graph_chunk_symbol(r, id);
    const char *name = sym ? strrchr(sym, '.') : NULL;
    name = name ? name + 1 : sym;
    Cand cand[16];
    size_t nc = 0, n = 0;
    sqlite3_bind_int64(s, 1, id);
    while (name && idx_graph_step(r, s)) {
        const char *sig = (const char *)sqlite3_column_text(s, 1);
        int lo = 0, hi = 0;
        n++;
        if (!sig || !idx_sig_params(sig, name, &lo, &hi) || argc < lo || argc > hi || nc == 16)
            continue;
        cand[nc] =
            (Cand){.id = sqlite3_column_int64(s, 0),
                   .score = row->argt ? idx_sig_arg_score(row->lang, sig, name, row->argt) : 0,
                   .fwd = takes_forwarded(row->lang, sig, name)};
        idx_sig_param_codes(row->lang, sig, name, cand[nc].codes);
        cand[nc].is_const = row->lang && row->lang->scalar_types && idx_sig_const(sig, name);
        nc++;
    }
    sqlite3_reset(s);
    /* a const method and a non-const one: on the object a method runs on,
     * the one of the caller's constness */
    int consts = 0;
    for (size_t i = 0; i < nc; i++)
        consts |= cand[i].is_const ? 1 : 2;
    if (consts == 3 && on_own_object(row) && r->rc == CR_OK) {
        int caller_const = 0;
        caller_variadic(r, row, &caller_const);
        for (size_t i = 0; i < nc; i++)
            if (cand[i].is_const != caller_const && cand[i].score >= 0) cand[i].score = -2;
    }
    /* the argument types rule out some: the others (all ruled out: as if
     * none took that many) */
    size_t live = 0;
    int best = -1;
    for (size_t i = 0; i < nc; i++)
        if (cand[i].score >= 0) {
            live++;
            if (!cand[i].fwd && cand[i].score > best) best = cand[i].score;
        }
    int64_t first = 0, own = 0, fwd_first = 0, fwd_own = 0;
    for (size_t i = 0; i < nc; i++) {
        const Cand *c = &cand[i];
        if (c->score < 0 || (!c->fwd && c->score < best)) continue;
        if (c->fwd) {
            if (c->id == id) fwd_own = c->id;
            if (!fwd_first) fwd_first = c->id;
            continue;
        }
        if (c->id == id) own = c->id;
        if (!first) first = c->id;
    }
    /* none of the file's takes that many: one defined in another file that
     * does (an overload apart) */
    int64_t other = !live && name && n && r->rc == CR_OK
                        ? overload_elsewhere(r, id, name, argc, row->lang, row->argt)
                        : 0;
    int64_t pick = 0;
    if (other) {
        pick = other;
    } else if ((fwd_own || fwd_first) && first && caller_variadic(r, row, NULL)) {
        /* an overload taking a forwarded type (`Error(msg, va_list)`) is
         * the one only from a variadic caller, when another takes as many */
        pick = fwd_own ? fwd_own : fwd_first;
    } else {
        if (!first) {
            own = fwd_own;
            first = fwd_first;
        }
        /* one definition, or the found one takes that many: as found */
        pick = n < 2 || own || !first ? id : first;
    }
    /* the others taking the arguments as well, told apart only by types
     * the call does not say: each reached too */
    const uint32_t *pcodes = NULL;
    int pick_const = 0;
    for (size_t i = 0; i < nc; i++)
        if (cand[i].id == pick) {
            pcodes = cand[i].codes;
            pick_const = cand[i].is_const;
        }
    for (size_t i = 0; i < nc && pcodes && !other; i++) {
        const Cand *c = &cand[i];
        if (c->id != pick && c->score >= 0 && c->score == best && !c->fwd && *n_also < max &&
            (idx_codes_differ(pcodes, c->codes) || c->is_const != pick_const))
            also[(*n_also)++] = c->id;
    }
    free(sym);
    return pick;
}

int64_t idx_graph_member_out_of_line(Resolver *r, int64_t cls, const char *name)
{
    return out_of_line(r, cls, name, 0);
}

size_t idx_graph_base_ids(Resolver *r, int64_t class_id, int64_t *out, size_t max)
{
    int64_t file;
    char *mod, *sym;
    if (!class_row(r, class_id, &file, &mod, &sym)) return 0;
    size_t n = 0, k = 0;
    char *const *bases = idx_graph_chunk_refs(r, class_id, REF_INHERIT, &n);
    for (size_t i = 0; i < n && k < max && r->rc == CR_OK; i++) {
        RefRow base = {.file_id = file,
                       .chunk_id = class_id,
                       .kind = REF_INHERIT,
                       .name = bases[i],
                       .module = mod,
                       .symbol = sym};
        int64_t bid = idx_graph_resolve_expr(r, &base);
        if (bid && bid != class_id) out[k++] = bid;
    }
    free(mod);
    free(sym);
    return k;
}

/* A member call the resolver could not place, in a language whose classes
 * inherit members: `self.name`, or a bare name where `this.` is implicit. */
int64_t idx_graph_resolve_inherited(Resolver *r, const RefRow *ref)
{
    const IdxLang *lang = ref->lang;
    if (!lang || !lang->inherited_members || ref->kind != REF_CALL) return 0;
    const char *n = ref->name, *member = NULL;
    size_t k = IDX_RECEIVER_LEN + 1; /* "self." */
    if (!strncmp(n, IDX_RECEIVER ".", k) && n[k] && !strchr(n + k, '.'))
        member = n + k;
    else if (lang->implicit_this && !strchr(n, '.'))
        member = n;
    const char *dot = strrchr(ref->symbol, '.');
    if (!member || !dot) return 0;
    char *cls = xstrndup(ref->symbol, (size_t)(dot - ref->symbol));
    int64_t v = inherited_member(r, ref->file_id, ref->module, cls, member, 0);
    free(cls);
    return v;
}

/* The last part of a dotted name. */
static const char *last_part(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? dot + 1 : s;
}

/* Whether a container's inheritance references (`impl Base for X`,
 * `class X implements Base`) name `base` (its last part). */
static int names_base(char *const *bases, size_t n, const char *base)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(last_part(bases[i]), base)) return 1;
    return 0;
}

enum { DISPATCH_SCAN = 16, DISPATCH_TRAIT = 6 };

/* A method call on a receiver the indexer cannot type, in a language whose
 * row says so (interface_dispatch: `self.re.find_at()` with `re: R` and
 * `R: RegularExpression`): when a method of that name is declared in an
 * interface that the containers of other methods of the name implement,
 * the call reaches the declaration and those implementations (best
 * supported declaration first; at most DISPATCH_TRAIT targets; none when
 * more than DISPATCH_SCAN methods share the name). Returns the count. */
size_t idx_graph_dispatch(Resolver *r, const RefRow *ref, int64_t *out)
{
    const IdxLang *lang = ref->lang;
    if (!lang || !lang->interface_dispatch || ref->kind != REF_CALL) return 0;
    const char *dot = strrchr(ref->name, '.');
    if (!dot || !dot[1] || idx_graph_builtin_method(lang, dot + 1)) return 0;
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_METHODS_BY_NAME);
    if (!s) return 0;
    int64_t chunk[DISPATCH_SCAN + 1], cls[DISPATCH_SCAN + 1];
    char *cls_name[DISPATCH_SCAN + 1];
    size_t n = 0, best = 0, best_impls = 0;
    sqlite3_bind_text(s, 1, dot + 1, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, IDX_KIND_METHOD);
    sqlite3_bind_int(s, 3, DISPATCH_SCAN + 1);
    while (n <= DISPATCH_SCAN && idx_graph_step(r, s)) {
        chunk[n] = sqlite3_column_int64(s, 0);
        cls[n] = sqlite3_column_int64(s, 1);
        cls_name[n] = idx_store_col_dup(s, 2);
        n++;
    }
    sqlite3_reset(s);
    if (n > DISPATCH_SCAN) goto out;
    /* each container's bases read once (n queries, not n * n) */
    char *const *bases[DISPATCH_SCAN + 1] = {0};
    size_t n_bases[DISPATCH_SCAN + 1] = {0};
    for (size_t j = 0; j < n && r->rc == CR_OK; j++)
        bases[j] = idx_graph_chunk_refs(r, cls[j], REF_INHERIT, &n_bases[j]);
    /* impl[i][j]: method j's container implements method i's */
    unsigned char impl[DISPATCH_SCAN][DISPATCH_SCAN] = {{0}};
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i && cls[j] != cls[i] && names_base(bases[j], n_bases[j], cls_name[i])) {
                impl[i][j] = 1;
                k++;
            }
        if (k > best_impls) best = i, best_impls = k;
    }
    if (!best_impls || r->rc) {
        best_impls = 0;
        goto out;
    }
    out[0] = chunk[best];
    size_t m = 1;
    for (size_t j = 0; j < n && m < DISPATCH_TRAIT; j++)
        if (impl[best][j]) out[m++] = chunk[j];
    best_impls = m;
out:
    for (size_t i = 0; i < n; i++)
        free(cls_name[i]);
    return best_impls;
}
