#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* Navigation over the code graph. The index stores chunks; a definition
 * longer than the window limit is several of them (windows 1, 2, ...), and
 * a class is its header run plus further runs between its methods. Every
 * query here works on whole definitions, so that a long function answers
 * like a short one. */

static char *dup0(const char *s)
{
    return xstrdup(s ? s : "");
}

static void chunk_copy(IdxChunk *dst, const IdxChunk *src)
{
    *dst = *src;
    dst->path = dup0(src->path);
    dst->module = dup0(src->module);
    dst->symbol = dup0(src->symbol);
    dst->signature = dup0(src->signature);
    dst->docstring = dup0(src->docstring);
}

void rtv_def_release(RtvDef *d)
{
    if (!d) return;
    idx_chunk_release(&d->head);
    free(d->pieces);
    memset(d, 0, sizeof *d);
}

void rtv_defs_free(RtvDef *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        rtv_def_release(&v[i]);
    free(v);
}

int rtv_is_module_code(const IdxChunk *c)
{
    return c->kind == IDX_KIND_MODULE || !c->symbol || !c->symbol[0];
}

/* For chunks of one file in line order, head[i] is the index of the first
 * piece of chunk i's definition, or -1 for module code. A piece continues
 * the first definition of the same symbol and kind: a later window (2,
 * 3, ...), another run of a class, another definition of the name right
 * after it (overloads); the rule the indexer uses to name a definition
 * once (index/update/write.c). */
static void group_chunks(const IdxChunk *c, size_t n, long *head, const char *path)
{
    StrMap last;
    strmap_init(&last);
    long prev = -1; /* the latest definition's chunk */
    for (size_t i = 0; i < n; i++) {
        int64_t h;
        head[i] = -1;
        if (rtv_is_module_code(&c[i])) continue;
        int seen = strmap_get(&last, c[i].symbol, &h) && c[h].kind == c[i].kind;
        /* a function defined again under its name right after its previous
         * definition (`@overload` stubs and their implementation, a
         * definition per branch of an `if`) is one function: the index
         * names the first, calls reach it. Definitions of a name that
         * interleave with others' (C's `#if` variants of several
         * functions) stay apart, or one would span the other's lines, and
         * so do overloads the index tells apart (idx_overloads_apart). */
        if (seen && (c[i].window > 1 || c[i].kind == IDX_KIND_CLASS ||
                     (prev >= 0 && head[prev] == (long)h &&
                      !idx_overloads_apart(path, c[i].symbol, c[h].signature, c[i].signature)))) {
            head[i] = (long)h;
        } else {
            head[i] = (long)i;
            strmap_put(&last, c[i].symbol, (int64_t)i);
        }
        prev = (long)i;
    }
    strmap_release(&last);
}

/* Builds the definition whose first piece is chunk h, its head that chunk
 * whole (hc, or c[h]). */
static void def_build_as(const IdxChunk *c, size_t n, const long *head, size_t h,
                         const IdxChunk *hc, RtvDef *out)
{
    memset(out, 0, sizeof *out);
    chunk_copy(&out->head, hc);
    out->start_line = c[h].start_line;
    out->end_line = c[h].end_line;
    size_t cap = 0;
    for (size_t i = h; i < n; i++) {
        if (i != h && head[i] != (long)h) continue;
        ARRAY_GROW(out->pieces, out->n_pieces + 1, cap);
        out->pieces[out->n_pieces++] = c[i].id;
        if (c[i].end_line > out->end_line) out->end_line = c[i].end_line;
        if (c[i].start_line < out->start_line) out->start_line = c[i].start_line;
    }
}

static void def_build(const IdxChunk *c, size_t n, const long *head, size_t h, RtvDef *out)
{
    def_build_as(c, n, head, h, &c[h], out);
}

CrErr rtv_view_load(IdxStore *st, const char *path, RtvFileView *v, ErrInfo *e)
{
    memset(v, 0, sizeof *v);
    CrErr rc = idx_file_chunks(st, path, &v->chunks, &v->n, e);
    if (rc) return rc;
    v->head = xcalloc(v->n + 1, sizeof *v->head);
    group_chunks(v->chunks, v->n, v->head, path);
    return CR_OK;
}

void rtv_view_release(RtvFileView *v)
{
    idx_chunks_free(v->chunks, v->n);
    free(v->head);
    memset(v, 0, sizeof *v);
}

int rtv_view_def_of(const RtvFileView *v, int64_t id, RtvDef *out)
{
    for (size_t i = 0; i < v->n; i++) {
        if (v->chunks[i].id != id) continue;
        if (v->head[i] < 0) { /* module code: the chunk alone */
            memset(out, 0, sizeof *out);
            chunk_copy(&out->head, &v->chunks[i]);
            out->start_line = v->chunks[i].start_line;
            out->end_line = v->chunks[i].end_line;
            out->pieces = xmalloc(sizeof *out->pieces);
            out->pieces[0] = id;
            out->n_pieces = 1;
        } else {
            def_build(v->chunks, v->n, v->head, (size_t)v->head[i], out);
        }
        return 1;
    }
    return 0;
}

CrErr rtv_file_defs(IdxStore *st, const char *path, RtvDef **out, size_t *n_out, ErrInfo *e)
{
    RtvFileView v;
    *out = NULL;
    *n_out = 0;
    CrErr rc = rtv_view_load(st, path, &v, e);
    if (rc) return rc;
    size_t n = 0;
    for (size_t i = 0; i < v.n; i++)
        if (v.head[i] == (long)i) n++;
    *out = n ? xcalloc(n, sizeof **out) : NULL;
    for (size_t i = 0; i < v.n; i++)
        if (v.head[i] == (long)i) def_build(v.chunks, v.n, v.head, i, &(*out)[(*n_out)++]);
    rtv_view_release(&v);
    return CR_OK;
}

/* Files' outlines (no text), each grouped as rtv_view_load groups its
 * chunks: kept for the next definition asked of the same file (rtv_symbols'
 * hits are often chunks of a few files, in turn). */
typedef struct Outline {
    int64_t file_id;
    IdxChunk *v;
    size_t n;
    long *head;
} Outline;

typedef struct OutlineMemo {
    Outline *o;
    size_t n, cap;
} OutlineMemo;

static void outline_memo_release(OutlineMemo *m)
{
    for (size_t i = 0; i < m->n; i++) {
        idx_chunks_free(m->o[i].v, m->o[i].n);
        free(m->o[i].head);
    }
    free(m->o);
    memset(m, 0, sizeof *m);
}

/* file_id's outline (the file at path) into *out, read once. */
static CrErr outline_memo_get(IdxStore *st, int64_t file_id, const char *path, OutlineMemo *m,
                              const Outline **out, ErrInfo *e)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->o[i].file_id == file_id) {
            *out = &m->o[i];
            return CR_OK;
        }
    Outline o = {file_id, NULL, 0, NULL};
    CrErr rc = idx_file_outline(st, file_id, &o.v, &o.n, e);
    if (rc) {
        idx_chunks_free(o.v, o.n);
        return rc;
    }
    o.head = xcalloc(o.n + 1, sizeof *o.head);
    group_chunks(o.v, o.n, o.head, path);
    ARRAY_GROW(m->o, m->n + 1, m->cap);
    m->o[m->n] = o;
    *out = &m->o[m->n++];
    return CR_OK;
}

/* rtv_def_of_chunk through m; the head alone is read whole. */
static CrErr def_of_chunk(IdxStore *st, int64_t chunk_id, OutlineMemo *m, RtvDef *out, ErrInfo *e)
{
    IdxChunk c, hc;
    size_t i = 0;
    memset(out, 0, sizeof *out);
    CrErr rc = idx_chunk_get(st, chunk_id, &c, e);
    if (rc) return rc;
    const Outline *o = NULL;
    if ((rc = outline_memo_get(st, c.file_id, c.path, m, &o, e))) goto out;
    const IdxChunk *v = o->v;
    const long *head = o->head;
    size_t n = o->n;
    while (i < n && v[i].id != chunk_id)
        i++;
    if (i == n) {
        rc = err_set(e, CR_ENOENT, "chunk %lld is no longer indexed", (long long)chunk_id);
        goto out;
    }
    if (head[i] < 0) { /* module code: the chunk alone */
        chunk_copy(&out->head, &c);
        out->start_line = c.start_line;
        out->end_line = c.end_line;
        out->pieces = xmalloc(sizeof *out->pieces);
        out->pieces[0] = chunk_id;
        out->n_pieces = 1;
    } else if ((size_t)head[i] == i) {
        def_build_as(v, n, head, i, &c, out);
    } else if ((rc = idx_chunk_get(st, v[head[i]].id, &hc, e)) == CR_OK) {
        def_build_as(v, n, head, (size_t)head[i], &hc, out);
        idx_chunk_release(&hc);
    }
out:
    idx_chunk_release(&c);
    return rc;
}

CrErr rtv_def_of_chunk(IdxStore *st, int64_t chunk_id, RtvDef *out, ErrInfo *e)
{
    OutlineMemo m = {0};
    CrErr rc = def_of_chunk(st, chunk_id, &m, out, e);
    outline_memo_release(&m);
    return rc;
}

/* Ranking class of a definition against the place it is asked from. */
static int nearness(const RtvDef *d, const char *near_path, uint32_t near_line)
{
    if (!near_path || strcmp(d->head.path, near_path) != 0) return 2;
    return near_line >= d->start_line && near_line <= d->end_line ? 0 : 1;
}

/* The ids with the variants of each (a definition per #if branch that the
 * symbol table does not name), each id once. */
static CrErr variants_add(IdxStore *st, int64_t **ids, size_t *n, ErrInfo *e)
{
    size_t n0 = *n, cap = *n;
    if (n0 > 32) return CR_OK; /* a common name: its variants change no rank that matters */
    CrErr rc = CR_OK;
    for (size_t i = 0; i < n0 && !rc; i++) {
        int64_t *v = NULL;
        size_t nv = 0;
        rc = idx_variant_chunks(st, (*ids)[i], &v, &nv, e);
        for (size_t k = 0; k < nv; k++) {
            int have = 0;
            for (size_t j = 0; j < *n && !have; j++)
                have = (*ids)[j] == v[k];
            if (have) continue;
            ARRAY_GROW(*ids, *n + 1, cap);
            (*ids)[(*n)++] = v[k];
        }
        free(v);
    }
    return rc;
}

/* Whether defs[0..n) has a definition starting where d does. */
static int def_listed(const RtvDef *defs, size_t n, const RtvDef *d)
{
    for (size_t i = 0; i < n; i++)
        if (defs[i].start_line == d->start_line && !strcmp(defs[i].head.path, d->head.path))
            return 1;
    return 0;
}

CrErr rtv_defs_named(IdxStore *st, const char *name, const char *near_path, uint32_t near_line,
                     size_t max, RtvDef **out, size_t *n_out, size_t *n_total, ErrInfo *e)
{
    int64_t *ids = NULL;
    size_t n = 0, got = 0;
    int *cls = NULL;
    RtvDef *all = NULL;
    *out = NULL;
    *n_out = 0;
    if (n_total) *n_total = 0;
    CrErr rc = idx_lookup_symbol(st, name, &ids, &n, e);
    if (rc) return rc;
    if ((rc = variants_add(st, &ids, &n, e))) {
        free(ids);
        return rc;
    }
    /* A common name ("__init__") has hundreds of definitions: rank them by
     * their first piece (one row each) and build only those returned and
     * those of near_path (whose span decides their rank). */
    cls = n ? xcalloc(n, sizeof *cls) : NULL;
    all = n ? xcalloc(n, sizeof *all) : NULL;
    for (size_t i = 0; i < n; i++) {
        IdxChunk c;
        cls[i] = -1;
        rc = idx_chunk_get(st, ids[i], &c, e);
        if (rc == CR_ENOENT) continue; /* removed since the lookup */
        if (rc) goto out;
        got++;
        cls[i] = near_path && !strcmp(c.path, near_path) ? 1 : 2;
        idx_chunk_release(&c);
        if (cls[i] == 1) {
            if ((rc = rtv_def_of_chunk(st, ids[i], &all[i], e))) goto out;
            cls[i] = nearness(&all[i], near_path, near_line);
        }
    }
    if (n_total) *n_total = got;
    if (max == 0 || max > got) max = got;
    *out = max ? xcalloc(max, sizeof **out) : NULL;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n && *n_out < max; i++) {
            if (cls[i] != k) continue;
            if (!all[i].pieces && (rc = rtv_def_of_chunk(st, ids[i], &all[i], e))) {
                if (rc != CR_ENOENT) goto out;
                rc = CR_OK;
                continue;
            }
            if (def_listed(*out, *n_out, &all[i])) continue; /* a piece of one listed */
            (*out)[(*n_out)++] = all[i];
            memset(&all[i], 0, sizeof all[i]);
        }
    rc = rtv_defs_built_first(st, *out, *n_out, near_path, near_line, e);
out:
    if (rc) {
        rtv_defs_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    rtv_defs_free(all, n);
    free(cls);
    free(ids);
    return rc;
}

/* ---------------------------------------------------------------- symbols */

/* Whether the letters of one word of q (words split at spaces) appear in
 * name in order, ignoring case and '_'. */
static int fuzzy_in(const char *q, const char *name)
{
    while (*q) {
        while (*q == ' ')
            q++;
        const char *n = name;
        int ok = *q != '\0';
        for (; *q && *q != ' '; q++) {
            char c = (char)(*q | 0x20);
            if (*q == '_' || *q == '.' || !ok) continue;
            while (*n && (char)(*n | 0x20) != c)
                n++;
            if (*n)
                n++;
            else
                ok = 0;
        }
        if (ok) return 1;
    }
    return 0;
}

const char *rtv_last_part(const char *symbol)
{
    const char *dot = strrchr(symbol, '.');
    return dot ? dot + 1 : symbol;
}

CrErr rtv_symbols(IdxStore *st, const char *query, size_t max, RtvDef **out, size_t *n_out,
                  ErrInfo *e)
{
    RtvDef *v = NULL;
    size_t n = 0, cap = 0;
    IdxHit *hits = NULL;
    size_t n_hits = 0;
    StrMap seen;
    StrBuf key;
    *out = NULL;
    *n_out = 0;
    while (*query == ' ')
        query++;
    if (!*query || !max) return CR_OK;
    strmap_init(&seen);
    sb_init(&key);
    RtvDef *exact = NULL;
    size_t n_exact = 0;
    CrErr rc = rtv_defs_named(st, query, NULL, 0, max, &exact, &n_exact, NULL, e);
    for (size_t i = 0; !rc && i < n_exact; i++) {
        sb_reset(&key);
        sb_addf(&key, "%s:%u", exact[i].head.path, exact[i].start_line);
        strmap_put(&seen, key.buf, 1);
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = exact[i];
        memset(&exact[i], 0, sizeof exact[i]);
    }
    rtv_defs_free(exact, n_exact);
    if (!rc) rc = idx_search_bm25(st, query, 200, &hits, &n_hits, e);
    OutlineMemo memo = {0};
    for (size_t i = 0; !rc && i < n_hits && n < max; i++) {
        if (hits[i].kind == IDX_KIND_MODULE) continue;
        RtvDef d;
        rc = def_of_chunk(st, hits[i].chunk_id, &memo, &d, e);
        if (rc == CR_ENOENT) {
            rc = CR_OK;
            continue;
        }
        if (rc) break;
        sb_reset(&key);
        sb_addf(&key, "%s:%u", d.head.path, d.start_line);
        if (d.head.kind == IDX_KIND_MODULE || strmap_get(&seen, key.buf, NULL) ||
            !fuzzy_in(query, rtv_last_part(d.head.symbol))) {
            rtv_def_release(&d);
            continue;
        }
        strmap_put(&seen, key.buf, 1);
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = d;
    }
    outline_memo_release(&memo);
    free(hits);
    strmap_release(&seen);
    sb_release(&key);
    if (rc) {
        rtv_defs_free(v, n);
        return rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}
