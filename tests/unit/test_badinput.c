/*
 * test_badinput.c - the bad-input catalogue, C level: each case is a
 * workspace (or a source text) a user's disk may hold, with the outcome it
 * must have. Nothing may crash, hang (an alarm fails the case), or leave an
 * index that idx_verify rejects. Process-level cases (read-only file
 * systems, full disks, two servers, crash recovery) are in
 * tests/cli/hardening_*.sh.
 */
#include "index/chunk/lang/lang.h"
#include "index/idx_int.h"
#include "test.h"
#include "vfy.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char base_dir[128];
static char ws[192];
static char index_dir[192];
static const char *current_case = "";

static void on_alarm(int sig)
{
    static const char msg[] = "test_badinput: a case hung (alarm)\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, current_case, strlen(current_case));
    _exit(2);
}

/* A fresh empty workspace and index directory for each case. */
static void fresh(const char *name)
{
    char cmd[512];
    current_case = name;
    snprintf(cmd, sizeof cmd, "rm -rf '%s/ws' '%s/index'", base_dir, base_dir);
    if (system(cmd) != 0) abort();
    snprintf(ws, sizeof ws, "%s/ws", base_dir);
    snprintf(index_dir, sizeof index_dir, "%s/index", base_dir);
    if (mkdir(ws, 0755) != 0) abort();
    alarm(900); /* a last resort against a hang, not a time limit */
}

static void put(const char *rel, const void *data, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", ws, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (system(cmd) != 0) abort();
    *slash = '/';
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    fclose(f);
}

static void puts_(const char *rel, const char *text)
{
    put(rel, text, strlen(text));
}

static IdxStore *open_ws(size_t max_bytes)
{
    IdxConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.root = ws;
    cfg.index_dir = index_dir;
    cfg.max_file_bytes = max_bytes;
    cfg.threads = 2;
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    return st;
}

/* Update, then check the database and return its status. */
static IdxStatus update_ok(IdxStore *st)
{
    IdxStatus s;
    memset(&s, 0, sizeof s);
    ErrInfo e = {0};
    CrErr rc = idx_update(st, NULL, NULL, NULL, &e);
    if (rc) fprintf(stderr, "%s: update: %s\n", current_case, e.msg);
    CHECK_INT(rc, CR_OK);
    rc = idx_verify(st, &e);
    if (rc) fprintf(stderr, "%s: verify: %s\n", current_case, e.msg);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(idx_status(st, &s, &e), CR_OK);
    return s;
}

/* The skip reason recorded for path, or NULL (static buffer). */
static const char *skip_reason(IdxStore *st, const char *path)
{
    static char reason[64];
    IdxSkipped *v = NULL;
    size_t n = 0;
    ErrInfo e = {0};
    const char *r = NULL;
    if (idx_skipped(st, &v, &n, &e) != CR_OK) return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].path, path) == 0) {
            snprintf(reason, sizeof reason, "%s", v[i].reason);
            r = reason;
        }
    idx_skipped_free(v, n);
    return r;
}

static size_t n_chunks(IdxStore *st, const char *path)
{
    IdxChunk *c = NULL;
    size_t n = 0;
    ErrInfo e = {0};
    if (idx_file_chunks(st, path, &c, &n, &e) != CR_OK) return (size_t)-1;
    idx_chunks_free(c, n);
    return n;
}

/* start line of the chunk of symbol in path, 0 when absent */
static uint32_t chunk_line(IdxStore *st, const char *path, const char *symbol)
{
    IdxChunk *c = NULL;
    size_t n = 0;
    uint32_t line = 0;
    ErrInfo e = {0};
    if (idx_file_chunks(st, path, &c, &n, &e) != CR_OK) return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].symbol, symbol) == 0 && c[i].window <= 1) line = c[i].start_line;
    idx_chunks_free(c, n);
    return line;
}

/* ---------------------------------------------------------------- files on disk */

/* Empty files are indexed (a package's __init__.py is often empty) with no
 * chunks, and cost nothing. */
static void test_empty_files(void)
{
    fresh("empty");
    puts_("pkg/__init__.py", "");
    puts_("pkg/mod.py", "def f():\n    return 1\n");
    puts_("blank.py", "\n\n   \n\t\n");
    IdxStore *st = open_ws(0);
    IdxStatus s = update_ok(st);
    CHECK_INT(s.files >= 1, 1);
    CHECK_INT(n_chunks(st, "pkg/__init__.py"), 0);
    CHECK_INT(n_chunks(st, "blank.py"), 0);
    CHECK_INT(n_chunks(st, "pkg/mod.py"), 1);
    CHECK(skip_reason(st, "pkg/__init__.py") == NULL);
    idx_close(st);
}

/* A 1.5 MB generated module: over the default 1 MiB cap it is skipped as
 * "too-large" without being read; with the cap raised it is indexed, split
 * into 100-line windows. */
static void test_large_file(void)
{
    fresh("large");
    StrBuf sb;
    sb_init(&sb);
    /* functions of 200 lines (split into windows) and a blank line each */
    for (int i = 0; sb.len < 1500 * 1000; i++) {
        sb_addf(&sb, "def generated_%d(a):\n", i);
        for (int k = 1; k < 200; k++)
            sb_addf(&sb, "    x%d = a + %d * %d\n", k, k, i);
        sb_adds(&sb, "\n");
    }
    put("big.py", sb.buf, sb.len);
    puts_("small.py", "X = 1\n");
    IdxStore *st = open_ws(0);
    IdxStatus s = update_ok(st);
    CHECK_STR(skip_reason(st, "big.py"), "too-large");
    CHECK_INT(s.files, 1);
    idx_close(st);

    st = open_ws(2 << 20);
    s = update_ok(st);
    CHECK(skip_reason(st, "big.py") == NULL);
    CHECK_INT(s.files, 2);
    CHECK(n_chunks(st, "big.py") > 200);
    CHECK_INT(chunk_line(st, "big.py", "generated_100"), 100 * 201 + 1);
    idx_close(st);
    sb_release(&sb);
}

/* Binary content and invalid UTF-8 in .py files: skipped with a reason,
 * the rest of the workspace indexed. */
static void test_binary_and_bad_utf8(void)
{
    fresh("binary");
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1,    0, 0, 0, 0, 0,
                                        0,    0,   0,   0,   3, 0, 0x3e, 0, 1, 0, 0, 0};
    put("lib.py", elf, sizeof elf);
    static const char latin1[] = "# caf\xe9\ndef f():\n    return '\xff'\n";
    puts_("latin1.py", latin1);
    static const char overlong[] = "def g():\n    return '\xc0\xaf'\n";
    puts_("overlong.py", overlong);
    static const char surrogate[] = "S = '\xed\xa0\x80'\n";
    puts_("surrogate.py", surrogate);
    puts_("ok.py", "def ok():\n    return '\xe2\x98\x83'\n");
    IdxStore *st = open_ws(0);
    IdxStatus s = update_ok(st);
    CHECK_STR(skip_reason(st, "lib.py"), "binary");
    CHECK_STR(skip_reason(st, "latin1.py"), "not-utf8");
    CHECK_STR(skip_reason(st, "overlong.py"), "not-utf8");
    CHECK(skip_reason(st, "surrogate.py") != NULL);
    CHECK_INT(s.files, 1);
    CHECK_INT(n_chunks(st, "ok.py"), 1);
    idx_close(st);
}

/* CRLF, mixed endings, tabs and form feeds do not shift line numbers: every
 * variant puts g at the same line as the LF original. */
static void test_line_endings(void)
{
    fresh("endings");
    puts_("lf.py", "import os\n\ndef f():\n\treturn 1\n\n\ndef g():\n    return 2\n");
    puts_("crlf.py",
          "import os\r\n\r\ndef f():\r\n\treturn 1\r\n\r\n\r\ndef g():\r\n    return 2\r\n");
    puts_("mixed.py", "import os\r\n\ndef f():\r\n\treturn 1\n\r\n\ndef g():\r\n    return 2\n");
    puts_("ff.py", "import os\n\x0c\ndef f():\n\treturn 1\n\x0c\n\x0c\ndef g():\n    return 2\n");
    puts_("ffinline.py", "import os\n\ndef f():\n\treturn 1\n\n\x0c\x0c\ndef g():\n    return 2\n");
    puts_("cr.py", "import os\r\rdef f():\r\treturn 1\r\r\rdef g():\r    return 2\r");
    IdxStore *st = open_ws(0);
    update_ok(st);
    CHECK_INT(chunk_line(st, "lf.py", "g"), 7);
    CHECK_INT(chunk_line(st, "crlf.py", "g"), 7);
    CHECK_INT(chunk_line(st, "mixed.py", "g"), 7);
    CHECK_INT(chunk_line(st, "ff.py", "g"), 7);
    CHECK_INT(chunk_line(st, "ffinline.py", "g"), 7);
    CHECK_INT(chunk_line(st, "ff.py", "f"), 3);
    /* Old-Mac CR-only files: tree-sitter sees one line; whatever comes
     * out, it is consistent and nothing crashes (outcome recorded below). */
    fprintf(stderr, "note: cr-only file: g at line %u, %zu chunks\n",
            (unsigned)chunk_line(st, "cr.py", "g"), n_chunks(st, "cr.py"));
    /* The lines read back for a citation are the file's lines. */
    StrBuf sb;
    sb_init(&sb);
    uint32_t total = 0;
    ErrInfo e = {0};
    CHECK_INT(idx_read_lines(st, "crlf.py", 7, 7, &sb, &total, &e), CR_OK);
    CHECK(strncmp(sb.buf ? sb.buf : "", "def g():", 8) == 0);
    CHECK_INT(total, 8);
    sb_reset(&sb);
    CHECK_INT(idx_read_lines(st, "ff.py", 7, 7, &sb, &total, &e), CR_OK);
    CHECK(strncmp(sb.buf ? sb.buf : "", "def g():", 8) == 0);
    sb_release(&sb);
    idx_close(st);
}

/* 10,000 levels of nesting (blocks, brackets, classes) and a syntax error
 * in every statement: chunked without crashing, in bounded time. */
static void test_deep_nesting_and_syntax_errors(void)
{
    fresh("nesting");
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < 10000; i++) {
        for (int k = 0; k < i; k++)
            sb_addc(&sb, ' ');
        sb_adds(&sb, "if x:\n");
    }
    for (int k = 0; k < 10000; k++)
        sb_addc(&sb, ' ');
    sb_adds(&sb, "pass\n");
    put("blocks.py", sb.buf, sb.len);
    sb_reset(&sb);
    sb_adds(&sb, "X = ");
    for (int i = 0; i < 10000; i++)
        sb_addc(&sb, '(');
    sb_adds(&sb, "1");
    for (int i = 0; i < 10000; i++)
        sb_addc(&sb, ')');
    sb_adds(&sb, "\nY = ");
    for (int i = 0; i < 10000; i++)
        sb_adds(&sb, "[{");
    sb_adds(&sb, "\n\ndef after():\n    return 1\n");
    put("brackets.py", sb.buf, sb.len);
    sb_reset(&sb);
    for (int i = 0; i < 10000; i++) {
        for (int k = 0; k < i; k++)
            sb_addc(&sb, '\t');
        sb_addf(&sb, "class C%d:\n", i);
    }
    for (int k = 0; k < 10000; k++)
        sb_addc(&sb, '\t');
    sb_adds(&sb, "pass\n");
    put("classes.py", sb.buf, sb.len);
    sb_reset(&sb);
    for (int i = 0; i < 2000; i++)
        sb_addf(&sb, "def f%d(:\n    x = = %d\n)\n", i, i);
    put("errors.py", sb.buf, sb.len);

    IdxStore *st = open_ws(64 << 20);
    IdxStatus s = update_ok(st);
    CHECK_INT(s.files + s.skipped, 4);
    CHECK(chunk_line(st, "brackets.py", "after") == 0 ||
          chunk_line(st, "brackets.py", "after") == 4);
    fprintf(stderr, "note: nesting: %lld files, %lld chunks, %lld skipped\n", (long long)s.files,
            (long long)s.chunks, (long long)s.skipped);
    idx_close(st);

    /* The chunker itself: every line of the erroneous file in at most one chunk. */
    Chunker *c = idx_chunker_new();
    ChunkSet set;
    memset(&set, 0, sizeof set);
    ErrInfo e = {0};
    CHECK_INT(idx_chunker_run_lang(c, idx_lang_by_name("python"), sb.buf, sb.len, 0, &set, &e),
              CR_OK);
    CHECK_INT(set.had_errors, 1);
    for (size_t i = 1; i < set.n_chunks; i++)
        CHECK(set.chunks[i].start_line > set.chunks[i - 1].end_line);
    idx_chunk_set_release(&set);
    idx_chunker_free(c);
    sb_release(&sb);
}

/* Symlink loops are skipped, a symlink to a directory or a file outside the
 * workspace is not followed, one inside is indexed once. */
static void test_symlinks(void)
{
    fresh("symlinks");
    char p[512], outside[256];
    puts_("pkg/a.py", "def a():\n    return 1\n");
    snprintf(outside, sizeof outside, "%s/outside", base_dir);
    mkdir(outside, 0755);
    snprintf(p, sizeof p, "%s/outside/secret.py", base_dir);
    FILE *f = fopen(p, "w");
    fputs("SECRET = 1\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/pkg/loop", ws);
    CHECK_INT(symlink("..", p), 0);
    snprintf(p, sizeof p, "%s/self.py", ws);
    CHECK_INT(symlink("self.py", p), 0);
    snprintf(p, sizeof p, "%s/out", ws);
    CHECK_INT(symlink(outside, p), 0);
    snprintf(p, sizeof p, "%s/secret_link.py", ws);
    snprintf(outside, sizeof outside, "%s/outside/secret.py", base_dir);
    CHECK_INT(symlink(outside, p), 0);
    snprintf(p, sizeof p, "%s/alias.py", ws);
    CHECK_INT(symlink("pkg/a.py", p), 0);
    IdxStore *st = open_ws(0);
    IdxStatus s = update_ok(st);
    CHECK_INT(n_chunks(st, "pkg/a.py"), 1);
    CHECK_INT(n_chunks(st, "out/secret.py"), 0);
    CHECK_INT(n_chunks(st, "secret_link.py"), 0);
    CHECK_INT(n_chunks(st, "pkg/loop/pkg/a.py"), 0);
    fprintf(stderr, "note: symlinks: %lld files, self.py: %s, alias.py: %zu chunks\n",
            (long long)s.files, skip_reason(st, "self.py") ? skip_reason(st, "self.py") : "-",
            n_chunks(st, "alias.py"));
    ErrInfo e = {0};
    /* Single-file updates through a link that leaves the root: refused or
     * treated as "not indexed" (the file is dropped), never indexed. */
    CrErr rc = idx_update_file(st, "out/secret.py", &e);
    CHECK(rc == CR_OK || rc == CR_EOUTSIDE);
    rc = idx_update_file(st, "secret_link.py", &e);
    CHECK(rc == CR_OK || rc == CR_EOUTSIDE);
    CHECK_INT(n_chunks(st, "out/secret.py"), 0);
    CHECK_INT(n_chunks(st, "secret_link.py"), 0);
    CHECK_INT(idx_update_file(st, "../outside/secret.py", &e), CR_EOUTSIDE);
    CHECK_INT(idx_update_file(st, outside, &e), CR_EOUTSIDE);
    /* URIs are percent-decoded before they are judged (issue 15) */
    static const char *const climbs[] = {"pkg/%2e%2e/%2e%2e/outside/secret.py",
                                         "pkg%2F..%2F..%2Foutside%2Fsecret.py",
                                         "%2E%2E/outside/secret.py"};
    for (size_t i = 0; i < sizeof climbs / sizeof climbs[0]; i++) {
        snprintf(p, sizeof p, "file://%s/%s", ws, climbs[i]);
        CHECK_INT(idx_update_file(st, p, &e), CR_EOUTSIDE);
    }
    snprintf(p, sizeof p, "file://%s/pkg/%%61.py", ws); /* pkg/a.py */
    CHECK_INT(idx_update_file(st, p, &e), CR_OK);
    CHECK_INT(n_chunks(st, "pkg/a.py"), 1);
    CHECK_INT(n_chunks(st, "pkg/%61.py"), 0);
    StrBuf sb;
    sb_init(&sb);
    uint32_t total = 0;
    CHECK_INT(idx_read_lines(st, "../outside/secret.py", 1, 1, &sb, &total, &e), CR_EOUTSIDE);
    CHECK_INT(idx_read_lines(st, outside, 1, 1, &sb, &total, &e), CR_EOUTSIDE);
    CHECK_INT(sb.len, 0);
    /* Citations of them are rejected as outside the workspace, and nothing of
     * the file outside reaches the answer (idx_read_lines itself follows
     * symlinks: vfy_check's realpath test is the guard, see docs/hardening.md). */
    VfySource src;
    vfy_source_for_store(&src, st);
    static const char answer[] = "See [out/secret.py:1] and [secret_link.py:1], "
                                 "[../outside/secret.py:1], [pkg/loop/a.py:1].";
    VfyResult r;
    memset(&r, 0, sizeof r);
    CHECK_INT(vfy_check(&src, answer, sizeof answer - 1, NULL, 0, VFY_AUTHOR_MODEL, &r, &e), CR_OK);
    CHECK_INT(r.n_citations, 0);
    CHECK_INT(r.n_rejected, 4);
    for (size_t i = 0; i < r.n_rejected && i < 3; i++)
        CHECK_STR(r.rejected[i].reason, "outside-workspace");
    CHECK(strstr(r.answer, "SECRET") == NULL);
    vfy_result_release(&r);
    sb_release(&sb);
    idx_close(st);
}

/* A FIFO named x.py (root ignores chmod 000, so this is the unreadable file
 * that would otherwise block a reader forever) and a regular file swapped
 * for a FIFO after it was indexed: never read, never blocks. */
static void test_fifo(void)
{
    fresh("fifo");
    char p[512];
    puts_("a.py", "def a():\n    return 1\n");
    puts_("later.py", "def later():\n    return 2\n");
    snprintf(p, sizeof p, "%s/x.py", ws);
    CHECK_INT(mkfifo(p, 0644), 0);
    IdxStore *st = open_ws(0);
    IdxStatus s = update_ok(st);
    CHECK_INT(s.files, 2);
    CHECK_INT(n_chunks(st, "x.py"), 0);
    /* later.py becomes a FIFO: single-file updates and citation reads must
     * not block on it. */
    snprintf(p, sizeof p, "%s/later.py", ws);
    unlink(p);
    CHECK_INT(mkfifo(p, 0644), 0);
    ErrInfo e = {0};
    idx_update_file(st, "later.py", &e);
    CHECK_INT(n_chunks(st, "later.py"), 0);
    StrBuf sb;
    sb_init(&sb);
    uint32_t total = 0;
    CHECK(idx_read_lines(st, "later.py", 1, 1, &sb, &total, &e) != CR_OK);
    CHECK(idx_read_lines(st, "x.py", 1, 1, &sb, &total, &e) != CR_OK);
    sb_release(&sb);
    s = update_ok(st);
    CHECK_INT(s.files, 1);
    idx_close(st);
}

/* Files deleted, rewritten, turned into directories or FIFOs between the
 * scan and their parse (the progress callback runs after each file is
 * written, while later files are still to be read): the update finishes,
 * the index is consistent, and the next update matches the disk. */
typedef struct Mutator {
    int calls;
} Mutator;

static int mutate(void *ud, size_t done, size_t total)
{
    Mutator *m = ud;
    char p[512];
    if (m->calls++ != 0) return 0;
    for (int i = 10; i < 40; i++) {
        snprintf(p, sizeof p, "%s/m%02d.py", ws, i);
        switch (i % 4) {
        case 0:
            unlink(p);
            break;
        case 1: {
            FILE *f = fopen(p, "w");
            fprintf(f, "def rewritten_%d():\n    return %d\n\n\ndef extra_%d():\n    pass\n", i, i,
                    i);
            fclose(f);
            break;
        }
        case 2:
            unlink(p);
            mkdir(p, 0755);
            break;
        case 3:
            unlink(p);
            mkfifo(p, 0644);
            break;
        }
    }
    return 0;
}

static void test_changes_during_update(void)
{
    fresh("races");
    char name[32], text[128];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "m%02d.py", i);
        snprintf(text, sizeof text, "def f_%d():\n    return %d\n", i, i);
        puts_(name, text);
    }
    IdxConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.root = ws;
    cfg.index_dir = index_dir;
    cfg.threads = 1;
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    Mutator m = {0};
    CrErr rc = idx_update(st, mutate, &m, NULL, &e);
    if (rc) fprintf(stderr, "races: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(idx_verify(st, &e), CR_OK);
    IdxStatus s = update_ok(st);
    /* m00-m09 untouched; of m10-m39
     * only the rewritten ones (i % 4 == 1) are still files. */
    CHECK_INT(s.files, 10 + 7);
    CHECK_INT(chunk_line(st, "m13.py", "extra_13"), 5);
    CHECK_INT(n_chunks(st, "m12.py"), 0);
    CHECK_INT(n_chunks(st, "m14.py"), 0);
    CHECK_INT(n_chunks(st, "m15.py"), 0);
    idx_close(st);
}

/* The work a text foretells of its tree (idx_ts_text_check): counted
 * before the parse, paid back by what the tree's walk counts, so a file's
 * count is the larger of the two; a text whose tokens and lists alone pass
 * the budget is refused before it is parsed. */
static void test_work_ahead(void)
{
    ErrInfo e = {0};
    IdxTsWork w;
    const char *call = "g(a, b,c) /* x */";
    /* tokens: g ( a , b , c ) / * x * /; one list of 2 commas: 5 children,
     * 3 hidden levels each */
    uint64_t tokens = 13, levels = 5 * 3;
    idx_ts_work_init(&w, strlen(call));
    CHECK_INT(idx_ts_text_check(call, strlen(call), &w, 1, &e), CR_OK);
    CHECK(w.done == tokens * IDX_TS_WORK_NODE + levels * IDX_TS_WORK_LEVEL);
    CHECK(w.ahead == w.done);
    idx_ts_work_init(&w, strlen(call));
    CHECK_INT(idx_ts_text_check(call, strlen(call), &w, 0, &e), CR_OK);
    CHECK(w.done == tokens * IDX_TS_WORK_WALK && w.ahead == w.done);

    /* the tree pays back what was counted ahead, then adds what is beyond */
    idx_ts_work_init(&w, 100);
    CHECK_INT(idx_ts_work_ahead(&w, 10, IDX_TS_WORK_NODE, "its text", &e), CR_OK);
    CHECK_INT(idx_ts_work_tree(&w, 6, IDX_TS_WORK_NODE, "its nodes", &e), CR_OK);
    CHECK(w.done == 10 * IDX_TS_WORK_NODE && w.ahead == 4 * IDX_TS_WORK_NODE);
    CHECK_INT(idx_ts_work_tree(&w, 7, IDX_TS_WORK_NODE, "its nodes", &e), CR_OK);
    CHECK(w.done == 13 * IDX_TS_WORK_NODE && w.ahead == 0);
    CHECK_INT(idx_ts_work_ahead(NULL, 1, 1, "", NULL), CR_OK);
    CHECK_INT(idx_ts_work_tree(NULL, 1, 1, "", NULL), CR_OK);

    /* a list of 500,000 empty items: refused from its text */
    size_t n = 500000;
    char *list = xmalloc(n + 3);
    list[0] = '(';
    memset(list + 1, ',', n);
    list[n + 1] = ')';
    list[n + 2] = 0;
    idx_ts_work_init(&w, n + 2);
    CHECK_INT(idx_ts_text_check(list, n + 2, &w, 1, &e), CR_ETIMEOUT);
    CHECK(strstr(e.msg, "counted at its text") != NULL);

    /* brackets too deep: too-nested, whether work is counted or not */
    memset(list, '[', n);
    CHECK_INT(idx_ts_text_check(list, n, NULL, 1, &e), CR_ETOOBIG);
    idx_ts_work_init(&w, n);
    CHECK_INT(idx_ts_text_check(list, n, &w, 1, &e), CR_ETOOBIG);
    free(list);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    snprintf(base_dir, sizeof base_dir, "/tmp/coderag-badinput.XXXXXX");
    if (!mkdtemp(base_dir)) return 2;
    RUN(test_empty_files);
    RUN(test_large_file);
    RUN(test_binary_and_bad_utf8);
    RUN(test_line_endings);
    RUN(test_deep_nesting_and_syntax_errors);
    RUN(test_work_ahead);
    RUN(test_symlinks);
    RUN(test_fifo);
    RUN(test_changes_during_update);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base_dir);
    if (system(cmd) != 0) return 2;
    return test_summary();
}
