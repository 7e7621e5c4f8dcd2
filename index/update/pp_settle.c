/* pp_settle.c - which macro definitions the pp table keeps.
 *
 * A kernel defines two million macros and its conditions name some sixteen
 * thousand names; pp.c only ever asks for the definitions of a name that a
 * condition names, or that the value of a definition it asked for names.
 * So a definition (kind 1) is kept only when its name is in pp_named: the
 * names the conditions (kind 0) name, and, through the kept definitions'
 * values, the names those name, over the whole index. pp_defs keeps, per
 * file with conditions or definitions, a digest of them (sig) and the 32-bit
 * hashes of the names it defines: where to look when a name comes to be
 * named.
 *
 * A write keeps the definitions whose name is named already (a cold build,
 * and any write while the index is unsettled, keeps every one: pp_all);
 * when a write changed some file's digest, idx_pp_settle computes the names
 * again: a name that comes to be named has its definitions read again from
 * the files pp_defs says define it (chunked again, their content checked
 * against their files row), a name no longer named has its definitions
 * dropped. The rows are then those a fresh build of the same tree keeps.
 * meta 'pp_settled' is absent while the pp table may hold every definition
 * (a cold build that stopped half way): the next write keeps them all too,
 * and settles. */
#include "../pp/pp_int.h"
#include "update_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- settling */

/* The names named so far, each once, in the order found. */
typedef struct Named {
    StrMap set;
    char **queue;
    size_t n, cap, next;
} Named;

/* A cold build's definitions by the hash of their name (no index on names
 * yet): rowids, sorted by hash. */
typedef struct DefRef {
    uint32_t h;
    int64_t rowid;
} DefRef;

typedef struct Settle {
    IdxStore *st;
    ErrInfo *e;
    Named nm;
    DefRef *defs; /* with pp_all */
    size_t n_defs;
} Settle;

static void named_add(Named *nm, const char *name)
{
    if (!name[0] || strmap_get(&nm->set, name, NULL)) return;
    strmap_put(&nm->set, name, 1);
    ARRAY_GROW(nm->queue, nm->n + 1, nm->cap);
    nm->queue[nm->n++] = xstrdup(name);
}

static void named_add_expr(Named *nm, const char *expr)
{
    size_t n;
    PpName *v = idx_pp_names(expr, &n);
    for (size_t i = 0; i < n; i++)
        named_add(nm, v[i].name);
    idx_pp_names_free(v, n);
}

static int defref_cmp(const void *a, const void *b)
{
    const DefRef *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/* Runs sql (no parameters) and hands each row to fn. */
static CrErr settle_scan(Settle *z, const char *sql, CrErr (*fn)(Settle *, sqlite3_stmt *))
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(z->st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        err_set(z->e, CR_EDB, "macro names: %s", sqlite3_errmsg(z->st->db));
        return CR_EDB;
    }
    CrErr rc = CR_OK;
    int row = 1;
    while (!rc && (rc = idx_store_step(z->st, s, &row, z->e, "macro names")) == CR_OK && row)
        rc = fn(z, s);
    sqlite3_finalize(s);
    return rc;
}

static CrErr on_cond(Settle *z, sqlite3_stmt *s)
{
    const char *t = (const char *)sqlite3_column_text(s, 0);
    named_add_expr(&z->nm, t ? t : "");
    return CR_OK;
}

static CrErr on_def(Settle *z, sqlite3_stmt *s)
{
    const char *name = (const char *)sqlite3_column_text(s, 1);
    if (z->n_defs % 4096 == 0) z->defs = xrealloc(z->defs, (z->n_defs + 4096) * sizeof *z->defs);
    z->defs[z->n_defs++] = (DefRef){idx_pp_name_hash(name ? name : ""), sqlite3_column_int64(s, 0)};
    return CR_OK;
}

/* Adds the names the values of name's kept definitions name. */
static CrErr settle_expand(Settle *z, const char *name)
{
    IdxStore *st = z->st;
    CrErr rc = CR_OK;
    int row = 0;
    if (!z->defs) {
        sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_DEF_TEXTS, z->e);
        if (!s) return CR_EDB;
        sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
        while (!(rc = idx_store_step(st, s, &row, z->e, "macro names")) && row)
            named_add_expr(&z->nm, (const char *)sqlite3_column_text(s, 0));
        sqlite3_reset(s);
        return rc;
    }
    DefRef key = {idx_pp_name_hash(name), 0};
    size_t lo = 0, hi = z->n_defs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (defref_cmp(&z->defs[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < z->n_defs && z->defs[i].h == key.h && !rc; i++) {
        sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_TEXT_AT, z->e);
        if (!s) return CR_EDB;
        sqlite3_bind_int64(s, 1, z->defs[i].rowid);
        rc = idx_store_step(st, s, &row, z->e, "macro names");
        if (!rc && row && !strcmp((const char *)sqlite3_column_text(s, 0), name))
            named_add_expr(&z->nm, (const char *)sqlite3_column_text(s, 1));
        sqlite3_reset(s);
    }
    return rc;
}

/* Whether file_id has kept definitions of name already. */
static int file_has_def(IdxStore *st, int64_t file_id, const char *name, CrErr *rc, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_PP_DEF_IN_FILE, e);
    int row = 0;
    if (!s) {
        *rc = CR_EDB;
        return 0;
    }
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, file_id);
    *rc = idx_store_step(st, s, &row, e, "macro names");
    sqlite3_reset(s);
    return row;
}

/* Writes the definitions of the names in want that file_id defines and
 * has no rows of: chunked again, if its content is still its row's. */
static CrErr fetch_file(Settle *z, Chunker *ch, int64_t file_id, const StrMap *want)
{
    IdxStore *st = z->st;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_HASH, z->e);
    FileWork fw = {0};
    char hash[17] = "";
    int row = 0;
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    CrErr rc = idx_store_step(st, s, &row, z->e, "file lookup");
    if (!rc && row) {
        fw.path = xstrdup((const char *)sqlite3_column_text(s, 0));
        snprintf(hash, sizeof hash, "%s", (const char *)sqlite3_column_text(s, 1));
    }
    sqlite3_reset(s);
    if (rc || !fw.path) return rc;
    fw.pick = &st->lang_pick;
    idx_filework_prepare(&fw, st->root, st->max_file_bytes, ch, NULL, NULL);
    if (fw.skip || strcmp(fw.hash, hash)) {
        /* changed since its rows were written: the next update writes it */
        log_msg(LOG_DEBUG, "macro names: %s changed, its definitions left", fw.path);
        idx_filework_release(&fw);
        return CR_OK;
    }
    StrMap done; /* name -> 1 write its rows, 0 it has them */
    strmap_init(&done);
    for (size_t i = 0; i < fw.set.n_pp && !rc; i++) {
        const ChunkPp *p = &fw.set.pp[i];
        int64_t w = 0;
        if (p->kind != PP_DEFINE || !p->name || !strmap_get(want, p->name, NULL)) continue;
        if (!strmap_get(&done, p->name, &w)) {
            w = !file_has_def(st, file_id, p->name, &rc, z->e);
            strmap_put(&done, p->name, w);
        }
        if (!rc && w) rc = idx_pp_insert_row(st, file_id, p, z->e);
    }
    strmap_release(&done);
    idx_filework_release(&fw);
    return rc;
}

/* The definitions of names newly named, from the files that define them. */
static CrErr settle_fetch(Settle *z, char **names, size_t n)
{
    StrMap want;
    uint32_t *hs = xmalloc((n + 1) * sizeof *hs);
    int64_t *files = NULL;
    size_t nf = 0, cap = 0;
    strmap_init(&want);
    for (size_t i = 0; i < n; i++) {
        strmap_put(&want, names[i], 1);
        hs[i] = idx_pp_name_hash(names[i]);
    }
    qsort(hs, n, sizeof *hs, idx_pp_cmp_u32);
    sqlite3_stmt *s = NULL;
    CrErr rc = CR_OK;
    if (sqlite3_prepare_v2(z->st->db, "SELECT file_id, names FROM pp_defs", -1, &s, NULL) !=
        SQLITE_OK) {
        err_set(z->e, CR_EDB, "macro names: %s", sqlite3_errmsg(z->st->db));
        rc = CR_EDB;
    }
    int row = 1;
    while (!rc && (rc = idx_store_step(z->st, s, &row, z->e, "macro names")) == CR_OK && row) {
        const unsigned char *b = sqlite3_column_blob(s, 1);
        size_t len = (size_t)sqlite3_column_bytes(s, 1) / 4;
        for (size_t i = 0; i < len; i++) {
            uint32_t h = (uint32_t)b[i * 4] | (uint32_t)b[i * 4 + 1] << 8 |
                         (uint32_t)b[i * 4 + 2] << 16 | (uint32_t)b[i * 4 + 3] << 24;
            if (bsearch(&h, hs, n, sizeof *hs, idx_pp_cmp_u32)) {
                ARRAY_GROW(files, nf + 1, cap);
                files[nf++] = sqlite3_column_int64(s, 0);
                break;
            }
        }
    }
    sqlite3_finalize(s);
    Chunker *ch = NULL;
    for (size_t i = 0; i < nf && !rc; i++) {
        if (!ch) ch = idx_chunker_new();
        rc = fetch_file(z, ch, files[i], &want);
    }
    idx_chunker_free(ch);
    free(files);
    free(hs);
    strmap_release(&want);
    return rc;
}

/* pp_named := the names found; the definitions of names no longer named
 * dropped. */
static CrErr settle_store(Settle *z)
{
    IdxStore *st = z->st;
    StrMap old;
    char **gone = NULL;
    size_t n_gone = 0, cap = 0;
    strmap_init(&old);
    sqlite3_stmt *s = NULL;
    CrErr rc = CR_OK;
    if (sqlite3_prepare_v2(st->db, "SELECT name FROM pp_named", -1, &s, NULL) != SQLITE_OK) {
        err_set(z->e, CR_EDB, "macro names: %s", sqlite3_errmsg(st->db));
        rc = CR_EDB;
    }
    int row = 1;
    while (!rc && (rc = idx_store_step(st, s, &row, z->e, "macro names")) == CR_OK && row) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        strmap_put(&old, name, 1);
        if (!strmap_get(&z->nm.set, name, NULL)) {
            ARRAY_GROW(gone, n_gone + 1, cap);
            gone[n_gone++] = xstrdup(name);
        }
    }
    sqlite3_finalize(s);
    for (size_t i = 0; i < n_gone && !rc; i++) {
        StmtId ids[2] = {STMT_PP_NAMED_DEL, STMT_PP_DEF_DROP};
        for (int k = 0; k < (st->pp_all ? 1 : 2) && !rc; k++) {
            sqlite3_stmt *d = idx_store_stmt(st, ids[k], z->e);
            if (!d) rc = CR_EDB;
            if (d) sqlite3_bind_text(d, 1, gone[i], -1, SQLITE_STATIC);
            if (d) rc = idx_store_step_done(st, d, z->e, "macro names");
        }
    }
    for (size_t i = 0; i < z->nm.n && !rc; i++) {
        if (strmap_get(&old, z->nm.queue[i], NULL)) continue;
        sqlite3_stmt *p = idx_store_stmt(st, STMT_PP_NAMED_PUT, z->e);
        if (!p) rc = CR_EDB;
        if (p) sqlite3_bind_text(p, 1, z->nm.queue[i], -1, SQLITE_STATIC);
        if (p) rc = idx_store_step_done(st, p, z->e, "macro names");
    }
    /* every definition was kept: those of names not named go */
    if (!rc && st->pp_all)
        rc = idx_store_exec(st,
                            "DELETE FROM pp WHERE kind = 1 AND name NOT IN "
                            "(SELECT name FROM pp_named)",
                            z->e);
    for (size_t i = 0; i < n_gone; i++)
        free(gone[i]);
    free(gone);
    strmap_release(&old);
    return rc;
}

CrErr idx_pp_settle(IdxStore *st, ErrInfo *e)
{
    if (!st->pp_dirty) return CR_OK;
    Settle z = {.st = st, .e = e};
    strmap_init(&z.nm.set);
    StrMap old;
    strmap_init(&old);
    CrErr rc = settle_scan(&z, "SELECT text FROM pp WHERE kind = 0", on_cond);
    if (!rc && st->pp_all) {
        rc = settle_scan(&z, "SELECT rowid, name FROM pp WHERE kind = 1", on_def);
        if (z.n_defs) qsort(z.defs, z.n_defs, sizeof *z.defs, defref_cmp);
        if (!z.defs) z.defs = xmalloc(sizeof *z.defs); /* lookups through the array */
    }
    if (!rc && !st->pp_all) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(st->db, "SELECT name FROM pp_named", -1, &s, NULL) != SQLITE_OK)
            rc = CR_EDB;
        int row = 1;
        while (!rc && (rc = idx_store_step(st, s, &row, e, "macro names")) == CR_OK && row)
            strmap_put(&old, (const char *)sqlite3_column_text(s, 0), 1);
        sqlite3_finalize(s);
    }
    size_t seen = 0;
    while (!rc) {
        while (!rc && z.nm.next < z.nm.n)
            rc = settle_expand(&z, z.nm.queue[z.nm.next++]);
        if (rc || st->pp_all) break;
        /* names named now that were not: their definitions were never kept */
        char **fresh = NULL;
        size_t n = 0, cap = 0, upto = z.nm.n;
        for (size_t i = seen; i < upto; i++) {
            if (strmap_get(&old, z.nm.queue[i], NULL)) continue;
            ARRAY_GROW(fresh, n + 1, cap);
            fresh[n++] = z.nm.queue[i];
        }
        seen = upto;
        if (n) rc = settle_fetch(&z, fresh, n);
        for (size_t i = 0; i < n && !rc; i++)
            rc = settle_expand(&z, fresh[i]);
        free(fresh);
        if (!n) break;
    }
    if (!rc) rc = settle_store(&z);
    if (!rc) rc = idx_store_meta_put(st, "pp_settled", "1", e);
    if (!rc) st->pp_all = st->pp_dirty = 0;
    for (size_t i = 0; i < z.nm.n; i++)
        free(z.nm.queue[i]);
    free(z.nm.queue);
    strmap_release(&z.nm.set);
    strmap_release(&old);
    free(z.defs);
    return rc;
}
