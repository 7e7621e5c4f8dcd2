/*
 * dense_state.c - what the vectors were last brought in line with (meta
 * "vectors_synced", "vectors_count"), so that an update that changed
 * nothing the embedder covers neither reads the vectors nor loads the
 * model; and below it, what both it and the sync (dense.c) read: the
 * vectors' path and the embedder, the builtin model loaded on first use.
 */
#include "../store/store_int.h"
#include "vec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *idx_dense_vectors_path(const IdxStore *st)
{
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s/vectors.faiss", st->index_dir);
    return sb_detach(&p, NULL);
}

Embedder *idx_dense_embedder(IdxStore *st)
{
    IdxDense *d = &st->dense;
    if (!d->pending) return d->em;
    d->pending = 0;
    EmbedConfig ec = {"builtin", NULL, d->model_path, NULL, 0, 0, 0, IDX_EMBED_BATCH};
    /* A missing or damaged builtin model costs the dense leg, not the index. */
    ErrInfo me = {0};
    if (idx_models_embedder(st->models, &ec, &d->em, &me)) {
        log_msg(LOG_WARN, "no dense leg: %s", me.msg);
        snprintf(d->note, sizeof d->note, "none (builtin model unusable: %.160s)", me.msg);
        d->em = NULL;
    }
    return d->em;
}

/* The embedder's id, without loading the builtin model when it is not
 * loaded yet (its file's header says it); NULL when there is no dense leg
 * or it cannot be told. */
static const char *dense__id(IdxStore *st, char *buf, size_t cap)
{
    IdxDense *d = &st->dense;
    if (!d->pending) return d->em ? idx_embedder_id(d->em) : NULL;
    EmbedConfig ec = {"builtin", NULL, d->model_path, NULL, 0, 0, 0, 0};
    if (idx_embedder_builtin_peek_id(idx_embedder_builtin_path(&ec), buf, cap)) return buf;
    return idx_dense_embedder(st) ? idx_embedder_id(d->em) : NULL;
}

/* What the vectors were last brought in line with: the embedder, the
 * chunks (their highest id and count: ids are never reused, so any write
 * moves one of them) and the sizes of the vector files. The same again
 * means nothing to do, and a nothing-changed update need not read the
 * vectors, nor load the model. Empty when it cannot be told; *max_id (may
 * be NULL) gets the highest chunk id. Two statements: max() and count()
 * together make SQLite read every row. count() alone reads every page of
 * the chunks' smallest index (4,700 on the kernel): it is left out (-1)
 * where the sync leaves no vectors and no vector file (vectors 0: a chunk
 * that goes leaves nothing to drop, one that comes moves the highest id),
 * and where the state is only compared with last (vectors -1) when last
 * left it out or holds another highest id. */
static void sync_state(IdxStore *st, char *out, size_t cap, int64_t *max_id, const char *last,
                       int64_t vectors)
{
    static const char *const sql[2] = {"SELECT coalesce(max(id), 0) FROM chunks",
                                       "SELECT count(*) FROM chunks"};
    int64_t v[2] = {0, -1};
    char idb[160], last_id[160];
    long long last_max = -1, last_count = -1, file, journal;
    out[0] = '\0';
    const char *id = dense__id(st, idb, sizeof idb);
    if (!id) return;
    char *path = idx_dense_vectors_path(st);
    idx_vecstore_file_sizes(path, &file, &journal);
    free(path);
    int parsed = last && sscanf(last, "%159s %lld %lld", last_id, &last_max, &last_count) == 3;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && ((vectors == 0 && file == -1 && journal == -1) ||
                       (vectors < 0 && parsed && (last_count == -1 || last_max != v[0]))))
            break;
        sqlite3_stmt *s = NULL;
        int ok = sqlite3_prepare_v2(st->db, sql[i], -1, &s, NULL) == SQLITE_OK &&
                 sqlite3_step(s) == SQLITE_ROW;
        if (ok) v[i] = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (!ok) return;
    }
    if (max_id) *max_id = v[0];
    snprintf(out, cap, "%s %lld %lld %lld %lld", id, (long long)v[0], (long long)v[1], file,
             journal);
}

/* Records what the vectors were brought in line with (count of them). */
CrErr idx_dense_note_synced(IdxStore *st, int64_t count, int64_t *max_id, ErrInfo *e)
{
    char state[300], n[32];
    snprintf(n, sizeof n, "%lld", (long long)count);
    sync_state(st, state, sizeof state, max_id, NULL, count);
    if (!state[0]) return CR_OK;
    CrErr rc = idx_store_meta_put(st, "vectors_count", n, e);
    if (!rc) rc = idx_store_meta_put(st, "vectors_synced", state, e);
    return rc;
}

/* Whether the vectors are as the last sync left them; then *count is how
 * many it left. */
int idx_dense_synced(IdxStore *st, int64_t *count)
{
    char state[300], last[300], n[32];
    if (idx_store_meta_get(st, "vectors_synced", last, sizeof last, NULL) != CR_OK) return 0;
    sync_state(st, state, sizeof state, NULL, last, -1);
    if (!state[0] || strcmp(state, last) != 0 ||
        idx_store_meta_get(st, "vectors_count", n, sizeof n, NULL) != CR_OK)
        return 0;
    *count = strtoll(n, NULL, 10);
    return 1;
}

/* The highest chunk id the last sync saw when it left no vectors and no
 * vector file (nothing the embedder covers: a tree without Python): then
 * only the chunks written since can need one. -1 otherwise. */
int64_t idx_dense_synced_empty_upto(IdxStore *st)
{
    char last[300], n[32], id[160];
    long long max_id = -1, count = -1, file = 0, journal = 0;
    if (idx_store_meta_get(st, "vectors_synced", last, sizeof last, NULL) != CR_OK ||
        idx_store_meta_get(st, "vectors_count", n, sizeof n, NULL) != CR_OK ||
        strtoll(n, NULL, 10) != 0 ||
        sscanf(last, "%159s %lld %lld %lld %lld", id, &max_id, &count, &file, &journal) != 5 ||
        file != -1 || journal != -1)
        return -1;
    char *path = idx_dense_vectors_path(st);
    int none = access(path, F_OK) != 0;
    free(path);
    const char *now = dense__id(st, last, sizeof last);
    return none && now && !strcmp(now, id) ? max_id : -1;
}
