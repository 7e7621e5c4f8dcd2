/* fanin.c - how central a file is: the folders whose code calls into it.
 *
 * A large tree is many subsystems, tools, samples and drivers; the code
 * every subsystem calls (the scheduler, the page cache) is reached from
 * many folders, a driver or a tool from its own. Per file, the table fanin
 * holds the distinct folders (but the file's own) of the files whose
 * calls, function references or macro uses reach one of its definitions,
 * counted up to IDX_FANIN_CAP; a file nothing outside its folder calls has
 * no row. A cold build counts every file in one pass; an update counts
 * again the files that gained or lost edges from another folder: the
 * writers note the caller edges they write and delete, summed per (file,
 * calling folder) in memory and added into fanin_dirty before each commit,
 * so that an update that stops half way leaves its notes to the next (a
 * note costs a lookup or two, where a trigger's four-table join per edge
 * was a sixth of a save). A cold build that stops half way leaves
 * meta 'fanin' at 'all': the next settle counts every file. */
#include "graph_int.h"

#include <stdio.h>
#include <string.h>

/* The folder of a path with its trailing '/' ("" at the root). */
#define FANIN_DIR(p) "rtrim(" p ", replace(" p ", '/', ''))"

/* Edges of these kinds make a caller: calls, functions named as values,
 * uses of a macro. */
#define FANIN_KINDS "e.kind IN (1, 6, 7)"

/* Whether an edge of kind makes a caller (FANIN_KINDS). */
static int caller_kind(int kind)
{
    return kind == IDX_EDGE_CALL || kind == IDX_EDGE_REFERENCE || kind == IDX_EDGE_EXPAND;
}

CrErr idx_fanin_track(IdxStore *st, int on, ErrInfo *e)
{
    /* a rewritten file's edges are deleted and written again: the pairs
     * that come back cancel, and only a file that gained or lost a calling
     * folder's edges is counted again */
    st->fanin_on = on;
    if (on) return CR_OK;
    idx_fanin_forget(st);
    return idx_store_exec(st, "INSERT OR REPLACE INTO meta(key, value) VALUES ('fanin', 'all');",
                          e);
}

void idx_fanin_forget(IdxStore *st)
{
    strmap_release(&st->fanin_notes);
    strmap_init(&st->fanin_notes);
    /* another connection may have removed a file and given its id to another */
    i64map_release(&st->fanin_chunk_file);
    i64map_init(&st->fanin_chunk_file);
    i64map_release(&st->fanin_file_dir);
    i64map_init(&st->fanin_file_dir);
    for (size_t i = 0; i < st->n_fanin_dirs; i++)
        free(st->fanin_dirs[i]);
    free(st->fanin_dirs);
    st->fanin_dirs = NULL;
    st->n_fanin_dirs = st->cap_fanin_dirs = 0;
}

void idx_fanin_file_gone(IdxStore *st, int64_t file_id)
{
    int64_t k;
    if (!i64map_get(&st->fanin_file_dir, file_id, &k)) return;
    free(st->fanin_dirs[k - 1]);
    st->fanin_dirs[k - 1] = NULL;
    i64map_del(&st->fanin_file_dir, file_id);
}

/* The folder of file_id's path, or NULL (no row: an error is in *rc). */
static const char *file_dir(IdxStore *st, int64_t file_id, CrErr *rc, ErrInfo *e)
{
    int64_t k;
    if (i64map_get(&st->fanin_file_dir, file_id, &k)) return st->fanin_dirs[k - 1];
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_PATH_BY_ID, e);
    if (!s) {
        *rc = CR_EDB;
        return NULL;
    }
    sqlite3_bind_int64(s, 1, file_id);
    int row = 0;
    if ((*rc = idx_store_step(st, s, &row, e, "fan-in")) || !row) {
        sqlite3_reset(s);
        return NULL;
    }
    const char *p = (const char *)sqlite3_column_text(s, 0);
    const char *slash = p ? strrchr(p, '/') : NULL;
    char *dir = xstrndup(p ? p : "", slash ? (size_t)(slash - p) + 1 : 0);
    sqlite3_reset(s);
    ARRAY_GROW(st->fanin_dirs, st->n_fanin_dirs + 1, st->cap_fanin_dirs);
    st->fanin_dirs[st->n_fanin_dirs++] = dir;
    i64map_put(&st->fanin_file_dir, file_id, (int64_t)st->n_fanin_dirs);
    return dir;
}

/* Adds n caller edges from a chunk of src_file into one of dst_file. */
static CrErr note(IdxStore *st, int64_t dst_file, int64_t src_file, int64_t n, ErrInfo *e)
{
    CrErr rc = CR_OK;
    if (dst_file == src_file || !n) return CR_OK;
    const char *sd = file_dir(st, src_file, &rc, e);
    const char *dd = sd ? file_dir(st, dst_file, &rc, e) : NULL;
    if (!dd || !strcmp(sd, dd)) return rc;
    StrBuf key;
    sb_init(&key);
    sb_addf(&key, "%lld\t%s", (long long)dst_file, sd);
    int64_t v = 0;
    strmap_get(&st->fanin_notes, key.buf, &v);
    strmap_put(&st->fanin_notes, key.buf, v + n);
    sb_release(&key);
    return CR_OK;
}

CrErr idx_fanin_note_edge(IdxStore *st, int64_t src_file, int64_t dst, int kind, int n, ErrInfo *e)
{
    if (!st->fanin_on || !caller_kind(kind)) return CR_OK;
    int64_t f;
    if (!i64map_get(&st->fanin_chunk_file, dst, &f)) {
        sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_FILE, e);
        if (!s) return CR_EDB;
        sqlite3_bind_int64(s, 1, dst);
        int row = 0;
        CrErr rc = idx_store_step(st, s, &row, e, "fan-in");
        f = row ? sqlite3_column_int64(s, 0) : 0;
        sqlite3_reset(s);
        if (rc || !row) return rc;
        i64map_put(&st->fanin_chunk_file, dst, f);
    }
    return note(st, f, src_file, n, e);
}

/* The edges of stmt (bound to a file, rows: other file, count) noted -1,
 * into (into = 1) or out of file_id. */
static CrErr note_rows(IdxStore *st, StmtId id, int64_t file_id, int into, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, id, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    size_t n = 0, cap = 0;
    int64_t(*rows)[2] = NULL;
    int row = 0;
    CrErr rc;
    while (!(rc = idx_store_step(st, s, &row, e, "fan-in")) && row) {
        ARRAY_GROW(rows, n + 1, cap);
        rows[n][0] = sqlite3_column_int64(s, 0);
        rows[n++][1] = sqlite3_column_int64(s, 1);
    }
    sqlite3_reset(s);
    for (size_t i = 0; i < n && !rc; i++)
        rc = into ? note(st, file_id, rows[i][0], -rows[i][1], e)
                  : note(st, rows[i][0], file_id, -rows[i][1], e);
    free(rows);
    return rc;
}

CrErr idx_fanin_note_file(IdxStore *st, int64_t file_id, ErrInfo *e)
{
    if (!st->fanin_on) return CR_OK;
    CrErr rc = note_rows(st, STMT_FANIN_EDGES_INTO, file_id, 1, e);
    return rc ? rc : note_rows(st, STMT_FANIN_EDGES_FROM, file_id, 0, e);
}

CrErr idx_fanin_flush(IdxStore *st, ErrInfo *e)
{
    CrErr rc = CR_OK;
    StrMap *m = &st->fanin_notes;
    for (size_t i = 0; i < m->cap && !rc; i++) {
        if (!m->keys[i] || !m->vals[i]) continue;
        const char *tab = strchr(m->keys[i], '\t');
        sqlite3_stmt *s = idx_store_stmt(st, STMT_FANIN_NOTE_PUT, e);
        if (!s) return CR_EDB;
        sqlite3_bind_int64(s, 1, strtoll(m->keys[i], NULL, 10));
        sqlite3_bind_text(s, 2, tab + 1, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, m->vals[i]);
        rc = idx_store_step_done(st, s, e, "fan-in");
    }
    if (rc) return rc;
    strmap_release(&st->fanin_notes);
    strmap_init(&st->fanin_notes);
    return CR_OK;
}

/* Every file counted again, in one pass over the edges; each file's folder
 * made once (a temporary table by id), not twice per edge. */
static CrErr fanin_all(IdxStore *st, ErrInfo *e)
{
    static const char dirs[] =
        "CREATE TEMP TABLE IF NOT EXISTS fanin_dir(id INTEGER PRIMARY KEY, dir TEXT NOT NULL);"
        "DELETE FROM fanin_dir; INSERT INTO fanin_dir SELECT id, " FANIN_DIR("path") " FROM files;";
    char sql[1024];
    snprintf(sql, sizeof sql,
             "DELETE FROM fanin;"
             "INSERT INTO fanin(file_id, dirs) SELECT c.file_id, min(count(DISTINCT sd.dir), %d) "
             "FROM edges e JOIN chunks c ON c.id = e.dst JOIN chunks s ON s.id = e.src "
             "JOIN fanin_dir sd ON sd.id = s.file_id JOIN fanin_dir dd ON dd.id = c.file_id "
             "WHERE " FANIN_KINDS " AND s.file_id != c.file_id AND sd.dir != dd.dir "
             "GROUP BY c.file_id; DELETE FROM fanin_dir;",
             IDX_FANIN_CAP);
    CrErr rc = idx_store_exec(st, dirs, e);
    return rc ? rc : idx_store_exec(st, sql, e);
}

/* The files the triggers noted, counted again one by one (each count stops
 * at the cap: a file every folder calls costs no more than one a few do). */
static CrErr fanin_dirty(IdxStore *st, ErrInfo *e)
{
    char sql[1400];
    snprintf(sql, sizeof sql,
             "CREATE TEMP TABLE IF NOT EXISTS fanin_files(file_id INTEGER PRIMARY KEY);"
             "INSERT OR IGNORE INTO fanin_files SELECT file_id FROM fanin_dirty WHERE n != 0;"
             "DELETE FROM fanin WHERE file_id IN fanin_files;"
             "INSERT INTO fanin(file_id, dirs) SELECT t.file_id, (SELECT count(*) FROM (SELECT "
             "DISTINCT " FANIN_DIR(
                 "sf.path") " FROM chunks c JOIN edges e ON e.dst = c.id "
                            "JOIN chunks s ON s.id = e.src JOIN files sf ON sf.id = s.file_id JOIN "
                            "files df ON df.id = "
                            "c.file_id WHERE c.file_id = t.file_id AND " FANIN_KINDS
                            " AND s.file_id != c.file_id "
                            "AND " FANIN_DIR("sf.path") " != " FANIN_DIR(
                                "df.path") " LIMIT %d)) AS n "
                                           "FROM fanin_files t WHERE n > 0;"
                                           "DELETE FROM fanin_dirty; DELETE FROM fanin_files;",
             IDX_FANIN_CAP);
    return idx_store_exec(st, sql, e);
}

CrErr idx_fanin_settle(IdxStore *st, int all, ErrInfo *e)
{
    double t = now_ms();
    char mark[8] = "";
    CrErr rc = idx_fanin_flush(st, e);
    if (rc) return rc;
    rc = idx_store_meta_get(st, "fanin", mark, sizeof mark, e);
    if (rc == CR_EDB) return rc;
    all = all || !strcmp(mark, "all");
    rc = all ? fanin_all(st, e) : fanin_dirty(st, e);
    if (!rc && all)
        rc =
            idx_store_exec(st, "DELETE FROM fanin_dirty; DELETE FROM meta WHERE key = 'fanin';", e);
    log_msg(LOG_DEBUG, "fan-in: %s in %.0f ms",
            all ? "every file counted" : "touched files counted", now_ms() - t);
    return rc;
}

int idx_file_fanin(IdxStore *st, int64_t file_id)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_FANIN, NULL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, file_id);
    int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}
