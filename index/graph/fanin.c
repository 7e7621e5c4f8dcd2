/* fanin.c - how central a file is: the folders whose code calls into it.
 *
 * A large tree is many subsystems, tools, samples and drivers; the code
 * every subsystem calls (the scheduler, the page cache) is reached from
 * many folders, a driver or a tool from its own. Per file, the table fanin
 * holds the distinct folders (but the file's own) of the files whose
 * calls, function references or macro uses reach one of its definitions,
 * counted up to IDX_FANIN_CAP; a file nothing outside its folder calls has
 * no row. A cold build counts every file in one pass; an update counts
 * again the files that gained or lost edges from another folder: temporary
 * triggers (this connection's) sum, per (file, calling folder), the edges
 * written and deleted into fanin_dirty, in the same transactions as the
 * edges, so that an update that stops half way leaves its notes to the
 * next. A cold build that stops half way leaves
 * meta 'fanin' at 'all': the next settle counts every file. */
#include "graph_int.h"

#include <stdio.h>
#include <string.h>

/* The folder of a path with its trailing '/' ("" at the root). */
#define FANIN_DIR(p) "rtrim(" p ", replace(" p ", '/', ''))"

/* Edges of these kinds make a caller: calls, functions named as values,
 * uses of a macro. */
#define FANIN_KINDS "e.kind IN (1, 6, 7)"

/* A trigger's statement: the (file called, folder calling) pair of edge
 * R (NEW or OLD) added to fanin_dirty with n (+1 or -1), for a caller edge
 * between two folders (both chunks are there: a file's edges are deleted
 * before its chunks). */
#define FANIN_NOTE(R, n)                                                                           \
    "INSERT INTO fanin_dirty(file_id, dir, n) SELECT d.file_id, " FANIN_DIR(                       \
        "sf.path") ", " n " FROM chunks d, chunks s, files sf, files df WHERE d.id = " R           \
                   ".dst AND s.id = " R ".src "                                                    \
                   "AND sf.id = s.file_id AND df.id = d.file_id AND " R                            \
                   ".kind IN (1, 6, 7) AND s.file_id != "                                          \
                   "d.file_id AND " FANIN_DIR("sf.path") " != " FANIN_DIR(                         \
                       "df.path") " ON CONFLICT(file_id, dir) "                                    \
                                  "DO UPDATE SET n = n + excluded.n;"

CrErr idx_fanin_track(IdxStore *st, int on, ErrInfo *e)
{
    if (!on)
        return idx_store_exec(st,
                              "DROP TRIGGER IF EXISTS temp.fanin_edge_ins;"
                              "DROP TRIGGER IF EXISTS temp.fanin_edge_del;"
                              "INSERT OR REPLACE INTO meta(key, value) VALUES ('fanin', 'all');",
                              e);
    /* a rewritten file's edges are deleted and written again: the pairs
     * that come back cancel, and only a file that gained or lost a calling
     * folder's edges is counted again */
    return idx_store_exec(
        st,
        "CREATE TEMP TRIGGER IF NOT EXISTS fanin_edge_ins AFTER INSERT ON "
        "main.edges BEGIN " FANIN_NOTE(
            "NEW", "1") " END;"
                        "CREATE TEMP TRIGGER IF NOT EXISTS fanin_edge_del AFTER DELETE ON "
                        "main.edges BEGIN " FANIN_NOTE("OLD", "-1") " END;",
        e);
}

/* Every file counted again, in one pass over the edges. */
static CrErr fanin_all(IdxStore *st, ErrInfo *e)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "DELETE FROM fanin;"
             "INSERT INTO fanin(file_id, dirs) SELECT c.file_id, min(count(DISTINCT " FANIN_DIR(
                 "sf.path") "), %d) FROM edges e JOIN chunks c ON c.id = e.dst "
                            "JOIN chunks s ON s.id = e.src JOIN files sf ON sf.id = s.file_id "
                            "JOIN files df ON df.id = c.file_id WHERE " FANIN_KINDS
                            " AND s.file_id != c.file_id AND " FANIN_DIR(
                                "sf.path") " != " FANIN_DIR("df.path") " GROUP BY c.file_id;",
             IDX_FANIN_CAP);
    return idx_store_exec(st, sql, e);
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
    CrErr rc = idx_store_meta_get(st, "fanin", mark, sizeof mark, e);
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
