#include "ws.h"

#include <stdlib.h>
#include <string.h>

/* What the doors' navigation requests ask of a store, one call per request
 * (ws.h, "navigation"): the lookups of retrieve/ a request needs, made in
 * one read transaction, handed back for the door to render. */

uint32_t ws_nav_disk_line(IdxStore *st, const char *rel, const char *buf, size_t len, uint32_t line)
{
    RtvLineMap *lm = st && rel && buf ? rtv_line_map_new(st, rel, buf, len) : NULL;
    if (lm) line = rtv_line_map_to_disk(lm, line);
    rtv_line_map_free(lm);
    return line;
}

CrErr ws_nav_def_under(IdxStore *st, const char *rel, uint32_t line, const char *word, RtvDef *out,
                       ErrInfo *e)
{
    int txn = idx_read_begin(st);
    CrErr rc = rtv_def_under(st, rel, line, word, out, e);
    idx_read_end(st, txn);
    return rc;
}

CrErr ws_nav_symbols(IdxStore *st, const char *query, size_t max, RtvDef **out, size_t *n_out,
                     ErrInfo *e)
{
    int txn = idx_read_begin(st);
    CrErr rc = rtv_symbols(st, query, max, out, n_out, e);
    idx_read_end(st, txn);
    return rc;
}

CrErr ws_nav_calls(IdxStore *st, const char *rel, uint32_t line, int outgoing, size_t max,
                   RtvRef **out, size_t *n_out, ErrInfo *e)
{
    RtvDef d;
    *out = NULL;
    *n_out = 0;
    int txn = idx_read_begin(st);
    CrErr rc = rtv_def_at(st, rel, line, &d, e);
    if (rc == CR_OK) {
        rc = rtv_refs(st, &d, outgoing, RTV_REF_BIT(IDX_EDGE_CALL), max, out, n_out, NULL, e);
        rtv_def_release(&d);
    } else if (rc == CR_ENOENT) {
        rc = CR_OK; /* no definition there: no calls */
    }
    idx_read_end(st, txn);
    return rc;
}

/* ---------------------------------------------------------------- code lenses */

void ws_lenses_free(WsLens *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        rtv_def_release(&v[i].def);
    free(v);
}

CrErr ws_nav_lenses(IdxStore *st, const char *rel, const char *buf, size_t len, WsLens **out,
                    size_t *n_out, ErrInfo *e)
{
    RtvDef *defs = NULL;
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    int txn = idx_read_begin(st);
    /* Whole definitions, however they were chunked. */
    CrErr rc = rtv_file_defs(st, rel, &defs, &n, e);
    /* over an unsaved buffer, each where its lines are now */
    RtvLineMap *lm = rc == CR_OK && buf ? rtv_line_map_new(st, rel, buf, len) : NULL;
    WsLens *v = n ? xcalloc(n, sizeof *v) : NULL;
    for (size_t i = 0; rc == CR_OK && i < n; i++) {
        rc = rtv_def_counts(st, &defs[i], &v[i].callers, &v[i].refs, e);
        v[i].line = lm ? rtv_line_map_to_buffer(lm, defs[i].start_line) : defs[i].start_line;
    }
    rtv_line_map_free(lm);
    idx_read_end(st, txn);
    for (size_t i = 0; i < n; i++) /* taken: the array alone is freed */
        v[i].def = defs[i];
    free(defs);
    if (rc) {
        ws_lenses_free(v, n);
        return rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

/* ---------------------------------------------------------------- definitions of a name */

static int same_def(const RtvDef *a, const RtvDef *b)
{
    return a->start_line == b->start_line && !strcmp(a->head.path, b->head.path);
}

void ws_hover_release(WsHover *h)
{
    rtv_defs_free(h->defs, h->n_defs);
    for (size_t k = 0; k < WS_HOVER_LINKS; k++)
        rtv_refs_free(h->links[k], h->n_links[k]);
    memset(h, 0, sizeof *h);
}

/* Puts *under (taken) first among the n_defs definitions of a name (of *n
 * in all), once, keeping at most max. */
static void hover_first(RtvDef **defs, size_t *n_defs, size_t *n, RtvDef *under, const char *word,
                        size_t max)
{
    RtvDef *v = xcalloc(max, sizeof *v);
    size_t k = 0;
    /* whether *n counts it: named the word itself, among them, or they are
     * named by their last part */
    int counted = !strcmp(under->head.symbol, word);
    v[k++] = *under;
    memset(under, 0, sizeof *under);
    for (size_t i = 0; i < *n_defs; i++) {
        if (same_def(&(*defs)[i], &v[0]) || strcmp((*defs)[i].head.symbol, word) != 0) counted = 1;
        if (same_def(&(*defs)[i], &v[0]) || k == max)
            rtv_def_release(&(*defs)[i]);
        else
            v[k++] = (*defs)[i];
    }
    free(*defs);
    *defs = v;
    *n_defs = k;
    if (!counted) (*n)++;
}

CrErr ws_nav_hover(IdxStore *st, const char *rel, uint32_t line, const char *word, size_t max_defs,
                   const IdxEdgeKind kinds[WS_HOVER_LINKS], size_t max_links, WsHover *out,
                   ErrInfo *e)
{
    memset(out, 0, sizeof *out);
    if (!max_defs) max_defs = 1;
    RtvDef under = {0};
    int txn = idx_read_begin(st);
    /* The definition the word names from there (a long one too), then the
     * others of this file, then the rest. */
    CrErr rc = rtv_def_under(st, rel, line, word, &under, e);
    if (rc == CR_OK)
        rc =
            rtv_defs_named(st, word, rel, line, max_defs, &out->defs, &out->n_defs, &out->total, e);
    if (rc == CR_OK) hover_first(&out->defs, &out->n_defs, &out->total, &under, word, max_defs);
    /* the definitions at the far end of the first's incoming edges */
    for (size_t k = 0; rc == CR_OK && out->n_defs && k < WS_HOVER_LINKS; k++)
        rc = rtv_refs(st, &out->defs[0], 0, RTV_REF_BIT(kinds[k]), max_links, &out->links[k],
                      &out->n_links[k], &out->total_links[k], e);
    idx_read_end(st, txn);
    rtv_def_release(&under);
    if (rc) ws_hover_release(out);
    return rc;
}

/* ---------------------------------------------------------------- definitions and their references
 */

void ws_nav_defs_release(WsNavDefs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        WsNavDef *d = &r->v[i];
        rtv_def_release(&d->def);
        rtv_variants_free(d->variants, d->n_variants);
        rtv_refs_free(d->refs, d->n_refs);
    }
    free(r->v);
    free(r->limits);
    memset(r, 0, sizeof *r);
}

/* The definitions in a (taken) as r's, with their variants (a failure to
 * read them: none). */
static void defs_into(IdxStore *st, RtvDef *a, size_t n, WsNavDefs *r)
{
    r->v = n ? xcalloc(n, sizeof *r->v) : NULL;
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        r->v[i].def = a[i];
        if (rtv_def_variants(st, &a[i], &r->v[i].variants, &r->v[i].n_variants, NULL) != CR_OK)
            r->v[i].n_variants = 0;
        r->v[i].built = rtv_variants_built(r->v[i].variants, r->v[i].n_variants);
    }
    free(a);
}

/* Puts the definition the name at rel:line reaches (rtv_def_under: the
 * call there as the call graph resolved it, as definition and hover find
 * it) first among defs, once; *total counts it when it was not there. */
static void call_site_first(IdxStore *st, const char *name, const char *rel, uint32_t line,
                            RtvDef **defs, size_t *n, size_t *total)
{
    const char *dot = strrchr(name, '.'), *word = dot ? dot + 1 : name;
    RtvDef under = {0};
    if (!rel || !line || rtv_def_under(st, rel, line, word, &under, NULL) != CR_OK) return;
    RtvDef *v = xcalloc(*n + 1, sizeof *v);
    size_t k = 0;
    int was_there = 0;
    v[k++] = under;
    for (size_t i = 0; i < *n; i++) {
        if (same_def(&(*defs)[i], &under)) {
            was_there = 1;
            rtv_def_release(&(*defs)[i]);
        } else {
            v[k++] = (*defs)[i];
        }
    }
    free(*defs);
    *defs = v;
    *n = k;
    if (!was_there) (*total)++;
}

CrErr ws_nav_definitions(IdxStore *st, const char *name, const char *rel, uint32_t line,
                         size_t limit, WsNavDefs *out, ErrInfo *e)
{
    RtvDef *defs = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    int txn = idx_read_begin(st);
    CrErr rc = rtv_defs_named(st, name, rel, 0, limit, &defs, &n, &out->total, e);
    if (rc == CR_OK) {
        call_site_first(st, name, rel, line, &defs, &n, &out->total);
        if (n > limit) rtv_def_release(&defs[--n]);
        defs_into(st, defs, n, out);
    }
    idx_read_end(st, txn);
    return rc;
}

CrErr ws_nav_references(IdxStore *st, const WsNavTarget *t, int outgoing, unsigned kinds,
                        size_t limit, WsNavDefs *out, ErrInfo *e)
{
    RtvDef *defs = NULL;
    size_t n = 0;
    CrErr rc = CR_OK;
    memset(out, 0, sizeof *out);
    int txn = idx_read_begin(st);
    if (t->word || t->line) { /* the one definition at the place: none is no failure */
        RtvDef d;
        rc = t->word ? rtv_def_under(st, t->rel, t->line, t->word, &d, e)
                     : rtv_def_at(st, t->rel, t->line, &d, e);
        if (rc == CR_OK) {
            defs = xmalloc(sizeof *defs);
            defs[0] = d;
            n = out->total = 1;
        } else if (rc == CR_ENOENT) {
            rc = CR_OK;
        }
    } else {
        rc = rtv_defs_named(st, t->name, t->rel, 0, t->max_defs, &defs, &n, &out->total, e);
    }
    if (rc == CR_OK) defs_into(st, defs, n, out);
    for (size_t i = 0; rc == CR_OK && i < out->n; i++) {
        WsNavDef *d = &out->v[i];
        rc = rtv_refs(st, &d->def, outgoing, kinds, limit, &d->refs, &d->n_refs, &d->total_refs, e);
    }
    idx_read_end(st, txn);
    if (rc) {
        ws_nav_defs_release(out);
        return rc;
    }
    StrBuf lim;
    sb_init(&lim);
    rtv_graph_limits(out->n ? out->v[0].def.head.path : NULL, &lim);
    out->limits = sb_detach(&lim, NULL);
    return rc;
}

/* ---------------------------------------------------------------- retrieval alone, a citation */

CrErr ws_search(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    int txn = idx_read_begin(st);
    CrErr rc = rtv_search(st, req, out, e);
    idx_read_end(st, txn);
    return rc;
}

CrErr ws_ask_check(IdxStore *st, const RtvRequest *req, const RtvAnswer *out, const char *text,
                   size_t len, VfyResult *vr, ErrInfo *e)
{
    int txn = idx_read_begin(st);
    CrErr rc = rtv_ask_check(st, req, out, text, len, vr, e);
    idx_read_end(st, txn);
    return rc;
}
