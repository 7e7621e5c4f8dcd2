/* test_fanin.c - a file's fan-in (idx_file_fanin): the folders, but its
 * own, whose code calls into it; counted by a cold build, and kept equal to
 * a fresh build's by updates (whole-tree and one file). */
#include "index/store/store_int.h" /* the connection, to read the table */
#include "test.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

static char root[128], inc_dir[160];
static long long stamp = 1700000000;

/* Writes root/rel with an mtime one second after the last write's. */
static void put(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdir(p, 0755);
    *slash = '/';
    test_put(root, rel, text);
    struct utimbuf t = {(time_t)stamp, (time_t)stamp};
    stamp++;
    CHECK(utime(p, &t) == 0);
}

static IdxStore *open_at(const char *dir)
{
    IdxConfig cfg = {.root = root, .index_dir = dir, .threads = 1};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    return st;
}

static int fanin_of(IdxStore *st, const char *path)
{
    sqlite3_stmt *s = NULL;
    int64_t id = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT id FROM files WHERE path = ?1", -1, &s, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
        if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return id ? idx_file_fanin(st, id) : -1;
}

/* The fanin table as text ("path=dirs;" in path order). */
static char *dump(IdxStore *st)
{
    StrBuf sb;
    sb_init(&sb);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT f.path, n.dirs FROM fanin n JOIN files f ON f.id = n.file_id "
                           "ORDER BY f.path",
                           -1, &s, NULL) == SQLITE_OK)
        while (sqlite3_step(s) == SQLITE_ROW)
            sb_addf(&sb, "%s=%d;", (const char *)sqlite3_column_text(s, 0),
                    sqlite3_column_int(s, 1));
    sqlite3_finalize(s);
    return sb_detach(&sb, NULL);
}

/* The incremental index's table equals a fresh build's of the same tree. */
static void same_as_fresh(IdxStore *inc)
{
    char fresh[160];
    snprintf(fresh, sizeof fresh, "%s.fresh", root);
    test_sh("rm -rf '%s'; mkdir -p '%s'", fresh, fresh);
    IdxStore *f = open_at(fresh);
    if (!f) return;
    CHECK_INT(idx_update(f, NULL, NULL, NULL, NULL), CR_OK);
    char *a = dump(inc), *b = dump(f);
    CHECK_STR(a, b);
    free(a);
    free(b);
    idx_close(f);
}

static void test_fanin_counts_and_updates(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-fanin.XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    snprintf(inc_dir, sizeof inc_dir, "%s.idx", root);
    test_sh("rm -rf '%s'; mkdir -p '%s'", inc_dir, inc_dir);
    put("core/sched.c", "int pick(void) { return 1; }\nvoid schedule(void) { pick(); }\n");
    put("core/helper.c", "int pick(void);\nint helper(void) { return pick(); }\n");
    put("a/x.c", "void schedule(void);\nvoid a_run(void) { schedule(); }\n");
    put("b/y.c",
        "void schedule(void);\nint pick(void);\nvoid b_run(void) { schedule(); pick(); }\n");
    put("tool/t.c", "static int tool_only(void) { return 2; }\nint tool_main(void) { return "
                    "tool_only(); }\n");
    IdxStore *st = open_at(inc_dir);
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    /* a/ and b/ call into core/sched.c; core/helper.c is its own folder */
    CHECK_INT(fanin_of(st, "core/sched.c"), 2);
    CHECK_INT(fanin_of(st, "core/helper.c"), 0);
    CHECK_INT(fanin_of(st, "tool/t.c"), 0);

    /* a caller stops calling, another folder starts, one goes */
    put("b/y.c", "void b_run(void) { }\n");
    put("c/z.c", "int pick(void);\nint c_run(void) { return pick(); }\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(fanin_of(st, "core/sched.c"), 2);
    same_as_fresh(st);
    test_sh("rm -f '%s/a/x.c'", root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(fanin_of(st, "core/sched.c"), 1);
    same_as_fresh(st);

    /* the file called is rewritten (new chunks), then one file saved */
    put("core/sched.c", "int pick(void) { return 3; }\n\nvoid schedule(void) { pick(); }\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(fanin_of(st, "core/sched.c"), 1);
    same_as_fresh(st);
    put("tool/t.c", "void schedule(void);\nint tool_main(void) { schedule(); return 0; }\n");
    CHECK_INT(idx_update_file(st, "tool/t.c", NULL), CR_OK);
    CHECK_INT(fanin_of(st, "core/sched.c"), 2);
    same_as_fresh(st);
    /* the file called goes: its callers' edges with it */
    test_sh("rm -f '%s/core/sched.c'", root, "");
    put("core/pick.c", "int pick(void) { return 4; }\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(fanin_of(st, "core/sched.c"), -1);
    CHECK_INT(fanin_of(st, "core/pick.c"), 1); /* c/z.c */
    same_as_fresh(st);
    idx_close(st);
    test_sh("rm -rf '%s' '%s.idx'", root, root);
    test_sh("rm -rf '%s.fresh'", root, "");
}

int main(void)
{
    RUN(test_fanin_counts_and_updates);
    return test_summary();
}
