/* index/store/index_dir.c through idx_open: the index folder is coderag's own
 * (issue 25): a symlinked .coderag, the root, a folder holding it and a
 * folder of someone else's files are refused with nothing written there. */
#include "idx.h"
#include "index/store/store_int.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base_dir[64], root[128];

static CrErr open_at(const char *index_dir, unsigned flags)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, flags, &st, &e);
    if (rc) fprintf(stderr, "  (idx_open: %s)\n", e.msg);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    idx_close(st);
    return rc;
}

/* A listing of dir with each file's size: "name:size " sorted by ls. */
static char *listing(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for f in $(ls -A); do printf '%%s:%%s ' $f $(wc -c < $f); done", dir);
    FILE *p = popen(cmd, "r");
    StrBuf sb;
    sb_init(&sb);
    char buf[256];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0)
        sb_add(&sb, buf, n);
    if (p) pclose(p);
    return sb_detach(&sb, NULL);
}

static void test_new_folder_marked(void)
{
    char d[256], p[300];
    snprintf(d, sizeof d, "%s/new", base_dir);
    CHECK_INT(open_at(d, 0), CR_OK);
    snprintf(p, sizeof p, "%s/.coderag-index", d);
    CHECK(access(p, F_OK) == 0);
    snprintf(p, sizeof p, "%s/.gitignore", d);
    CHECK(access(p, F_OK) == 0);
    CHECK_INT(open_at(d, 0), CR_OK); /* marked: used again */
    /* an older coderag's folder: its .gitignore of "*", no mark */
    snprintf(p, sizeof p, "%s/.coderag-index", d);
    CHECK_INT(unlink(p), 0);
    CHECK_INT(open_at(d, 0), CR_OK);
    CHECK(access(p, F_OK) == 0);
}

/* An index folder named with missing parents is made with them (mkdir -p);
 * a reader makes nothing; a parent that is a file is named. */
static void test_missing_parents(void)
{
    char d[256], p[300];
    snprintf(d, sizeof d, "%s/deep/a/b/idx", base_dir);
    CHECK_INT(open_at(d, IDX_OPEN_EXISTING), CR_ENOINDEX);
    CHECK_INT(open_at(d, IDX_OPEN_READONLY), CR_ENOINDEX);
    snprintf(p, sizeof p, "%s/deep", base_dir);
    CHECK(access(p, F_OK) != 0);
    CHECK_INT(open_at(d, 0), CR_OK);
    snprintf(p, sizeof p, "%s/.coderag-index", d);
    CHECK(access(p, F_OK) == 0);
    CHECK_INT(open_at(d, IDX_OPEN_EXISTING), CR_OK);
    snprintf(d, sizeof d, "%s/deep//a2/./idx/", base_dir);
    CHECK_INT(open_at(d, 0), CR_OK);

    snprintf(p, sizeof p, "%s/plain", base_dir);
    test_sh("echo text > %s # %s", p, "");
    snprintf(d, sizeof d, "%s/plain/x/idx", base_dir);
    IdxConfig cfg = {.root = root, .index_dir = d, .threads = 1};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_EIO);
    char named[320];
    snprintf(named, sizeof named, ": %s: not a directory", p);
    CHECK(strstr(e.msg, named) != NULL);
    idx_close(st);
}

static void test_foreign_folder(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/foreign", base_dir);
    test_sh("mkdir -p %s && head -c 5000 /dev/urandom > %s/index.db", d, d);
    test_sh("echo theirs > %s/postings.bin", d, NULL);
    char *before = listing(d);
    CHECK_INT(open_at(d, 0), CR_EUSAGE);
    CHECK_INT(open_at(d, IDX_OPEN_EXISTING), CR_EUSAGE);
    char *after = listing(d);
    CHECK_STR(after, before);
    free(before);
    free(after);
    snprintf(d, sizeof d, "%s/notes", base_dir);
    test_sh("mkdir -p %s && echo mine > %s/notes.txt", d, d);
    before = listing(d);
    CHECK_INT(open_at(d, 0), CR_EUSAGE);
    after = listing(d);
    CHECK_STR(after, before);
    free(before);
    free(after);
}

static void test_root_or_above(void)
{
    char *before = listing(root), d[256];
    CHECK_INT(open_at(root, 0), CR_EUSAGE);
    CHECK_INT(open_at(base_dir, 0), CR_EUSAGE);
    CHECK_INT(open_at("/", 0), CR_EUSAGE);
    snprintf(d, sizeof d, "%s/./", root);
    CHECK_INT(open_at(d, IDX_OPEN_READONLY), CR_EUSAGE);
    char *after = listing(root);
    CHECK_STR(after, before);
    free(before);
    free(after);
}

static void test_symlinked_default(void)
{
    char target[256], link[256];
    snprintf(target, sizeof target, "%s/target", base_dir);
    snprintf(link, sizeof link, "%s/.coderag", root);
    test_sh("mkdir -p %s && echo theirs > %s/index.db", target, target);
    CHECK_INT(symlink(target, link), 0);
    char *before = listing(target);
    CHECK_INT(open_at(NULL, 0), CR_EIO);
    CHECK_INT(open_at(NULL, IDX_OPEN_READONLY), CR_EIO);
    char *after = listing(target);
    CHECK_STR(after, before);
    free(before);
    free(after);
    CHECK_INT(unlink(link), 0);
    CHECK_INT(open_at(NULL, 0), CR_OK);
}

static void test_fifo_in_folder(void)
{
    char d[256], p[300];
    snprintf(d, sizeof d, "%s/fifo", base_dir);
    CHECK_INT(open_at(d, 0), CR_OK);
    snprintf(p, sizeof p, "%s/postings.bin", d);
    unlink(p);
    CHECK_INT(mkfifo(p, 0644), 0);
    CHECK_INT(open_at(d, 0), CR_EIO); /* a clear error, never a blocked open */
    CHECK_INT(open_at(d, IDX_OPEN_READONLY), CR_EIO);
}

/* The folder is checked once and then named through its descriptor: a
 * .coderag swapped for a link to another folder after the store opened it
 * (the moment of the race of issue 25, chosen) redirects nothing. Before,
 * the locks, the postings and SQLite's files went by path into the link's
 * target. */
static void test_swapped_after_open(void)
{
    char ws[256], dot[300], moved[300], away[256], other[300];
    snprintf(ws, sizeof ws, "%s/swap", base_dir);
    snprintf(dot, sizeof dot, "%s/.coderag", ws);
    snprintf(moved, sizeof moved, "%s/.coderag-moved", ws);
    snprintf(away, sizeof away, "%s/away", base_dir);
    snprintf(other, sizeof other, "%s/b.py", ws);
    test_sh("mkdir -p %s %s", ws, away);
    test_sh("echo 'def f():\n    return 1' > %s/a.py # %s", ws, "");
    IdxConfig cfg = {.root = ws, .threads = 1, .embed_provider = "none"};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    /* SQLite names its files (-wal, -shm, the journal) after the path it
     * keeps: the descriptor's, not one resolved back to .coderag */
    CHECK(!strncmp(sqlite3_db_filename(st->db, "main"), "/proc/self/fd/", 14));
    CHECK_INT(rename(dot, moved), 0);
    CHECK_INT(symlink(away, dot), 0);
    test_sh("echo 'def beta_caller():\n    return f()' > %s # %s", other, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, "beta_caller", 5, &hits, &n, NULL), CR_OK);
    CHECK(n >= 1);
    free(hits);
    IdxStatus s1;
    CHECK_INT(idx_status(st, &s1, NULL), CR_OK);
    CHECK_INT(s1.files, 2);
    idx_close(st);
    char *in_away = listing(away), *in_moved = listing(moved);
    CHECK_STR(in_away, "");
    CHECK(strstr(in_moved, "index.db:") && strstr(in_moved, "update.lock:"));
    free(in_away);
    free(in_moved);
    /* what was written is in the folder opened */
    IdxConfig again = {.root = ws, .index_dir = moved, .threads = 1, .embed_provider = "none"};
    CHECK_INT(idx_open(&again, IDX_OPEN_EXISTING, &st, NULL), CR_OK);
    if (st) {
        CHECK_INT(idx_status(st, &s1, NULL), CR_OK);
        CHECK_INT(s1.files, 2);
        idx_close(st);
    }
}

int main(void)
{
    snprintf(base_dir, sizeof base_dir, "/tmp/coderag-idxdir.XXXXXX");
    if (!mkdtemp(base_dir)) return 1;
    snprintf(root, sizeof root, "%s/ws", base_dir);
    test_sh("mkdir -p %s && echo 'def f():\n    return 1' > %s/a.py", root, root);
    RUN(test_new_folder_marked);
    RUN(test_missing_parents);
    RUN(test_foreign_folder);
    RUN(test_root_or_above);
    RUN(test_symlinked_default);
    RUN(test_fifo_in_folder);
    RUN(test_swapped_after_open);
    test_sh("rm -rf %s", base_dir, NULL);
    return test_summary();
}
