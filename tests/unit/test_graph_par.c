/* Resolution with its lookups on threads (index/graph/graph_par.c) writes the
 * edges, ids and all, that the serial pass writes: a generated tree big
 * enough for a cold build to take the threaded path (files past a commit
 * batch, refs past many blocks of a page), with import cycles, star
 * imports, inheritance across modules, C calls and macros and a ring of
 * headers, indexed cold with two threads and with one. The threaded path
 * also reads what the tables hold once and skips the probes of names no
 * table holds (graph_names.c); the serial one probes every name. */
#include "idx.h"
#include "index/store/store_int.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { N_PY = 420, N_C = 300, N_H = 40 };

/* Module i imports from 7i and 11i (cycles), subclasses a class of 7i and
 * calls through the import, the base and a star import. */
static void make_tree(const char *root)
{
    char dir[300], rel[64];
    snprintf(dir, sizeof dir, "%s/pkg", root);
    CHECK_INT(mkdir(dir, 0755), 0);
    snprintf(dir, sizeof dir, "%s/csrc", root);
    CHECK_INT(mkdir(dir, 0755), 0);
    test_put(root, "pkg/__init__.py", "");
    for (int i = 0; i < N_PY; i++) {
        int a = (i * 7 + 3) % N_PY, b = (i * 11 + 5) % N_PY;
        StrBuf sb;
        sb_init(&sb);
        sb_addf(&sb, "from pkg.m%d import f%d, C%d\n", a, a, a);
        sb_addf(&sb, "import pkg.m%d as other\n", b);
        /* a name re-exported under another: other.renamed() ends at f of 7b */
        sb_addf(&sb, "from pkg.m%d import f%d as renamed\n", a, a);
        if (i % 5 == 0) sb_addf(&sb, "from pkg.m%d import *\n", b);
        sb_addf(&sb, "\n\nclass C%d(C%d):\n    def run(self):\n", i, a);
        sb_addf(&sb, "        return self.helper() + f%d() + other.f%d()\n\n", a, b);
        sb_addf(&sb, "    def helper(self):\n        return super().run() + self.step%d()\n\n",
                i % 3);
        sb_addf(&sb, "    def step%d(self):\n        return C%d().run()\n\n\n", i % 3, a);
        sb_addf(&sb,
                "def f%d():\n    c = C%d()\n    return c.run() + f%d() + g%d() + other.renamed()\n",
                i, i, a, b);
        snprintf(rel, sizeof rel, "pkg/m%d.py", i);
        test_put(root, rel, sb.buf);
        sb_release(&sb);
    }
    /* a ring of headers, each including the next: a call reaches a
     * definition through up to N_H includes, past the depth a lookup walks
     * (cut short, differently by where it enters the ring) */
    for (int h = 0; h < N_H; h++) {
        StrBuf sb;
        sb_init(&sb);
        sb_addf(&sb, "#include \"hd%d.h\"\n\nstatic inline int hin%d(void)\n{\n", (h + 1) % N_H, h);
        sb_addf(&sb, "    return hin%d() + absent_%d() + shared(%d);\n}\n", (h + 3) % N_H, h % 7,
                h);
        snprintf(rel, sizeof rel, "csrc/hd%d.h", h);
        test_put(root, rel, sb.buf);
        sb_release(&sb);
    }
    test_put(root, "csrc/common.h",
             "#define CALL_TWICE(x) (x() + x())\n#define HELP(n) helper_##n()\nint shared(int);\n");
    for (int i = 0; i < N_C; i++) {
        StrBuf sb;
        sb_init(&sb);
        sb_addf(&sb, "#include \"common.h\"\n#include \"hd%d.h\"\n\n", i % N_H);
        sb_addf(&sb, "static int helper_%d(void) { return hin%d() + absent_%d(); }\n\n", i,
                (i * 5) % N_H, i % 3);
        sb_addf(&sb,
                "int g%d(void)\n{\n    return CALL_TWICE(helper_%d) + g%d() + shared(%d);\n}\n", i,
                i, (i * 3 + 1) % N_C, i);
        sb_addf(&sb, "\nint shared%d(int v)\n{\n    return v ? g%d() : HELP(%d);\n}\n", i, i, i);
        snprintf(rel, sizeof rel, "csrc/c%d.c", i);
        test_put(root, rel, sb.buf);
        sb_release(&sb);
    }
}

/* Every edge row with its id, every reference's resolved mark, and the
 * names of the indexes (a cold build drops and makes some). */
static char *dump_edges(IdxStore *st)
{
    StrBuf sb;
    sb_init(&sb);
    static const char *const sql[] = {
        "SELECT rowid, src, dst, kind, ref_id FROM edges ORDER BY rowid",
        "SELECT id, resolved FROM refs ORDER BY id",
        "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name",
    };
    for (size_t q = 0; q < sizeof sql / sizeof sql[0]; q++) {
        sqlite3_stmt *s = NULL;
        CHECK_INT(sqlite3_prepare_v2(st->db, sql[q], -1, &s, NULL), SQLITE_OK);
        while (s && sqlite3_step(s) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(s); c++)
                sb_addf(&sb, "%s%s", c ? " " : "", (const char *)sqlite3_column_text(s, c));
            sb_adds(&sb, "\n");
        }
        sqlite3_finalize(s);
    }
    return sb_detach(&sb, NULL);
}

static long long count(IdxStore *st, const char *sql)
{
    sqlite3_stmt *s = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static char *cold_build(const char *root, const char *index, int threads, long long *n_edges)
{
    IdxConfig cfg = {.root = root, .index_dir = index, .threads = threads};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    if (!st) return xstrdup("");
    IdxUpdateStats stats = {0};
    CHECK_INT(idx_update(st, NULL, NULL, &stats, &e), CR_OK);
    CHECK(stats.files_changed > 500); /* past a commit batch: the threaded path */
    char *d = dump_edges(st);
    *n_edges = count(st, "SELECT count(*) FROM edges");
    CHECK_INT(count(st, "SELECT count(*) FROM refs WHERE resolved = 0"), 0);
    /* made again after the calls were resolved without them (graph.c) */
    CHECK_INT(count(st, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                        "('refs_dirty', 'edges_src', 'edges_dst')"),
              3);
    idx_close(st);
    return d;
}

static void test_threaded_same_as_serial(void)
{
    char root[] = "/tmp/coderag-test-graph-par-XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char serial[300], par[300];
    snprintf(serial, sizeof serial, "%s.serial", root);
    snprintf(par, sizeof par, "%s.par", root);
    make_tree(root);
    long long n_serial = 0, n_par = 0;
    char *a = cold_build(root, serial, 1, &n_serial);
    char *b = cold_build(root, par, 2, &n_par);
    /* enough edges for many blocks of lookups (graph_par.c: 64 rows each) */
    CHECK(n_serial > 5000);
    CHECK_INT(n_par, n_serial);
    CHECK(!strcmp(a, b));
    free(a);
    free(b);
    test_sh("rm -rf '%s' '%s'", root, serial);
    test_sh("rm -rf '%s'%s", par, "");
}

int main(void)
{
    RUN(test_threaded_same_as_serial);
    return test_summary();
}
