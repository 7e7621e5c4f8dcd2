#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* Graph expansion: the definitions the best candidates call, raise,
 * subclass or instantiate are often the rest of the answer (the exception
 * class in another module, the helper a function delegates to), and so,
 * less often, are their callers. A one-line definition (a C macro, a
 * declaration) is rarely the answer, and a seed may call dozens: it enters
 * lower. */

static size_t find_cand(const RtvCand *v, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].chunk_id == id) return i;
    return (size_t)-1;
}

void rtv_lookups_release(RtvLookups *lk)
{
    i64map_release(&lk->is_test);
    i64map_release(&lk->fanin);
    i64map_release(&lk->folder);
    strmap_release(&lk->folders);
    for (size_t i = 0; i < lk->n_edges; i++)
        free(lk->edges[i].edges);
    free(lk->edges);
    memset(lk, 0, sizeof *lk);
}

/* idx_edges and idx_file_test_marks through lk; the edges stay lk's. */
static CrErr rtv_edges(IdxStore *st, RtvLookups *lk, int64_t chunk, int outgoing,
                       const IdxEdge **out, size_t *n_out, ErrInfo *e)
{
    for (size_t i = 0; i < lk->n_edges; i++)
        if (lk->edges[i].chunk == chunk && lk->edges[i].outgoing == outgoing) {
            *out = lk->edges[i].edges;
            *n_out = lk->edges[i].n;
            return CR_OK;
        }
    IdxEdge *v = NULL;
    size_t n = 0;
    CrErr rc = idx_edges(st, chunk, outgoing, &v, &n, e);
    if (rc) return rc;
    ARRAY_GROW(lk->edges, lk->n_edges + 1, lk->cap_edges);
    lk->edges[lk->n_edges++] = (struct RtvEdgesOf){chunk, outgoing, v, n};
    *out = v;
    *n_out = n;
    return CR_OK;
}

int rtv_file_test_marks(IdxStore *st, RtvLookups *lk, int64_t file_id)
{
    int64_t v;
    if (i64map_get(&lk->is_test, file_id, &v)) return (int)v - 1;
    int t = idx_file_test_marks(st, file_id);
    i64map_put(&lk->is_test, file_id, 1 + t);
    return t;
}

int rtv_file_fanin(IdxStore *st, RtvLookups *lk, int64_t file_id)
{
    int64_t v;
    if (i64map_get(&lk->fanin, file_id, &v)) return (int)v - 1;
    int f = idx_file_fanin(st, file_id);
    i64map_put(&lk->fanin, file_id, 1 + f);
    return f;
}

int64_t rtv_file_folder(IdxStore *st, RtvLookups *lk, int64_t file_id)
{
    int64_t v;
    if (i64map_get(&lk->folder, file_id, &v)) return v - 1;
    StrBuf p;
    sb_init(&p);
    int64_t id = -1;
    if (idx_file_path(st, file_id, &p)) {
        size_t len = p.len;
        while (len && p.buf[len - 1] != '/')
            len--;
        if (!strmap_getn(&lk->folders, p.buf, len, &id)) {
            id = (int64_t)lk->folders.len;
            sb_truncate(&p, len);
            strmap_put(&lk->folders, p.buf, id);
        }
    }
    sb_release(&p);
    i64map_put(&lk->folder, file_id, id + 1);
    return id;
}

CrErr rtv_expand_graph(IdxStore *st, RtvCand **cands, size_t *n, size_t *cap,
                       const RtvGraphParams *gp, RtvLookups *lk, ErrInfo *e)
{
    RtvLookups own = {0};
    if (!lk) lk = &own;
    size_t seeds = *n < gp->seeds ? *n : gp->seeds;
    /* Seeds are the first candidates (the caller sorts best first); new
     * candidates go after them and are never seeds themselves (one hop). */
    int64_t *seed_ids = xcalloc(seeds + 1, sizeof *seed_ids);
    double *seed_scores = xcalloc(seeds + 1, sizeof *seed_scores);
    for (size_t i = 0; i < seeds; i++) {
        seed_ids[i] = (*cands)[i].chunk_id;
        seed_scores[i] = (*cands)[i].score;
    }
    CrErr rc = CR_OK;
    for (size_t i = 0; i < seeds && !rc; i++) {
        for (int dir = 1; dir >= 0 && !rc; dir--) {
            double factor = dir ? gp->out_factor : gp->in_factor;
            if (factor <= 0) continue;
            const IdxEdge *edges = NULL;
            size_t ne = 0;
            if ((rc = rtv_edges(st, lk, seed_ids[i], dir, &edges, &ne, e))) break;
            size_t taken = 0;
            for (size_t k = 0; k < ne && taken < gp->per_seed; k++) {
                /* structure, imports and macro bodies are not followed;
                 * references (functions named as values, decorators) are,
                 * as calls (measured: docs/benchmarks.md) */
                IdxEdgeKind ek = edges[k].kind;
                if (ek == IDX_EDGE_CONTAIN || ek == IDX_EDGE_IMPORT || ek == IDX_EDGE_EXPAND)
                    continue;
                /* a construction or an operator links nearly every user of a
                 * class to its constructor: no lead to what a question asks */
                if (edges[k].builds) continue;
                int64_t other = dir ? edges[k].dst : edges[k].src;
                if (other == seed_ids[i]) continue; /* recursion */
                double s = seed_scores[i] * factor;
                if (edges[k].other_lines <= 1) s *= gp->one_line;
                size_t at = find_cand(*cands, *n, other);
                taken++;
                if (at != (size_t)-1) {
                    (*cands)[at].via |= RTV_VIA_GRAPH;
                    (*cands)[at].graph |= dir ? 1 : 2;
                    if (s > (*cands)[at].score) (*cands)[at].score = s;
                    continue;
                }
                ARRAY_GROW(*cands, *n + 1, *cap);
                (*cands)[*n] = (RtvCand){.chunk_id = other,
                                         .file_id = edges[k].other_file,
                                         .kind = edges[k].other_kind,
                                         .score = s,
                                         .via = RTV_VIA_GRAPH};
                (*cands)[*n].graph = dir ? 1 : 2;
                (*n)++;
            }
        }
    }
    free(seed_ids);
    free(seed_scores);
    rtv_lookups_release(&own);
    return rc;
}

CrErr rtv_driver_prior(IdxStore *st, RtvCand *v, size_t n, size_t depth, double w, RtvLookups *lk,
                       ErrInfo *e)
{
    if (!n || w <= 0) return CR_OK;
    RtvLookups own = {0};
    if (!lk) lk = &own;
    if (depth > n) depth = n;
    I64Map in;
    i64map_init(&in);
    for (size_t i = 0; i < depth; i++)
        i64map_put(&in, v[i].chunk_id, 1);
    CrErr rc = CR_OK;
    for (size_t i = 0; i < depth && !rc; i++) {
        const IdxEdge *ed = NULL;
        size_t ne = 0;
        if ((rc = rtv_edges(st, lk, v[i].chunk_id, 1, &ed, &ne, e))) break;
        int64_t seen[RTV_DRIVER_MAX];
        size_t k = 0;
        for (size_t j = 0; j < ne && k < RTV_DRIVER_MAX; j++) {
            int64_t x;
            if (ed[j].kind != IDX_EDGE_CALL && ed[j].kind != IDX_EDGE_REFERENCE) continue;
            if (ed[j].dst == v[i].chunk_id || !i64map_get(&in, ed[j].dst, &x)) continue;
            size_t m = 0;
            while (m < k && seen[m] != ed[j].dst)
                m++;
            if (m == k) seen[k++] = ed[j].dst;
        }
        v[i].score *= 1.0 + w * (double)k;
    }
    i64map_release(&in);
    if (lk == &own) rtv_lookups_release(&own);
    if (!rc) rtv_cands_sort(v, n);
    return rc;
}
