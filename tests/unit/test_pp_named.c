/* Which #defines the index keeps (index/update/pp_settle.c): only those of a name
 * some condition could ask for (named by an #if, or by the value of a kept
 * definition), and, as files come to name a macro or stop naming it, the
 * same rows as a fresh build of the same tree; the conditions' answers
 * follow. */
#include "idx.h"
#include "index/pp/pp_int.h"
#include "index/store/store_int.h" /* the connection, to read the rows */
#include "test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[128];

static void put(const char *rel, const char *text)
{
    test_put(root, rel, text);
    /* a new mtime whatever the clock's grain */
    char p[256];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    static long tick = 1000;
    struct timespec t[2] = {{tick, 0}, {tick, 0}};
    tick += 10;
    utimensat(AT_FDCWD, p, t, 0);
}

static IdxStore *open_index(const char *dir, int threads)
{
    IdxConfig cfg = {.root = root, .index_dir = dir, .threads = threads};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    return st;
}

/* The rows of the preprocessor tables, by path, sorted. */
static char *dump(IdxStore *st)
{
    static const char sql[] =
        "SELECT * FROM (SELECT 'pp ' || f.path || ' ' || p.kind || ' ' || p.start_line || ' ' "
        "|| p.end_line || ' ' || p.name || ' ' || p.text AS r FROM pp p JOIN files f ON f.id = "
        "p.file_id UNION ALL SELECT 'named ' || name FROM pp_named UNION ALL SELECT 'defs ' || "
        "f.path || ' ' || d.sig || ' ' || hex(d.names) FROM pp_defs d JOIN files f ON f.id = "
        "d.file_id) ORDER BY r";
    StrBuf sb;
    sb_init(&sb);
    sqlite3_stmt *s = NULL;
    CHECK_INT(sqlite3_prepare_v2(st->db, sql, -1, &s, NULL), SQLITE_OK);
    while (s && sqlite3_step(s) == SQLITE_ROW)
        sb_addf(&sb, "%s\n", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

/* The kept definitions, "NAME@path" sorted, one per line. */
static char *kept(IdxStore *st)
{
    StrBuf sb;
    sb_init(&sb);
    sqlite3_stmt *s = NULL;
    CHECK_INT(sqlite3_prepare_v2(st->db,
                                 "SELECT p.name || '@' || f.path FROM pp p JOIN files f ON f.id = "
                                 "p.file_id WHERE p.kind = 1 ORDER BY 1",
                                 -1, &s, NULL),
              SQLITE_OK);
    while (s && sqlite3_step(s) == SQLITE_ROW)
        sb_addf(&sb, "%s\n", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

/* built or not: line of path, as the conditions say */
static IdxBuilt built_at(IdxStore *st, const char *path, uint32_t line)
{
    sqlite3_stmt *s = NULL;
    int64_t id = 0;
    CHECK_INT(sqlite3_prepare_v2(st->db, "SELECT id FROM files WHERE path = ?1", -1, &s, NULL),
              SQLITE_OK);
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    char *cond = NULL;
    IdxBuilt b = IDX_BUILT_UNKNOWN;
    CHECK_INT(idx_pp_cond(st, id, line, line, &cond, &b, NULL), CR_OK);
    free(cond);
    return b;
}

/* st (updated incrementally) holds the rows a fresh build of the tree holds. */
static void check_fresh(IdxStore *st, const char *step)
{
    char dir[160];
    snprintf(dir, sizeof dir, "%s.fresh", root);
    test_sh("rm -rf '%s'%s", dir, "");
    IdxStore *fresh = open_index(dir, 1);
    if (!fresh) return;
    char *a = dump(st), *b = dump(fresh);
    if (strcmp(a, b)) fprintf(stderr, "%s: incremental:\n%sfresh:\n%s", step, a, b);
    CHECK(!strcmp(a, b));
    free(a);
    free(b);
    idx_close(fresh);
    test_sh("rm -rf '%s'%s", dir, "");
}

#define CHECK_KEPT(st, want)                                                                       \
    do {                                                                                           \
        char *got_ = kept(st);                                                                     \
        if (strcmp(got_, want)) fprintf(stderr, "kept:\n%swant:\n%s", got_, want);                 \
        CHECK(!strcmp(got_, want));                                                                \
        free(got_);                                                                                \
    } while (0)

static void test_named(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-test-pp-named-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    char dir[160];
    snprintf(dir, sizeof dir, "%s.idx", root);
    put("a.h", "#define BASE 2\n#define MID (BASE + 1)\n#define UNUSED 7\n"
               "#define FN(x) ((x) + 1)\n");
    put("b.c", "int f(void) { return 0; }\n");
    put("c.h", "#ifdef EXTRA\n#define BASE 5\n#endif\n#define OTHER 1\n");
    IdxStore *st = open_index(dir, 2);
    if (!st) return;
    /* nothing is named by a condition but EXTRA (defined nowhere) */
    CHECK_KEPT(st, "");
    check_fresh(st, "start");

    /* b.c comes to name MID: MID, and BASE (MID's value names it), from
     * both files that define it; UNUSED and OTHER stay out */
    put("b.c", "int f(void) { return 0; }\n#if MID > 2\nint g(void) { return 1; }\n#endif\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_KEPT(st, "BASE@a.h\nBASE@c.h\nMID@a.h\n");
    CHECK_INT(built_at(st, "b.c", 3), IDX_BUILT_YES);
    check_fresh(st, "named");

    /* a file that defines a named macro is rewritten: its rows follow */
    put("a.h", "#define BASE 0\n#define MID (BASE + 1)\n#define UNUSED 8\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_KEPT(st, "BASE@a.h\nBASE@c.h\nMID@a.h\n");
    CHECK_INT(built_at(st, "b.c", 3), IDX_BUILT_NO);
    check_fresh(st, "rewritten");

    /* MID's value comes to name OTHER: kept through it */
    put("a.h", "#define BASE 0\n#define MID (BASE + OTHER + 2)\n");
    CHECK_INT(idx_update_file(st, "a.h", NULL), CR_OK);
    CHECK_KEPT(st, "BASE@a.h\nBASE@c.h\nMID@a.h\nOTHER@c.h\n");
    CHECK_INT(built_at(st, "b.c", 3), IDX_BUILT_YES);
    check_fresh(st, "through a value");

    /* b.c stops naming MID: every definition goes */
    put("b.c", "int f(void) { return 0; }\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_KEPT(st, "");
    check_fresh(st, "unnamed");

    /* the file that names it is gone and comes back */
    put("d.c", "#if defined(OTHER) && MID\nint h(void) { return 2; }\n#endif\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_KEPT(st, "BASE@a.h\nBASE@c.h\nMID@a.h\nOTHER@c.h\n");
    check_fresh(st, "new file");
    test_sh("rm -f '%s/d.c'%s", root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_KEPT(st, "");
    check_fresh(st, "gone");

    idx_close(st);
    test_sh("rm -rf '%s' '%s'", root, dir);
}

int main(void)
{
    RUN(test_named);
    return test_summary();
}
