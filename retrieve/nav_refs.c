#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* A definition's references over the code graph (callers, callees, types,
 * values): each far end named as a whole definition (nav.c), in file and
 * line order, with the macro a call goes through and the #if it is
 * compiled under. */

typedef struct RefSeen {
    IdxEdgeKind kind;
    int64_t other; /* a chunk of the far-end definition */
    char *path;
    uint32_t line; /* its first line, for ordering */
    uint32_t at_start, at_end;
    int64_t via; /* the macro a call goes through, or 0 */
    char *cond;  /* the condition it is compiled under (site_cond), or NULL */
    IdxBuilt built;
} RefSeen;

static int ref_cmp(const void *a, const void *b)
{
    const RefSeen *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

static int own_piece(const RtvDef *d, int64_t id)
{
    for (size_t i = 0; i < d->n_pieces; i++)
        if (d->pieces[i] == id) return 1;
    return 0;
}

enum { BASES_MAX = 8 };

/* The pieces of the method class chunk b defines under name, appended
 * to *v. */
static CrErr base_method(IdxStore *st, const IdxChunk *b, const char *name, int64_t **v, size_t *n,
                         size_t *cap, ErrInfo *e)
{
    StrBuf q;
    sb_init(&q);
    if (b->module && b->module[0]) sb_addf(&q, "%s.", b->module);
    sb_addf(&q, "%s.%s", b->symbol, name);
    int64_t *m = NULL;
    size_t nm = 0;
    CrErr rc = idx_lookup_symbol(st, q.buf, &m, &nm, e);
    sb_release(&q);
    for (size_t j = 0; j < nm && !rc; j++) {
        IdxChunk c;
        rc = idx_chunk_get(st, m[j], &c, e);
        if (rc == CR_ENOENT) {
            rc = CR_OK;
            continue;
        }
        if (rc) break;
        if (c.kind == IDX_KIND_METHOD && c.parent_id == b->id) {
            ARRAY_GROW(*v, *n + 1, *cap);
            (*v)[(*n)++] = c.id;
        }
        idx_chunk_release(&c);
    }
    free(m);
    return rc;
}

/* The same-named methods of the classes above (up 1: bases, theirs, …)
 * or below (up 0: subclasses, theirs, …) d's class, at most BASES_MAX
 * classes, appended to *v. */
static CrErr line_methods(IdxStore *st, const RtvDef *d, int up, int64_t **v, size_t *n,
                          size_t *cap, ErrInfo *e)
{
    const char *name = rtv_last_part(d->head.symbol);
    int64_t cls[BASES_MAX];
    size_t nc = 0;
    CrErr rc = CR_OK;
    cls[nc++] = d->head.parent_id;
    for (size_t at = 0; at < nc && !rc; at++) {
        IdxEdge *ed = NULL;
        size_t ne = 0;
        rc = idx_edges(st, cls[at], up, &ed, &ne, e);
        for (size_t i = 0; i < ne && !rc && nc < BASES_MAX; i++) {
            int64_t other = up ? ed[i].dst : ed[i].src;
            size_t k = 0;
            while (k < nc && cls[k] != other)
                k++;
            if (ed[i].kind != IDX_EDGE_INHERIT || k < nc) continue;
            IdxChunk b;
            rc = idx_chunk_get(st, other, &b, e);
            if (rc == CR_ENOENT) {
                rc = CR_OK;
                continue;
            }
            if (rc) break;
            cls[nc++] = b.id;
            if (b.kind == IDX_KIND_CLASS) rc = base_method(st, &b, name, v, n, cap, e);
            idx_chunk_release(&b);
        }
        free(ed);
    }
    return rc;
}

/* The chunks whose callers are d's: its pieces, and, when d is a method in
 * a language whose row says a call through a base may run an override
 * (idx_base_callers), the same-named methods of its class's bases and
 * subclasses (line_methods). Caller frees *out. */
static CrErr caller_pieces(IdxStore *st, const RtvDef *d, int64_t **out, size_t *n_out, ErrInfo *e)
{
    size_t n = d->n_pieces, cap = n;
    int64_t *v = xcalloc(n ? n : 1, sizeof *v);
    memcpy(v, d->pieces, n * sizeof *v);
    CrErr rc = CR_OK;
    if (d->head.kind == IDX_KIND_METHOD && d->head.parent_id && d->head.symbol &&
        idx_base_callers(d->head.path)) {
        rc = line_methods(st, d, 1, &v, &n, &cap, e);
        if (!rc) rc = line_methods(st, d, 0, &v, &n, &cap, e);
    }
    *out = v;
    *n_out = n;
    return rc;
}

/* The distinct far ends of d's edges of the given kinds. */
static CrErr refs_collect(IdxStore *st, const RtvDef *d, int outgoing, unsigned kinds,
                          RefSeen **out, size_t *n_out, ErrInfo *e)
{
    StrMap seen;
    StrBuf key;
    RefSeen *v = NULL;
    size_t n = 0, cap = 0, n_src = 0;
    int64_t *src = NULL;
    CrErr rc = CR_OK;
    strmap_init(&seen);
    sb_init(&key);
    if (!outgoing && (kinds & RTV_REF_BIT(IDX_EDGE_CALL)))
        rc = caller_pieces(st, d, &src, &n_src, e);
    else {
        n_src = d->n_pieces;
        src = xcalloc(n_src ? n_src : 1, sizeof *src);
        memcpy(src, d->pieces, n_src * sizeof *src);
    }
    for (size_t p = 0; p < n_src && !rc; p++) {
        IdxEdge *ed = NULL;
        int64_t *via = NULL;
        size_t ne = 0;
        IdxChunk piece = {0};
        if (kinds & RTV_REF_BIT(IDX_EDGE_CALL))
            rc = rtv_call_edges(st, src[p], outgoing, &ed, &via, &ne, e);
        else
            rc = idx_edges(st, src[p], outgoing, &ed, &ne, e);
        if (rc) break;
        if (outgoing && ne && (rc = idx_chunk_get(st, src[p], &piece, e))) {
            free(ed);
            free(via);
            break;
        }
        for (size_t i = 0; i < ne; i++) {
            int64_t other = outgoing ? ed[i].dst : ed[i].src;
            /* a call of its own definition is recursion; other references
             * between its pieces are structure */
            if (!(kinds & RTV_REF_BIT(ed[i].kind)) ||
                (own_piece(d, other) && ed[i].kind != IDX_EDGE_CALL))
                continue;
            /* a macro named without `(` is a variable of its name, not it */
            if (ed[i].kind == IDX_EDGE_REFERENCE && rtv_is_macro(st, ed[i].dst)) continue;
            IdxChunk c;
            rc = idx_chunk_get(st, other, &c, e);
            if (rc == CR_ENOENT) {
                rc = CR_OK;
                continue;
            }
            if (rc) break;
            /* a call of a function defined once per #if branch reaches the
             * first; the one the build compiles is the callee */
            int64_t alt = 0;
            if (outgoing && (rc = rtv_built_variant(st, &c, &alt, e))) {
                idx_chunk_release(&c);
                break;
            }
            if (alt) {
                idx_chunk_release(&c);
                if ((rc = idx_chunk_get(st, alt, &c, e))) break;
            }
            /* pieces of one definition share file, kind and symbol */
            sb_reset(&key);
            /* (overloads the index tells apart are definitions each) */
            if (rtv_is_module_code(&c) ||
                (c.window <= 1 && idx_overloads_apart(c.path, NULL, NULL, NULL)))
                sb_addf(&key, "%d#%lld", (int)ed[i].kind, (long long)c.id);
            else
                sb_addf(&key, "%d|%lld|%d|%s", (int)ed[i].kind, (long long)c.file_id, (int)c.kind,
                        c.symbol);
            char *cond = NULL;
            IdxBuilt built = IDX_BUILT_YES;
            rc = rtv_site_cond(st, outgoing ? &piece : &c, via ? via[i] : 0, outgoing ? &c : NULL,
                               rtv_last_part(outgoing ? c.symbol : d->head.symbol), &cond, &built,
                               e);
            if (rc) {
                idx_chunk_release(&c);
                break;
            }
            int64_t at;
            if (strmap_get(&seen, key.buf, &at)) {
                /* the same definition from several pieces: compiled if one is */
                if (rtv_built_rank(built) < rtv_built_rank(v[at].built)) {
                    free(v[at].cond);
                    v[at].cond = cond;
                    v[at].built = built;
                    cond = NULL;
                }
                free(cond);
                if (!outgoing && c.start_line < v[at].at_start) {
                    v[at].at_start = c.start_line;
                    v[at].at_end = c.end_line;
                }
                if (c.start_line < v[at].line) {
                    v[at].line = c.start_line;
                    v[at].other = c.id;
                }
            } else {
                ARRAY_GROW(v, n + 1, cap);
                RefSeen *r = &v[n];
                r->kind = ed[i].kind;
                r->other = c.id;
                r->path = xstrdup(c.path);
                r->line = c.start_line;
                r->at_start = outgoing ? piece.start_line : c.start_line;
                r->at_end = outgoing ? piece.end_line : c.end_line;
                r->via = via ? via[i] : 0;
                r->cond = cond;
                r->built = built;
                strmap_put(&seen, key.buf, (int64_t)n++);
            }
            idx_chunk_release(&c);
        }
        idx_chunk_release(&piece);
        free(ed);
        free(via);
    }
    free(src);
    strmap_release(&seen);
    sb_release(&key);
    if (n) qsort(v, n, sizeof *v, ref_cmp);
    /* with a build configuration, what it compiles comes first */
    if (n && !rc && idx_pp_configured(st)) {
        RefSeen *w = xmalloc(n * sizeof *w);
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < n; i++)
                if ((v[i].built == IDX_BUILT_NO) == pass) w[k++] = v[i];
        memcpy(v, w, n * sizeof *w);
        free(w);
    }
    *out = v;
    *n_out = n;
    return rc;
}

static void seen_free(RefSeen *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].cond);
    }
    free(v);
}

CrErr rtv_refs(IdxStore *st, const RtvDef *d, int outgoing, unsigned kinds, size_t max,
               RtvRef **out, size_t *n_out, size_t *n_total, ErrInfo *e)
{
    RefSeen *v = NULL;
    size_t n = 0;
    RtvFileView view = {0};
    char *view_path = NULL;
    *out = NULL;
    *n_out = 0;
    if (n_total) *n_total = 0;
    if (!kinds) kinds = RTV_REFS_ALL;
    CrErr rc = refs_collect(st, d, outgoing, kinds, &v, &n, e);
    if (rc) goto out;
    if (n_total) *n_total = n;
    if (max == 0 || max > n) max = n;
    *out = max ? xcalloc(max, sizeof **out) : NULL;
    for (size_t i = 0; i < max; i++) {
        /* sorted by path: one file load serves its neighbours */
        if (!view_path || strcmp(view_path, v[i].path) != 0) {
            rtv_view_release(&view);
            free(view_path);
            view_path = xstrdup(v[i].path);
            if ((rc = rtv_view_load(st, v[i].path, &view, e))) goto out;
        }
        RtvRef *r = &(*out)[*n_out];
        if (!rtv_view_def_of(&view, v[i].other, &r->other)) continue;
        r->kind = v[i].kind;
        r->cond = v[i].cond;
        v[i].cond = NULL;
        r->built = v[i].built;
        r->at_start = v[i].at_start;
        r->at_end = v[i].at_end;
        IdxChunk m;
        if (v[i].via && idx_chunk_get(st, v[i].via, &m, NULL) == CR_OK) {
            r->via = xstrdup(m.symbol ? m.symbol : "");
            idx_chunk_release(&m);
        }
        (*n_out)++;
    }
out:
    if (rc) {
        rtv_refs_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    rtv_view_release(&view);
    free(view_path);
    seen_free(v, n);
    return rc;
}

void rtv_refs_free(RtvRef *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        rtv_def_release(&v[i].other);
        free(v[i].via);
        free(v[i].cond);
    }
    free(v);
}

CrErr rtv_def_counts(IdxStore *st, const RtvDef *d, size_t *out_callers, size_t *out_refs,
                     ErrInfo *e)
{
    RefSeen *v = NULL;
    size_t n = 0;
    *out_callers = *out_refs = 0;
    CrErr rc = refs_collect(st, d, 0, RTV_REFS_ALL, &v, &n, e);
    for (size_t i = 0; i < n; i++) {
        if (v[i].kind == IDX_EDGE_CALL)
            (*out_callers)++;
        else
            (*out_refs)++;
    }
    seen_free(v, n);
    return rc;
}

void rtv_graph_limits(const char *path, StrBuf *out)
{
    const char *lang = idx_graph_limits(path);
    sb_adds(out, "The code graph holds only references the indexer resolved statically: calls, "
                 "imports, base classes and raised or caught exceptions written by name in "
                 "indexed files. It cannot see ");
    sb_adds(out, lang ? lang
                      : "dynamic dispatch (a method called on an object whose class is not known "
                        "statically is linked only when a single definition anywhere has that "
                        "name), callbacks passed as values");
    sb_adds(out, ", or code outside the indexed files. An empty list means no resolved "
                 "reference, not proof of none.");
}
