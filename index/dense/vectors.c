/*
 * vectors.c - the vector store: exact inner-product search (IndexFlatIP
 * inside an IndexIDMap, through the FAISS C API) keyed by chunk id. Files
 * and journal: vecstore_int.h and vec_file.c.
 *
 * A VecStore is used by one thread at a time; nothing here locks. FAISS
 * keeps no state of ours between calls.
 */
#include "vecstore_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- id set */

/* The ids present mirror the IDMap's, so replace and listing need no FAISS
 * scan. Returns 1 when id was added, 0 when already there. */
static int id_add(I64Map *ids, int64_t id)
{
    if (i64map_get(ids, id, NULL)) return 0;
    i64map_put(ids, id, 0);
    return 1;
}

/* ---------------------------------------------------------------- helpers */

CrErr vecstore_faiss_err(const FaissApi *fa, ErrInfo *e, const char *what, int rc)
{
    const char *m = fa->get_last_error();
    return err_set(e, CR_EVECTOR, "vectors: %s: %s (faiss %d)", what, m ? m : "unknown error", rc);
}

static CrErr vecstore__new_index(const FaissApi *fa, int dim, FaissIndexIDMap **out, ErrInfo *e)
{
    FaissIndexFlatIP *flat = NULL;
    int rc = fa->IndexFlatIP_new_with(&flat, dim);
    if (rc) return vecstore_faiss_err(fa, e, "IndexFlatIP", rc);
    rc = fa->IndexIDMap_new(out, flat);
    if (rc) {
        CrErr err = vecstore_faiss_err(fa, e, "IndexIDMap", rc);
        fa->Index_free(flat);
        return err;
    }
    fa->IndexIDMap_set_own_fields(*out, 1);
    return CR_OK;
}

static int vecstore__all_finite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* Removes the listed ids that are present from the index and the set. */
static CrErr vecstore__drop(VecStore *vs, const int64_t *ids, size_t n, ErrInfo *e)
{
    int64_t *present = NULL;
    FaissIDSelectorBatch *sel = NULL;
    size_t np = 0, removed = 0;
    CrErr err = CR_OK;
    /* taken out of the set as found, so a repeated id counts once */
    for (size_t i = 0; i < n; i++) {
        if (!i64map_get(&vs->ids, ids[i], NULL)) continue;
        if (!present) present = xmalloc(n * sizeof *present);
        present[np++] = ids[i];
        i64map_del(&vs->ids, ids[i]);
    }
    if (!np) goto out;
    int rc = vs->fa->IDSelectorBatch_new(&sel, np, present);
    if (rc)
        err = vecstore_faiss_err(vs->fa, e, "IDSelectorBatch", rc);
    else if ((rc = vs->fa->Index_remove_ids(vs->index, (const FaissIDSelector *)sel, &removed)))
        err = vecstore_faiss_err(vs->fa, e, "remove_ids", rc);
    if (err) {
        for (size_t i = 0; i < np; i++)
            id_add(&vs->ids, present[i]);
        goto out;
    }
    vs->dirty = 1;
    if (removed != np)
        err = err_set(e, CR_ECORRUPT, "vectors: removed %zu of %zu ids present", removed, np);
out:
    vs->fa->IDSelector_free((FaissIDSelector *)sel);
    free(present);
    return err;
}

/* ---------------------------------------------------------------- journal */

static CrErr vecstore__insert(VecStore *vs, const int64_t *ids, const float *vecs, size_t n,
                              ErrInfo *e);

/* The journal is folded into the file once it would exceed a quarter of
 * it (replaying it then costs more than rewriting saves), and never holds
 * more than this much regardless. */
#define LOG_MIN_LIMIT (256 * 1024)
#define LOG_MAX_LIMIT (64 * 1024 * 1024)

static uint64_t log_limit(const VecStore *vs)
{
    uint64_t q = vs->base_bytes / 4;
    if (q < LOG_MIN_LIMIT) q = LOG_MIN_LIMIT;
    return q > LOG_MAX_LIMIT ? LOG_MAX_LIMIT : q;
}

static void vecstore__log_change(VecStore *vs, int op, const int64_t *ids, const float *vecs,
                                 size_t n)
{
    if (vs->pending_lost || !n) return;
    size_t d = op == LOG_OP_ADD ? (size_t)vs->dim : 0;
    uint64_t bytes = 8 + (uint64_t)n * (8 + 4 * d) + 8;
    if (!vs->base_hash || vs->log_bytes + vs->pending.len + bytes > log_limit(vs)) {
        /* nothing to journal onto, or too much: the next save writes the file */
        vs->pending_lost = 1;
        sb_release(&vs->pending);
        return;
    }
    size_t start = vs->pending.len;
    unsigned char u[8];
    put_u32(u, (uint32_t)op);
    put_u32(u + 4, (uint32_t)n);
    sb_add(&vs->pending, (const char *)u, 8);
    for (size_t i = 0; i < n; i++) {
        put_u64(u, (uint64_t)ids[i]);
        sb_add(&vs->pending, (const char *)u, 8);
    }
    if (d) sb_add(&vs->pending, (const char *)vecs, n * d * sizeof *vecs); /* little-endian hosts */
    put_u64(u, hash64(vs->pending.buf + start, vs->pending.len - start));
    sb_add(&vs->pending, (const char *)u, 8);
}

/* The record at p[0..avail): its length, or 0 when it is not a whole,
 * checked record. */
static size_t log_record(const VecStore *vs, const unsigned char *p, size_t avail, int *op,
                         uint32_t *n)
{
    if (avail < 16) return 0;
    *op = (int)get_u32(p);
    *n = get_u32(p + 4);
    size_t d = *op == LOG_OP_ADD ? (size_t)vs->dim : 0;
    if ((*op != LOG_OP_ADD && *op != LOG_OP_REMOVE) || !*n ||
        (uint64_t)*n > (avail - 16) / (8 + 4 * d))
        return 0;
    size_t body = 8 + (size_t)*n * (8 + 4 * d);
    if (get_u64(p + body) != hash64(p, body)) return 0;
    return body + 8;
}

/* Applies the records of p[from..to) at once: each remove from a flat index
 * moves every row after it, so record by record a long journal would cost
 * a pass over the whole file per record. Every id a record names leaves
 * the file's set; those whose last record adds it come back with that
 * vector: the same end state as applying them in order. */
static CrErr log_apply(VecStore *vs, const unsigned char *p, size_t from, size_t to, ErrInfo *e)
{
    I64Map last; /* id -> 1 + offset of its last added vector, or 0: removed */
    int64_t *named = NULL;
    size_t n_named = 0, cap = 0, d = (size_t)vs->dim;
    int op;
    uint32_t n;
    i64map_init(&last);
    for (size_t at = from, len; at < to && (len = log_record(vs, p + at, to - at, &op, &n)) > 0;
         at += len)
        for (uint32_t i = 0; i < n; i++) {
            int64_t id = (int64_t)get_u64(p + at + 8 + 8 * (size_t)i);
            if (!i64map_get(&last, id, NULL)) {
                ARRAY_GROW(named, n_named + 1, cap);
                named[n_named++] = id;
            }
            size_t vec = at + 8 + 8 * (size_t)n + (size_t)i * d * sizeof(float);
            i64map_put(&last, id, op == LOG_OP_ADD ? (int64_t)vec + 1 : 0);
        }
    CrErr err = n_named ? vecstore__drop(vs, named, n_named, e) : CR_OK;
    size_t k = 0;
    float *v = xmalloc(n_named * d * sizeof *v + 1);
    for (size_t i = 0; i < n_named; i++) {
        int64_t off = 0;
        i64map_get(&last, named[i], &off);
        if (!off) continue;
        memcpy(v + k * d, p + off - 1, d * sizeof *v);
        named[k++] = named[i];
    }
    if (!err && k) err = vecstore__insert(vs, named, v, k, e);
    free(v);
    free(named);
    i64map_release(&last);
    return err;
}

static CrErr vecstore__log_replay(VecStore *vs, ErrInfo *e)
{
    char *path = vecstore_log_path(vs->path);
    StrBuf sb;
    CrErr err = CR_OK;
    sb_init(&sb);
    vs->log_bytes = 0;
    vs->log_broken = 0;
    CrErr rc = sb_read_file(&sb, path, 2 * (uint64_t)LOG_MAX_LIMIT, NULL);
    if (rc != CR_OK) {
        /* none, or one too big to read: the next save rewrites the file */
        if (rc != CR_ENOENT) vs->pending_lost = 1;
        goto out;
    }
    const unsigned char *p = (const unsigned char *)sb.buf;
    if (sb.len < LOG_HEADER_BYTES || memcmp(p, log_magic, 8) != 0 ||
        get_u64(p + 24) != hash64(p, 24) || get_u32(p + 8) != LOG_VERSION ||
        get_u32(p + 12) != (uint32_t)vs->dim || get_u64(p + 16) != vs->base_hash) {
        vs->log_broken = sb.len > 0; /* another file's journal: replaced on the next save */
        goto out;
    }
    size_t at = LOG_HEADER_BYTES, len;
    int op;
    uint32_t n;
    while ((len = log_record(vs, p + at, sb.len - at, &op, &n)) > 0)
        at += len;
    ErrInfo why = {0};
    if (log_apply(vs, p, LOG_HEADER_BYTES, at, &why)) {
        err = err_set(e, CR_ECORRUPT, "its journal does not apply: %s", why.msg);
        goto out;
    }
    vs->log_bytes = at;
    vs->log_broken = at < sb.len;
out:
    sb_release(&sb);
    free(path);
    return err;
}

/* ---------------------------------------------------------------- load */

CrErr vecstore_check_trailer(int want_dim, const void *map, size_t size, uint32_t *out_dim,
                             uint64_t *out_count, uint64_t *out_plen, ErrInfo *e)
{
    const unsigned char *t = (const unsigned char *)map + size - TRAILER_BYTES;
    uint32_t version = get_u32(t + 8), fdim = get_u32(t + 12);
    uint64_t count = get_u64(t + 16), plen = get_u64(t + 24);
    if (memcmp(t, trailer_magic, sizeof trailer_magic) != 0 || get_u64(t + 40) != hash64(t, 40))
        return err_set(e, CR_ECORRUPT, "no valid trailer (truncated or not a coderag vector file)");
    if (version != FORMAT_VERSION)
        return err_set(e, CR_ECORRUPT, "format version %u, expected %d", version, FORMAT_VERSION);
    if (plen != size - TRAILER_BYTES || hash64(map, (size_t)plen) != get_u64(t + 32))
        return err_set(e, CR_ECORRUPT, "checksum mismatch");
    if (fdim == 0 || fdim > MAX_DIM || count > plen / (4 * (uint64_t)fdim))
        return err_set(e, CR_ECORRUPT, "implausible header (dim %u, %llu vectors)", fdim,
                       (unsigned long long)count);
    if (want_dim && (uint32_t)want_dim != fdim)
        return err_set(e, CR_ECORRUPT, "dimension %u, expected %d", fdim, want_dim);
    *out_dim = fdim;
    *out_count = count;
    *out_plen = plen;
    return CR_OK;
}

/* Takes the index FAISS read (an IDMap m of a flat inner-product index,
 * fdim and count as the trailer says) into vs: its ids into the set.
 * CR_ECORRUPT when it is anything else; the set may then be partly filled. */
static CrErr vecstore__adopt(VecStore *vs, FaissIndex *idx, uint32_t fdim, uint64_t count,
                             ErrInfo *e)
{
    FaissIndexIDMap *m = vs->fa->IndexIDMap_cast(idx);
    if (!m || vs->fa->Index_d(idx) != (int)fdim || vs->fa->Index_ntotal(idx) != (idx_t)count ||
        vs->fa->Index_metric_type(idx) != METRIC_INNER_PRODUCT)
        return err_set(e, CR_ECORRUPT, "not an inner-product IDMap of dim %u with %llu vectors",
                       fdim, (unsigned long long)count);
    FaissIndex *sub = vs->fa->IndexIDMap_sub_index(m);
    idx_t *ids = NULL;
    size_t n_ids = 0;
    vs->fa->IndexIDMap_id_map(m, &ids, &n_ids);
    if (!sub || !vs->fa->IndexFlat_cast(sub) || vs->fa->Index_ntotal(sub) != (idx_t)count ||
        n_ids != count)
        return err_set(e, CR_ECORRUPT, "not a flat index, or its id map disagrees");
    i64map_reserve(&vs->ids, n_ids);
    for (size_t i = 0; i < n_ids; i++) {
        if (ids[i] < 0 || !id_add(&vs->ids, ids[i]))
            return err_set(e, CR_ECORRUPT, "negative or duplicate id %lld", (long long)ids[i]);
    }
    vs->index = m;
    vs->dim = (int)fdim;
    return CR_OK;
}

/* Reads the FAISS payload map[0..plen) into vs. */
static CrErr vecstore__read_payload(VecStore *vs, void *map, uint64_t plen, uint32_t fdim,
                                    uint64_t count, ErrInfo *e)
{
    FaissIndex *idx = NULL;
    CrErr err = CR_OK;
    FILE *mf = fmemopen(map, (size_t)plen, "rb");
    if (!mf) return err_set(e, CR_EIO, "vectors: fmemopen: %s", strerror(errno));
    int rc = vs->fa->read_index(mf, 0, &idx);
    if (rc) {
        const char *m = vs->fa->get_last_error();
        err = err_set(e, CR_ECORRUPT, "FAISS cannot read it: %s", m ? m : "unknown error");
        goto out;
    }
    if (ftell(mf) != (long)plen) {
        err = err_set(e, CR_ECORRUPT, "FAISS read %ld of %llu bytes", ftell(mf),
                      (unsigned long long)plen);
        goto out;
    }
    err = vecstore__adopt(vs, idx, fdim, count, e);
    if (!err) idx = NULL;
out:
    if (idx) i64map_release(&vs->ids);
    vs->fa->Index_free(idx);
    fclose(mf);
    return err;
}

/* Reads path into vs (whose dim is the wanted one, or 0). CR_ENOENT for a
 * missing file, CR_ECORRUPT (message in e) for a file to discard, CR_EIO
 * when it cannot be read at all. */
static CrErr vecstore__load(VecStore *vs, ErrInfo *e)
{
    void *map = MAP_FAILED;
    size_t size = 0;
    uint32_t fdim = 0;
    uint64_t count = 0, plen = 0;
    CrErr err = CR_OK;

    int fd =
        open(vs->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
    if (fd < 0) {
        if (errno == ENOENT) return CR_ENOENT;
        return err_set(e, CR_EIO, "vectors: cannot open %s: %s", vs->path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        err = err_set(e, CR_EIO, "vectors: %s is not a readable regular file", vs->path);
        goto out;
    }
    size = (size_t)st.st_size;
    if (size <= TRAILER_BYTES) {
        err = err_set(e, CR_ECORRUPT, "truncated (%zu bytes)", size);
        goto out;
    }
    /* read, not mapped: a file cut short meanwhile is a short read, never
     * a SIGBUS */
    map = file_read_pages(fd, size);
    if (!map) {
        map = MAP_FAILED;
        err = err_set(e, CR_ECORRUPT, "cannot read all %zu bytes (cut short?)", size);
        goto out;
    }
    err = vecstore_check_trailer(vs->dim, map, size, &fdim, &count, &plen, e);
    if (!err) err = vecstore__read_payload(vs, map, plen, fdim, count, e);
    if (!err) {
        vs->base_hash = get_u64((const unsigned char *)map + size - TRAILER_BYTES + 32);
        vs->base_bytes = size;
        err = vecstore__log_replay(vs, e);
        if (err) {
            /* discarded whole: the file is rewritten from what the sync computes */
            vs->fa->Index_free(vs->index);
            vs->index = NULL;
            i64map_release(&vs->ids);
            vs->base_hash = 0;
        }
    }
out:
    if (map != MAP_FAILED) munmap(map, size);
    close(fd);
    return err;
}

/* ---------------------------------------------------------------- open / close */

CrErr idx_vecstore_open(const char *path, int dim, VecStore **out, ErrInfo *e)
{
    if (!path || !out || dim < 0 || dim > MAX_DIM)
        return err_set(e, CR_EINVAL, "vectors: bad open arguments");
    *out = NULL;
    const FaissApi *fa = idx_faiss_api(e);
    if (!fa) return CR_EVECTOR;
    VecStore *vs = xcalloc(1, sizeof *vs);
    vs->fa = fa;
    vs->path = xstrdup(path);
    vs->dim = dim;
    ErrInfo why = {0};
    CrErr err = vecstore__load(vs, &why);
    if (err == CR_ECORRUPT) {
        log_msg(LOG_WARN, "vectors: discarding %s: %s; starting empty", path, why.msg);
        vs->dirty = 1; /* the next save replaces the bad file */
    } else if (err != CR_OK && err != CR_ENOENT) {
        err_set(e, err, "%s", why.msg);
        idx_vecstore_close(vs);
        return err;
    }
    if (!vs->index && vs->dim) {
        err = vecstore__new_index(vs->fa, vs->dim, &vs->index, e);
        if (err) {
            idx_vecstore_close(vs);
            return err;
        }
    }
    *out = vs;
    return CR_OK;
}

void idx_vecstore_close(VecStore *vs)
{
    if (!vs) return;
    if (vs->index) vs->fa->Index_free(vs->index);
    i64map_release(&vs->ids);
    sb_release(&vs->pending);
    free(vs->path);
    free(vs);
}

int idx_vecstore_dim(const VecStore *vs)
{
    return vs->dim;
}

int64_t idx_vecstore_count(const VecStore *vs)
{
    return (int64_t)vs->ids.len;
}

/* ---------------------------------------------------------------- add / remove / ids */

/* A store opened with dim 0 and no file cannot learn its dimension here
 * (the signature carries none): the caller reopens it with the embedder's
 * dimension; until then adding is CR_EINVAL. Within one call a repeated id
 * keeps its last vector. On failure, ids being replaced may be gone. */
static CrErr vecstore__insert(VecStore *vs, const int64_t *ids, const float *vecs, size_t n,
                              ErrInfo *e)
{
    I64Map seen = {0};
    int64_t *uids = NULL;
    float *uvecs = NULL;
    CrErr err = CR_OK;
    if (!n) return CR_OK;
    if (!ids || !vecs) return err_set(e, CR_EINVAL, "vectors: add without ids or vectors");
    if (!vs->dim) return err_set(e, CR_EINVAL, "vectors: dimension unknown (open with a dim)");
    size_t d = (size_t)vs->dim;
    if (!vecstore__all_finite(vecs, n * d))
        return err_set(e, CR_EINVAL, "vectors: non-finite component");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0)
            return err_set(e, CR_EINVAL, "vectors: negative id %lld", (long long)ids[i]);

    /* last occurrence wins: walk backwards, keep first sightings */
    size_t m = 0;
    i64map_reserve(&seen, n);
    for (size_t i = n; i-- > 0;)
        if (id_add(&seen, ids[i])) m++;
    if (m != n) {
        uids = xmalloc(m * sizeof *uids);
        uvecs = xmalloc(m * d * sizeof *uvecs);
        size_t j = m;
        for (size_t i = n; i-- > 0;) {
            if (!i64map_get(&seen, ids[i], NULL)) continue;
            i64map_del(&seen, ids[i]);
            j--;
            uids[j] = ids[i];
            memcpy(uvecs + j * d, vecs + i * d, d * sizeof *uvecs);
        }
        ids = uids;
        vecs = uvecs;
    }
    err = vecstore__drop(vs, ids, m, e);
    if (err) goto out;
    int rc = vs->fa->Index_add_with_ids(vs->index, (idx_t)m, vecs, ids);
    if (rc) {
        err = vecstore_faiss_err(vs->fa, e, "add_with_ids", rc);
        goto out;
    }
    i64map_reserve(&vs->ids, vs->ids.len + m);
    for (size_t i = 0; i < m; i++)
        id_add(&vs->ids, ids[i]);
    vs->dirty = 1;
out:
    i64map_release(&seen);
    free(uids);
    free(uvecs);
    return err;
}

CrErr idx_vecstore_add(VecStore *vs, const int64_t *ids, const float *vecs, size_t n, ErrInfo *e)
{
    CrErr err = vecstore__insert(vs, ids, vecs, n, e);
    if (err)
        vs->pending_lost = 1; /* what changed is unknown: the next save rewrites the file */
    else if (n)
        vecstore__log_change(vs, LOG_OP_ADD, ids, vecs, n);
    return err;
}

CrErr idx_vecstore_remove(VecStore *vs, const int64_t *ids, size_t n, ErrInfo *e)
{
    if (!n || !vs->ids.len) return CR_OK;
    if (!ids) return err_set(e, CR_EINVAL, "vectors: remove without ids");
    CrErr err = vecstore__drop(vs, ids, n, e);
    if (err)
        vs->pending_lost = 1;
    else
        vecstore__log_change(vs, LOG_OP_REMOVE, ids, NULL, n);
    return err;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

CrErr idx_vecstore_ids(const VecStore *vs, int64_t **out, size_t *n_out, ErrInfo *e)
{
    if (!out || !n_out) return err_set(e, CR_EINVAL, "vectors: ids without outputs");
    *out = NULL;
    *n_out = 0;
    if (!vs->ids.len) return CR_OK;
    int64_t *v = xmalloc(vs->ids.len * sizeof *v);
    size_t n = 0;
    for (size_t pos = 0; i64map_next(&vs->ids, &pos, &v[n], NULL);)
        n++;
    qsort(v, n, sizeof *v, cmp_i64);
    *out = v;
    *n_out = n;
    return CR_OK;
}

/* ---------------------------------------------------------------- search */

/* The query's length cannot be checked (the signature carries none): it
 * must have idx_vecstore_dim floats. A store without a dimension is empty and
 * finds nothing. */
CrErr idx_vecstore_search(const VecStore *vs, const float *query, size_t k, int64_t *out_ids,
                          float *out_scores, size_t *n_out, ErrInfo *e)
{
    if (!n_out || !query || (k && (!out_ids || !out_scores)))
        return err_set(e, CR_EINVAL, "vectors: search without query or outputs");
    *n_out = 0;
    if (vs->dim && !vecstore__all_finite(query, (size_t)vs->dim))
        return err_set(e, CR_EINVAL, "vectors: non-finite query component");
    if (!k || !vs->ids.len) return CR_OK;
    /* Scanned here over the flat index's rows (vec_scan.c), not searched
     * through FAISS: 1.7.3 translates labels in IndexIDMap::search with an
     * OpenMP loop (a team started for one query, its workers left spinning
     * ~10 ms), and Debian's build compares rows in a scalar loop. */
    FaissIndexFlat *flat = vs->fa->IndexFlat_cast(vs->fa->IndexIDMap_sub_index(vs->index));
    float *xb = NULL;
    size_t n_xb = 0, n_map = 0, n = 0;
    idx_t *map = NULL;
    if (flat) vs->fa->IndexFlat_xb(flat, &xb, &n_xb);
    vs->fa->IndexIDMap_id_map(vs->index, &map, &n_map);
    size_t rows = n_xb / (size_t)vs->dim;
    if (!xb || rows != n_map) return err_set(e, CR_EVECTOR, "vectors: flat rows and ids disagree");
    size_t *at = xmalloc((k < rows ? k : rows) * sizeof *at + 1);
    size_t got = idx_vec_scan(xb, rows, vs->dim, query, k, at, out_scores);
    for (size_t i = 0; i < got; i++) {
        out_ids[n] = map[at[i]];
        out_scores[n] = out_scores[i];
        n++;
    }
    free(at);
    *n_out = n;
    return CR_OK;
}
