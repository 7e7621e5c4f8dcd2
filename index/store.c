#include "store_int.h"
#include "lang/lang.h"
#include "vec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const stmt_sql[] = {
#define IDX_X(name, sql) sql,
    IDX_STMT_MAP(IDX_X)
#undef IDX_X
};

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
    /* gen: the generation (meta 'gen', bumped per write) of the file's
     * rows, so that caches built at one generation know what changed. */
    "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, module TEXT NOT NULL,"
    " is_pkg INTEGER NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, lines INTEGER NOT NULL, status TEXT NOT NULL,"
    " gen INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX files_module ON files(module);"
    "CREATE INDEX files_gen ON files(gen);"
    "CREATE TABLE chunks(id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL,"
    " start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, win INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, signature TEXT NOT NULL,"
    " docstring TEXT NOT NULL, parent_id INTEGER NOT NULL, hash TEXT NOT NULL);"
    "CREATE INDEX chunks_file ON chunks(file_id, start_line);"
    "CREATE TABLE symbols(qualname TEXT NOT NULL, name TEXT NOT NULL, chunk_id INTEGER NOT NULL,"
    " file_id INTEGER NOT NULL);"
    "CREATE INDEX symbols_qual ON symbols(qualname);"
    "CREATE INDEX symbols_name ON symbols(name);"
    "CREATE INDEX symbols_file ON symbols(file_id);"
    "CREATE TABLE imports(file_id INTEGER NOT NULL, alias TEXT NOT NULL, target TEXT NOT NULL);"
    "CREATE INDEX imports_file ON imports(file_id, alias);"
    "CREATE INDEX imports_target ON imports(target);"
    "CREATE TABLE refs(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, chunk_id INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, name TEXT NOT NULL, last TEXT NOT NULL, resolved INTEGER NOT NULL);"
    "CREATE INDEX refs_file ON refs(file_id);"
    "CREATE INDEX refs_last ON refs(last);"
    "CREATE INDEX refs_dirty ON refs(id) WHERE resolved = 0;"
    "CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " ref_id INTEGER NOT NULL);"
    "CREATE INDEX edges_src ON edges(src);"
    "CREATE INDEX edges_dst ON edges(dst);"
    "CREATE INDEX edges_ref ON edges(ref_id);"
    /* The search text of each chunk (idx_tok_code output), by chunk id: what the
     * BM25F postings are built from (FTS5's porter tokenizer, no FTS table). */
    "CREATE TABLE search_text(id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT NOT NULL,"
    " doc TEXT NOT NULL, body TEXT NOT NULL);";

CrErr idx_store_err(IdxStore *st, ErrInfo *e, const char *what)
{
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

CrErr idx_store_exec(IdxStore *st, const char *sql, ErrInfo *e)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        CrErr rc = err_set(e, CR_EDB, "%s", msg ? msg : sqlite3_errmsg(st->db));
        sqlite3_free(msg);
        return rc;
    }
    return CR_OK;
}

CrErr idx_store_step_done(IdxStore *st, sqlite3_stmt *s, ErrInfo *e, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return idx_store_err(st, e, what);
    return CR_OK;
}

void idx_store_scan_options(const IdxStore *st, ScanOptions *out)
{
    out->root = st->root;
    out->index_dir = st->index_dir;
    out->exclude = (const char *const *)st->exclude;
    out->n_exclude = st->n_exclude;
    out->max_file_bytes = st->max_file_bytes;
}

char *idx_store_col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return xstrdup(t ? (const char *)t : "");
}

void idx_store_meta_get(IdxStore *st, const char *key, char *out, size_t cap)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_META_GET, NULL);
    out[0] = '\0';
    if (!s) return;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
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

/* Whether the open database carries our schema at our version. A fresh,
 * empty file counts as "needs schema" (returns 0 with *empty = 1). */
static int store__schema_ok(IdxStore *st, int *empty)
{
    sqlite3_stmt *s = NULL;
    int ok = 0;
    *empty = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM sqlite_master", -1, &s, NULL) != SQLITE_OK)
        return 0;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 0) *empty = 1;
    sqlite3_finalize(s);
    if (*empty) return 0;
    if (sqlite3_prepare_v2(st->db, "SELECT value FROM meta WHERE key = 'schema'", -1, &s, NULL) !=
        SQLITE_OK)
        return 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(s, 0);
        char want[32];
        snprintf(want, sizeof want, "coderag-%d", IDX_SCHEMA_VERSION);
        ok = v && !strcmp(v, want);
    }
    sqlite3_finalize(s);
    return ok;
}

static CrErr store__create_schema(IdxStore *st, ErrInfo *e)
{
    char v[32];
    CrErr rc = idx_store_exec(st, "BEGIN IMMEDIATE", e);
    if (rc) return rc;
    /* Another process may have created it while we waited for the lock. */
    int empty = 0;
    if (store__schema_ok(st, &empty)) return idx_store_exec(st, "COMMIT", e);
    rc = idx_store_exec(st, schema_sql, e);
    snprintf(v, sizeof v, "coderag-%d", IDX_SCHEMA_VERSION);
    if (!rc) rc = idx_store_meta_put(st, "schema", v, e);
    if (!rc) rc = idx_store_meta_put(st, "gen", "0", e);
    /* Files beside the database (postings.bin) name the database they
     * belong to: a rebuilt database never adopts an old one's. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed[3] = {(uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec, (uint64_t)getpid()};
    hash64_hex(hash64(seed, sizeof seed), v);
    if (!rc) rc = idx_store_meta_put(st, "db_id", v, e);
    if (rc) {
        idx_store_exec(st, "ROLLBACK", NULL);
        return rc;
    }
    return idx_store_exec(st, "COMMIT", e);
}

/* Whether the last failure was another process holding a lock. */
static int store__busy(IdxStore *st)
{
    int code = st->db ? sqlite3_errcode(st->db) : SQLITE_OK;
    return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

static CrErr store__open_db(IdxStore *st, ErrInfo *e)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(st->db_path, &st->db, flags, NULL) != SQLITE_OK)
        return idx_store_err(st, e, st->db_path);
    sqlite3_busy_timeout(st->db, 5000);
    /* Switching a new database to WAL can fail with SQLITE_BUSY without
     * waiting while another process sets it up: retry for a while. */
    for (int tries = 0;; tries++) {
        CrErr rc = idx_store_exec(st,
                               "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                               "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16000;"
                               /* Checkpoints happen after full updates and on close, not
                                * in the middle of a save's single-file update. */
                               "PRAGMA wal_autocheckpoint = 20000;",
                               e);
        if (!rc || tries == 100 || !store__busy(st)) return rc;
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void store__close_db(IdxStore *st)
{
    for (int i = 0; i < STMT__COUNT; i++) {
        sqlite3_finalize(st->stmts[i]);
        st->stmts[i] = NULL;
    }
    sqlite3_close(st->db);
    st->db = NULL;
}

static void remove_db_files(const char *db_path)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s", db_path);
    char *slash = strrchr(p, '/');
    if (slash) {
        snprintf(slash + 1, sizeof p - (size_t)(slash + 1 - p), "postings.bin");
        unlink(p);
    }
    unlink(db_path);
    snprintf(p, sizeof p, "%s-wal", db_path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db_path);
    unlink(p);
}

/* Creates the index dir with a .gitignore of its own ("*"). */
static CrErr make_index_dir(const char *dir, ErrInfo *e)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return err_set(e, CR_EIO, "cannot create index directory %s: %s", dir, strerror(errno));
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/.gitignore", dir);
    if (access(p, F_OK) != 0) {
        FILE *f = fopen(p, "w");
        if (f) {
            fputs("*\n", f);
            fclose(f);
        }
    }
    return CR_OK;
}

CrErr idx_open(const IdxConfig *cfg, unsigned flags, IdxStore **out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxStore *st = NULL;
    char real[PATH_MAX];
    *out = NULL;
    if (!cfg || !cfg->root) return err_set(e, CR_EINVAL, "no workspace root given");
    struct stat sb;
    if (!realpath(cfg->root, real) || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(e, CR_ENOENT, "workspace root %s is not a readable directory", cfg->root);

    st = xcalloc(1, sizeof *st);
    st->root = xstrdup(real);
    int existing = (flags & (IDX_OPEN_READONLY | IDX_OPEN_EXISTING)) != 0;
    if (cfg->index_dir) {
        if (!existing) make_index_dir(cfg->index_dir, NULL);
        char dreal[PATH_MAX];
        if (!realpath(cfg->index_dir, dreal)) {
            rc = existing && errno == ENOENT
                     ? err_set(e, CR_ENOINDEX, "not indexed yet: run `coderag index` (no index at %s)",
                               cfg->index_dir)
                     : err_set(e, CR_EIO, "index directory %s: %s", cfg->index_dir, strerror(errno));
            goto out;
        }
        st->index_dir = xstrdup(dreal);
    } else {
        StrBuf d;
        sb_init(&d);
        sb_addf(&d, "%s/.coderag", st->root);
        st->index_dir = sb_detach(&d, NULL);
    }
    if (!existing && (rc = make_index_dir(st->index_dir, e))) goto out;
    {
        StrBuf p;
        sb_init(&p);
        sb_addf(&p, "%s/index.db", st->index_dir);
        st->db_path = sb_detach(&p, NULL);
    }
    st->exclude = xcalloc(cfg->n_exclude + 1, sizeof(char *));
    for (size_t i = 0; i < cfg->n_exclude; i++) st->exclude[i] = xstrdup(cfg->exclude[i]);
    st->n_exclude = cfg->n_exclude;
    st->max_file_bytes = cfg->max_file_bytes ? cfg->max_file_bytes : (size_t)1 << 20;
    st->readonly = (flags & IDX_OPEN_READONLY) != 0;
    st->threads = cfg->threads > 0 ? cfg->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (st->threads < 1) st->threads = 1;
    if (st->threads > 16) st->threads = 16;

    if ((rc = idx_dense_open(st, cfg, e))) goto out;
    if (existing && access(st->db_path, F_OK) != 0) {
        rc = err_set(e, CR_ENOINDEX, "not indexed yet: run `coderag index` (no index at %s)",
                     st->index_dir);
        goto out;
    }
    rc = store__open_db(st, e);
    if (rc && !(flags & IDX_OPEN_READONLY) && !store__busy(st)) {
        /* Not a database at all (or a damaged header): start over. A lock
         * held by another process is no reason to delete its database. */
        log_msg(LOG_WARN, "%s: %s; rebuilding the index", st->db_path, e ? e->msg : "unreadable");
        store__close_db(st);
        remove_db_files(st->db_path);
        rc = store__open_db(st, e);
    }
    if (rc) goto out;
    int empty = 0;
    if (!store__schema_ok(st, &empty)) {
        if (empty && existing) {
            rc = err_set(e, CR_ENOINDEX, "not indexed yet: run `coderag index` (the index at %s "
                                         "is empty)", st->index_dir);
            goto out;
        }
        if (flags & IDX_OPEN_READONLY) {
            rc = err_set(e, CR_ESCHEMA, "index at %s has another schema version; re-run "
                                        "`coderag index`", st->db_path);
            goto out;
        }
        if (!empty) {
            /* An older or foreign database: rebuild, never misread. */
            log_msg(LOG_WARN, "%s: other schema; rebuilding the index", st->db_path);
            store__close_db(st);
            remove_db_files(st->db_path);
            if ((rc = store__open_db(st, e))) goto out;
        }
        if ((rc = store__create_schema(st, e))) goto out;
    }
out:
    if (rc) {
        idx_close(st);
        return rc;
    }
    *out = st;
    return CR_OK;
}

void idx_store_postings_invalidate(IdxStore *st)
{
    idx_postings_free(st->post);
    st->post = NULL;
}

void idx_close(IdxStore *st)
{
    if (!st) return;
    idx_store_postings_invalidate(st);
    idx_store_file_cache_release(&st->files);
    idx_dense_close(st);
    if (st->db) {
        sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        store__close_db(st);
    }
    for (size_t i = 0; i < st->n_exclude; i++) free(st->exclude[i]);
    free(st->exclude);
    free(st->root);
    free(st->index_dir);
    free(st->db_path);
    free(st);
}

const char *idx_root(const IdxStore *st)
{
    return st->root;
}

static int64_t count_rows(IdxStore *st, const char *sql)
{
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

static int64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

int idx_file_is_test(IdxStore *st, int64_t file_id)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_BY_ID, NULL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, file_id);
    int v = sqlite3_step(s) == SQLITE_ROW && idx_lang_is_test_path((const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return v;
}

static int status__lang_cmp(const void *pa, const void *pb)
{
    const IdxLangCount *a = pa, *b = pb;
    if (a->files != b->files) return a->files > b->files ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Indexed files per language, by the table's detection on their paths. */
static CrErr status__langs(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT path FROM files WHERE status = 'ok'", -1, &s, NULL) !=
        SQLITE_OK)
        return idx_store_err(st, e, "status");
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const IdxLang *l = idx_lang_for_path((const char *)sqlite3_column_text(s, 0));
        const char *name = l ? l->name : "script";
        size_t i = 0;
        while (i < out->n_langs && strcmp(out->langs[i].name, name) != 0) i++;
        if (i == out->n_langs) {
            if (i == IDX_STATUS_LANGS) continue;
            snprintf(out->langs[i].name, sizeof out->langs[i].name, "%s", name);
            out->n_langs++;
        }
        out->langs[i].files++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return idx_store_err(st, e, "status");
    qsort(out->langs, out->n_langs, sizeof out->langs[0], status__lang_cmp);
    return CR_OK;
}

CrErr idx_status(IdxStore *st, IdxStatus *out, ErrInfo *e)
{
    memset(out, 0, sizeof *out);
    out->files = count_rows(st, "SELECT count(*) FROM files WHERE status = 'ok'");
    out->skipped = count_rows(st, "SELECT count(*) FROM files WHERE status != 'ok'");
    out->chunks = count_rows(st, "SELECT count(*) FROM chunks");
    out->edges = count_rows(st, "SELECT count(*) FROM edges");
    out->symbols = count_rows(st, "SELECT count(*) FROM symbols");
    if (out->files < 0 || out->chunks < 0 || out->edges < 0)
        return idx_store_err(st, e, "status");
    CrErr lrc = status__langs(st, out, e);
    if (lrc) return lrc;
    out->vectors = idx_dense_count(st);
    char t[32];
    idx_store_meta_get(st, "last_update", t, sizeof t);
    out->last_update = atoll(t);
    char p[PATH_MAX + 8];
    out->db_bytes = file_size(st->db_path);
    snprintf(p, sizeof p, "%s-wal", st->db_path);
    out->db_bytes += file_size(p);
    snprintf(out->embedder, sizeof out->embedder, "%.95s",
             st->em ? idx_embedder_id(st->em)
                    : st->dense_note[0] ? st->dense_note : "none (builtin: no dense leg)");
    return CR_OK;
}

CrErr idx_skipped(IdxStore *st, IdxSkipped **out, size_t *n_out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    IdxSkipped *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT path, status FROM files WHERE status != 'ok' ORDER BY path", -1,
                           &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "skipped");
    while (sqlite3_step(s) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        v[n].path = xstrdup((const char *)sqlite3_column_text(s, 0));
        v[n].reason = xstrdup((const char *)sqlite3_column_text(s, 1));
        n++;
    }
    sqlite3_finalize(s);
    *out = v;
    *n_out = n;
    return CR_OK;
}

void idx_skipped_free(IdxSkipped *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        free(v[i].reason);
    }
    free(v);
}

/* The postings search uses (snapshot and what changed since) hold exactly
 * what a build from the search text would. */
static CrErr verify_postings(IdxStore *st, ErrInfo *e)
{
    Postings *fresh = NULL, *used = NULL;
    char why[256];
    CrErr rc = idx_postings_load(st, 0, &fresh, e);
    if (!rc) rc = idx_postings_load(st, 1, &used, e);
    /* A damaged snapshot list is caught where it is read, and searches
     * then rebuild from the text: a cache to replace, not an inconsistency. */
    if (!rc && !idx_postings_same(used, fresh, why, sizeof why) && !idx_postings_damaged(used))
        rc = err_set(e, CR_ECORRUPT, "search postings differ from the search text: %s", why);
    idx_postings_free(fresh);
    idx_postings_free(used);
    return rc;
}

CrErr idx_verify(IdxStore *st, ErrInfo *e)
{
    static const struct {
        const char *what;
        const char *sql; /* counts offending rows */
    } checks[] = {
        {"chunks without a file",
         "SELECT count(*) FROM chunks c LEFT JOIN files f ON f.id = c.file_id "
         "WHERE f.id IS NULL OR f.status != 'ok'"},
        {"search rows without a chunk",
         "SELECT count(*) FROM search_text s LEFT JOIN chunks c ON c.id = s.id WHERE c.id IS NULL"},
        {"chunks without a search row",
         "SELECT (SELECT count(*) FROM chunks) - (SELECT count(*) FROM search_text)"},
        {"edges with a missing end",
         "SELECT count(*) FROM edges e LEFT JOIN chunks a ON a.id = e.src "
         "LEFT JOIN chunks b ON b.id = e.dst WHERE a.id IS NULL OR b.id IS NULL"},
        {"edges of a missing ref",
         "SELECT count(*) FROM edges e LEFT JOIN refs r ON r.id = e.ref_id "
         "WHERE e.ref_id != 0 AND r.id IS NULL"},
        {"symbols without a chunk",
         "SELECT count(*) FROM symbols s LEFT JOIN chunks c ON c.id = s.chunk_id WHERE c.id IS NULL"},
        {"refs without a chunk",
         "SELECT count(*) FROM refs r LEFT JOIN chunks c ON c.id = r.chunk_id WHERE c.id IS NULL"},
        {"imports without a file",
         "SELECT count(*) FROM imports i LEFT JOIN files f ON f.id = i.file_id WHERE f.id IS NULL"},
        {"overlapping chunks",
         "SELECT count(*) FROM chunks a JOIN chunks b ON a.file_id = b.file_id AND a.id < b.id "
         "AND a.start_line <= b.end_line AND b.start_line <= a.end_line"},
    };
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, "PRAGMA quick_check", -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "quick_check");
    CrErr rc = CR_OK;
    if (sqlite3_step(s) != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(s, 0), "ok") != 0)
        rc = err_set(e, CR_ECORRUPT, "quick_check: %s",
                     sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "failed");
    sqlite3_finalize(s);
    if (rc) return rc;
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        int64_t n = count_rows(st, checks[i].sql);
        if (n != 0)
            return err_set(e, CR_ECORRUPT, "%lld %s", (long long)n, checks[i].what);
    }
    return verify_postings(st, e);
}
