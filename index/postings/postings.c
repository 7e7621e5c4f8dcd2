#include "postings_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A BM25F index over the four search fields of every chunk (name, path,
 * doc, body): a snapshot read in place plus what changed since (postings_int.h),
 * kept current as files change. Terms are produced by FTS5's own porter
 * tokenizer, so stemming matches the stored search text. */

typedef struct TokCtx {
    Postings *p;
    StemTerms terms; /* of one field, or of the query */
    uint32_t *ids;   /* their term ids */
    size_t n, cap;
    int create;     /* add unknown terms to the dictionary */
    size_t unknown; /* tokens not in the dictionary (when not creating) */
} TokCtx;

/* The added term of text t, or -1. */
static int64_t dict_find(const TermDict *d, const char *t, size_t n, uint64_t h)
{
    if (!d->cap) return -1;
    for (size_t i = h & (d->cap - 1);; i = (i + 1) & (d->cap - 1)) {
        uint32_t v = d->slot[i];
        if (!v) return -1;
        const char *k = d->text.buf + d->off[v - 1];
        if (!strncmp(k, t, n) && !k[n]) return (int64_t)(v - 1); /* k may be shorter */
    }
}

static void dict_place(TermDict *d, uint32_t k, uint64_t h)
{
    size_t i = h & (d->cap - 1);
    while (d->slot[i])
        i = (i + 1) & (d->cap - 1);
    d->slot[i] = k + 1;
}

static uint32_t dict_add(TermDict *d, const char *t, size_t n, uint64_t h)
{
    if ((d->n + 1) * 2 > d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 1024;
        free(d->slot);
        d->slot = xcalloc(cap, sizeof *d->slot);
        d->cap = cap;
        for (size_t k = 0; k < d->n; k++) {
            const char *s = d->text.buf + d->off[k];
            dict_place(d, (uint32_t)k, hash64(s, strlen(s)));
        }
    }
    ARRAY_GROW(d->off, d->n + 1, d->cap_off);
    d->off[d->n] = d->text.len;
    sb_add(&d->text, t, n);
    sb_addc(&d->text, '\0');
    dict_place(d, (uint32_t)d->n, h);
    return (uint32_t)d->n++;
}

static void dict_release(TermDict *d)
{
    sb_release(&d->text);
    free(d->off);
    free(d->slot);
    memset(d, 0, sizeof *d);
}

void idx_postings_reserve_terms(Postings *p, size_t n_terms)
{
    free(p->lists);
    /* headroom for the terms an update adds: never touched (calloc's pages
     * stay unmade) unless used, where growing would copy every entry */
    p->cap_terms = n_terms + n_terms / 4 + 1024;
    p->lists = xcalloc(p->cap_terms, sizeof *p->lists);
    p->n_terms = n_terms;
}

/* The snapshot's postings of term t, checked on first use and kept: none
 * for a term added since, and none (with base.bad set) for a damaged list. */
static const Posting *idx_postings_base_list(Postings *p, uint32_t t, uint32_t *out_n)
{
    PostBase *b = &p->base;
    *out_n = 0;
    if (t >= b->n_terms) return NULL;
    PostTerm pt;
    if (!idx_postbase_term(b, t, &pt)) return NULL;
    if (!b->checked[t]) {
        Posting *l = xmalloc(((size_t)pt.n + 1) * sizeof *l);
        int ok = idx_postbase_read_list(b, &pt, l);
        b->checked[t] = ok ? 1 : 2;
        if (ok) {
            b->lists[t] = l;
            ARRAY_GROW(b->cached, b->n_cached + 1, b->cap_cached);
            b->cached[b->n_cached++] = t;
        } else {
            free(l);
        }
    }
    if (b->checked[t] != 1) {
        b->bad = 1;
        return NULL;
    }
    *out_n = pt.n;
    return b->lists[t];
}

const char *idx_postings_term_text(Postings *p, uint32_t t, uint32_t *out_len)
{
    *out_len = 0;
    if (t < p->base.n_terms) {
        PostTerm pt;
        const char *s =
            idx_postbase_term(&p->base, t, &pt) ? idx_postbase_text(&p->base, &pt) : NULL;
        if (s) *out_len = pt.str_len;
        return s;
    }
    const char *s = p->terms.text.buf + p->terms.off[t - p->base.n_terms];
    *out_len = (uint32_t)strlen(s);
    return s;
}

/* Every posting of term t in slot order (the snapshot's, the runs', the
 * memory's) into *buf, grown as needed; returns how many. */
static size_t idx_postings_gather(Postings *p, uint32_t t, Posting **buf, size_t *cap)
{
    uint32_t n_base;
    const Posting *bp = idx_postings_base_list(p, t, &n_base);
    const TermList *l = &p->lists[t];
    ARRAY_GROW(*buf, (size_t)n_base + l->n + 1, *cap);
    if (n_base) memcpy(*buf, bp, n_base * sizeof *bp);
    size_t n = n_base;
    for (size_t r = 0; r < p->n_runs; r++)
        n = idx_postings_run_find(p, r, t, buf, cap, n);
    ARRAY_GROW(*buf, n + l->n + 1, *cap);
    if (l->n) memcpy(*buf + n, l->p, l->n * sizeof *l->p);
    return n + l->n;
}

static uint32_t term_id_h(Postings *p, const char *t, size_t n, uint64_t h, int create, int *found)
{
    int64_t v = idx_postbase_lookup(&p->base, t, n);
    if (v < 0 && (v = dict_find(&p->terms, t, n, h)) >= 0) v += p->base.n_terms;
    if (v >= 0) {
        *found = 1;
        return (uint32_t)v;
    }
    *found = 0;
    if (!create) return 0;
    ARRAY_GROW(p->lists, p->n_terms + 1, p->cap_terms);
    memset(&p->lists[p->n_terms], 0, sizeof p->lists[0]);
    dict_add(&p->terms, t, n, h);
    *found = 1;
    return (uint32_t)p->n_terms++;
}

static uint32_t term_id(Postings *p, const char *t, size_t n, int create, int *found)
{
    return term_id_h(p, t, n, hash64(t, n), create, found);
}

/* Tokenizes text (already code-split by idx_tok_code) into term ids. */
static void tokenize(Postings *p, TokCtx *c, const char *text, int flags)
{
    c->n = 0;
    idx_stem_terms(p->stem, text, flags, &c->terms);
    for (size_t k = 0; k < c->terms.n; k++) {
        int found;
        uint32_t id =
            term_id(c->p, c->terms.text.buf + c->terms.off[k], c->terms.len[k], c->create, &found);
        if (!found) {
            c->unknown++;
            continue;
        }
        ARRAY_GROW(c->ids, c->n + 1, c->cap);
        c->ids[c->n++] = id;
    }
}

CrErr idx_postings_new(IdxStore *st, Postings **out, ErrInfo *e)
{
    Stemmer *m = NULL;
    CrErr rc = idx_stemmer_new(st, &m, e);
    *out = NULL;
    if (rc) return rc;
    Postings *p = xcalloc(1, sizeof *p);
    p->stem = m;
    p->base.tblock_at = p->base.hblock_at = -1;
    p->run_fd = -1;
    p->dir = st->readonly ? NULL : xstrdup(st->index_dir); /* a read-only store writes nothing */
    p->budget = st->post_budget;
    *out = p;
    return CR_OK;
}

void idx_postings_free(Postings *p)
{
    if (!p) return;
    idx_stemmer_free(p->stem);
    /* list_bytes counts every list block since the last spill freed them
     * all: a loaded index that no write touched holds none, and its millions
     * of empty lists (the kernel's) were a tenth of a one-shot ask */
    for (size_t i = 0; p->list_bytes && i < p->n_terms; i++)
        free(p->lists[i].p);
    free(p->lists);
    dict_release(&p->terms);
    idx_postings_runs_close(p);
    free(p->dir);
    free(p->chunk);
    free(p->file);
    free(p->kind);
    free(p->len);
    free(p->dead);
    free(p->acc);
    free(p->cov);
    idx_postbase_close(&p->base);
    free(p);
}

void idx_store_postings_invalidate(IdxStore *st)
{
    idx_postings_free(st->post);
    st->post = NULL;
}

size_t idx_postings_add_slots(Postings *p, size_t n)
{
    size_t slot = p->n_slots;
    if (!n) return slot; /* the arrays may still be NULL (an empty index) */
    if (slot + n > p->cap_slots) {
        size_t cap = p->cap_slots ? p->cap_slots * 2 : 1024;
        while (cap < slot + n)
            cap *= 2;
        p->chunk = xrealloc(p->chunk, cap * sizeof *p->chunk);
        p->file = xrealloc(p->file, cap * sizeof *p->file);
        p->kind = xrealloc(p->kind, cap * sizeof *p->kind);
        p->len = xrealloc(p->len, cap * sizeof *p->len);
        p->dead = xrealloc(p->dead, cap * sizeof *p->dead);
        p->cap_slots = cap;
    }
    memset(p->dead + slot, 0, n);
    p->n_slots += n;
    return slot;
}

/* Counts one token of field f of the chunk in slot: the chunk's posting is
 * the list's last one once it has a token of the term (slots only grow),
 * so no chunk's terms need sorting. */
static void postings__count(Postings *p, uint32_t term, size_t slot, int f)
{
    TermList *l = &p->lists[term];
    if (!l->n || l->p[l->n - 1].slot != (uint32_t)slot) {
        if (l->n == l->cap) {
            /* by half again, from 2: most terms are rare, and a build of
             * a large tree holds every list at once */
            uint32_t grown = l->cap < 2 ? 2 : l->cap + l->cap / 2;
            p->list_bytes += (size_t)(grown - l->cap) * sizeof *l->p;
            l->cap = grown;
            l->p = xrealloc(l->p, (size_t)l->cap * sizeof *l->p);
        }
        l->p[l->n++] = (Posting){(uint32_t)slot, {0}};
    }
    uint8_t *tf = &l->p[l->n - 1].tf[f];
    if (*tf < 255) (*tf)++;
}

static size_t postings__slot(Postings *p, int64_t chunk_id, int64_t file_id, IdxKind kind)
{
    size_t slot = idx_postings_add_slots(p, 1);
    p->chunk[slot] = chunk_id;
    p->file[slot] = file_id;
    p->kind[slot] = (unsigned char)kind;
    return slot;
}

void idx_postings_add(Postings *p, int64_t chunk_id, int64_t file_id, IdxKind kind,
                      const char *const fields[4])
{
    TokCtx c = {.p = p, .create = 1};
    size_t slot = postings__slot(p, chunk_id, file_id, kind);
    for (int f = 0; f < N_FIELDS; f++) {
        tokenize(p, &c, fields[f], FTS5_TOKENIZE_DOCUMENT);
        p->len[slot][f] = (uint32_t)c.n;
        p->len_sum[f] += (double)c.n;
        for (size_t i = 0; i < c.n; i++)
            postings__count(p, c.ids[i], slot, f);
    }
    idx_stem_terms_release(&c.terms);
    free(c.ids);
    if (p->list_bytes > p->budget) idx_postings_spill(p);
}

void idx_postings_add_terms(Postings *p, int64_t chunk_id, int64_t file_id, IdxKind kind,
                            const FileTerms *ft, size_t chunk, uint32_t *gid)
{
    size_t slot = postings__slot(p, chunk_id, file_id, kind);
    for (int f = 0; f < N_FIELDS; f++) {
        size_t i = chunk * N_FIELDS + (size_t)f;
        size_t a = i ? ft->field_end[i - 1] : 0, b = ft->field_end[i];
        p->len[slot][f] = (uint32_t)(b - a);
        p->len_sum[f] += (double)(b - a);
        for (size_t k = a; k < b; k++) {
            uint32_t t = ft->tok[k];
            if (gid[t] == UINT32_MAX) {
                int found;
                gid[t] = term_id_h(p, ft->ids.text.buf + ft->ids.off[t], ft->ids.len[t],
                                   ft->ids.hash[t], 1, &found);
            }
            postings__count(p, gid[t], slot, f);
        }
    }
    if (p->list_bytes > p->budget) idx_postings_spill(p);
}

void idx_postings_remove_file(Postings *p, int64_t file_id)
{
    for (size_t i = 0; i < p->n_slots; i++) {
        if (p->file[i] != file_id || p->dead[i]) continue;
        p->dead[i] = 1;
        p->n_dead++;
        for (int f = 0; f < N_FIELDS; f++)
            p->len_sum[f] -= (double)p->len[i][f];
    }
}

size_t idx_postings_live(const Postings *p)
{
    return p->n_slots - p->n_dead;
}

int idx_postings_damaged(const Postings *p)
{
    return p && (p->base.bad || p->run_bad);
}

int idx_postings_needs_rebuild(const Postings *p)
{
    return p->n_dead > 1024 && p->n_dead * 3 > p->n_slots;
}

size_t idx_postings_query_terms(Postings *p, const char *text, uint32_t *out, size_t n, size_t cap,
                                size_t *n_unknown)
{
    TokCtx c = {.p = p};
    tokenize(p, &c, text, FTS5_TOKENIZE_QUERY);
    for (size_t i = 0; i < c.n && n < cap; i++) {
        size_t k = 0;
        while (k < n && out[k] != c.ids[i])
            k++;
        if (k == n) out[n++] = c.ids[i];
    }
    idx_stem_terms_release(&c.terms);
    free(c.ids);
    if (n_unknown) *n_unknown = c.unknown;
    return n;
}

typedef struct HeapItem {
    float score;
    float cov;
    uint32_t slot;
} HeapItem;

static void heap_sift_down(HeapItem *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].score < h[m].score) m = l;
        if (r < n && h[r].score < h[m].score) m = r;
        if (m == i) return;
        HeapItem t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static int by_score_desc(const void *a, const void *b)
{
    const HeapItem *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    return (x->slot > y->slot) - (x->slot < y->slot);
}

size_t idx_postings_search(Postings *p, const uint32_t *terms, size_t n_terms, size_t n_unknown,
                           const Bm25Params *bp, size_t k, IdxHit *out)
{
    size_t live = p->n_slots - p->n_dead;
    if (!live || !k) return 0;
    double avg[N_FIELDS];
    for (int f = 0; f < N_FIELDS; f++)
        avg[f] = p->len_sum[f] > 0 ? p->len_sum[f] / (double)live : 1;
    if (p->cap_acc < p->n_slots) {
        /* zeroed by the system as touched: a build never pays for them */
        free(p->acc);
        free(p->cov);
        p->cap_acc = p->cap_slots;
        p->acc = xcalloc(p->cap_acc, sizeof *p->acc);
        p->cov = xcalloc(p->cap_acc, sizeof *p->cov);
    }
    uint32_t *touched = NULL;
    size_t n_touched = 0, cap_touched = 0;
    Posting *list = NULL;
    size_t cap_list = 0;
    /* Words no chunk holds weigh in the question's mass as the rarest do. */
    double idf_mass = (double)n_unknown * log(1.0 + ((double)live + 0.5) / 0.5);
    for (size_t t = 0; t < n_terms; t++) {
        size_t n_list = idx_postings_gather(p, terms[t], &list, &cap_list);
        /* Document frequency over live chunks only: the same as a fresh
         * build's, whatever was tombstoned since. */
        double df = 0;
        for (size_t i = 0; i < n_list; i++) {
            const Posting *po = &list[i];
            df += po->slot < p->n_slots && !p->dead[po->slot];
        }
        double idf = log(1.0 + ((double)live - df + 0.5) / (df + 0.5));
        if (idf <= 0) continue;
        idf_mass += idf;
        for (size_t i = 0; i < n_list; i++) {
            const Posting *po = &list[i];
            if (po->slot >= p->n_slots || p->dead[po->slot]) continue;
            double tfw = 0;
            for (int f = 0; f < N_FIELDS; f++) {
                if (!po->tf[f]) continue;
                double norm = 1.0 - bp->b[f] + bp->b[f] * (double)p->len[po->slot][f] / avg[f];
                tfw += bp->weight[f] * (double)po->tf[f] / norm;
            }
            if (p->acc[po->slot] == 0) {
                ARRAY_GROW(touched, n_touched + 1, cap_touched);
                touched[n_touched++] = po->slot;
            }
            p->acc[po->slot] += (float)(idf * tfw * (bp->k1 + 1.0) / (bp->k1 + tfw));
            p->cov[po->slot] += (float)idf;
        }
    }
    /* Top k with a min-heap, then best first. */
    HeapItem *h = xmalloc((k + 1) * sizeof *h);
    size_t n = 0;
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t slot = touched[i];
        float sc = p->acc[slot], cov = p->cov[slot];
        p->acc[slot] = 0;
        p->cov[slot] = 0;
        if (n < k) {
            h[n].score = sc;
            h[n].cov = cov;
            h[n].slot = slot;
            n++;
            if (n == k)
                for (size_t j = k / 2 + 1; j-- > 0;)
                    heap_sift_down(h, n, j);
        } else if (sc > h[0].score) {
            h[0].score = sc;
            h[0].cov = cov;
            h[0].slot = slot;
            heap_sift_down(h, n, 0);
        }
    }
    qsort(h, n, sizeof *h, by_score_desc);
    for (size_t i = 0; i < n; i++) {
        out[i].chunk_id = p->chunk[h[i].slot];
        out[i].file_id = p->file[h[i].slot];
        out[i].kind = (IdxKind)p->kind[h[i].slot];
        out[i].score = h[i].score;
        out[i].coverage = idf_mass > 0 ? h[i].cov / idf_mass : 0;
    }
    free(h);
    free(touched);
    free(list);
    return n;
}

/* The live postings of term t as (chunk id, tf) in slot order. */
static size_t live_list(Postings *p, uint32_t t, int64_t **ids, uint32_t **tfs, size_t *cap)
{
    Posting *list = NULL;
    size_t cap_list = 0, n = 0;
    size_t n_list = idx_postings_gather(p, t, &list, &cap_list);
    for (size_t i = 0; i < n_list; i++) {
        const Posting *po = &list[i];
        if (po->slot >= p->n_slots || p->dead[po->slot]) continue;
        if (n + 1 > *cap) {
            *cap = *cap ? *cap * 2 : 64;
            *ids = xrealloc(*ids, *cap * sizeof **ids);
            *tfs = xrealloc(*tfs, *cap * sizeof **tfs);
        }
        (*ids)[n] = p->chunk[po->slot];
        memcpy(&(*tfs)[n], po->tf, sizeof po->tf);
        n++;
    }
    free(list);
    return n;
}

int idx_postings_same(Postings *a, Postings *b, char *why, size_t cap)
{
    int same = 1;
    int64_t *ia = NULL, *ib = NULL;
    uint32_t *ta = NULL, *tb = NULL;
    size_t ca = 0, cb = 0, seen = 0;
    for (uint32_t t = 0; t < a->n_terms && same; t++) {
        size_t na = live_list(a, t, &ia, &ta, &ca);
        if (!na) continue;
        seen++;
        uint32_t len;
        const char *s = idx_postings_term_text(a, t, &len);
        if (!s) break; /* a damaged snapshot: said by idx_postings_damaged */
        char *text = xstrndup(s, len);
        int found;
        uint32_t u = term_id(b, text, len, 0, &found);
        size_t nb = found ? live_list(b, u, &ib, &tb, &cb) : 0;
        if (na != nb || memcmp(ia, ib, na * sizeof *ia) || memcmp(ta, tb, na * sizeof *ta)) {
            snprintf(why, cap, "term '%.*s': %zu postings against %zu", (int)len, text, na, nb);
            same = 0;
        }
        free(text);
    }
    /* Every term of b with live postings was met above. */
    size_t in_b = 0;
    for (uint32_t t = 0; t < b->n_terms && same; t++)
        in_b += live_list(b, t, &ib, &tb, &cb) > 0;
    if (same && in_b != seen) {
        snprintf(why, cap, "%zu terms against %zu", seen, in_b);
        same = 0;
    }
    if (same && (a->n_slots - a->n_dead != b->n_slots - b->n_dead)) {
        snprintf(why, cap, "%zu chunks against %zu", a->n_slots - a->n_dead,
                 b->n_slots - b->n_dead);
        same = 0;
    }
    free(ia);
    free(ib);
    free(ta);
    free(tb);
    return same;
}
