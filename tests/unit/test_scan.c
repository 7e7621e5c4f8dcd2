#include "index/idx_int.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- idx_ignore_match */

enum { N = IGNORE_NONE, X = IGNORE_EXCLUDE, I = IGNORE_INCLUDE };

static const struct {
    const char *base, *text, *path;
    int is_dir;
    int want;
} cases[] = {
    /* basename patterns match at any depth */
    {"", "*.pyc", "x.pyc", 0, X},
    {"", "*.pyc", "a/b/x.pyc", 0, X},
    {"", "*.pyc", "a/b/x.py", 0, N},
    {"", "foo", "foo", 0, X},
    {"", "foo", "a/foo", 1, X},
    {"", "foo", "foobar", 0, N},
    {"", "*", "a/b", 0, X},
    /* directory-only */
    {"", "build/", "build", 1, X},
    {"", "build/", "build", 0, N},
    {"", "build/", "src/build", 1, X},
    {"", "doc/frotz/", "doc/frotz", 1, X},
    {"", "doc/frotz/", "a/doc/frotz", 1, N},
    /* anchored: leading or middle slash */
    {"", "/foo", "foo", 0, X},
    {"", "/foo", "a/foo", 0, N},
    {"", "a/foo", "a/foo", 0, X},
    {"", "a/foo", "b/a/foo", 0, N},
    {"", "a/*.py", "a/x.py", 0, X},
    {"", "a/*.py", "a/b/x.py", 0, N},
    /* ** forms */
    {"", "**/foo", "foo", 0, X},
    {"", "**/foo", "x/y/foo", 1, X},
    {"", "**/foo/bar", "foo/bar", 0, X},
    {"", "**/foo/bar", "x/foo/bar", 0, X},
    {"", "**/foo/bar", "x/foo/baz", 0, N},
    {"", "abc/**", "abc/x", 0, X},
    {"", "abc/**", "abc/x/y", 0, X},
    {"", "abc/**", "abc", 1, N},
    {"", "a/**/b", "a/b", 0, X},
    {"", "a/**/b", "a/x/b", 0, X},
    {"", "a/**/b", "a/x/y/b", 0, X},
    {"", "a/**/b", "a/xb", 0, N},
    {"", "a/**/b", "c/a/b", 0, N},
    {"", "**", "p/q/r", 0, X},
    {"", "foo**bar", "fooxbar", 0, X},
    {"", "foo**bar", "foo/bar", 0, N},
    {"", "a/**/*.py", "a/x/y/z.py", 0, X},
    {"", "**/tests/**", "src/tests/unit/t.py", 0, X},
    /* runs of "**" "/" mean one (cut at parse: a line of them was
     * exponential), escaped or glued stars are not runs */
    {"", "**/**/**/foo", "foo", 0, X},
    {"", "**/**/**/foo", "a/b/c/foo", 0, X},
    {"", "**/**/**/foo", "a/b/c/xfoo", 0, N},
    {"", "a/**/**/b", "a/b", 0, X},
    {"", "a/**/**/b", "a/x/y/b", 0, X},
    {"", "a/**/**/b", "a/xb", 0, N},
    {"", "x**/**/b", "xy/b", 0, X},
    {"", "x**/**/b", "x/b", 0, X},
    {"", "**/**/*/**/**/*/zz", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/c.py", 0, N},
    {"", "**/**/*/**/**/*/zz", "a/b/zz", 0, X},
    /* ? and classes */
    {"", "?.py", "a.py", 0, X},
    {"", "?.py", "ab.py", 0, N},
    {"", "a?b", "a/b", 0, N},
    {"", "[abc].py", "b.py", 0, X},
    {"", "[abc].py", "d.py", 0, N},
    {"", "[!a]x", "bx", 0, X},
    {"", "[!a]x", "ax", 0, N},
    {"", "[^a]x", "ax", 0, N},
    {"", "[a-c]z", "bz", 0, X},
    {"", "[a-c]z", "dz", 0, N},
    {"", "[]]x", "]x", 0, X},
    {"", "[[:digit:]]*", "9lives", 0, X},
    {"", "[[:digit:]]*", "lives", 0, N},
    {"", "[[:upper:][:digit:]]x", "Qx", 0, X},
    {"", "x[/]y", "x/y", 0, N},
    {"", "[unterminated", "[unterminated", 0, N},
    /* negation, last match wins */
    {"", "*.py\n!keep.py", "keep.py", 0, I},
    {"", "*.py\n!keep.py", "drop.py", 0, X},
    {"", "!keep.py\n*.py", "keep.py", 0, X},
    {"", "!nothing.py", "nothing.py", 0, I},
    {"", "build/\n!build/", "build", 1, I},
    /* comments, blank lines, escapes, trailing spaces, CRLF */
    {"", "# comment\n\n   \n", "# comment", 0, N},
    {"", "\\#hash", "#hash", 0, X},
    {"", "\\!bang", "!bang", 0, X},
    {"", "\\*star", "*star", 0, X},
    {"", "\\*star", "xstar", 0, N},
    {"", "trail   ", "trail", 0, X},
    {"", "sp\\ ", "sp ", 0, X},
    {"", "sp\\ ", "sp", 0, N},
    {"", "crlf.py\r\nother", "crlf.py", 0, X},
    {"", "\357\273\277bom.py", "bom.py", 0, X},
    /* a nested list only sees its own subtree, relative to its base */
    {"sub", "*.py", "sub/x.py", 0, X},
    {"sub", "*.py", "other/x.py", 0, N},
    {"sub", "*.py", "subx/x.py", 0, N},
    {"sub", "/x.py", "sub/x.py", 0, X},
    {"sub", "/x.py", "sub/d/x.py", 0, N},
    {"sub", "/x.py", "x.py", 0, N},
    {"a/b", "c/d.py", "a/b/c/d.py", 0, X},
    {"a/b", "**/d.py", "a/b/c/e/d.py", 0, X},
    {"sub", "*", "sub", 1, N},
};

static void test_ignore_match(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        IgnoreList *l = idx_ignore_parse(cases[i].base, cases[i].text, strlen(cases[i].text));
        int got = (int)idx_ignore_match(l, cases[i].path, cases[i].is_dir);
        if (got != cases[i].want)
            fprintf(stderr, "ignore case %zu: base '%s' pattern '%s' path '%s'\n", i, cases[i].base,
                    cases[i].text, cases[i].path);
        CHECK_INT(got, cases[i].want);
        idx_ignore_free(l);
    }
    CHECK_INT(idx_ignore_match(NULL, "x.py", 0), IGNORE_NONE);
    idx_ignore_free(NULL);
}

/* ---------------------------------------------------------------- idx_scan_workspace */

static void put(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    /* create parent directories as needed */
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void link_at(const char *root, const char *rel, const char *target)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    CHECK_INT(symlink(target, path), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The tree every scan check runs on: nested .gitignore files, excluded and
 * re-included names, VCS folders and the index dir, symlinked files and folders
 * inside and outside the root, loops, a dangling link, a file over the
 * cap and (when not run as root) an unreadable folder. Returns whether
 * that folder was made. */
static int make_tree(const char *root, const char *outside)
{
    put(root, ".gitignore",
        "# root rules\n"
        "build/\n"
        "!build/keep.py\n" /* cannot re-include inside an excluded dir */
        "*.gen.py\n"
        "secret*.py\n"
        "!secret_ok.py\n"
        "/toplevel_only.py\n"
        "!a.skip.py\n");
    put(root, "a.py", "x = 1\n");
    put(root, "a.skip.py", "x = 1\n");
    put(root, "toplevel_only.py", "");
    put(root, "notes.txt", "not python\n");
    put(root, "secret1.py", "");
    put(root, "secret_ok.py", "");
    put(root, "x.gen.py", "");
    put(root, "build/b.py", "");
    put(root, "build/keep.py", "");
    put(root, "pkg/__init__.py", "");
    put(root, "pkg/.gitignore", "!x.gen.py\nlocal.py\n");
    put(root, "pkg/x.gen.py", "");
    put(root, "pkg/local.py", "");
    put(root, "pkg/toplevel_only.py", "");
    put(root, "pkg/sub/.gitignore", "!local.py\n");
    put(root, "pkg/sub/deep.py", "def f():\n    pass\n");
    put(root, "pkg/sub/local.py", "");
    put(root, "vendor/v.py", "");
    put(root, ".git/hooks/h.py", "");
    put(root, ".git/HEAD", "ref: refs/heads/main\n");
    put(root, ".hg/store/h.py", ""); /* every VCS's folder (idx_vcs_dir), not .git alone */
    put(root, "pkg/.svn/pristine/p.py", "");
    put(root, ".coderag/idx.py", "");
    put(root, ".hidden/h.py", "");
    put(outside, "o.py", "");
    char big[2048];
    memset(big, '#', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    put(root, "pkg/big.py", big);
    link_at(root, "pkg/loop", "..");   /* a loop back to the root */
    link_at(root, "pkg/self", ".");    /* a loop onto itself */
    link_at(root, "pkg/out", outside); /* a directory outside */
    char outfile[PATH_MAX];
    snprintf(outfile, sizeof outfile, "%s/o.py", outside);
    link_at(root, "pkg/outfile.py", outfile); /* a file outside */
    link_at(root, "alias", "pkg/sub");        /* already walked: not listed twice */
    link_at(root, "link.py", "a.py");         /* a file inside: followed */
    link_at(root, "dangling.py", "nowhere.py");
    link_at(root, "ring1.py", "ring2.py"); /* a loop of file links */
    link_at(root, "ring2.py", "ring1.py");
    link_at(root, "gitlink", ".git/hooks"); /* into .git: never */
    int locked = geteuid() != 0;            /* root reads anything */
    if (locked) {
        put(root, "locked/l.py", "");
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/locked", root);
        chmod(p, 0);
    }
    return locked;
}

/* The files listed and the paths skipped, each with its reason. */
static void check_scan(const ScanResult *r, int locked)
{
    static const char *const want_files[] = {
        ".hidden/h.py",     "a.py",
        "link.py",          "notes.txt", /* text is indexed too (language table) */
        "pkg/__init__.py",  "pkg/sub/deep.py",
        "pkg/sub/local.py", "pkg/toplevel_only.py",
        "pkg/x.gen.py",     "secret_ok.py",
    };
    size_t nw = sizeof want_files / sizeof want_files[0];
    CHECK_INT(r->n_files, nw);
    for (size_t i = 0; i < r->n_files; i++) {
        if (i < nw)
            CHECK_STR(r->files[i].path, want_files[i]);
        else
            fprintf(stderr, "unexpected file %s\n", r->files[i].path);
    }
    for (size_t i = 0; i < r->n_files; i++) {
        if (!strcmp(r->files[i].path, "pkg/sub/deep.py")) CHECK_INT(r->files[i].size, 18);
        CHECK(r->files[i].mtime_ns > 0);
    }

    static const struct {
        const char *path, *reason;
    } want_skips[] = {
        {"locked", "unreadable"},           {"pkg/big.py", "too-large"},
        {"pkg/loop", "symlink-loop"},       {"pkg/out", "outside-root"},
        {"pkg/outfile.py", "outside-root"}, {"pkg/self", "symlink-loop"},
        {"ring1.py", "symlink-loop"},       {"ring2.py", "symlink-loop"},
    };
    size_t ns = sizeof want_skips / sizeof want_skips[0], first = locked ? 0 : 1;
    CHECK_INT(r->n_skipped, ns - first);
    for (size_t i = 0; i < r->n_skipped; i++) {
        if (first + i < ns) {
            CHECK_STR(r->skipped[i].path, want_skips[first + i].path);
            CHECK_STR(r->skipped[i].reason, want_skips[first + i].reason);
        } else {
            fprintf(stderr, "unexpected skip %s (%s)\n", r->skipped[i].path, r->skipped[i].reason);
        }
    }
}

/* Single paths agree with the scan. */
static void check_single(const ScanOptions *opt)
{
    static const struct {
        const char *path;
        int want;
    } single[] = {
        {"a.py", 1},
        {"pkg/x.gen.py", 1},
        {"pkg/sub/local.py", 1},
        {"pkg/toplevel_only.py", 1},
        {"link.py", 1},
        {"new_file.py", 1}, /* absent: the rules alone decide */
        {"pkg/new/deeper.py", 1},
        {"x.gen.py", 0},
        {"toplevel_only.py", 0},
        {"secret1.py", 0},
        {"build/keep.py", 0},
        {"build/new.py", 0},
        {"vendor/v.py", 0},
        {"a.skip.py", 0},
        {"pkg/local.py", 0},
        {".git/hooks/h.py", 0},
        {".hg/store/h.py", 0},
        {"pkg/.svn/pristine/p.py", 0},
        {".jj/repo/new.py", 0},
        {".coderag/idx.py", 0},
        {"notes.txt", 1},
        {"pkg/big.py", 0},
        {"pkg/outfile.py", 0},
        {"pkg/out/o.py", 0},
        {"alias/deep.py", 0}, /* listed under its real path */
        {"pkg/loop/a.py", 0},
        {"gitlink/h.py", 0},
        {"../escape.py", 0},
        {"/abs.py", 0},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++) {
        int got = idx_scan_path_included(opt, single[i].path);
        if (got != single[i].want) fprintf(stderr, "idx_scan_path_included(%s)\n", single[i].path);
        CHECK_INT(got, single[i].want);
    }
}

static void test_scan_tree(void)
{
    char tmpl_root[] = "/tmp/cr_scan_XXXXXX", tmpl_out[] = "/tmp/cr_scan_out_XXXXXX";
    CHECK(mkdtemp(tmpl_root) != NULL);
    CHECK(mkdtemp(tmpl_out) != NULL);
    char *root = realpath(tmpl_root, NULL);
    char *outside = realpath(tmpl_out, NULL);
    CHECK(root && outside);
    if (!root || !outside) return;
    int locked = make_tree(root, outside);

    char index_dir[PATH_MAX];
    snprintf(index_dir, sizeof index_dir, "%s/.coderag", root);
    const char *const exclude[] = {"vendor/", "*.skip.py"};
    ScanOptions opt = {root, index_dir, exclude, 2, 1000};
    ScanResult r;
    ErrInfo e = {0};
    CHECK_INT(idx_scan_workspace(&opt, &r, &e), CR_OK);
    check_scan(&r, locked);
    idx_scan_result_release(&r);
    idx_scan_result_release(NULL);
    check_single(&opt);

    /* a missing root is the one fatal error */
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/missing", root);
    ScanOptions bad = {missing, NULL, NULL, 0, 0};
    CHECK_INT(idx_scan_workspace(&bad, &r, &e), CR_ENOENT);
    CHECK(strstr(e.msg, "missing") != NULL);
    CHECK_INT(r.n_files, 0);

    if (locked) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/locked", root);
        chmod(p, 0755);
    }
    rm_tree(root);
    rm_tree(outside);
    struct stat st;
    CHECK(stat(root, &st) != 0 && errno == ENOENT);
    free(root);
    free(outside);
}

/* The files come out in strcmp order of their whole paths, where a
 * directory's walk order (its entries sorted, a directory's name read with
 * '/' after it) and a byte-wise sort of the names disagree ('-' and '.' sort
 * before '/'); the scan skips its final sort when the walk's order is that. */
static void test_scan_order(void)
{
    char tmpl[] = "/tmp/cr_scan_order_XXXXXX";
    CHECK(mkdtemp(tmpl) != NULL);
    char *root = realpath(tmpl, NULL);
    CHECK(root != NULL);
    if (!root) return;
    const char *const files[] = {"a/x.c",   "a-b/y.c", "a.c",   "a.b/w.c", "a0.c",
                                 "a/b/z.c", "ab.c",    "a/b.c", "a/b-c.c", "b.c"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        put(root, files[i], "int x;\n");
    /* a symlinked folder, walked after the tree: its files are listed once,
     * under their real paths */
    link_at(root, "a/0link", "../a-b");
    ScanOptions opt = {root, NULL, NULL, 0, 1000};
    ScanResult r;
    ErrInfo e = {0};
    CHECK_INT(idx_scan_workspace(&opt, &r, &e), CR_OK);
    CHECK_INT(r.n_files, sizeof files / sizeof files[0]);
    for (size_t i = 1; i < r.n_files; i++) {
        if (strcmp(r.files[i - 1].path, r.files[i].path) >= 0)
            fprintf(stderr, "out of order: %s, %s\n", r.files[i - 1].path, r.files[i].path);
        CHECK(strcmp(r.files[i - 1].path, r.files[i].path) < 0);
    }
    idx_scan_result_release(&r);
    rm_tree(root);
    free(root);
}

int main(void)
{
    RUN(test_ignore_match);
    RUN(test_scan_tree);
    RUN(test_scan_order);
    return test_summary();
}
