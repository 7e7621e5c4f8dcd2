/* db.c - the store's SQLite layer, under everything else in index/: the
 * prepared statements (IDX_STMT_MAP), stepping them with errors kept as
 * errors, the meta table. Knows nothing of postings, vectors or files. */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FD_PREFIX "/proc/self/fd/"

struct IdxVfs {
    sqlite3_vfs vfs; /* first: SQLite hands &vfs back to the methods */
    sqlite3_vfs *base;
    char name[48];
};

static int vfs__full_pathname(sqlite3_vfs *vfs, const char *name, int n_out, char *out)
{
    IdxVfs *v = (IdxVfs *)vfs;
    if (strncmp(name, FD_PREFIX, strlen(FD_PREFIX)) != 0)
        return v->base->xFullPathname(v->base, name, n_out, out);
    if ((int)strlen(name) >= n_out) return SQLITE_CANTOPEN;
    memcpy(out, name, strlen(name) + 1);
    return SQLITE_OK;
}

CrErr idx_vfs_new(IdxVfs **out, ErrInfo *e)
{
    *out = NULL;
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (!base) return err_set(e, CR_EDB, "SQLite has no default VFS");
    IdxVfs *v = xcalloc(1, sizeof *v);
    /* the default's methods and its pAppData (the unix VFS keeps its
     * locking style there), under a name of this store's own */
    v->vfs = *base;
    v->vfs.pNext = NULL;
    v->base = base;
    snprintf(v->name, sizeof v->name, "coderag-%p", (void *)v);
    v->vfs.zName = v->name;
    v->vfs.xFullPathname = vfs__full_pathname;
    if (sqlite3_vfs_register(&v->vfs, 0) != SQLITE_OK) {
        free(v);
        return err_set(e, CR_EDB, "cannot register a SQLite VFS");
    }
    *out = v;
    return CR_OK;
}

const char *idx_vfs_name(const IdxVfs *v)
{
    return v->name;
}

void idx_vfs_free(IdxVfs *v)
{
    if (!v) return;
    sqlite3_vfs_unregister(&v->vfs);
    free(v);
}

static const char *const stmt_sql[] = {
#define IDX_X(name, sql) sql,
    IDX_STMT_MAP(IDX_X)
#undef IDX_X
};

/* ---------------------------------------------------------------- writers that meet */

/* SQLite's busy handler for the store's connection: another connection
 * (process or thread) holds the write lock. Waits in growing steps (up to
 * 50 ms) for as long as st->wait_ms allows (0: however long), and says
 * once, after half a second, that it waits. */
static int db__busy_wait(void *ud, int n)
{
    IdxStore *st = ud;
    double now = now_ms();
    if (n == 0) {
        st->busy_t0 = now;
        st->busy_told = 0;
    }
    double waited = now - st->busy_t0;
    if (st->wait_ms > 0 && waited >= st->wait_ms) return 0;
    if (!st->busy_told && waited >= 500) {
        st->busy_told = 1;
        log_msg(LOG_WARN,
                "waiting for another writer of the index at %s (a `coderag index` or a language "
                "server) to finish",
                st->index_real ? st->index_real : "");
    }
    long step_ms = n < 10 ? 1 + n * 5 : 50;
    struct timespec ts = {0, step_ms * 1000 * 1000};
    nanosleep(&ts, NULL);
    return 1;
}

void idx_store_busy_init(IdxStore *st)
{
    sqlite3_busy_handler(st->db, db__busy_wait, st);
}

void idx_set_write_wait(IdxStore *st, int wait_ms)
{
    if (st) st->wait_ms = wait_ms > 0 ? wait_ms : 0;
}

int idx_busy(const IdxStore *st)
{
    return st && st->busy_failed;
}

static int db__code_busy(int code)
{
    return (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED;
}

/* A lock held by another writer, said as that (never "database is
 * locked"): the caller's work was not done and can be done again. */
static CrErr db__busy_err(IdxStore *st, ErrInfo *e, const char *what)
{
    st->busy_failed = 1;
    return err_set(e, CR_EDB,
                   "%s: another writer (a `coderag index` or a language server) holds the index "
                   "at %s; try again when it is done",
                   what, st->index_real ? st->index_real : "");
}

/* A full disk, said plainly, with where the index lives. */
static CrErr store__full(IdxStore *st, ErrInfo *e, const char *what)
{
    return err_set(e, CR_EIO,
                   "%s: the disk is full: no space left on the disk holding the index %s", what,
                   st->index_real ? st->index_real : "");
}

CrErr idx_store_err(IdxStore *st, ErrInfo *e, const char *what)
{
    if (st->db && idx_store_code_damaged(sqlite3_errcode(st->db))) idx_store_note_damaged(st);
    if (st->db && (sqlite3_errcode(st->db) & 0xff) == SQLITE_FULL) return store__full(st, e, what);
    if (st->db && db__code_busy(sqlite3_errcode(st->db))) return db__busy_err(st, e, what);
    st->busy_failed = 0;
    return err_set(e, CR_EDB, "%s: %s", what, st->db ? sqlite3_errmsg(st->db) : "no database");
}

sqlite3_stmt *idx_store_stmt(IdxStore *st, StmtId id, ErrInfo *e)
{
    sqlite3_stmt *s = st->stmts[id];
    if (!s) {
        if (sqlite3_prepare_v3(st->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) !=
            SQLITE_OK) {
            idx_store_err(st, e, "prepare");
            return NULL;
        }
        st->stmts[id] = s;
        return s;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

int64_t idx_store_data_version(IdxStore *st)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_DATA_VERSION, NULL);
    int64_t v = -1;
    if (s && sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    if (s) sqlite3_reset(s);
    return v;
}

int idx_read_begin(IdxStore *st)
{
    if (!st || !st->db || !sqlite3_get_autocommit(st->db)) return 0;
    if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return 0;
    st->read_seq++;
    st->in_read = 1;
    return 1;
}

void idx_read_end(IdxStore *st, int began)
{
    if (began && st) st->in_read = 0;
    if (began && st && st->db && !sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
}

CrErr idx_store_exec(IdxStore *st, const char *sql, ErrInfo *e)
{
    char *msg = NULL;
    int code = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
    if (code != SQLITE_OK) {
        if (idx_store_code_damaged(code)) idx_store_note_damaged(st);
        if ((code & 0xff) == SQLITE_FULL) {
            sqlite3_free(msg);
            return store__full(st, e, "writing the index");
        }
        if (db__code_busy(code)) {
            sqlite3_free(msg);
            return db__busy_err(st, e, "writing the index");
        }
        st->busy_failed = 0;
        CrErr rc = err_set(e, CR_EDB, "%s", msg ? msg : sqlite3_errmsg(st->db));
        sqlite3_free(msg);
        return rc;
    }
    return CR_OK;
}

CrErr idx_store_step(IdxStore *st, sqlite3_stmt *s, int *row, ErrInfo *e, const char *what)
{
    int rc = sqlite3_step(s);
    *row = rc == SQLITE_ROW;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return idx_store_err(st, e, what);
    return CR_OK;
}

CrErr idx_store_step_done(IdxStore *st, sqlite3_stmt *s, ErrInfo *e, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return idx_store_err(st, e, what);
    return CR_OK;
}

CrErr idx_store_first_placed(IdxStore *st, sqlite3_stmt *s, int64_t *id, ErrInfo *e)
{
    StrBuf path;
    sb_init(&path);
    int64_t line = 0, win = 0;
    int row = 0;
    CrErr rc;
    *id = 0;
    while (!(rc = idx_store_step(st, s, &row, e, "lookup")) && row) {
        const char *p = (const char *)sqlite3_column_text(s, 1);
        int64_t l = sqlite3_column_int64(s, 2), w = sqlite3_column_int64(s, 3);
        int c = *id ? strcmp(p ? p : "", path.buf ? path.buf : "") : -1;
        if (c < 0 || (c == 0 && (l < line || (l == line && w < win)))) {
            *id = sqlite3_column_int64(s, 0);
            sb_reset(&path);
            sb_adds(&path, p ? p : "");
            line = l;
            win = w;
        }
    }
    sqlite3_reset(s);
    sb_release(&path);
    if (rc) *id = 0;
    return rc;
}

void idx_store_scan_options(const IdxStore *st, ScanOptions *out)
{
    out->root = st->root;
    out->index_dir = st->index_real;
    out->exclude = (const char *const *)st->exclude;
    out->n_exclude = st->n_exclude;
    out->max_file_bytes = st->max_file_bytes;
}

char *idx_store_col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return xstrdup(t ? (const char *)t : "");
}

CrErr idx_store_meta_get(IdxStore *st, const char *key, char *out, size_t cap, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_META_GET, e);
    int row = 0;
    out[0] = '\0';
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    CrErr rc = idx_store_step(st, s, &row, e, "meta");
    if (!rc && row && sqlite3_column_text(s, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return rc ? rc : row ? CR_OK : CR_ENOENT;
}

CrErr idx_store_meta_put(IdxStore *st, const char *key, const char *value, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_META_PUT, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
    return idx_store_step_done(st, s, e, "meta");
}

CrErr idx_store_touch_update_time(IdxStore *st, ErrInfo *e)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)time(NULL));
    return idx_store_meta_put(st, "last_update", v, e);
}
