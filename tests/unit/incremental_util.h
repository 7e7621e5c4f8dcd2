/*
 * incremental_util.h - the harness of test_incremental.c: a small tree in
 * several languages written with strictly increasing mtimes, seeded random
 * edits of it, and the comparison of an incrementally updated index with a
 * fresh one, row for row and edge for edge (dump, same_as_fresh), for random
 * scripts (run_script) and named cases (run_case). One test includes it.
 */
#ifndef CODERAG_INCREMENTAL_UTIL_H
#define CODERAG_INCREMENTAL_UTIL_H

#include "index/store/store_int.h" /* the connection, to read the rows */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[128], inc_dir[160], fresh_dir[160];
static IdxShared *shared; /* the queries compiled once, as a server does */

/* ---------------------------------------------------------------- the tree */

static const char *const names[] = {"alpha", "beta", "gamma", "delta", "omega", "Shape"};
#define N_NAMES (sizeof names / sizeof names[0])
/* Python modules (pkg is a package), a JS file and a Go file. */
static const char *const py_mods[] = {"pkg/__init__.py", "pkg/m1.py", "pkg/m2.py",
                                      "app.py",          "util.py",   "pkg/sub.py"};
#define N_PY (sizeof py_mods / sizeof py_mods[0])

static unsigned long long rng;
/* random_py also writes typed receivers: attribute facts, annotated
 * results, calls on call results and attributes (off: the scripts of the
 * seeds before these forms, unchanged) */
static int typed_py;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static long long writes; /* each write's mtime is one second after the last */

static void write_file(const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdir(p, 0755);
    *slash = '/';
    FILE *f = fopen(p, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
    /* a distinct mtime, so that the update's size-and-mtime test sees it */
    struct timespec t[2] = {{1600000000 + ++writes, 0}, {1600000000 + writes, 0}};
    utimensat(AT_FDCWD, p, t, 0);
}

static const char *py_module_of(const char *rel, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", rel);
    char *dot = strrchr(buf, '.');
    if (dot) *dot = '\0';
    for (char *c = buf; *c; c++)
        if (*c == '/') *c = '.';
    size_t n = strlen(buf);
    if (n > 9 && !strcmp(buf + n - 9, ".__init__")) buf[n - 9] = '\0';
    return buf;
}

/* A random Python file: imports of other modules' names (some through the
 * package, some starred), definitions from a small vocabulary (so names
 * collide across files), calls of bare, imported and dotted names. */
static void random_py(const char *rel, StrBuf *out)
{
    char mod[128], self[128];
    py_module_of(rel, self, sizeof self);
    unsigned n_imp = rnd(4);
    for (unsigned i = 0; i < n_imp; i++) {
        const char *other = py_mods[rnd(N_PY)];
        py_module_of(other, mod, sizeof mod);
        if (!strcmp(mod, self)) continue;
        switch (rnd(4)) {
        case 0:
            sb_addf(out, "import %s\n", mod);
            break;
        case 1:
            sb_addf(out, "from %s import *\n", mod);
            break;
        default:
            sb_addf(out, "from %s import %s\n", mod, names[rnd(N_NAMES)]);
        }
    }
    unsigned n_defs = rnd(4);
    for (unsigned i = 0; i < n_defs; i++) {
        const char *name = names[rnd(N_NAMES)];
        if (name[0] == 'S') {
            sb_addf(out, "\n\nclass %s(%s):\n    def area(self):\n        return self.%s()\n", name,
                    rnd(2) ? "object" : names[rnd(N_NAMES)], names[rnd(N_NAMES - 1)]);
            if (typed_py)
                sb_addf(out,
                        "\n    def __init__(self):\n        self.h = %s()\n\n"
                        "    def make(self) -> %s:\n        return self\n",
                        names[rnd(N_NAMES)], names[rnd(N_NAMES)]);
            continue;
        }
        const char *ret = typed_py && rnd(2) ? names[rnd(N_NAMES)] : NULL;
        sb_addf(out, "\n\ndef %s(x)%s%s:\n", name, ret ? " -> " : "", ret ? ret : "");
        unsigned n_calls = 1 + rnd(3);
        for (unsigned k = 0; k < n_calls; k++) {
            switch (typed_py ? rnd(6) : rnd(3)) {
            case 3:
                sb_addf(out, "    x = %s().h.%s()\n", names[rnd(N_NAMES)], names[rnd(N_NAMES)]);
                break;
            case 4:
                sb_addf(out, "    x = %s(x).make().%s()\n", names[rnd(N_NAMES)],
                        names[rnd(N_NAMES)]);
                break;
            case 5:
                sb_addf(out, "    x = x.h.%s\n", names[rnd(N_NAMES)]);
                break;
            case 0:
                sb_addf(out, "    x = %s(x)\n", names[rnd(N_NAMES)]);
                break;
            case 1:
                sb_addf(out, "    x = pkg.%s(x)\n", names[rnd(N_NAMES)]);
                break;
            default:
                sb_addf(out, "    x = x.%s()\n", names[rnd(N_NAMES)]);
            }
        }
        sb_adds(out, "    return x\n");
    }
}

static void random_js(StrBuf *out)
{
    unsigned n = rnd(3);
    for (unsigned i = 0; i < n; i++)
        sb_addf(out, "function %s(x) {\n  return %s(x);\n}\n\n", names[rnd(N_NAMES)],
                names[rnd(N_NAMES)]);
}

static void random_go(StrBuf *out)
{
    sb_adds(out, "package main\n\n");
    unsigned n = rnd(3);
    for (unsigned i = 0; i < n; i++)
        sb_addf(out, "func %s(x int) int {\n\treturn %s(x)\n}\n\n", names[rnd(N_NAMES)],
                names[rnd(N_NAMES)]);
}

/* Rust: traits and impls of them from a small vocabulary, methods named
 * like the other languages' definitions, and calls on receivers the
 * indexer cannot type (resolved by interface dispatch). */
static void random_rs(StrBuf *out)
{
    static const char *const traits[] = {"Reader", "Writer"}, *const types[] = {"Foo", "Bar"};
    for (unsigned i = 0, n = 1 + rnd(4); i < n; i++) {
        const char *a = names[rnd(2)], *b = names[rnd(2)]; /* that trait and impl meet */
        switch (rnd(3)) {
        case 0:
            sb_addf(out, "pub trait %s {\n    fn %s(&self) -> i32;\n}\n\n", traits[rnd(2)], a);
            break;
        case 1:
            sb_addf(
                out,
                "impl %s for %s {\n    fn %s(&self) -> i32 {\n        self.r.%s()\n    }\n}\n\n",
                traits[rnd(2)], types[rnd(2)], a, b);
            break;
        default:
            sb_addf(out, "pub fn %s(w: &W) -> i32 {\n    w.inner.%s()\n}\n\n", a, b);
        }
    }
}

/* A Rust file's impls moved to the other trait, one or more, the methods
 * the same (a rewrite changes the methods too, and so hides the move). */
static void flip_impls(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char text[4096];
    FILE *f = fopen(p, "r");
    if (!f) return;
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    int flipped = 0;
    for (char *c = text; (c = strstr(c, "impl ")) != NULL; c += 5) {
        if (rnd(2) && flipped) continue;
        if (!strncmp(c + 5, "Reader", 6))
            memcpy(c + 5, "Writer", 6), flipped = 1;
        else if (!strncmp(c + 5, "Writer", 6))
            memcpy(c + 5, "Reader", 6), flipped = 1;
    }
    write_file(rel, text);
}

static void rewrite(const char *rel)
{
    StrBuf sb;
    sb_init(&sb);
    size_t n = strlen(rel);
    if (n > 3 && !strcmp(rel + n - 3, ".js"))
        random_js(&sb);
    else if (n > 3 && !strcmp(rel + n - 3, ".go"))
        random_go(&sb);
    else if (n > 3 && !strcmp(rel + n - 3, ".rs"))
        random_rs(&sb);
    else
        random_py(rel, &sb);
    write_file(rel, sb.buf ? sb.buf : "");
    sb_release(&sb);
}

static const char *const all_files[] = {
    "pkg/__init__.py", "pkg/m1.py",   "pkg/m2.py", "app.py",   "util.py", "pkg/sub.py",
    "web/main.js",     "cmd/main.go", "src/a.rs",  "src/b.rs", "src/c.rs"};
#define N_FILES (sizeof all_files / sizeof all_files[0])

/* One random edit; *changed gets the path a save would name (for renames,
 * the new one; *also the old). */
static void random_edit(const char **changed, const char **also)
{
    const char *rel = all_files[rnd(N_FILES)];
    char p[512], q[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    *changed = rel;
    *also = NULL;
    switch (rnd(6)) {
    case 0: /* deleted */
        unlink(p);
        break;
    case 1: /* emptied */
        write_file(rel, "");
        break;
    case 2: { /* renamed onto another file's name */
        const char *to = all_files[rnd(N_FILES)];
        snprintf(q, sizeof q, "%s/%s", root, to);
        if (strcmp(to, rel) != 0 && access(p, F_OK) == 0 && rename(p, q) == 0) {
            struct timespec t[2] = {{1600000000 + ++writes, 0}, {1600000000 + writes, 0}};
            utimensat(AT_FDCWD, q, t, 0);
            *changed = to;
            *also = rel;
        }
        break;
    }
    case 3: /* a Rust file's impls moved to another trait */
        if (strstr(rel, ".rs")) {
            flip_impls(rel);
            break;
        }
        rewrite(rel);
        break;
    default: /* rewritten */
        rewrite(rel);
    }
}

/* ---------------------------------------------------------------- comparing */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every row of the index, chunk ids replaced by what the chunk is, sorted:
 * equal for two indexes of one tree however they were built. */
static void dump(IdxStore *st, StrBuf *out)
{
#define CH(c, f) f ".path||':'||" c ".start_line||':'||" c ".win||':'||" c ".symbol"
    static const char *const sql[] = {
        "SELECT 'file', path, module, is_pkg, hash, lines, status FROM files",
        "SELECT 'chunk', " CH("c", "f") ", c.end_line, c.kind, c.name, c.signature, c.hash, c.cont "
                                        "FROM chunks c JOIN files f ON f.id = c.file_id",
        "SELECT 'symbol', s.qualname, s.name, " CH(
            "c", "f") " FROM symbols s "
                      "JOIN chunks c ON c.id = s.chunk_id JOIN files f ON f.id = c.file_id",
        "SELECT 'import', f.path, i.alias, i.target FROM imports i JOIN files f ON f.id = "
        "i.file_id",
        "SELECT 'pp', f.path, p.kind, p.start_line, p.end_line, p.name, p.text FROM pp p "
        "JOIN files f ON f.id = p.file_id",
        "SELECT 'pp_named', name FROM pp_named",
        "SELECT 'pp_defs', f.path, d.sig, hex(d.names) FROM pp_defs d JOIN files f ON f.id = "
        "d.file_id",
        "SELECT 'ref', " CH(
            "c", "f") ", r.kind, r.name, r.resolved FROM refs r "
                      "JOIN chunks c ON c.id = r.chunk_id JOIN files f ON f.id = c.file_id",
        "SELECT 'edge', " CH("a", "fa") ", " CH(
            "b", "fb") ", e.kind, (SELECT name FROM refs WHERE id = e.ref_id) FROM edges e "
                       "JOIN chunks a ON a.id = e.src JOIN files fa ON fa.id = a.file_id "
                       "JOIN chunks b ON b.id = e.dst JOIN files fb ON fb.id = b.file_id",
    };
#undef CH
    char **rows = NULL;
    size_t n = 0, cap = 0;
    for (size_t q = 0; q < sizeof sql / sizeof sql[0]; q++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(st->db, sql[q], -1, &s, NULL) != SQLITE_OK) {
            fprintf(stderr, "dump: %s\n", sqlite3_errmsg(st->db));
            CHECK(0);
            continue;
        }
        while (sqlite3_step(s) == SQLITE_ROW) {
            StrBuf r;
            sb_init(&r);
            for (int c = 0; c < sqlite3_column_count(s); c++) {
                const unsigned char *t = sqlite3_column_text(s, c);
                sb_addf(&r, "%s%s", c ? " | " : "", t ? (const char *)t : "");
            }
            ARRAY_GROW(rows, n + 1, cap);
            rows[n++] = sb_detach(&r, NULL);
        }
        sqlite3_finalize(s);
    }
    qsort(rows, n, sizeof *rows, cmp_str);
    for (size_t i = 0; i < n; i++) {
        sb_addf(out, "%s\n", rows[i]);
        free(rows[i]);
    }
    free(rows);
}

static IdxStore *open_at(const char *dir)
{
    IdxConfig cfg = {.root = root, .index_dir = dir, .threads = 2, .shared = shared};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e)) fprintf(stderr, "idx_open: %s\n", e.msg);
    return st;
}

/* Lines of a that b lacks, at most a few, on stderr. */
static void say_missing(const char *label, const char *a, const char *b)
{
    int shown = 0;
    StrBuf hay, pat;
    sb_init(&hay);
    sb_init(&pat);
    sb_addf(&hay, "\n%s", b);
    for (const char *p = a; *p && shown < 12;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sb_reset(&pat);
        sb_addf(&pat, "\n%.*s\n", (int)len, p);
        if (!strstr(hay.buf, pat.buf)) {
            fprintf(stderr, "  %s: %.*s\n", label, (int)len, p);
            shown++;
        }
        p += len + (nl != NULL);
    }
    sb_release(&hay);
    sb_release(&pat);
}

/* Whether the incremental index equals a fresh one of the tree as it is. */
static int same_as_fresh(IdxStore *inc, int step)
{
    StrBuf a, b;
    sb_init(&a);
    sb_init(&b);
    test_sh("rm -rf '%s'%s", fresh_dir, "");
    IdxStore *fresh = open_at(fresh_dir);
    ErrInfo e = {0};
    CHECK(fresh != NULL);
    if (fresh) CHECK_INT(idx_update(fresh, NULL, NULL, NULL, &e), CR_OK);
    dump(inc, &a);
    if (fresh) dump(fresh, &b);
    idx_close(fresh);
    int same = a.buf && b.buf && !strcmp(a.buf, b.buf);
    if (!same) {
        fprintf(stderr, "step %d: the incremental index differs from a fresh one\n", step);
        say_missing("only incremental", a.buf ? a.buf : "", b.buf ? b.buf : "");
        say_missing("only fresh", b.buf ? b.buf : "", a.buf ? a.buf : "");
    }
    sb_release(&a);
    sb_release(&b);
    return same;
}

/* A fresh random tree (seeded) and an index store for it, not updated yet. */
static IdxStore *start_random_tree(unsigned long long seed)
{
    rng = seed;
    test_sh("rm -rf '%s' '%s'", root, inc_dir);
    mkdir(root, 0755);
    for (size_t i = 0; i < N_FILES; i++)
        rewrite(all_files[i]);
    IdxStore *inc = open_at(inc_dir);
    CHECK(inc != NULL);
    return inc;
}

/* One seeded script: a starting tree, then `steps` edits, each followed by
 * an update (a whole-tree update, or single-file updates of what changed)
 * and the comparison. Stops at the first difference. */
static void run_script(unsigned long long seed, int steps)
{
    IdxStore *inc = start_random_tree(seed);
    if (!inc) return;
    ErrInfo e = {0};
    CHECK_INT(idx_update(inc, NULL, NULL, NULL, &e), CR_OK);
    int ok = same_as_fresh(inc, 0);
    for (int step = 1; step <= steps && ok; step++) {
        int whole = rnd(2);
        unsigned n_edits = 1 + rnd(3);
        for (unsigned k = 0; k < n_edits; k++) {
            const char *changed, *also;
            if (getenv("CODERAG_TEST_VERBOSE")) test_sh("cd '%s' && grep -rn '' . >&2%s", root, "");
            random_edit(&changed, &also);
            if (getenv("CODERAG_TEST_VERBOSE"))
                fprintf(stderr, "step %d: %s%s%s\n", step, changed, also ? " from " : "",
                        also ? also : "");
            if (whole) continue;
            CHECK_INT(idx_update_file(inc, changed, &e), CR_OK);
            if (also) CHECK_INT(idx_update_file(inc, also, &e), CR_OK);
        }
        if (whole) CHECK_INT(idx_update(inc, NULL, NULL, NULL, &e), CR_OK);
        ok = same_as_fresh(inc, step);
        if (!ok) {
            fprintf(stderr, "seed %llu, step %d (%s update); the tree:\n", seed, step,
                    whole ? "whole-tree" : "single-file");
            test_sh("cd '%s' && grep -rn '' . >&2%s", root, "");
        }
    }
    CHECK(ok);
    idx_close(inc);
}

/* A named case: the tree (path, text pairs, NULL-terminated), then edits
 * (path, text; NULL text deletes), each followed by a whole-tree update or
 * a single-file update, and the comparison with a fresh index. */
static void run_case(const char *const *tree, const char *const *edits, int single)
{
    test_sh("rm -rf '%s' '%s'", root, inc_dir);
    mkdir(root, 0755);
    for (size_t i = 0; tree[i]; i += 2)
        write_file(tree[i], tree[i + 1]);
    IdxStore *inc = open_at(inc_dir);
    CHECK(inc != NULL);
    if (!inc) return;
    ErrInfo e = {0};
    CHECK_INT(idx_update(inc, NULL, NULL, NULL, &e), CR_OK);
    int ok = same_as_fresh(inc, 0);
    for (size_t i = 0; edits[i] && ok; i += 2) {
        if (edits[i + 1]) {
            write_file(edits[i], edits[i + 1]);
        } else {
            char p[512];
            snprintf(p, sizeof p, "%s/%s", root, edits[i]);
            unlink(p);
        }
        if (single)
            CHECK_INT(idx_update_file(inc, edits[i], &e), CR_OK);
        else
            CHECK_INT(idx_update(inc, NULL, NULL, NULL, &e), CR_OK);
        ok = same_as_fresh(inc, (int)i / 2 + 1);
    }
    CHECK(ok);
    idx_close(inc);
}

#endif
