/* pp_rows.c - a file's preprocessor facts written (kept definitions only,
 * and the file's digest and defined names in pp_defs), and the state of
 * the kept names across an update; update/pp_settle.c says which definitions are
 * kept and settles them. */
#include "pp_int.h"
#include "../store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t pp__mix(uint64_t h)
{
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    return h;
}

int idx_pp_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t idx_pp_name_hash(const char *name)
{
    return (uint32_t)hash64(name, strlen(name));
}

/* Whether name is in pp_named. */
static int pp__named(IdxStore *st, const char *name, CrErr *rc, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_NAMED_HAS, e);
    int row = 0;
    if (!s) {
        *rc = CR_EDB;
        return 0;
    }
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    *rc = idx_store_step(st, s, &row, e, "macro names");
    sqlite3_reset(s);
    return row;
}

CrErr idx_pp_insert_row(IdxStore *st, int64_t file_id, const ChunkPp *p, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_INSERT, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_int(s, 2, (int)p->kind);
    sqlite3_bind_int64(s, 3, p->start_line);
    sqlite3_bind_int64(s, 4, p->end_line);
    sqlite3_bind_text(s, 5, p->name ? p->name : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 6, p->text ? p->text : "", -1, SQLITE_STATIC);
    return idx_store_step_done(st, s, e, "preprocessor fact");
}

CrErr idx_pp_file_sig(IdxStore *st, int64_t file_id, uint64_t *sig, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_DEFS_SIG, e);
    int row = 0;
    *sig = 0;
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    CrErr rc = idx_store_step(st, s, &row, e, "preprocessor digest");
    if (!rc && row) *sig = (uint64_t)sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return rc;
}

CrErr idx_pp_insert(IdxStore *st, const ChunkSet *set, int64_t file_id, uint64_t *sig_out,
                    ErrInfo *e)
{
    CrErr rc = CR_OK;
    uint64_t sig = 0;
    uint32_t *hs = NULL;
    size_t nh = 0, cap = 0;
    int facts = 0;
    for (size_t i = 0; i < set->n_pp && !rc; i++) {
        const ChunkPp *p = &set->pp[i];
        const char *name = p->name ? p->name : "", *text = p->text ? p->text : "";
        if (p->kind == PP_BRANCH || p->kind == PP_DEFINE) {
            /* the digest: the facts that decide the names (not their lines) */
            facts = 1;
            sig += pp__mix(hash64(name, strlen(name)) * 0x9e3779b97f4a7c15ULL +
                           hash64(text, strlen(text)) + (uint64_t)p->kind);
        }
        if (p->kind == PP_DEFINE) {
            ARRAY_GROW(hs, nh + 1, cap);
            hs[nh++] = idx_pp_name_hash(name);
            int keep = st->pp_all || pp__named(st, name, &rc, e);
            if (rc || !keep) continue;
        }
        rc = idx_pp_insert_row(st, file_id, p, e);
    }
    if (!rc && facts) {
        size_t k = 0;
        if (nh) qsort(hs, nh, sizeof *hs, idx_pp_cmp_u32);
        for (size_t i = 0; i < nh; i++)
            if (!k || hs[i] != hs[k - 1]) hs[k++] = hs[i];
        unsigned char *blob = xmalloc(k * 4 + 1);
        for (size_t i = 0; i < k; i++)
            for (int b = 0; b < 4; b++)
                blob[i * 4 + (size_t)b] = (unsigned char)(hs[i] >> (8 * b));
        if (!sig) sig = 1;
        sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_DEFS_PUT, e);
        if (!s) rc = CR_EDB;
        if (s) {
            sqlite3_bind_int64(s, 1, file_id);
            sqlite3_bind_int64(s, 2, (int64_t)sig);
            sqlite3_bind_blob(s, 3, blob, (int)(k * 4), SQLITE_STATIC);
            rc = idx_store_step_done(st, s, e, "preprocessor digest");
        }
        free(blob);
    }
    free(hs);
    *sig_out = rc || !facts ? 0 : sig;
    return rc;
}

/* meta 'pp_settled': "1" settled, "0" a digest moved since (the kept
 * definitions are those of the names named before), absent: every
 * definition is kept (a cold build, until its settle). */
CrErr idx_pp_begin(IdxStore *st, int cold, ErrInfo *e)
{
    char v[8];
    st->pp_all = st->pp_dirty = 0;
    if (cold) {
        st->pp_all = st->pp_dirty = 1;
        return idx_store_exec(st, "DELETE FROM meta WHERE key = 'pp_settled'", e);
    }
    CrErr rc = idx_store_meta_get(st, "pp_settled", v, sizeof v, e);
    if (rc == CR_ENOENT) {
        st->pp_all = st->pp_dirty = 1;
        return CR_OK;
    }
    if (!rc) st->pp_dirty = strcmp(v, "1") != 0;
    return rc;
}

CrErr idx_pp_moved(IdxStore *st, ErrInfo *e)
{
    if (st->pp_dirty) return CR_OK;
    st->pp_dirty = 1;
    return st->pp_all ? CR_OK : idx_store_meta_put(st, "pp_settled", "0", e);
}
