/*
 * store_int.h - the IdxStore object and its SQLite plumbing, shared by the
 * files of index/ that touch the database (store.c, query.c, write.c,
 * graph.c, update.c). Not for use outside index/.
 */
#ifndef CODERAG_STORE_INT_H
#define CODERAG_STORE_INT_H

#include "../idx_int.h"

#include <sqlite3.h>

typedef struct Stemmer Stemmer; /* postings.c */

/* Bump when the schema or the meaning of stored rows changes: an index with
 * another version is rebuilt from scratch. */
#define IDX_SCHEMA_VERSION 15

/* Bounds refs.id to file f's refs (SQL text f: its id), by the range its
 * files row keeps (store.c): a ref's file is its chunk's, refs have no
 * file_id of their own. */
#define IDX_REFS_OF_FILE(f)                                                                        \
    "id BETWEEN (SELECT ref_lo FROM files WHERE id = " f ") AND (SELECT ref_hi FROM files "        \
    "WHERE id = " f ")"
/* file ?1's */
#define IDX_REFS_OF_FILE_1 IDX_REFS_OF_FILE("?1")
/* Whether an edge's reference builds or operates on a value (a construction
 * "+.T", an operator "T().operator=="): IdxEdge.builds */
#define EDGE_BUILDS                                                                                \
    "coalesce(r.qual GLOB '" IDX_REF_CONSTRUCT "*' OR r.last GLOB 'operator[^A-Za-z0-9_]*', 0)"
/* The same of symbols, by the files row's sym_lo..sym_hi (as s: _S). */
#define IDX_SYMBOLS_OF_FILE_RANGE                                                                  \
    "BETWEEN (SELECT sym_lo FROM files WHERE id = ?1) AND (SELECT sym_hi FROM files WHERE id = "   \
    "?1)"
#define IDX_SYMBOLS_OF_FILE_1 "file_id = ?1 AND id " IDX_SYMBOLS_OF_FILE_RANGE
#define IDX_SYMBOLS_S_OF_FILE_1 "s.file_id = ?1 AND s.id " IDX_SYMBOLS_OF_FILE_RANGE

/* The calls (?3) in the methods of the classes seeded, and of their
 * subclasses at any depth (edges of kind ?2): what an inherited member
 * lookup could now find elsewhere. */
#define IDX_SUBCLASS_CALLS(seed)                                                                   \
    "WITH RECURSIVE sub(id) AS (" seed " UNION SELECT e.src FROM edges e JOIN sub ON e.dst = "     \
    "sub.id WHERE e.kind = ?2), subf(fid) AS (SELECT DISTINCT file_id FROM chunks WHERE id IN "    \
    "sub) UPDATE refs SET resolved = 0 WHERE id IN (SELECT r.id FROM subf JOIN files f ON f.id = " \
    "subf.fid JOIN refs r ON r.id BETWEEN f.ref_lo AND f.ref_hi WHERE "                            \
    "r.resolved = 1 AND r.kind = ?3 AND r.chunk_id IN (SELECT c.id FROM chunks c WHERE "           \
    "c.file_id IN subf AND c.parent_id IN sub))"

/* Prepared statements, prepared on first use and kept for the store's life.
 * X(name, sql). */
/* What a file offers the resolver (deps.c's facts). Its references of the
 * kinds asked are read once (r), by the file's id range; b and m are read
 * first, each by its file's range: the 'M' rows joined from refs alone
 * probed every method chunk of the file per base, and symbols by chunk_id
 * through an automatic index built over the whole table at every call (a
 * save paid for the project's size). */
#define IDX_FACT_SQL                                                                               \
    "WITH r AS MATERIALIZED (SELECT chunk_id, kind, name FROM refs "                               \
    "WHERE " IDX_REFS_OF_FILE_1 " AND kind IN (?2, ?5, ?7)), "                                     \
    "b AS MATERIALIZED (SELECT chunk_id AS pid, name AS base FROM r WHERE kind = ?2), "            \
    "m AS MATERIALIZED (SELECT s.name AS name, c.parent_id AS pid FROM symbols s "                 \
    "JOIN chunks c ON c.id = s.chunk_id WHERE " IDX_SYMBOLS_S_OF_FILE_1 " AND c.file_id = ?1 "     \
    "AND c.kind = ?4) "                                                                            \
    "SELECT 'D' || char(9) || qualname || char(9) || name FROM symbols "                           \
    "WHERE " IDX_SYMBOLS_OF_FILE_1 " "                                                             \
    "UNION ALL SELECT 'I' || char(9) || alias || char(9) || target FROM imports "                  \
    "WHERE file_id = ?1 "                                                                          \
    "UNION ALL SELECT 'F' || char(9) || module || char(9) || (SELECT count(*) > 0 FROM chunks "    \
    "WHERE file_id = ?1) FROM files WHERE id = ?1 AND status = 'ok' "                              \
    "UNION ALL SELECT 'B' || char(9) || c.symbol || char(9) || r.name FROM r "                     \
    "JOIN chunks c ON c.id = r.chunk_id WHERE r.kind = ?2 "                                        \
    "UNION ALL SELECT 'C' || char(9) || s.qualname || char(9) FROM symbols s "                     \
    "JOIN chunks c ON c.id = s.chunk_id WHERE " IDX_SYMBOLS_S_OF_FILE_1 " AND c.kind = ?3 "        \
    "UNION ALL SELECT 'M' || char(9) || m.name || char(9) || p.symbol || char(9) || b.base "       \
    "FROM b JOIN m ON m.pid = b.pid JOIN chunks p ON p.id = b.pid "                                \
    "UNION ALL SELECT 'T' || char(9) || c.symbol || char(9) || r.name FROM r "                     \
    "JOIN chunks c ON c.id = r.chunk_id WHERE r.kind = ?5 "                                        \
    "AND substr(r.name, 1, length(?6)) = ?6 "                                                      \
    "UNION ALL SELECT 'S' || char(9) || r.name || char(9) FROM r WHERE r.kind = ?7"

#define IDX_STMT_MAP(X)                                                                            \
    X(FILE_ALL, "SELECT id, path, hash, size, mtime_ns, status FROM files")                        \
    X(FILE_BY_PATH, "SELECT id, hash, size, mtime_ns, status FROM files WHERE path = ?1")          \
    X(FILE_INSERT, "INSERT INTO files(path, module, is_pkg, hash, size, mtime_ns, lines, status, " \
                   "gen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")                             \
    /* (no refs until the file's are written: update/write.c) */                                   \
    X(FILE_UPDATE, "UPDATE files SET module = ?2, is_pkg = ?3, hash = ?4, size = ?5, "             \
                   "mtime_ns = ?6, lines = ?7, status = ?8, gen = ?9, ref_lo = 1, ref_hi = 0, "    \
                   "sym_lo = 1, sym_hi = 0 WHERE id = ?1")                                         \
    X(GEN_NEXT, "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'gen' "            \
                "RETURNING CAST(value AS INTEGER)")                                                \
    X(FILE_TOUCH, "UPDATE files SET size = ?2, mtime_ns = ?3 WHERE id = ?1")                       \
    X(FILE_DELETE, "DELETE FROM files WHERE id = ?1")                                              \
    X(FILE_PATH_BY_ID, "SELECT path FROM files WHERE id = ?1")                                     \
    X(FILE_FANIN, "SELECT dirs FROM fanin WHERE file_id = ?1")                                     \
    X(CHUNK_PATH_SYMBOL, "SELECT f.path, c.symbol FROM chunks c "                                  \
                         "JOIN files f ON f.id = c.file_id WHERE c.id = ?1")                       \
    X(CHUNK_SYMBOL_SHAPE, "SELECT f.path, c.symbol, c.end_line - c.start_line + 1, c.win, "        \
                          "c.cont FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1") \
    X(FILE_BY_MODULE, "SELECT id FROM files WHERE module = ?1 AND status = 'ok' ORDER BY path")    \
    X(CHUNK_INSERT, "INSERT INTO chunks(file_id, start_line, end_line, win, kind, symbol, "        \
                    "own_name, "                                                                   \
                    "signature, docstring, parent_id, hash_bits, cont) "                           \
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")                  \
    X(CHUNK_GET, "SELECT c.id, c.file_id, f.path, f.module, c.symbol, c.signature, c.docstring, "  \
                 "c.start_line, c.end_line, c.win, c.kind, c.parent_id, c.hash, c.cont "           \
                 "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1")                 \
    X(CHUNK_IDS_OF_FILE, "SELECT id FROM chunks WHERE file_id = ?1")                               \
    /* idx_file_outline: CHUNK_OF_FILE's order (its plan's: the index, then rowid) */              \
    X(CHUNK_OUTLINE_OF_FILE, "SELECT id, symbol, start_line, end_line, win, kind, cont, "          \
                             "signature FROM chunks WHERE file_id = ?1 "                           \
                             "ORDER BY start_line, win, id")                                       \
    X(FILE_HAS_CHUNKS, "SELECT 1 FROM files f JOIN chunks c ON c.file_id = f.id "                  \
                       "WHERE f.path = ?1 LIMIT 1")                                                \
    X(CHUNK_OF_FILE,                                                                               \
      "SELECT c.id, c.file_id, f.path, f.module, c.symbol, c.signature, "                          \
      "c.docstring, c.start_line, c.end_line, c.win, c.kind, c.parent_id, c.hash, c.cont "         \
      "FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 "                          \
      "ORDER BY c.start_line, c.win")                                                              \
    X(CHUNK_FIRST_OF_FILE, "SELECT id FROM chunks WHERE file_id = ?1 "                             \
                           "ORDER BY (kind != 0), start_line LIMIT 1")                             \
    X(SYMBOL_INSERT,                                                                               \
      "INSERT INTO symbols(qualname, own_name, chunk_id, file_id) VALUES (?1, ?2, ?3, ?4)")        \
    /* every definition (mostly one), of which idx_store_first_placed picks the first by path      \
     * and position (two files of one module may both define it): never by the rows' ids, which    \
     * follow the order files were written in; not by ORDER BY ... LIMIT 1, which builds a         \
     * temporary B-tree for each lookup */                                                         \
    X(SYMBOL_BY_QUAL, "SELECT s.chunk_id, f.path, c.start_line, c.win FROM symbols s JOIN chunks " \
                      "c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id "                   \
                      "WHERE s.qualname = ?1")                                                     \
    X(SYMBOL_NAMES_OF_FILE, "SELECT DISTINCT name FROM symbols WHERE " IDX_SYMBOLS_OF_FILE_1)      \
    X(SYMBOL_BY_NAME, "SELECT chunk_id FROM symbols WHERE name = ?1 LIMIT ?2")                     \
    /* (the first ?2 by path and position, as SYMBOL_BY_QUAL) */                                   \
    X(SYMBOL_BY_SUFFIX, "SELECT s.chunk_id FROM symbols s JOIN chunks c ON c.id = s.chunk_id "     \
                        "JOIN files f ON f.id = c.file_id WHERE s.name = ?1 AND (s.qualname = ?3 " \
                        "OR substr(s.qualname, -length(?3) - 1) = '.' || ?3) "                     \
                        "ORDER BY f.path, c.start_line, c.win LIMIT ?2")                           \
    /* (at most ?3 of them, any: past ?3 - 1 the caller takes none, so the order, by path and      \
     * position, never depends on the rows' ids, which follow the order files were written in) */  \
    X(METHODS_BY_NAME,                                                                             \
      "SELECT id, pid, pname FROM (SELECT s.chunk_id AS id, p.id AS pid, p.name AS pname, "        \
      "f.path, c.start_line, c.win FROM symbols s JOIN chunks c ON c.id = s.chunk_id "             \
      "JOIN chunks p ON p.id = c.parent_id JOIN files f ON f.id = c.file_id "                      \
      "WHERE s.name = ?1 AND c.kind = ?2 LIMIT ?3) ORDER BY path, start_line, win")                \
    /* the names of the members of qualified name ?1 (a class's methods) */                        \
    X(SYMBOL_NAMES_UNDER, "SELECT name FROM symbols WHERE qualname > ?1 || '.' "                   \
                          "AND qualname < ?1 || '/'")                                              \
    X(REF_LAST_ANY, "SELECT 1 FROM refs WHERE last = ?1 LIMIT 1")                                  \
    /* the methods (kind ?2) of the classes that hold a fact named ?1 */                           \
    X(METHODS_OF_FACT, "SELECT id FROM chunks WHERE kind = ?2 AND parent_id IN "                   \
                       "(SELECT chunk_id FROM refs WHERE last = ?1) ORDER BY id")                  \
    /* the other definitions of chunk ?1's symbol, of its kind, in other files                     \
     * (a C++ method defined once per platform or build variant) */                                \
    /* with each one's path and chunk ?1's (a twin is of its language), and                        \
     * each one's signature and chunk ?1's (a twin takes the same parameters) */                   \
    X(CHUNK_TWINS, "SELECT s.chunk_id, f.path, fo.path, c.signature, o.signature FROM symbols s "  \
                   "JOIN chunks c ON c.id = s.chunk_id JOIN chunks o ON o.id = ?1 "                \
                   "JOIN files f ON f.id = c.file_id JOIN files fo ON fo.id = o.file_id "          \
                   "WHERE s.name = ?2 AND c.symbol = o.symbol AND c.kind = o.kind "                \
                   "AND c.file_id != o.file_id ORDER BY f.path, c.start_line, c.win LIMIT ?3")     \
    /* the definitions sharing chunk ?1's symbol and kind in its file (its                         \
     * overloads, itself among them) with their signatures */                                      \
    X(CHUNK_OVERLOADS, "SELECT c.id, c.signature FROM chunks c JOIN chunks o ON o.id = ?1 "        \
                       "WHERE c.file_id = o.file_id AND c.symbol = o.symbol AND c.kind = o.kind "  \
                       "AND c.cont = 0 ORDER BY c.id LIMIT 16")                                    \
    X(METHOD_QUALS_BY_NAME, "SELECT s.chunk_id, s.qualname FROM symbols s JOIN chunks c "          \
                            "ON c.id = s.chunk_id WHERE s.name = ?1 AND c.kind = ?2 LIMIT ?3")     \
    X(IMPORT_INSERT, "INSERT INTO imports(file_id, alias, target) VALUES (?1, ?2, ?3)")            \
    X(IMPORT_GET, "SELECT target FROM imports WHERE file_id = ?1 AND alias = ?2 LIMIT 1")          \
    /* a file's imports: each alias's first row is IMPORT_GET's; star ones ('*') in rowid order */ \
    X(IMPORTS_OF_FILE,                                                                             \
      "SELECT alias, target FROM imports WHERE file_id = ?1 ORDER BY alias, rowid")                \
    X(FILE_REF_SPAN, "UPDATE files SET ref_lo = ?2, ref_hi = ?3, sym_lo = ?4, sym_hi = ?5 "        \
                     "WHERE id = ?1")                                                              \
    X(SYMBOL_NEXT_ID, "SELECT coalesce(max(id), 0) + 1 FROM symbols")                              \
    X(REF_INSERT, "INSERT INTO refs(chunk_id, kind, qual, last, resolved, argc) "                  \
                  "VALUES (?1, ?2, ?3, ?4, ?6, ?5)")                                               \
    X(FILE_FACTS, IDX_FACT_SQL)                                                                    \
    /* the caller edges (graph/fanin.c) into and out of file ?1's chunks, per other file */        \
    X(FANIN_EDGES_INTO, "SELECT s.file_id, count(*) FROM chunks d JOIN edges e ON e.dst = d.id "   \
                        "JOIN chunks s ON s.id = e.src WHERE d.file_id = ?1 AND e.kind IN "        \
                        "(1, 6, 7) AND s.file_id != ?1 GROUP BY s.file_id")                        \
    X(FANIN_EDGES_FROM, "SELECT d.file_id, count(*) FROM chunks s JOIN edges e ON e.src = s.id "   \
                        "JOIN chunks d ON d.id = e.dst WHERE s.file_id = ?1 AND e.kind IN "        \
                        "(1, 6, 7) AND d.file_id != ?1 GROUP BY d.file_id")                        \
    X(FANIN_NOTE_PUT, "INSERT INTO fanin_dirty(file_id, dir, n) VALUES (?1, ?2, ?3) "              \
                      "ON CONFLICT(file_id, dir) DO UPDATE SET n = n + excluded.n")                \
    /* a reference's edges (?1 its id, ?2 its chunk: their src) */                                 \
    X(EDGES_OF_REF, "SELECT dst, kind FROM edges WHERE src = ?2 AND ref_id = ?1")                  \
    X(REF_NEXT_ID, "SELECT coalesce(max(id), 0) + 1 FROM refs")                                    \
    X(REF_DIRTY_BY_LAST, "UPDATE refs SET resolved = 0 WHERE last = ?1 AND resolved = 1")          \
    /* the calls (?2) on a variable ?1 of a module's scope, "?1.m" (deps.c) */                     \
    X(REF_DIRTY_CALLS_BY_ROOT,                                                                     \
      "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND kind = ?2 AND "                         \
      "substr(name, 1, length(?1) + 1) = ?1 || '.'")                                               \
    /* the type facts (?2, names starting ?3) of the files of module ?1, with their chunks' kind   \
     * and symbol (graph_types.c) */                                                               \
    X(MODULE_TYPE_FACTS, "SELECT r.chunk_id, r.name, c.kind, c.symbol FROM files f "               \
                         "JOIN refs r ON r.id BETWEEN f.ref_lo AND f.ref_hi "                      \
                         "JOIN chunks c ON c.id = r.chunk_id "                                     \
                         "WHERE f.module = ?1 AND f.status = 'ok' AND r.kind = ?2 AND "            \
                         "substr(r.name, 1, length(?3)) = ?3 ORDER BY f.path, r.id")               \
    /* the calls (?2) through field ?1 (graph_store.c) */                                          \
    X(REF_DIRTY_CALLS_BY_LAST,                                                                     \
      "UPDATE refs SET resolved = 0 WHERE last = ?1 AND resolved = 1 AND kind = ?2")               \
    /* the functions stored in field ?1 (names from ?1 "." to ?2, ?1 "/"), where (at most ?3,      \
     * any: past ?3 - 1 the caller reads none; ordered by path and position, as below) */          \
    X(STORES_OF_FIELD,                                                                             \
      "SELECT last, file_id, chunk_id, path, module, symbol FROM (SELECT r.last, c.file_id, "      \
      "r.chunk_id, f.path, f.module, c.symbol, c.start_line, c.win, r.id FROM refs r "             \
      "JOIN chunks c ON c.id = r.chunk_id JOIN files f ON f.id = c.file_id "                       \
      "WHERE r." IDX_REF_STORE_WHERE " AND r.qual >= ?1 AND r.qual < ?2 LIMIT ?3) "                \
      "ORDER BY path, start_line, win, id")                                                        \
    /* the same, of one function in a field ("field.fn" ?1), the first ?2 by path and position:    \
     * never by the rows' ids alone, which follow the order files were written in (the ids of      \
     * one chunk's refs keep their order) */                                                       \
    X(STORES_OF_QUAL,                                                                              \
      "SELECT r.last, c.file_id, r.chunk_id, f.path, f.module, c.symbol FROM refs r "              \
      "JOIN chunks c ON c.id = r.chunk_id JOIN files f ON f.id = c.file_id "                       \
      "WHERE r." IDX_REF_STORE_WHERE " AND r.qual = ?1 "                                           \
      "ORDER BY f.path, c.start_line, c.win, r.id LIMIT ?2")                                       \
    /* how often each function is stored in field ?1 (as STORES_OF_FIELD), by name */              \
    X(STORES_BY_FUNC, "SELECT qual, count(*) FROM refs WHERE " IDX_REF_STORE_WHERE                 \
                      " AND qual >= ?1 AND qual < ?2 GROUP BY qual ORDER BY qual")                 \
    X(REF_DIRTY_BY_ALIAS, "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND id IN "             \
                          "(SELECT r.id FROM imports i JOIN files f ON f.id = i.file_id "          \
                          "JOIN refs r ON r.id BETWEEN f.ref_lo AND f.ref_hi "                     \
                          "AND r.last = i.alias WHERE i.target = ?1)")                             \
    /* the names module ?1 offers, and those of the modules it star-imports */                     \
    X(REF_DIRTY_BY_MODULE_NAMES,                                                                   \
      "WITH RECURSIVE mods(m) AS (SELECT ?1 UNION SELECT i.target FROM imports i "                 \
      "JOIN files f ON f.id = i.file_id JOIN mods ON f.module = mods.m WHERE i.alias = '*') "      \
      "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND last IN (SELECT s.name FROM files f "   \
      "JOIN symbols s ON s.id BETWEEN f.sym_lo AND f.sym_hi AND s.file_id = f.id "                 \
      "WHERE f.module IN mods UNION SELECT i.alias FROM "                                          \
      "imports i JOIN files f ON f.id = i.file_id WHERE f.module IN mods)")                        \
    X(REF_DIRTY_SUBCLASS_CALLS, IDX_SUBCLASS_CALLS("SELECT ?1"))                                   \
    /* whether ?1 qualifies a class (chunk kind ?2) while some class is an                         \
     * interface its implementations need not name (graph_types.c) */                              \
    X(CLASS_WITH_IFACES, "SELECT 1 FROM symbols s JOIN chunks c ON c.id = s.chunk_id "             \
                         "WHERE s.qualname = ?1 AND c.kind = ?2 AND EXISTS (SELECT 1 FROM refs "   \
                         "WHERE last = '" IDX_REF_TYPE_FACT IDX_REF_INTERFACE_NAME                 \
                         ":" IDX_REF_INTERFACE_NAME "') LIMIT 1")                                  \
    /* the calls named like a member of qualified name ?1 */                                       \
    X(REF_DIRTY_BY_SIBLINGS, "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND last IN "        \
                             "(SELECT name FROM symbols WHERE qualname > ?1 || '.' "               \
                             "AND qualname < ?1 || '/')")                                          \
    X(EDGE_DST_OF_REF, "SELECT dst FROM edges WHERE src = ?2 AND ref_id = ?1")                     \
    X(CHUNK_EXISTS, "SELECT 1 FROM chunks WHERE id = ?1")                                          \
    X(IMPORTERS_PENDING, "SELECT DISTINCT f.path FROM imports i JOIN files f ON f.id = "           \
                         "i.file_id WHERE i.alias = '' AND i.target IN (?1, ?2)")                  \
    X(IMPORTERS_OF_MODULE, "SELECT DISTINCT f.path FROM imports i JOIN files f ON f.id = "         \
                           "i.file_id WHERE i.target = ?1 OR (i.target >= ?1 || '.' AND "          \
                           "i.target < ?1 || '/')")                                                \
    /* a page of dirty refs: graph.c reads a chunk's and a file's row once per run */              \
    X(REF_DIRTY_LIST, "SELECT id, chunk_id, kind, name, argc FROM refs WHERE resolved = 0 "        \
                      "AND (kind IN (?1, " IDX_REF_STORE_SQL ")) = ?2 AND id > ?3 "                \
                      "ORDER BY id LIMIT ?4")                                                      \
    /* REF_DIRTY_LIST of a cold build's calls, written resolved (graph.c: refs_born) */            \
    X(REF_BORN_LIST, "SELECT id, chunk_id, kind, name, argc FROM refs WHERE "                      \
                     "(kind IN (?1, " IDX_REF_STORE_SQL ")) = ?2 AND id > ?3 "                     \
                     "ORDER BY id LIMIT ?4")                                                       \
    X(CHUNK_FILE_SYMBOL, "SELECT file_id, symbol FROM chunks WHERE id = ?1")                       \
    X(FILE_MODULE_PATH, "SELECT module, path FROM files WHERE id = ?1")                            \
    X(CHUNK_FILE, "SELECT file_id FROM chunks WHERE id = ?1")                                      \
    /* a chunk's kind alone: CHUNK_GET joins its file and formats its hash */                      \
    X(CHUNK_KIND, "SELECT kind FROM chunks WHERE id = ?1")                                         \
    X(REFS_OF_FILE_KIND,                                                                           \
      "SELECT chunk_id, name FROM refs WHERE " IDX_REFS_OF_FILE_1 " AND kind = ?2 "                \
      "AND substr(name, 1, length(?3)) = ?3 ORDER BY id")                                          \
    X(CHUNK_QUAL, "SELECT c.file_id, f.module, c.symbol FROM chunks c "                            \
                  "JOIN files f ON f.id = c.file_id WHERE c.id = ?1")                              \
    X(REF_RESOLVED, "UPDATE refs SET resolved = 1 WHERE id = ?1")                                  \
    X(EDGE_INSERT, "INSERT INTO edges(src, dst, kind, ref_id) VALUES (?1, ?2, ?3, ?4)")            \
    X(EDGE_DELETE_REF, "DELETE FROM edges WHERE src = ?2 AND ref_id = ?1")                         \
    X(EDGE_OUT, "SELECT e.src, e.dst, e.kind, c.kind, c.file_id, c.end_line - c.start_line + "     \
                "1, " EDGE_BUILDS " FROM edges e JOIN chunks c ON c.id = e.dst "                   \
                "LEFT JOIN refs r ON r.id = e.ref_id WHERE e.src = ?1")                            \
    X(EDGE_IN, "SELECT e.src, e.dst, e.kind, c.kind, c.file_id, c.end_line - c.start_line + "      \
               "1, " EDGE_BUILDS " FROM edges e JOIN chunks c ON c.id = e.src "                    \
               "LEFT JOIN refs r ON r.id = e.ref_id WHERE e.dst = ?1")                             \
    X(RM_MARK_DEPENDENTS,                                                                          \
      "UPDATE refs SET resolved = 0 WHERE id IN (SELECT ref_id FROM edges "                        \
      "WHERE ref_id != 0 AND dst IN (SELECT id FROM chunks WHERE file_id = ?1)) "                  \
      "AND NOT " IDX_REFS_OF_FILE_1)                                                               \
    X(RM_EDGES_IN, "DELETE FROM edges WHERE dst IN (SELECT id FROM chunks WHERE file_id = ?1)")    \
    X(RM_EDGES_OUT, "DELETE FROM edges WHERE src IN (SELECT id FROM chunks WHERE file_id = ?1)")   \
    X(RM_SYMBOLS, "DELETE FROM symbols WHERE " IDX_SYMBOLS_OF_FILE_1)                              \
    X(RM_IMPORTS, "DELETE FROM imports WHERE file_id = ?1")                                        \
    X(RM_REFS, "DELETE FROM refs WHERE " IDX_REFS_OF_FILE_1)                                       \
    X(RM_PP, "DELETE FROM pp WHERE file_id = ?1")                                                  \
    X(RM_PP_DEFS, "DELETE FROM pp_defs WHERE file_id = ?1")                                        \
    X(PP_DEFS_SIG, "SELECT sig FROM pp_defs WHERE file_id = ?1")                                   \
    X(PP_DEFS_PUT, "INSERT OR REPLACE INTO pp_defs(file_id, sig, names) VALUES (?1, ?2, ?3)")      \
    X(PP_NAMED_HAS, "SELECT 1 FROM pp_named WHERE name = ?1")                                      \
    X(PP_NAMED_PUT, "INSERT OR IGNORE INTO pp_named(name) VALUES (?1)")                            \
    X(PP_NAMED_DEL, "DELETE FROM pp_named WHERE name = ?1")                                        \
    X(PP_DEF_TEXTS, "SELECT text FROM pp WHERE name = ?1 AND kind = 1")                            \
    X(PP_DEF_DROP, "DELETE FROM pp WHERE name = ?1 AND kind = 1")                                  \
    X(PP_DEF_IN_FILE, "SELECT 1 FROM pp WHERE name = ?1 AND kind = 1 AND file_id = ?2 LIMIT 1")    \
    X(PP_TEXT_AT, "SELECT name, text FROM pp WHERE rowid = ?1")                                    \
    X(FILE_PATH_HASH, "SELECT path, hash FROM files WHERE id = ?1")                                \
    /* the other first pieces named like chunk ?1 in its file: its variants */                     \
    X(CHUNK_VARIANTS, "SELECT b.id FROM chunks a JOIN chunks b ON b.file_id = a.file_id "          \
                      "AND b.symbol = a.symbol AND b.kind = a.kind AND b.id != a.id "              \
                      "AND b.win <= 1 AND b.cont = 0 WHERE a.id = ?1 AND a.symbol != '' "          \
                      "AND EXISTS (SELECT 1 FROM pp WHERE file_id = a.file_id AND kind = 0) "      \
                      "ORDER BY b.start_line LIMIT 16")                                            \
    X(PP_INSERT, "INSERT INTO pp(file_id, kind, start_line, end_line, name, text) "                \
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6)")                                                \
    /* the innermost conditional branch of file ?1 holding lines ?2..?3 */                         \
    X(PP_COND_AT, "SELECT text FROM pp WHERE file_id = ?1 AND kind = 0 AND start_line <= ?2 "      \
                  "AND end_line >= ?3 ORDER BY start_line DESC LIMIT 1")                           \
    /* the lines ?2..?3 of file ?1 where ?4 is called by a definition calling it under a branch */ \
    X(PP_SITES, "SELECT start_line FROM pp WHERE file_id = ?1 AND kind = 2 AND start_line "        \
                "BETWEEN ?2 AND ?3 AND name = ?4 ORDER BY start_line LIMIT 64")                    \
    /* the definitions (kind 1) of macro ?1, by path and position (pp.c takes the first that       \
     * holds: never by file id, which follows the order files were written in) */                  \
    X(PP_MACRO, "SELECT p.kind, p.file_id, p.start_line, p.text FROM pp p "                        \
                "JOIN files f ON f.id = p.file_id WHERE p.name = ?1 AND p.kind = 1 "               \
                "ORDER BY f.path, p.start_line LIMIT 64")                                          \
    X(RM_CHUNKS, "DELETE FROM chunks WHERE file_id = ?1")                                          \
    /* what a rewritten file keeps (update/keep.c): its chunks, the ones naming a symbol,          \
     * its refs, their edges, and other files' edges into it */                                    \
    X(KEEP_CHUNKS, "SELECT id, start_line, end_line, win, kind, symbol, own_name, signature, "     \
                   "docstring, parent_id, hash_bits, cont FROM chunks WHERE file_id = ?1 "         \
                   "ORDER BY id")                                                                  \
    X(KEEP_OWNERS, "SELECT chunk_id FROM symbols WHERE " IDX_SYMBOLS_OF_FILE_1)                    \
    X(KEEP_REFS,                                                                                   \
      "SELECT id, chunk_id, kind, name, argc, resolved FROM refs WHERE " IDX_REFS_OF_FILE_1        \
      " ORDER BY id")                                                                              \
    X(KEEP_EDGES_OUT, "SELECT e.ref_id, e.dst, e.kind FROM chunks c JOIN edges e ON e.src = c.id " \
                      "WHERE c.file_id = ?1 AND e.ref_id != 0 ORDER BY e.ref_id, e.rowid")         \
    X(KEEP_EDGES_IN, "SELECT e.rowid, s.file_id, e.dst, e.kind, e.ref_id FROM chunks d "           \
                     "JOIN edges e ON e.dst = d.id JOIN chunks s ON s.id = e.src "                 \
                     "WHERE d.file_id = ?1 AND s.file_id != ?1 ORDER BY e.rowid")                  \
    X(KEEP_IMPORTS, "SELECT alias, target FROM imports WHERE file_id = ?1 ORDER BY rowid")         \
    X(KEEP_EDGE_DEL, "DELETE FROM edges WHERE rowid = ?1")                                         \
    X(KEEP_EDGE_DST, "UPDATE edges SET dst = ?2 WHERE rowid = ?1")                                 \
    X(KEEP_REF_DIRTY, "UPDATE refs SET resolved = 0 WHERE id = ?1 AND resolved = 1")               \
    X(KEEP_REFS_RESOLVED, "UPDATE refs SET resolved = 1 WHERE id BETWEEN ?1 AND ?2")               \
    X(DATA_VERSION, "PRAGMA data_version")                                                         \
    X(META_GET, "SELECT value FROM meta WHERE key = ?1")                                           \
    X(META_PUT, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")

typedef enum {
#define IDX_X(name, sql) STMT_##name,
    IDX_STMT_MAP(IDX_X)
#undef IDX_X
        STMT__COUNT
} StmtId;

/* In-memory BM25F index (postings.c). */
typedef struct Postings Postings;

typedef struct Bm25Params {
    double k1;
    double b[4];      /* length normalisation per field: name, path, doc, body */
    double weight[4]; /* field weights */
} Bm25Params;

/* Recently read workspace files, revalidated by size and mtime on every
 * use (query.c): packing and verification read the same few files. */
#define FILE_CACHE_SLOTS 64

typedef struct FileCacheEntry {
    char *path; /* relative; NULL: empty slot */
    int64_t size, mtime_ns;
    uint64_t dev, ino; /* of the file read (opened under the root) */
    StrBuf text;
    size_t *line_off; /* start of each line, plus the end */
    uint32_t n_lines;
    uint64_t used;
} FileCacheEntry;

typedef struct FileCache {
    FileCacheEntry v[FILE_CACHE_SLOTS];
    uint64_t tick;
} FileCache;

void idx_store_file_cache_release(FileCache *fc);

/* The rows rows.c read last (IdxStore.rows_cache). */
typedef struct RowsCache RowsCache;
void idx_store_rows_cache_free(RowsCache *c);

typedef struct Embedder Embedder;
typedef struct VecStore VecStore;
typedef struct VecView VecView;
typedef struct IdxVfs IdxVfs; /* db.c */

/* The dense leg: an object of its own inside the store, touched only by
 * dense.c. */
typedef struct IdxDense {
    Embedder *em; /* NULL: no dense leg (or the builtin model not loaded yet) */
    /* The builtin model is loaded on first use (idx_dense_embedder): a
     * store that never embeds (no Python) never reads its 9 MB. */
    int pending;      /* 1: builtin, not loaded yet */
    char *model_path; /* its configured file (NULL: the default) */
    VecStore *vs;     /* opened on first use by a sync (or a search it cannot serve) */
    VecView *view;    /* searches read the file through it while vs is not open */
    char note[200];   /* why the builtin model is not in use, for status */
    /* Vectors the parse workers computed for chunks written in this update,
     * by ascending chunk id (idx_dense_stage); the next sync adds them
     * instead of embedding those chunks again. */
    int64_t *stage_ids;
    float *stage_vecs;
    size_t n_stage, cap_stage;
    int stage_dim;
    /* Armed (delta set) when a sync left the vectors in memory matching
     * every chunk up to id synced_max, at PRAGMA data_version
     * synced_version; removed then lists the chunks this store deleted
     * since. While no other connection wrote, the next sync need only drop
     * those and add the chunks past synced_max (ids are never reused). */
    int delta;
    int64_t synced_max, synced_version;
    int64_t *removed;
    size_t n_removed, cap_removed;
} IdxDense;

struct IdxStore {
    sqlite3 *db;
    FileCache files;
    IdxDense dense;       /* the dense leg (dense.c) */
    Postings *post;       /* NULL until the first search; kept current by writes */
    int64_t post_version; /* PRAGMA data_version when post was loaded: other
                           * processes' commits change it, ours do not */
    char *root;           /* canonical absolute root */
    /* The index folder as opened and checked once (index_fd), named for
     * every file coderag opens in it through the descriptor,
     * "/proc/self/fd/N": a folder swapped for a symbolic link afterwards
     * redirects nothing. Its canonical path (index_real) when /proc is not
     * there. Messages name index_real. */
    char *index_dir;
    char *index_real;
    int index_fd;
    IdxVfs *vfs;         /* SQLite opens index_dir's files through it */
    IdxShared *shared;   /* a reference: IdxConfig.shared, or one of the store's own */
    IdxQueries *queries; /* borrowed from shared: the compiled queries */
    Chunker *save_ch;    /* idx_update_file's, keeping each language's last tree */
    /* idx_update_file's: the last save's chunks (update/save_memo.c) */
    struct SaveMemo *save_memo;
    Stemmer *save_stem; /* idx_update_file's, while the postings are loaded */
    /* the chunks and outlines rows.c read last */
    struct RowsCache *rows_cache;
    /* idx_read_begin's transactions, counted; in_read while one is open (no
     * other connection's commit shows in it) */
    uint64_t read_seq;
    int in_read;
    /* The facts of the file idx_update_file wrote last (write.c), kept for
     * the next save's old facts: state 1 written, 2 committed at
     * save_facts_version (PRAGMA data_version: another connection's commit
     * since drops them, as does any other write on this one). */
    struct IdxFacts *save_facts;
    int64_t save_facts_file, save_facts_version;
    int save_facts_state, save_facts_want; /* want: idx_update_file's write */
    IdxModels *models;                     /* borrowed from shared: the builtin models */
    char *db_path;
    char **exclude;
    size_t n_exclude;
    size_t max_file_bytes;
    /* how this project reads the suffixes rows share (a C++ project's
     * ".h" as C++): meta "lang_pick", made by the last update */
    IdxLangPick lang_pick;
    size_t post_budget; /* bytes of posting lists a build holds before spilling */
    int threads;
    int readonly;      /* opened with IDX_OPEN_READONLY: writes nothing, not even caches */
    int post_distrust; /* the postings snapshot proved damaged: load from the text */
    int post_loaded;   /* postings were loaded once: later loads follow other writers */
    char **reread;     /* files (relative paths) to read again in this update: their
                        * imports were resolved against a file that is gone (deps.c), or
                        * their content no longer matches their rows (postings_rebuild.c) */
    size_t n_reread, cap_reread;
    int64_t *post_stale; /* files the last postings build left out: their source no
                          * longer matches their rows (postings_rebuild.c) */
    size_t n_post_stale, cap_post_stale;
    int classes_moved; /* a write changed some file's classes, bases or imports: graph.c follows
                        * every changed inheritance edge into the subclasses */
    /* The first id of the references written in this transaction (write.c),
     * 0 when none is: edges are written by resolution alone, and none has
     * run since, so a reference from here on has none to delete (graph.c
     * takes it and sets it back to 0; every transaction starts at 0). */
    int64_t refs_new_from, refs_new_version; /* and PRAGMA data_version then */
    /* Of those, the ones written resolved with the edges their file's last
     * rows had (update/keep.c): edges to delete should they be marked. */
    I64Map refs_kept;
    /* A cold build writes its calls (every reference but bases and stores)
     * resolved, meta "refs_born" saying so until its resolution commits:
     * that resolution reads them all whatever their mark, and rewrites no
     * row to mark it resolved (graph.c). */
    int refs_born;
    /* Fan-in notes (graph/fanin.c): while fanin_on, the caller edges this
     * transaction wrote (+1) and deleted (-1), summed per (file called,
     * folder calling), written into fanin_dirty before it commits; the
     * files of chunks and the folders of files they were read from. */
    int fanin_on;
    StrMap fanin_notes;      /* "called-file-id TAB calling-folder" -> sum */
    I64Map fanin_chunk_file; /* chunk id -> file id */
    I64Map fanin_file_dir;   /* file id -> 1 + index into fanin_dirs */
    char **fanin_dirs;       /* a file's folder with its '/' ("" at the root) */
    size_t n_fanin_dirs, cap_fanin_dirs;
    int damaged; /* SQLite reported the file damaged (integrity.c): never marked clean */
    struct PpConfig *pp_config; /* the build configuration as last read (pp_config.c), or NULL */
    int pp_all;   /* writes keep every #define (a cold build): idx_pp_settle narrows them */
    int pp_dirty; /* a write changed some file's conditions or defines: settle pp_named */
    /* Another writer holding index.db (store.c's busy handler): a write
     * waits for it up to wait_ms (0: its turn, however long), says once
     * that it waits, and a failure is told as busy (idx_busy), never in
     * SQLite's words. */
    int wait_ms;
    double busy_t0;
    int busy_told;
    int busy_failed;
    sqlite3_stmt *stmts[STMT__COUNT];
};

/* Returns the prepared statement, reset and with bindings cleared; NULL on a
 * prepare failure (detail in e). Borrowed. */
sqlite3_stmt *idx_store_stmt(IdxStore *st, StmtId id, ErrInfo *e);
/* Installs the store's busy handler on st->db (db.c: writers that meet). */
void idx_store_busy_init(IdxStore *st);
/* Runs SQL text without results. */
CrErr idx_store_exec(IdxStore *st, const char *sql, ErrInfo *e);
/* PRAGMA data_version: changes when another connection commits. */
int64_t idx_store_data_version(IdxStore *st);
/* CR_EDB with sqlite3_errmsg copied. */
CrErr idx_store_err(IdxStore *st, ErrInfo *e, const char *what);
/* Steps a statement to completion (no rows expected). */
CrErr idx_store_step_done(IdxStore *st, sqlite3_stmt *s, ErrInfo *e, const char *what);
/* One step of a query: *row is 1 for a row, 0 at the end; an error is an
 * error (CR_EDB), never "no row". */
CrErr idx_store_step(IdxStore *st, sqlite3_stmt *s, int *row, ErrInfo *e, const char *what);
/* A text column as a heap string ("" for NULL); caller frees. */
char *idx_store_col_dup(sqlite3_stmt *s, int i);
/* Of the rows of a bound statement (id, path, line, window), which is
 * reset, the id of the first by path, then line, then window (the first
 * read of equals: a sort's order); *id 0 when none. */
CrErr idx_store_first_placed(IdxStore *st, sqlite3_stmt *s, int64_t *id, ErrInfo *e);
/* meta table values: CR_OK, CR_ENOENT for a missing key (out ""), CR_EDB
 * when it cannot be read (out ""). */
CrErr idx_store_meta_get(IdxStore *st, const char *key, char *out, size_t cap, ErrInfo *e);
CrErr idx_store_meta_put(IdxStore *st, const char *key, const char *value, ErrInfo *e);
/* Records the time of the last completed update in meta. */
CrErr idx_store_touch_update_time(IdxStore *st, ErrInfo *e);
/* deps.c: a file's facts for the resolver (what it defines, re-exports,
 * inherits), to mark the references an update must re-resolve. */
typedef struct IdxFacts {
    char **v;
    size_t n, cap;
} IdxFacts;
/* Appends the facts of a file's rows as they are now. */
CrErr idx_facts_load(IdxStore *st, int64_t file_id, IdxFacts *out, ErrInfo *e);
void idx_facts_release(IdxFacts *f);
/* Drops the facts a save kept (IdxStore.save_facts). */
void idx_store_save_facts_drop(IdxStore *st);
/* Whether the classes, their bases or the imports differ (sorts both). */
int idx_facts_classes_differ(IdxFacts *old, IdxFacts *now);
/* Marks the references a fact that came or went (old vs now) can change. */
CrErr idx_facts_mark(IdxStore *st, IdxFacts *old, IdxFacts *now, ErrInfo *e);
/* Records an import no file answered (spec as written) as rows of alias ""
 * keyed by its last two name parts: a file appearing under such a name has
 * the importer read again. */
CrErr idx_facts_add_pending(IdxStore *st, int64_t file_id, const char *spec, ErrInfo *e);
/* Marks the calls in the methods of class chunk class_id and of its
 * subclasses at any depth. */
CrErr idx_facts_mark_subclasses(IdxStore *st, int64_t class_id, ErrInfo *e);
/* integrity.c. Whether an SQLite result code says the file is damaged. */
int idx_store_code_damaged(int code);
/* Records that the database is damaged (index.db.damaged): the next writable
 * open rebuilds it, every open until then refuses to read it. */
void idx_store_note_damaged(IdxStore *st);
/* Records damage a full check proved (status --check's quick_check), even
 * from a reader (IDX_OPEN_READONLY): the clean mark may still describe the
 * file, so no later open would look. Writes only the marks, never index.db;
 * an index folder that cannot be written keeps no mark. */
void idx_store_record_damaged(IdxStore *st);
/* store.c. Opens st's index.db (st->db_path) for flags (IDX_OPEN_*): checked,
 * repaired or rebuilt where a writer may, made when absent, its root
 * recorded; a reader is told what is wrong instead. */
CrErr idx_store_db_open(IdxStore *st, unsigned flags, ErrInfo *e);
/* Checkpoints and closes st's database, marking it clean. NULL db: nothing. */
void idx_store_db_close(IdxStore *st);
/* store.c. CR_ECORRUPT: the index is damaged (why), `coderag index` rebuilds it. */
CrErr idx_store_refuse_damaged(IdxStore *st, const char *why, ErrInfo *e);
/* After a clean close: index.db.clean describes the file as it is now, so
 * the next open trusts it without a quick_check. */
void idx_store_mark_clean(IdxStore *st);
/* Removes both marks (the database is being rebuilt). */
void idx_store_integrity_forget(const IdxStore *st);
/* Whether the open database is damaged (*damaged, the reason appended to
 * why): the damaged mark, else the clean mark, else PRAGMA quick_check.
 * CR_EDB when it cannot tell (a lock, an I/O error). */
CrErr idx_store_integrity(IdxStore *st, int *damaged, StrBuf *why, ErrInfo *e);
/* The index folder dir (the default <root>/.coderag when is_default) as a
 * canonical path in *out_real (caller frees) and a descriptor of the folder
 * checked, opened with O_DIRECTORY|O_NOFOLLOW, in *out_fd (caller closes),
 * made when missing and create is set (else CR_ENOINDEX). Errors: CR_EIO for a default that is a
 * symbolic link or not a directory, or one of coderag's files in it that is
 * not a regular file; CR_EUSAGE for the root or a folder holding it, and,
 * when writable, a folder coderag did not make that holds files
 * (index_dir.c, which marks the folders coderag may write in). */
CrErr idx_dir_claim(const char *real_root, const char *dir, int is_default, int create,
                    int writable, char **out_real, int *out_fd, ErrInfo *e);
/* A file of the index dir opened read-write (made when missing), never
 * through a symlink and only when it is a regular file; -1 otherwise. */
int idx_index_file_open(const IdxStore *st, const char *name);

/* How the files of the index folder open on fd are named: through the
 * descriptor when /proc shows it, else by its canonical path. Caller frees. */
char *idx_dir_access(int fd, const char *real);

/* A SQLite VFS of one store's own (db.c): the default one, except that a
 * database path naming the index folder through its descriptor
 * ("/proc/self/fd/N/index.db") is used as it is. SQLite's unix VFS resolves
 * every symbolic link of a path, /proc's too, back to the folder's name,
 * which a swap of the folder for a link would redirect. Registered under a
 * name of its own (never the default); CR_EDB when SQLite has no default
 * VFS. Free after the connection using it is closed. */
CrErr idx_vfs_new(IdxVfs **out, ErrInfo *e);
const char *idx_vfs_name(const IdxVfs *v);
void idx_vfs_free(IdxVfs *v);

/* store.c. The graph tables' secondary indexes: dropped for a cold build's
 * bulk load, made (when missing) before the graph is resolved and at the
 * start of every later write. In the current transaction. */
CrErr idx_store_indexes_drop(IdxStore *st, ErrInfo *e);
CrErr idx_store_indexes_ensure(IdxStore *st, ErrInfo *e);
/* The same but refs_dirty, which a cold build makes after resolving. */
CrErr idx_store_indexes_ensure_lookup(IdxStore *st, ErrInfo *e);
/* Where SQLite's sorts spill past the page cache: temporary files (on 1)
 * or memory (0, as the store opens). Outside a transaction only. */
CrErr idx_store_sorts_spill_to_disk(IdxStore *st, int on, ErrInfo *e);
/* Drops (make 0) or makes the indexes resolution writes row by row and no
 * lookup reads (refs_dirty unless edges_only, edges_*: graph.c, around a
 * fresh pass's calls). */
CrErr idx_store_resolve_indexes(IdxStore *st, int make, int edges_only, ErrInfo *e);
/* Makes refs_dirty: a cold build that writes its calls resolved makes it
 * on the empty table (graph.c's idx_graph_born_begin), where it holds the
 * few references written unresolved (bases, stores), read by its index. */
CrErr idx_store_dirty_index(IdxStore *st, ErrInfo *e);

/* Scan options of this store (borrowed strings). */
void idx_store_scan_options(const IdxStore *st, ScanOptions *out);

#include "filework_int.h" /* a file's journey from the workers to the writer */

/* ---------------------------------------------------------------- postings (postings.c) */

/* Loads the postings in one read (or the current write) transaction: the
 * snapshot file when it is usable and use_snapshot, plus the files written
 * since it; else everything rebuilt from the source files. Caller frees. */
CrErr idx_postings_load(IdxStore *st, int use_snapshot, Postings **out, ErrInfo *e);
/* Whether enough changed since p's snapshot (or it has none) that writing
 * a new one pays. */
int idx_postings_stale(const Postings *p);
/* Whether a pass that writes n_writes files should load the postings and
 * follow its writes (so that it can write a snapshot at its end): when the
 * snapshot file is missing or not usable, or those files with the files
 * written since it would make it stale. Otherwise the snapshot stays and
 * the next reader adds the files written since it (a one-file pass on the
 * kernel read 1.36 M slots to change a few hundred). In a transaction. */
int idx_postings_pass_follows(IdxStore *st, size_t n_writes);
/* What a snapshot describes: a generation of one database. */
typedef struct PostingsGen {
    char db_id[40];
    int64_t gen;     /* -1: nothing to snapshot */
    int64_t n_files; /* files rows up to gen */
} PostingsGen;
/* The generation that postings loaded at data_version post_version
 * describe; gen is -1 when another process has committed since. Call
 * outside a transaction. */
CrErr idx_postings_current_gen(IdxStore *st, int64_t post_version, PostingsGen *out, ErrInfo *e);
/* Writes p as the snapshot file of generation g (atomically: a reader sees
 * the old file or the new). */
CrErr idx_postings_save(IdxStore *st, Postings *p, const PostingsGen *g, ErrInfo *e);
/* Writes a new snapshot when the in-memory postings have moved far enough
 * from theirs, and reloads from it; outside a transaction, writable stores
 * only; a failure to write costs only speed (logged). */
void idx_store_postings_checkpoint(IdxStore *st);
void idx_postings_free(Postings *p);
/* Adds the chunks of every file written after generation gen (all: -1),
 * their text rebuilt from the source files (postings_rebuild.c). A file
 * whose content hash no longer matches its files row is left out, listed
 * in st->post_stale and, for a writable store, noted in st->reread (the
 * running or next update writes it again). */
CrErr idx_postings_add_files_since(IdxStore *st, Postings *p, int64_t gen, ErrInfo *e);
/* Adds one chunk's four fields (idx_tok_code text: idx_search_fields). */
void idx_postings_add(Postings *p, int64_t chunk_id, int64_t file_id, IdxKind kind,
                      const char *const fields[4]);
/* The same with the fields already stemmed by a parse thread (so that it,
 * not the writer, pays for the stemming): chunk's 4 fields of ft. gid maps
 * ft's local ids to term ids (ft->n entries, UINT32_MAX where not yet
 * looked up), kept across the chunks of one file. */
void idx_postings_add_terms(Postings *p, int64_t chunk_id, int64_t file_id, IdxKind kind,
                            const FileTerms *ft, size_t chunk, uint32_t *gid);

/* The postings' tokenizer (FTS5's porter over unicode61), one per thread:
 * made on the store's thread, usable from one other thread at a time. */
CrErr idx_stemmer_new(IdxStore *st, Stemmer **out, ErrInfo *e);
void idx_stemmer_free(Stemmer *m);
/* The terms of one text: term k is text.buf + off[k], len[k] bytes. */
typedef struct StemTerms {
    StrBuf text;
    uint32_t *off, *len;
    size_t n, cap;
} StemTerms;
/* The terms of text (FTS5_TOKENIZE_* flags) into out, emptied first: each
 * token FTS5's xTokenize gives, colocated ones left out. */
void idx_stem_terms(Stemmer *m, const char *text, int flags, StemTerms *out);
void idx_stem_terms_release(StemTerms *t);
/* Appends the terms of one field's text (idx_tok_code output) to ft. */
void idx_fileterms_add_field(FileTerms *ft, Stemmer *m, const char *text);
/* Frees what only adding needs (the terms stay): no field is added after. */
void idx_fileterms_done(FileTerms *ft);
void idx_fileterms_release(FileTerms *ft);
/* Tombstones every chunk of a file. */
void idx_postings_remove_file(Postings *p, int64_t file_id);
/* Whether a and b hold the same live postings (chunk ids and term
 * frequencies of every term); else says where they differ in why. */
int idx_postings_same(Postings *a, Postings *b, char *why, size_t cap);
/* Whether a damaged list of p's snapshot has been met. */
int idx_postings_damaged(const Postings *p);
/* Chunks the postings hold now (live slots: those of removed files left out). */
size_t idx_postings_live(const Postings *p);
/* Whether enough is tombstoned that a reload pays. */
int idx_postings_needs_rebuild(const Postings *p);
/* Adds the term ids of a query text (idx_tok_code output) to out[n..cap),
 * skipping ids already there; unknown terms are dropped and counted in
 * *n_unknown (may be NULL). Returns the new count. */
size_t idx_postings_query_terms(Postings *p, const char *text, uint32_t *out, size_t n, size_t cap,
                                size_t *n_unknown);
/* BM25F top-k, best first; out has room for k. Unknown query words count
 * towards the hits' coverage. */
size_t idx_postings_search(Postings *p, const uint32_t *terms, size_t n_terms, size_t n_unknown,
                           const Bm25Params *bp, size_t k, IdxHit *out);
/* Drops the in-memory postings (after a rolled-back write); the next
 * search reloads them. */
void idx_store_postings_invalidate(IdxStore *st);

/* ---------------------------------------------------------------- dense (dense.c) */

/* Creates the configured embedder (none for builtin). */
CrErr idx_dense_open(IdxStore *st, const IdxConfig *cfg, ErrInfo *e);
void idx_dense_close(IdxStore *st);
/* Texts embedded per call. */
#define IDX_EMBED_BATCH 64
/* dense_state.c. The embedder, the builtin model loaded now if it was not yet (a model
 * that cannot be loaded is logged once, kept in dense.note and leaves no
 * dense leg). NULL: no dense leg. */
Embedder *idx_dense_embedder(IdxStore *st);
/* <index_dir>/vectors.faiss. Caller frees. */
char *idx_dense_vectors_path(const IdxStore *st);
/* dense_state.c. Records what the vectors were brought in line with (the
 * embedder, the chunks' highest id (*max_id, may be NULL) and count, the
 * vector files' sizes) and how many there are. */
CrErr idx_dense_note_synced(IdxStore *st, int64_t count, int64_t *max_id, ErrInfo *e);
/* Whether the vectors are as the last sync left them (then *count is how
 * many), told without loading the builtin model. */
int idx_dense_synced(IdxStore *st, int64_t *count);
/* The highest chunk id the last sync saw when it left no vectors and no
 * vector file (nothing the embedder covers): only the chunks written since
 * can need one. -1 otherwise. */
int64_t idx_dense_synced_empty_upto(IdxStore *st);
/* Brings the vectors in line with the chunks; no-op without an embedder. */
CrErr idx_dense_sync(IdxStore *st, ErrInfo *e);
/* Drops the in-memory vectors (reopened from the file on next use). */
void idx_dense_forget(IdxStore *st);
/* Vectors stored (0 without an embedder). */
int64_t idx_dense_count(IdxStore *st);
/* Reads the vector file now, when there is one (a failure is left for the
 * search to report). */
void idx_dense_preload(IdxStore *st);
/* The text a chunk is embedded from: where it is, what it is called
 * (symbol, or the module for module code), then its body as the search
 * text has it (idx_chunk_body), cut at IDX_EMBED_TEXT_CHARS. */
#define IDX_EMBED_TEXT_CHARS 2000
void idx_dense_text(const char *path, const char *name, int cont, const char *signature,
                    const char *lines, size_t len, StrBuf *out);
/* The embedder parse workers may call while they prepare files (one that
 * computes locally and is safe on several threads), or NULL. */
Embedder *idx_dense_parse_embedder(IdxStore *st);
/* The same for the parse workers of these n files: NULL (no model loaded)
 * when the embedder covers none of them. */
Embedder *idx_dense_parse_embedder_for(IdxStore *st, const FileWork *work, size_t n);
/* Keeps a vector a parse worker computed for chunk id, just written; ids
 * come in ascending order. Copied. */
void idx_dense_stage(IdxStore *st, int64_t id, const float *v, int dim);
/* Notes the chunks of file_id, about to be deleted in this write, for the
 * next sync's delta; an error when they cannot be read (the write fails). */
CrErr idx_dense_note_removed(IdxStore *st, int64_t file_id, ErrInfo *e);
/* Ends a write: forgets what it staged and, when it did not complete
 * (ok 0: rolled back or not synced), the delta, so the next sync compares
 * every id. */
void idx_dense_write_end(IdxStore *st, int ok);

/* ---------------------------------------------------------------- graph (graph.c) */

/* Resolves every ref marked unresolved into edges, in the current
 * transaction. out_edges (may be NULL) receives the count of edges added. */
CrErr idx_graph_resolve_dirty(IdxStore *st, size_t *out_edges, ErrInfo *e);
/* The same, the lookups on st->threads threads over read-only connections
 * (serially when there is one thread or they cannot open): everything but
 * the edges and the resolved marks must be committed. The same edges. */
CrErr idx_graph_resolve_dirty_par(IdxStore *st, size_t *out_edges, ErrInfo *e);
/* A cold build's first step, in its first transaction: the calls it writes
 * from here on are written resolved (st->refs_born, meta "refs_born"). */
CrErr idx_graph_born_begin(IdxStore *st, ErrInfo *e);
/* Whether a reference of this kind is one of the calls a cold build writes
 * resolved (bases and stores are resolved in a group of their own first). */
int idx_graph_born_kind(int kind);
/* (graph/graph_store.c) Marks the calls through field[0..len) (a store
 * into it came, went or names another function now). */
CrErr idx_graph_store_mark(IdxStore *st, const char *field, size_t len, ErrInfo *e);

/* (graph/fanin.c) While on, this connection sums the caller edges written
 * and deleted per (file called, folder calling) (the notes below); off for
 * a cold build, which counts every file. */
CrErr idx_fanin_track(IdxStore *st, int on, ErrInfo *e);
/* Forgets what file_id's row said (its row goes: the id may name another). */
void idx_fanin_file_gone(IdxStore *st, int64_t file_id);
/* Notes the edge from a chunk of src_file to chunk dst of kind written
 * (n = 1) or deleted (n = -1), when tracking is on. */
CrErr idx_fanin_note_edge(IdxStore *st, int64_t src_file, int64_t dst, int kind, int n, ErrInfo *e);
/* Notes the deletion of every edge into and out of file_id's chunks (made
 * right after, before its chunks go), when tracking is on. */
CrErr idx_fanin_note_file(IdxStore *st, int64_t file_id, ErrInfo *e);
/* Writes the notes into fanin_dirty (before a commit); forget drops them
 * and what was read for them (a new transaction: those of one rolled back,
 * and files another connection may have rewritten). */
CrErr idx_fanin_flush(IdxStore *st, ErrInfo *e);
void idx_fanin_forget(IdxStore *st);
/* Brings the fanin table up to date once references are resolved: every
 * file (all: a cold build), or the files noted since the last settle. */
CrErr idx_fanin_settle(IdxStore *st, int all, ErrInfo *e);

#endif
