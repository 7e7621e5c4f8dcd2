#include "store_int.h"
#include "../chunk/lang/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
    /* gen: the generation (meta 'gen', bumped per write) of the file's
     * rows, so that caches built at one generation know what changed.
     * ref_lo..ref_hi: the ids of the file's refs, written in one run
     * (update/write.c), in place of an index of refs by file_id (87 MB on
     * the kernel): readers bound refs.id by them (IDX_REFS_OF_FILE);
     * sym_lo..sym_hi the same of its symbols (IDX_SYMBOLS_OF_FILE). */
    "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, module TEXT NOT NULL,"
    " is_pkg INTEGER NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, lines INTEGER NOT NULL, status TEXT NOT NULL,"
    " gen INTEGER NOT NULL DEFAULT 0, ref_lo INTEGER NOT NULL DEFAULT 1,"
    " ref_hi INTEGER NOT NULL DEFAULT 0, sym_lo INTEGER NOT NULL DEFAULT 1,"
    " sym_hi INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX files_module ON files(module);"
    "CREATE INDEX files_gen ON files(gen);"
    /* A name stored once: a chunk's name is its symbol (C functions: all
     * but a few), a reference's name its last part (a plain call), unless
     * own_name/qual (NULL otherwise) says otherwise. The generated columns
     * take no space on disk; every reader sees name as before. */
    "CREATE TABLE chunks(id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL,"
    " start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, win INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, symbol TEXT NOT NULL, own_name TEXT, signature TEXT NOT NULL,"
    " docstring TEXT NOT NULL, parent_id INTEGER NOT NULL, hash_bits INTEGER NOT NULL,"
    " cont INTEGER NOT NULL, name TEXT GENERATED ALWAYS AS (coalesce(own_name, symbol)) VIRTUAL,"
    /* the content hash as 8 bytes, read as its 16 hex digits */
    " hash TEXT GENERATED ALWAYS AS (printf('%016x', hash_bits)) VIRTUAL);"
    /* A definition's name is the last part of its qualified name, unless
     * own_name says otherwise. */
    "CREATE TABLE symbols(id INTEGER PRIMARY KEY, qualname TEXT NOT NULL, own_name TEXT, chunk_id "
    "INTEGER NOT NULL,"
    " file_id INTEGER NOT NULL, name TEXT GENERATED ALWAYS AS (coalesce(own_name,"
    " substr(qualname, length(rtrim(qualname, replace(qualname, '.', ''))) + 1))) VIRTUAL);"
    "CREATE TABLE imports(file_id INTEGER NOT NULL, alias TEXT NOT NULL, target TEXT NOT NULL);"
    /* a ref's file: its chunk's (the files row's ref_lo..ref_hi hold it) */
    "CREATE TABLE refs(id INTEGER PRIMARY KEY, chunk_id INTEGER NOT NULL,"
    " kind INTEGER NOT NULL, qual TEXT, last TEXT NOT NULL, resolved INTEGER NOT NULL, argc "
    "INTEGER,"
    " name TEXT GENERATED ALWAYS AS (coalesce(qual, last)) VIRTUAL);"
    "CREATE TABLE edges(src INTEGER NOT NULL, dst INTEGER NOT NULL, kind INTEGER NOT NULL,"
    " ref_id INTEGER NOT NULL);"
    /* Preprocessor facts of a file (rows with preprocessor captures, pp.c):
     * kind 0 a conditional branch's lines (text: its whole condition), 1 a
     * macro defined at start_line (text: its value), 2 a call site of name
     * in a definition that calls it under a branch of its body. */
    "CREATE TABLE pp(file_id INTEGER NOT NULL, kind INTEGER NOT NULL, start_line INTEGER NOT NULL,"
    " end_line INTEGER NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL);"
    /* A macro's definitions (kind 1) are kept only when a condition could
     * ask for them: its name is in pp_named, every name a condition names
     * and, through them, every name the value of a kept definition names
     * (update/pp_settle.c). pp_defs holds, per file with preprocessor facts, a
     * digest of those facts (sig) and the 32-bit hashes of the names it
     * defines (names: sorted, 4 bytes each): where to look when a name
     * comes to be named. */
    "CREATE TABLE pp_named(name TEXT PRIMARY KEY) WITHOUT ROWID;"
    "CREATE TABLE pp_defs(file_id INTEGER PRIMARY KEY, sig INTEGER NOT NULL, names BLOB NOT NULL);"
    /* Per file, the folders whose code calls into it (graph/fanin.c). */
    "CREATE TABLE fanin(file_id INTEGER PRIMARY KEY, dirs INTEGER NOT NULL);"
    /* Per (file, calling folder), the caller edges an update wrote less
     * those it deleted: a file with a pair not 0 is counted again at its
     * end (graph/fanin.c). */
    "CREATE TABLE fanin_dirty(file_id INTEGER NOT NULL, dir TEXT NOT NULL, n INTEGER NOT NULL,"
    " PRIMARY KEY(file_id, dir)) WITHOUT ROWID;";
/* No table holds the search text: the BM25F postings (postings.bin) are
 * rebuilt, when needed, from the chunks' rows and the source files
 * (postings_rebuild.c). */

/* The secondary indexes of the graph's tables: made with the schema, and
 * dropped by a cold build while it loads the tables (appending rows to a
 * table costs little; inserting them into ever larger b-trees keyed by
 * name costs a page read per row) and made again, each by one sort, before
 * the graph is resolved. An index missing after a cold build that stopped
 * half way is made by the next write (idx_store_indexes_ensure).
 * resolve: an index that resolution writes row by row and no lookup reads
 * (1: edges_*, 2: refs_dirty): a resolution that starts with no edge drops
 * them while it resolves the calls and makes them after, by one sort each
 * (graph.c); a cold build makes refs_dirty first, on the empty table, where
 * it holds only the bases and stores (its calls are written resolved), and
 * keeps it through its pass. */
static const struct {
    const char *name, *on;
    int resolve;
} index_sql[] = {
    {"chunks_file", "chunks(file_id, start_line)", 0},
    {"symbols_qual", "symbols(qualname)", 0},
    {"symbols_name", "symbols(name)", 0},
    {"imports_file", "imports(file_id, alias)", 0},
    {"imports_target", "imports(target)", 0},
    {"refs_last", "refs(last)", 0},
    {"refs_store", "refs(qual) WHERE " IDX_REF_STORE_WHERE, 0},
    {"refs_dirty", "refs(id) WHERE resolved = 0", 2},
    /* by (src, ref_id): a reference's edges start at its chunk (graph.c),
     * so no index of its own by ref_id */
    {"edges_src", "edges(src, ref_id)", 1},
    {"edges_dst", "edges(dst)", 1},
    {"pp_file", "pp(file_id, kind, start_line)", 0},
    {"pp_name", "pp(name) WHERE kind = 1", 0},
};

/* which: -1 every index, 0 all but refs_dirty, 1 resolution's (resolve),
 * 2 refs_dirty alone, 3 the edges' alone. */
static CrErr store__indexes(IdxStore *st, int make, int which, ErrInfo *e)
{
    StrBuf sql;
    sb_init(&sql);
    for (size_t i = 0; i < sizeof index_sql / sizeof index_sql[0]; i++) {
        if (which == 0 && index_sql[i].resolve == 2) continue;
        if (which == 1 && !index_sql[i].resolve) continue;
        if (which >= 2 && index_sql[i].resolve != (which == 2 ? 2 : 1)) continue;
        if (make)
            sb_addf(&sql, "CREATE INDEX IF NOT EXISTS %s ON %s;", index_sql[i].name,
                    index_sql[i].on);
        else
            sb_addf(&sql, "DROP INDEX IF EXISTS %s;", index_sql[i].name);
    }
    CrErr rc = idx_store_exec(st, sql.buf, e);
    sb_release(&sql);
    return rc;
}

/* Makes the indexes of which (store__indexes) that are missing. */
static CrErr store__indexes_ensure(IdxStore *st, int which, ErrInfo *e)
{
    /* SQLite's sorter spills past cache_size (idx_store_sorts_spill_to_disk
     * says where); with threads it sorts on both cores. */
    CrErr rc = idx_store_exec(st, "PRAGMA threads = 2;", e);
    if (!rc) rc = store__indexes(st, 1, which, e);
    idx_store_exec(st, "PRAGMA threads = 0;", NULL);
    return rc;
}

CrErr idx_store_sorts_spill_to_disk(IdxStore *st, int on, ErrInfo *e)
{
    /* SQLite's sorter keeps a sort of up to cache_size (16 MB) in memory
     * and spills the rest into temporary files. Under temp_store = MEMORY
     * those files are memory too: the kernel's refs(last) took 457 MB and
     * 10.7 s of CPU so, 69 MB and 5.6 s with the files on disk (sqlite3
     * shell, the same pragmas). A sort that fits in the cache writes no file either
     * way. Outside a transaction only (SQLite closes the connection's
     * temporary database, and its statements are prepared again). */
    return idx_store_exec(st, on ? "PRAGMA temp_store = FILE;" : "PRAGMA temp_store = MEMORY;", e);
}

CrErr idx_store_indexes_drop(IdxStore *st, ErrInfo *e)
{
    return store__indexes(st, 0, -1, e);
}

CrErr idx_store_indexes_ensure(IdxStore *st, ErrInfo *e)
{
    return store__indexes_ensure(st, -1, e);
}

CrErr idx_store_indexes_ensure_lookup(IdxStore *st, ErrInfo *e)
{
    return store__indexes_ensure(st, 0, e);
}

CrErr idx_store_resolve_indexes(IdxStore *st, int make, int edges_only, ErrInfo *e)
{
    int which = edges_only ? 3 : 1;
    return make ? store__indexes_ensure(st, which, e) : store__indexes(st, 0, which, e);
}

CrErr idx_store_dirty_index(IdxStore *st, ErrInfo *e)
{
    return store__indexes(st, 1, 2, e);
}

/* Whether a failed read says something about the file's content (not a
 * database, damaged, no such table: rebuild it) rather than about this
 * moment (locked, out of memory, I/O: report it, keep the file). */
static int store__content_error(int code)
{
    switch (code & 0xff) {
    case SQLITE_ERROR:
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_SCHEMA:
    case SQLITE_MISMATCH:
    case SQLITE_FORMAT:
        return 1;
    }
    return 0;
}

/* The version an index is made at: the schema's, and the language
 * queries' digest, since other queries make other chunks and edges. */
static void store__version(char out[48])
{
    char h[17];
    hash64_hex(idx_lang_digest(), h);
    snprintf(out, 48, "coderag-%d-%.8s", IDX_SCHEMA_VERSION, h);
}

/* Whether every table of schema_sql is there as made (an index whose
 * schema string is right but a table or column is gone: *whole = 0, and
 * *what names the first one missing or changed). The reference is the
 * schema made in memory; tables made later (refs_dirty) and the indexes,
 * which cold builds drop and remake, are not compared. */
static CrErr store__schema_whole(IdxStore *st, int *whole, char *what, size_t what_size, ErrInfo *e)
{
    sqlite3 *ref = NULL;
    sqlite3_stmt *q = NULL, *have = NULL;
    CrErr rc = CR_OK;
    *whole = 1;
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(ref, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ref, "SELECT name, sql FROM sqlite_master WHERE type = 'table'", -1, &q,
                           NULL) != SQLITE_OK) {
        rc = err_set(e, CR_EDB, "cannot make the reference schema");
        goto out;
    }
    if (sqlite3_prepare_v2(st->db,
                           "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", -1,
                           &have, NULL) != SQLITE_OK) {
        rc = idx_store_err(st, e, "reading the schema");
        goto out;
    }
    while (*whole && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        const char *sql = (const char *)sqlite3_column_text(q, 1);
        if (!name || !strncmp(name, "sqlite_", 7)) continue;
        sqlite3_reset(have);
        sqlite3_bind_text(have, 1, name, -1, SQLITE_TRANSIENT);
        int r = sqlite3_step(have);
        if (r != SQLITE_ROW && r != SQLITE_DONE) {
            rc = idx_store_err(st, e, "reading the schema");
            goto out;
        }
        const char *got = r == SQLITE_ROW ? (const char *)sqlite3_column_text(have, 0) : NULL;
        if (!got || !sql || strcmp(got, sql) != 0) {
            *whole = 0;
            snprintf(what, what_size, "table %s is %s", name, got ? "not as made" : "missing");
        }
    }
out:
    sqlite3_finalize(have);
    sqlite3_finalize(q);
    sqlite3_close(ref);
    return rc;
}

/* Whether the open database carries our schema at our version (*ok). A
 * fresh, empty file counts as "needs schema" (*ok = 0, *empty = 1). A
 * file that cannot be read now is CR_EDB, never "another schema": that
 * would rebuild an index over a passing lock. A file whose content cannot
 * be read (damaged, not a database) sets *damaged (when not NULL): not
 * ours either, but told apart from an index of another version. */
static CrErr store__schema_check(IdxStore *st, int *ok, int *empty, int *damaged, ErrInfo *e)
{
    static const char *const sql[2] = {"SELECT count(*) FROM sqlite_master",
                                       "SELECT value FROM meta WHERE key = 'schema'"};
    char want[48];
    store__version(want);
    *ok = *empty = 0;
    if (damaged) *damaged = 0;
    for (int q = 0; q < 2; q++) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(st->db, sql[q], -1, &s, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_step(s);
        if (rc == SQLITE_ROW && q == 0) *empty = sqlite3_column_int(s, 0) == 0;
        if (rc == SQLITE_ROW && q == 1) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            *ok = v && !strcmp(v, want);
        }
        sqlite3_finalize(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            if (!store__content_error(rc)) return idx_store_err(st, e, "reading the schema");
            /* not ours: no such table is another program's database */
            if (damaged) *damaged = (rc & 0xff) != SQLITE_ERROR;
            return CR_OK;
        }
        if (*empty) return CR_OK;
    }
    return CR_OK;
}

static CrErr store__create_schema(IdxStore *st, ErrInfo *e)
{
    char v[48];
    CrErr rc = idx_store_exec(st, "BEGIN IMMEDIATE", e);
    if (rc) return rc;
    /* Another process may have created it while we waited for the lock. */
    int ok = 0, empty = 0;
    if ((rc = store__schema_check(st, &ok, &empty, NULL, e))) {
        idx_store_exec(st, "ROLLBACK", NULL);
        return rc;
    }
    if (ok) return idx_store_exec(st, "COMMIT", e);
    rc = idx_store_exec(st, schema_sql, e);
    if (!rc) rc = store__indexes(st, 1, -1, e);
    store__version(v);
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
    if (sqlite3_open_v2(st->db_path, &st->db, flags, idx_vfs_name(st->vfs)) != SQLITE_OK) {
        char what[PATH_MAX + 16];
        snprintf(what, sizeof what, "%s/index.db", st->index_real);
        return idx_store_err(st, e, what);
    }
    idx_store_busy_init(st);
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

/* Deletes the database (and what belongs to it) and opens a new, empty one. */
static CrErr store__start_over(IdxStore *st, ErrInfo *e)
{
    store__close_db(st);
    remove_db_files(st->db_path);
    idx_store_integrity_forget(st);
    st->damaged = 0;
    return store__open_db(st, e);
}

CrErr idx_store_refuse_damaged(IdxStore *st, const char *why, ErrInfo *e)
{
    return err_set(e, CR_ECORRUPT,
                   "the index at %s/index.db is damaged (%s): run `coderag index` to rebuild it",
                   st->index_real, why);
}

/* A damaged database is rebuilt by a writer and refused by a reader
 * (IDX_OPEN_READONLY, IDX_OPEN_EXISTING), which never deletes it. */
static CrErr store__check_whole(IdxStore *st, int existing, ErrInfo *e)
{
    int damaged = 0;
    StrBuf why;
    sb_init(&why);
    CrErr rc = idx_store_integrity(st, &damaged, &why, e);
    if (!rc && damaged && existing) rc = idx_store_refuse_damaged(st, why.buf, e);
    if (!rc && damaged) {
        log_msg(LOG_WARN, "%s/index.db is damaged (%s); rebuilding the index", st->index_real,
                why.buf);
        rc = store__start_over(st, e);
    }
    sb_release(&why);
    return rc;
}

/* The index names the workspace it was made for (meta "root"): an index
 * folder named for another workspace (--index-dir, CODERAG_INDEXDIR) is
 * refused, never read with paths that mean other files, nor emptied by an
 * update of this one. An index folder inside the root moves with it (a
 * renamed project keeps its .coderag/): a writer records the new root. An
 * index made before the key: a writer records it. */
static CrErr store__root_check(IdxStore *st, int writable, ErrInfo *e)
{
    char have[PATH_MAX];
    CrErr rc = idx_store_meta_get(st, "root", have, sizeof have, e);
    if (rc && rc != CR_ENOENT) return rc;
    if (!rc && !strcmp(have, st->root)) return CR_OK;
    if (!rc && !path_under(st->root, st->index_real))
        return err_set(e, CR_EUSAGE,
                       "index directory %s holds the index of %s, not of %s: pass --root %s, "
                       "or name another index directory",
                       st->index_real, have, st->root, have);
    /* best effort: a reader, or a writer that cannot write now, says the
     * same next time */
    if (writable) idx_store_meta_put(st, "root", st->root, NULL);
    return CR_OK;
}

/* st->lang_pick from meta "lang_pick" (none: every row reads its own). */
static CrErr store__lang_pick_load(IdxStore *st, ErrInfo *e)
{
    char text[512];
    CrErr rc = idx_store_meta_get(st, "lang_pick", text, sizeof text, e);
    if (rc && rc != CR_ENOENT) return rc;
    idx_lang_pick_parse(&st->lang_pick, rc ? "" : text);
    return CR_OK;
}

CrErr idx_store_db_open(IdxStore *st, unsigned flags, ErrInfo *e)
{
    int existing = (flags & (IDX_OPEN_READONLY | IDX_OPEN_EXISTING)) != 0;
    if (existing && access(st->db_path, F_OK) != 0)
        return err_set(e, CR_ENOINDEX, "not indexed yet: run `coderag index` (no index at %s)",
                       st->index_real);
    CrErr rc = store__open_db(st, e);
    if (rc && existing && !store__busy(st) && st->db &&
        idx_store_code_damaged(sqlite3_errcode(st->db))) {
        /* asked to read the index as it is: never to delete it */
        char why[256];
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(st->db));
        return idx_store_refuse_damaged(st, why, e);
    }
    if (rc && !existing && !store__busy(st)) {
        /* Not a database at all (or a damaged header): start over. A lock
         * held by another process is no reason to delete its database. */
        log_msg(LOG_WARN, "%s/index.db: %s; rebuilding the index", st->index_real,
                e ? e->msg : "unreadable");
        rc = store__start_over(st, e);
    }
    if (rc) return rc;
    if ((rc = store__check_whole(st, existing, e))) return rc;
    int ok = 0, empty = 0, damaged = 0;
    if ((rc = store__schema_check(st, &ok, &empty, &damaged, e))) return rc;
    if (ok) {
        /* the right version string over missing tables: damaged, rebuilt
         * by a writer, told to a reader */
        int whole = 1;
        char what[160];
        if ((rc = store__schema_whole(st, &whole, what, sizeof what, e))) return rc;
        if (!whole && existing) return idx_store_refuse_damaged(st, what, e);
        if (!whole) {
            log_msg(LOG_WARN, "%s/index.db: %s; rebuilding the index", st->index_real, what);
            if ((rc = store__start_over(st, e))) return rc;
            ok = 0;
            empty = 1;
        }
    }
    if (!ok && damaged && existing) {
        /* told as damaged, with the remedy, not as another version */
        return idx_store_refuse_damaged(st, "its schema cannot be read", e);
    }
    if (!ok) {
        if (empty && existing) {
            return err_set(e, CR_ENOINDEX,
                           "not indexed yet: run `coderag index` (the index at %s "
                           "is empty)",
                           st->index_real);
        }
        if (flags & IDX_OPEN_READONLY) {
            return err_set(e, CR_ESCHEMA,
                           "index at %s/index.db has another schema version; re-run "
                           "`coderag index`",
                           st->index_real);
        }
        if (!empty && (flags & IDX_OPEN_EXISTING)) {
            /* asked to use the index as it is: not to empty it */
            return err_set(e, CR_ENOINDEX,
                           "not indexed by this version: run `coderag index` (the index at %s "
                           "was made by another version of coderag or its language queries)",
                           st->index_real);
        }
        if (!empty) {
            /* An older or foreign database: rebuild, never misread. */
            log_msg(LOG_WARN, "%s/index.db: %s; rebuilding the index", st->index_real,
                    damaged ? "damaged" : "other schema");
            if ((rc = store__start_over(st, e))) return rc;
        }
        if ((rc = store__create_schema(st, e))) return rc;
    }
    if ((rc = store__root_check(st, !(flags & IDX_OPEN_READONLY), e))) return rc;
    return store__lang_pick_load(st, e);
}

void idx_store_db_close(IdxStore *st)
{
    if (!st->db) return;
    sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    store__close_db(st);
    idx_store_mark_clean(st);
}

int idx_schema_version(void)
{
    return IDX_SCHEMA_VERSION;
}

const char *idx_root(const IdxStore *st)
{
    return st->root;
}

int idx_chunk_in_test_module(IdxStore *st, int64_t chunk_id)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_PATH_SYMBOL, NULL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, chunk_id);
    int v = sqlite3_step(s) == SQLITE_ROW &&
            idx_lang_is_test_symbol((const char *)sqlite3_column_text(s, 0),
                                    (const char *)sqlite3_column_text(s, 1));
    sqlite3_reset(s);
    return v;
}

int idx_chunk_symbol(IdxStore *st, int64_t chunk_id, StrBuf *out, int *helper)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_SYMBOL_SHAPE, NULL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, chunk_id);
    int v = sqlite3_step(s) == SQLITE_ROW;
    if (v) sb_adds(out, (const char *)sqlite3_column_text(s, 1));
    if (v && helper) {
        const IdxLang *l = idx_lang_for_path((const char *)sqlite3_column_text(s, 0));
        /* a window or a continued run is part of a longer unit */
        int whole = sqlite3_column_int(s, 3) == 0 && sqlite3_column_int(s, 4) == 0;
        int lines = sqlite3_column_int(s, 2);
        *helper = l && l->helper_lines && whole && lines <= (int)l->helper_lines;
    }
    sqlite3_reset(s);
    return v;
}

int idx_file_path(IdxStore *st, int64_t file_id, StrBuf *out)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_BY_ID, NULL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, file_id);
    int v = sqlite3_step(s) == SQLITE_ROW;
    if (v) sb_adds(out, (const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return v;
}

int idx_file_test_marks(IdxStore *st, int64_t file_id)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_BY_ID, NULL);
    if (!s) return IDX_TEST_MODULES; /* cannot say: the chunks are asked */
    sqlite3_bind_int64(s, 1, file_id);
    int v = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(s, 0);
        v = (idx_lang_is_test_path(path) ? IDX_TEST_PATH : 0) |
            (idx_lang_has_test_modules(path) ? IDX_TEST_MODULES : 0);
    }
    sqlite3_reset(s);
    return v;
}
