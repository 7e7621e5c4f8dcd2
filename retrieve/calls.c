#include "rtv_int.h"

#include <stdlib.h>

/* Calls through macros. A macro (a definition with an expand edge to
 * itself, index/graph/graph.c) is not what its users call: the calls written in
 * its body are. Callees list those (through macros of macros, a few levels)
 * in the macro's place; callers of a definition a macro's body calls
 * include the macro's callers. Each such edge carries the macro's chunk. */

enum { MACRO_DEPTH = 4 };

typedef struct CallList {
    IdxEdge *v;
    int64_t *via;
    size_t n, cap;
} CallList;

static void calls_add(CallList *l, IdxEdge e, int64_t via)
{
    if (l->n + 1 > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
        l->via = xrealloc(l->via, l->cap * sizeof *l->via);
    }
    l->v[l->n] = e;
    l->via[l->n++] = via;
}

static int is_mark(const IdxEdge *e)
{
    return e->kind == IDX_EDGE_EXPAND && e->src == e->dst;
}

/* What macro m's uses call, in place of m (outgoing). */
static CrErr expand_out(IdxStore *st, int64_t from, const IdxEdge *out, size_t n, int64_t via,
                        int depth, CallList *l, ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (out[i].kind != IDX_EDGE_EXPAND || is_mark(&out[i])) continue;
        IdxEdge *sub = NULL;
        size_t ns = 0;
        if ((rc = idx_edges(st, out[i].dst, 1, &sub, &ns, e))) break;
        int macro = 0;
        for (size_t k = 0; k < ns; k++)
            macro |= is_mark(&sub[k]);
        if (!macro) {
            IdxEdge x = out[i];
            x.src = from;
            x.kind = IDX_EDGE_CALL;
            calls_add(l, x, via);
        } else if (depth < MACRO_DEPTH) {
            rc = expand_out(st, from, sub, ns, via ? via : out[i].dst, depth + 1, l, e);
        }
        free(sub);
    }
    return rc;
}

/* The callers of macro m (whose body calls `to`), as callers of `to`. */
static CrErr expand_in(IdxStore *st, int64_t m, int64_t to, int64_t via, int depth, CallList *l,
                       ErrInfo *e)
{
    IdxEdge *in = NULL;
    size_t n = 0;
    CrErr rc = idx_edges(st, m, 0, &in, &n, e);
    for (size_t i = 0; i < n && !rc; i++) {
        if (in[i].kind == IDX_EDGE_CALL) {
            IdxEdge x = in[i];
            x.dst = to;
            calls_add(l, x, via);
        } else if (in[i].kind == IDX_EDGE_EXPAND && !is_mark(&in[i]) && depth < MACRO_DEPTH) {
            rc = expand_in(st, in[i].src, to, via, depth + 1, l, e);
        }
    }
    free(in);
    return rc;
}

int rtv_is_macro(IdxStore *st, int64_t chunk)
{
    IdxEdge *v = NULL;
    size_t n = 0;
    int macro = 0;
    if (idx_edges(st, chunk, 1, &v, &n, NULL) == CR_OK)
        for (size_t i = 0; i < n; i++)
            macro |= is_mark(&v[i]);
    free(v);
    return macro;
}

CrErr rtv_call_edges(IdxStore *st, int64_t chunk, int outgoing, IdxEdge **out, int64_t **via,
                     size_t *n_out, ErrInfo *e)
{
    IdxEdge *v = NULL;
    size_t n = 0;
    CallList l = {0};
    *out = NULL;
    *via = NULL;
    *n_out = 0;
    CrErr rc = idx_edges(st, chunk, outgoing, &v, &n, e);
    for (size_t i = 0; i < n && !rc; i++) {
        if (is_mark(&v[i])) continue;
        if (outgoing && v[i].kind == IDX_EDGE_EXPAND) {
            /* a macro's own callees: its body's calls (through no other macro) */
            IdxEdge one = v[i];
            rc = expand_out(st, chunk, &one, 1, 0, 1, &l, e);
        } else if (outgoing && v[i].kind == IDX_EDGE_CALL) {
            IdxEdge *sub = NULL;
            size_t ns = 0;
            if ((rc = idx_edges(st, v[i].dst, 1, &sub, &ns, e))) break;
            int macro = 0;
            for (size_t k = 0; k < ns; k++)
                macro |= is_mark(&sub[k]);
            if (macro)
                rc = expand_out(st, chunk, sub, ns, v[i].dst, 1, &l, e);
            else
                calls_add(&l, v[i], 0);
            free(sub);
        } else if (!outgoing && v[i].kind == IDX_EDGE_EXPAND) {
            rc = expand_in(st, v[i].src, chunk, v[i].src, 1, &l, e);
        } else {
            calls_add(&l, v[i], 0);
        }
    }
    free(v);
    if (rc) {
        free(l.v);
        free(l.via);
        return rc;
    }
    *out = l.v;
    *via = l.via;
    *n_out = l.n;
    return CR_OK;
}
