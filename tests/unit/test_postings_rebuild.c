/* The search postings rebuilt from the source files (index/postings/postings_rebuild.c):
 * the index keeps no copy of the chunks' text, so a build without a
 * snapshot reads each file again, and a file whose content no longer
 * matches its files row is left out of the search (never its new text
 * under the old rows), passes `status --check` (a changed file is no
 * damage) and is written again by the next update, even when its size and
 * mtime did not move. */
#include "idx.h"
#include "fixture_util.h"
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[256], index_dir[300], snap[340];
static const struct timespec old_times[2] = {{1600000000, 0}, {1600000000, 0}};

static void write_file(const char *rel, const char *animal)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "def feed_%s(food):\n    \"\"\"Feed the %s.\"\"\"\n    return food\n", animal,
            animal);
    fclose(f);
    /* a settled mtime, the same after every rewrite: only the content moves */
    CHECK_INT(utimensat(AT_FDCWD, p, old_times, 0), 0);
}

/* The symbols of the hits of query, space-separated. Caller frees. */
static char *hits_of(IdxStore *st, const char *query)
{
    StrBuf sb;
    sb_init(&sb);
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, query, 10, &hits, &n, NULL), CR_OK);
    for (size_t i = 0; i < n; i++) {
        IdxChunk c = {0};
        if (idx_chunk_get(st, hits[i].chunk_id, &c, NULL) != CR_OK) continue;
        sb_addf(&sb, "%s ", c.symbol);
        idx_chunk_release(&c);
    }
    free(hits);
    return sb_detach(&sb, NULL);
}

static int verify(void)
{
    IdxStore *st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    ErrInfo e = {0};
    CrErr rc = st ? idx_verify(st, &e) : CR_EIO;
    if (rc) fprintf(stderr, "idx_verify: %s\n", e.msg);
    idx_close(st);
    return rc == CR_OK;
}

static void test_rebuilt_from_source(void)
{
    IdxStore *st = fixture_open(root, index_dir, 0);
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    idx_close(st);
    CHECK(access(snap, F_OK) == 0);
    CHECK(verify());
    /* no snapshot: every chunk's text comes from its file */
    CHECK_INT(unlink(snap), 0);
    st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    char *got = hits_of(st, "walrus");
    CHECK_STR(got, "feed_walrus ");
    free(got);
    idx_close(st);
    CHECK(verify());
}

static void test_changed_file_left_out(void)
{
    /* the same size and mtime, another content: the scan sees nothing */
    write_file("b.py", "badger");
    IdxStore *st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    if (!st) return;
    char *got = hits_of(st, "walrus");
    CHECK_STR(got, ""); /* not the old rows over the new text */
    free(got);
    got = hits_of(st, "heron");
    CHECK_STR(got, "feed_heron "); /* the other files are read */
    free(got);
    idx_close(st);
    CHECK(verify());

    /* A writer that meets it writes it again in its next update. */
    st = fixture_open(root, index_dir, 0);
    if (!st) return;
    got = hits_of(st, "walrus");
    CHECK_STR(got, "");
    free(got);
    IdxUpdateStats stats = {0};
    CHECK_INT(idx_update(st, NULL, NULL, &stats, NULL), CR_OK);
    got = hits_of(st, "badger");
    CHECK_STR(got, "feed_badger ");
    free(got);
    idx_close(st);
    CHECK(verify());
    st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    got = hits_of(st, "badger");
    CHECK_STR(got, "feed_badger ");
    free(got);
    idx_close(st);
}

/* An update that finds nothing to write (the scan's sizes and mtimes all
 * as indexed) reads no file: it loads no postings (without a snapshot,
 * their load reads every file and notes b.py to read again), not even
 * ahead while the scan runs (update_pre.c reads the files rows alone). */
static void test_nothing_to_write_reads_nothing(void)
{
    write_file("b.py", "marten"); /* the same size and mtime again */
    /* no snapshot: loading the postings reads every file (and meets b.py) */
    CHECK_INT(unlink(snap), 0);
    IdxStore *st = fixture_open(root, index_dir, 0);
    if (!st) return;
    IdxUpdateStats stats = {0};
    CHECK_INT(idx_update(st, NULL, NULL, &stats, NULL), CR_OK);
    CHECK_INT((int)stats.files_changed, 0);
    idx_close(st);
    st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    if (!st) return;
    char *got = hits_of(st, "marten");
    CHECK_STR(got, ""); /* not read by that update: still left out */
    free(got);
    idx_close(st);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-test-prebuild-XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    snprintf(snap, sizeof snap, "%s/postings.bin", index_dir);
    write_file("a.py", "heron");
    write_file("b.py", "walrus");
    RUN(test_rebuilt_from_source);
    RUN(test_changed_file_left_out);
    RUN(test_nothing_to_write_reads_nothing);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    return test_summary();
}
