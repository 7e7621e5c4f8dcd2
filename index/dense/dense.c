#include "../store/store_int.h"
#include "vec_int.h"
#include "../chunk/lang/lang.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void idx_dense_unstage(IdxStore *st);

/* The dense leg: chunk vectors from the configured embedder, kept in FAISS
 * next to the database and reconciled with the chunks table after every
 * update (missing vectors computed, orphans dropped), so a crash between
 * the two stores never leaves them out of step for long. */

CrErr idx_dense_open(IdxStore *st, const IdxConfig *cfg, ErrInfo *e)
{
    EmbedConfig ec = {
        cfg->embed_provider, cfg->embed_url, cfg->embed_model, cfg->embed_api_key_env, 0, 0, 0,
        IDX_EMBED_BATCH};
    /* Unset is the trained model (docs/embedder.md): "none" turns the
     * dense leg off. */
    if (cfg->embed_provider && !strcmp(cfg->embed_provider, "none")) {
        snprintf(st->dense.note, sizeof st->dense.note, "none (embed.provider none)");
        return CR_OK;
    }
    if (cfg->embed_provider && cfg->embed_provider[0] && strcmp(cfg->embed_provider, "builtin"))
        return idx_models_embedder(st->models, &ec, &st->dense.em, e);
    /* the builtin model is read on first use (idx_dense_embedder) */
    st->dense.pending = 1;
    st->dense.model_path = cfg->embed_model ? xstrdup(cfg->embed_model) : NULL;
    return CR_OK;
}

static void disarm(IdxDense *d)
{
    free(d->removed);
    d->removed = NULL;
    d->n_removed = d->cap_removed = 0;
    d->delta = 0;
}

void idx_dense_close(IdxStore *st)
{
    idx_dense_unstage(st);
    idx_dense_forget(st);
    idx_embedder_free(st->dense.em);
    st->dense.em = NULL;
    st->dense.pending = 0;
    free(st->dense.model_path);
    st->dense.model_path = NULL;
}

static void forget_view(IdxDense *d)
{
    idx_vecview_close(d->view);
    d->view = NULL;
}

void idx_dense_forget(IdxStore *st)
{
    disarm(&st->dense);
    idx_vecstore_close(st->dense.vs);
    st->dense.vs = NULL;
    forget_view(&st->dense);
}

int idx_has_dense(const IdxStore *st)
{
    return st->dense.em != NULL || st->dense.pending;
}

/* Opens the vector file. Vectors of another embedder are never mixed with
 * this one's: an update (purge) deletes them and starts empty; a read
 * leaves them alone and sees no vectors (st->dense.vs stays NULL). A read
 * takes the file through a view (no FAISS) when it can (vec_view.c), else
 * as a store. Without FAISS the dense leg is dropped (st->dense.em NULL,
 * CR_OK). */
static CrErr open_vectors(IdxStore *st, int purge, ErrInfo *e)
{
    if (st->dense.vs) return CR_OK;
    if (st->dense.view && !purge) {
        char *path = idx_dense_vectors_path(st);
        int moved = idx_vecview_changed_on_disk(st->dense.view, path);
        free(path);
        if (!moved) return CR_OK;
    }
    forget_view(&st->dense);
    char have[160];
    CrErr rc = idx_store_meta_get(st, "embedder", have, sizeof have, e);
    if (rc == CR_EDB) return rc; /* unreadable is not "another embedder" */
    char *path = idx_dense_vectors_path(st);
    rc = CR_OK;
    /* a read of a store that has no vectors (no Python in the workspace)
     * opens nothing: FAISS is not even loaded */
    int exists = access(path, F_OK) == 0;
    if (!purge && !exists) goto out;
    if (!purge && exists && have[0] && idx_dense_embedder(st) &&
        !strcmp(have, idx_embedder_id(st->dense.em)) && idx_vecview_open(path, &st->dense.view))
        goto out;
    ErrInfo fe = {0};
    if (!idx_faiss_api(&fe)) {
        /* FAISS cannot be loaded (a partial install): like a missing model,
         * it costs the dense leg, not the index */
        log_msg(LOG_WARN, "no dense leg: %s", fe.msg);
        snprintf(st->dense.note, sizeof st->dense.note, "none (%.180s)", fe.msg);
        idx_dense_unstage(st);
        idx_embedder_free(st->dense.em);
        st->dense.em = NULL;
        st->dense.pending = 0;
        goto out;
    }
    if (!idx_dense_embedder(st)) goto out;
    if (exists && strcmp(have, idx_embedder_id(st->dense.em)) != 0) {
        if (!purge) goto out;
        if (unlink(path) != 0) {
            rc = err_set(e, CR_EIO, "cannot remove %s (vectors of another embedder): %s", path,
                         strerror(errno));
            goto out;
        }
    }
    rc = idx_vecstore_open(path, 0, &st->dense.vs, e);
out:
    free(path);
    return rc;
}

/* Whether the embedder embeds the file at path; for the builtin model not
 * loaded yet, what it would say (the language rows it knows) without
 * loading it. */
static int dense__covers(IdxStore *st, const char *path)
{
    if (st->dense.em) return idx_embedder_covers(st->dense.em, path);
    const IdxLang *l = idx_lang_for_path(path);
    return l && l->builtin_embed;
}

/* The chunks past id after that should have a vector, ascending: those of
 * files in a language the embedder knows (each file asked once). */
static CrErr chunk_ids(IdxStore *st, int64_t after, int64_t **out, size_t *n_out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    int64_t *v = NULL, covered;
    size_t n = 0, cap = 0;
    I64Map files; /* file id -> whether it is covered */
    if (sqlite3_prepare_v2(st->db,
                           "SELECT c.id, c.file_id, f.path FROM chunks c "
                           "JOIN files f ON f.id = c.file_id WHERE c.id > ?1 ORDER BY c.id",
                           -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "chunk ids");
    sqlite3_bind_int64(s, 1, after);
    i64map_init(&files);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t file = sqlite3_column_int64(s, 1);
        if (!i64map_get(&files, file, &covered)) {
            const char *path = (const char *)sqlite3_column_text(s, 2);
            covered = path && dense__covers(st, path);
            i64map_put(&files, file, covered);
        }
        if (!covered) continue;
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = sqlite3_column_int64(s, 0);
    }
    i64map_release(&files);
    /* a partial list would make the rest look orphaned */
    CrErr err = rc == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "chunk ids");
    sqlite3_finalize(s);
    if (err) {
        free(v);
        return err;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

void idx_dense_text(const char *path, const char *name, int cont, const char *signature,
                    const char *lines, size_t len, StrBuf *out)
{
    sb_addf(out, "%s %s\n", path, name);
    size_t head = out->len;
    idx_chunk_body(cont, signature, lines, len, out);
    if (out->len > head + IDX_EMBED_TEXT_CHARS) {
        size_t cut = head + IDX_EMBED_TEXT_CHARS;
        while (cut > head && ((unsigned char)out->buf[cut] & 0xC0) == 0x80)
            cut--;
        sb_truncate(out, cut);
    }
}

/* A chunk's embedding text read back from the index and the file. */
static char *embed_text(IdxStore *st, int64_t id)
{
    IdxChunk c;
    StrBuf sb, lines;
    if (idx_chunk_get(st, id, &c, NULL)) return xstrdup("");
    sb_init(&sb);
    sb_init(&lines);
    if (idx_read_lines(st, c.path, c.start_line, c.end_line, &lines, NULL, NULL) != CR_OK)
        sb_reset(&lines);
    idx_dense_text(c.path, c.symbol[0] ? c.symbol : c.module, c.cont, c.signature,
                   lines.buf ? lines.buf : "", lines.len, &sb);
    sb_release(&lines);
    idx_chunk_release(&c);
    return sb_detach(&sb, NULL);
}

Embedder *idx_dense_parse_embedder_for(IdxStore *st, const FileWork *work, size_t n)
{
    /* none of them embedded (a C tree): the builtin model stays unread */
    size_t i = 0;
    while (i < n && !dense__covers(st, work[i].path))
        i++;
    return i < n ? idx_dense_parse_embedder(st) : NULL;
}

Embedder *idx_dense_parse_embedder(IdxStore *st)
{
    Embedder *em = idx_dense_embedder(st);
    return em && idx_embedder_parallel(em) ? em : NULL;
}

void idx_dense_stage(IdxStore *st, int64_t id, const float *v, int dim)
{
    IdxDense *d = &st->dense;
    if (d->n_stage && (id <= d->stage_ids[d->n_stage - 1] || dim != d->stage_dim)) {
        /* out of order (never expected): the sync embeds them instead */
        idx_dense_unstage(st);
        return;
    }
    if (d->n_stage == d->cap_stage) {
        d->cap_stage = d->cap_stage ? d->cap_stage * 2 : 256;
        d->stage_ids = xrealloc(d->stage_ids, d->cap_stage * sizeof *d->stage_ids);
        d->stage_vecs = xrealloc(d->stage_vecs, d->cap_stage * (size_t)dim * sizeof *d->stage_vecs);
    }
    d->stage_dim = dim;
    d->stage_ids[d->n_stage] = id;
    memcpy(d->stage_vecs + d->n_stage * (size_t)dim, v, (size_t)dim * sizeof *v);
    d->n_stage++;
}

/* Forgets the staged vectors (a rolled-back write may reuse their ids). */
static void idx_dense_unstage(IdxStore *st)
{
    IdxDense *d = &st->dense;
    free(d->stage_ids);
    free(d->stage_vecs);
    d->stage_ids = NULL;
    d->stage_vecs = NULL;
    d->n_stage = d->cap_stage = 0;
    d->stage_dim = 0;
}

/* Adds m vectors of dimension dim; an empty store learns its dimension
 * from the first. */
static CrErr add_vectors(IdxStore *st, const int64_t *ids, const float *vecs, size_t m, int dim,
                         ErrInfo *e)
{
    if (!idx_vecstore_dim(st->dense.vs)) {
        char *path = idx_dense_vectors_path(st);
        idx_vecstore_close(st->dense.vs);
        st->dense.vs = NULL;
        CrErr rc = idx_vecstore_open(path, dim, &st->dense.vs, e);
        free(path);
        if (rc) return rc;
    }
    if (dim != idx_vecstore_dim(st->dense.vs))
        return err_set(e, CR_EHTTP, "embedding dimension %d differs from the index's %d", dim,
                       idx_vecstore_dim(st->dense.vs));
    return idx_vecstore_add(st->dense.vs, ids, vecs, m, e);
}

/* Adds the missing vectors: the staged ones as they are, the others
 * embedded in batches. */
static CrErr add_missing(IdxStore *st, const int64_t *missing, size_t n_missing, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxDense *d = &st->dense;
    int64_t *ids = xcalloc(n_missing + 1, sizeof *ids);
    size_t n_staged = 0, n_rest = 0, sd = (size_t)d->stage_dim;
    /* One merge of the two ascending lists: the staged vectors of missing
     * chunks move to the front of the stage (in place: at a cold start
     * nothing moves), the other missing chunks are listed for embedding. */
    for (size_t i = 0, j = 0; i < n_missing; i++) {
        while (j < d->n_stage && d->stage_ids[j] < missing[i])
            j++;
        if (j < d->n_stage && d->stage_ids[j] == missing[i]) {
            if (j != n_staged) {
                d->stage_ids[n_staged] = d->stage_ids[j];
                memcpy(d->stage_vecs + n_staged * sd, d->stage_vecs + j * sd,
                       sd * sizeof *d->stage_vecs);
            }
            n_staged++;
            j++;
        } else {
            ids[n_rest++] = missing[i];
        }
    }
    if (n_staged) rc = add_vectors(st, d->stage_ids, d->stage_vecs, n_staged, d->stage_dim, e);
    for (size_t at = 0; at < n_rest && !rc; at += IDX_EMBED_BATCH) {
        size_t m = n_rest - at < IDX_EMBED_BATCH ? n_rest - at : IDX_EMBED_BATCH;
        char *texts[IDX_EMBED_BATCH];
        float *bv = NULL;
        int dim = 0;
        for (size_t k = 0; k < m; k++)
            texts[k] = embed_text(st, ids[at + k]);
        rc = idx_embedder_embed(st->dense.em, (const char *const *)texts, m, &bv, &dim, e);
        for (size_t k = 0; k < m; k++)
            free(texts[k]);
        if (!rc) rc = add_vectors(st, &ids[at], bv, m, dim, e);
        free(bv);
    }
    free(ids);
    return rc;
}

CrErr idx_dense_note_removed(IdxStore *st, int64_t file_id, ErrInfo *e)
{
    IdxDense *d = &st->dense;
    if (!d->delta) return CR_OK;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_IDS_OF_FILE, e);
    if (!s) {
        disarm(d);
        return CR_EDB;
    }
    sqlite3_bind_int64(s, 1, file_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(d->removed, d->n_removed + 1, d->cap_removed);
        d->removed[d->n_removed++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    if (rc == SQLITE_DONE) return CR_OK;
    /* a read that failed inside the write's transaction may have ended it
     * (SQLite rolls back on I/O errors): the write fails with it, or what
     * follows would commit statement by statement */
    disarm(d);
    return idx_store_err(st, e, "chunk ids");
}

void idx_dense_write_end(IdxStore *st, int ok)
{
    idx_dense_unstage(st);
    if (!ok) disarm(&st->dense);
}

/* The full reconcile: every chunk id against every stored id (one merge
 * of the two ascending lists); missing vectors are added, orphans dropped. */
static CrErr reconcile(IdxStore *st, const int64_t *want, size_t n_want, ErrInfo *e)
{
    int64_t *have = NULL, *missing = NULL, *orphans = NULL;
    size_t n_have = 0, n_missing = 0, n_orphans = 0;
    CrErr rc = idx_vecstore_ids(st->dense.vs, &have, &n_have, e);
    if (rc) return rc;
    missing = xcalloc(n_want + 1, sizeof *missing);
    orphans = xcalloc(n_have + 1, sizeof *orphans);
    for (size_t i = 0, j = 0; i < n_want || j < n_have;) {
        if (j >= n_have || (i < n_want && want[i] < have[j]))
            missing[n_missing++] = want[i++];
        else if (i >= n_want || have[j] < want[i])
            orphans[n_orphans++] = have[j++];
        else
            i++, j++;
    }
    if (n_orphans) rc = idx_vecstore_remove(st->dense.vs, orphans, n_orphans, e);
    if (!rc && n_missing) rc = add_missing(st, missing, n_missing, e);
    log_msg(LOG_DEBUG, "vectors: %zu dropped, %zu added (of %zu chunks, %zu stored)", n_orphans,
            n_missing, n_want, n_have);
    free(have);
    free(missing);
    free(orphans);
    return rc;
}

CrErr idx_dense_sync(IdxStore *st, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxDense *d = &st->dense;
    int64_t *want = NULL, *removed = NULL, after = 0;
    size_t n_want = 0, n_removed = 0;
    if (!idx_has_dense(st)) return CR_OK;
    double t0 = now_ms();
    /* A sync reads and writes the file as a store. What is journaled is
     * the change from what this store holds, so it must hold what the files
     * say: another process may have written them. */
    forget_view(d);
    if (d->vs && idx_vecstore_changed_on_disk(d->vs)) idx_dense_forget(st);
    int64_t count, version = idx_store_data_version(st);
    /* only this store wrote since it last synced: its delta is complete */
    int delta = d->delta && d->vs && version >= 0 && version == d->synced_version;
    /* the sync takes the delta (or drops it); only a success arms it again */
    if (delta) {
        removed = d->removed;
        n_removed = d->n_removed;
        after = d->synced_max;
        d->removed = NULL;
    }
    disarm(d);
    if (!d->vs && idx_dense_synced(st, &count)) goto out;
    /* no vectors last time: only chunks written since can need one */
    int64_t empty_upto = delta ? -1 : idx_dense_synced_empty_upto(st);
    if (empty_upto > after) after = empty_upto;
    if ((rc = chunk_ids(st, after, &want, &n_want, e))) goto out;
    if (!delta && !n_want && !d->vs) {
        /* nothing to embed (no Python): unless vectors are there to drop,
         * nothing to open; said once, so that the next update need not look */
        char *path = idx_dense_vectors_path(st);
        int none = access(path, F_OK) != 0;
        free(path);
        if (none) {
            rc = idx_dense_note_synced(st, 0, NULL, e);
            goto out;
        }
    }
    if (!idx_dense_embedder(st)) goto out;
    if ((rc = open_vectors(st, 1, e)) || !d->em) goto out;
    if (delta) {
        if (n_removed) rc = idx_vecstore_remove(d->vs, removed, n_removed, e);
        if (!rc && n_want) rc = add_missing(st, want, n_want, e);
        log_msg(LOG_DEBUG, "vectors: %zu dropped, %zu added (this store's writes)", n_removed,
                n_want);
    } else {
        rc = reconcile(st, want, n_want, e);
    }
    /* What was added is kept even when a later batch failed. */
    CrErr save = idx_vecstore_save(d->vs, rc ? NULL : e);
    if (!rc) rc = save;
    if (!rc && idx_vecstore_count(d->vs) > 0)
        rc = idx_store_meta_put(st, "embedder", idx_embedder_id(d->em), e);
    if (!rc) {
        int64_t max_id = -1;
        rc = idx_dense_note_synced(st, idx_vecstore_count(d->vs), &max_id, e);
        if (!rc && max_id >= 0) {
            d->delta = 1;
            d->synced_max = max_id;
            d->synced_version = version;
        }
    }
out:
    log_msg(LOG_DEBUG, "vectors: %s sync %.1f ms", delta ? "delta" : "full", now_ms() - t0);
    idx_dense_unstage(st);
    free(want);
    free(removed);
    return rc;
}

void idx_dense_preload(IdxStore *st)
{
    if (idx_has_dense(st)) open_vectors(st, 0, NULL);
}

int64_t idx_dense_count(IdxStore *st)
{
    int64_t count;
    /* as the last sync counted them, when nothing moved since: the file
     * need not be read for the figure */
    if (!idx_has_dense(st)) return 0;
    if (!st->dense.vs && idx_dense_synced(st, &count)) return count;
    if (!idx_dense_embedder(st)) return 0;
    if (open_vectors(st, 0, NULL)) return 0;
    if (st->dense.vs) return idx_vecstore_count(st->dense.vs);
    return st->dense.view ? idx_vecview_count(st->dense.view) : 0;
}

CrErr idx_search_dense(IdxStore *st, const char *query, size_t limit, IdxHit **out, size_t *n_out,
                       ErrInfo *e)
{
    CrErr rc;
    float *q = NULL;
    int dim = 0;
    *out = NULL;
    *n_out = 0;
    if (!idx_has_dense(st) || !limit) return CR_OK;
    /* opens nothing, and loads no model, when there are no vectors */
    if ((rc = open_vectors(st, 0, e))) return rc;
    const VecStore *vs = st->dense.vs;
    const VecView *view = vs ? NULL : st->dense.view;
    int64_t count = vs ? idx_vecstore_count(vs) : view ? idx_vecview_count(view) : 0;
    int vdim = vs ? idx_vecstore_dim(vs) : view ? idx_vecview_dim(view) : 0;
    if (!st->dense.em || count == 0) return CR_OK;
    if ((rc = idx_embedder_embed_query(st->dense.em, query, &q, &dim, e))) return rc;
    if (dim != vdim) {
        free(q);
        return err_set(e, CR_EHTTP, "query embedding has dimension %d, the index %d", dim, vdim);
    }
    int64_t *ids = xcalloc(limit, sizeof *ids);
    float *scores = xcalloc(limit, sizeof *scores);
    size_t n = 0;
    rc = vs ? idx_vecstore_search(vs, q, limit, ids, scores, &n, e)
            : idx_vecview_search(view, q, limit, ids, scores, &n, e);
    if (!rc && n) {
        IdxHit *v = xcalloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            v[i].chunk_id = ids[i];
            v[i].score = scores[i];
        }
        *out = v;
        *n_out = n;
    }
    free(q);
    free(ids);
    free(scores);
    return rc;
}
