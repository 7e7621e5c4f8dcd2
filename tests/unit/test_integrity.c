/* A damaged index.db (a page zeroed, bytes flipped, damage SQLite meets
 * while reading) is never read from and never deleted by a reader: a
 * read-only or existing-only open fails with CR_ECORRUPT naming
 * `coderag index` and leaves the file as it is; a writable open rebuilds it,
 * and the update after that gives the index a fresh build gives. */
#include "idx.h"
#include "test.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[128], index_dir[160], db[200];

static CrErr open_store(unsigned flags, IdxStore **st, ErrInfo *e)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1};
    return idx_open(&cfg, flags, st, e);
}

typedef struct Shape {
    int64_t files, chunks, edges, symbols;
} Shape;

/* A fresh build's shape, or {-1...} when it fails. */
static Shape build(void)
{
    IdxStore *st = NULL;
    ErrInfo e = {0};
    Shape out = {-1, -1, -1, -1};
    IdxStatus s;
    if (open_store(0, &st, &e) || idx_update(st, NULL, NULL, NULL, &e) || idx_status(st, &s, &e) ||
        idx_verify(st, &e))
        fprintf(stderr, "build: %s\n", e.msg);
    else
        out = (Shape){s.files, s.chunks, s.edges, s.symbols};
    idx_close(st);
    return out;
}

static int64_t file_size(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

/* The file offset of the middle leaf page of the chunks table (dbstat),
 * so that reading every chunk meets it whatever the layout; -1 if unknown. */
static off_t chunks_page(void)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *s = NULL;
    off_t off = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h,
                           "SELECT pageno FROM dbstat WHERE name = 'chunks' AND pagetype = 'leaf' "
                           "ORDER BY pageno LIMIT 1 OFFSET (SELECT count(*) / 2 FROM dbstat "
                           "WHERE name = 'chunks' AND pagetype = 'leaf')",
                           -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        off = (off_t)(sqlite3_column_int64(s, 0) - 1) * 4096;
    sqlite3_finalize(s);
    sqlite3_close(h);
    return off;
}

/* Overwrites n bytes in the middle page of the database (head: its first
 * page; chunk: a page of the chunks table): zeroes (flip = 0) or each byte
 * inverted. keep_mtime puts the file's times back (damage no stat shows:
 * only SQLite reading it finds it). */
static void damage_at(int head, size_t n, int flip, int keep_mtime)
{
    struct stat sb;
    CHECK(stat(db, &sb) == 0);
    off_t off = head == 1 ? 0 : (off_t)((sb.st_size / 2) & ~(off_t)4095);
    if (head == 2) off = chunks_page();
    CHECK(off >= 0);
    int fd = open(db, O_RDWR);
    CHECK(fd >= 0);
    if (fd < 0) return;
    unsigned char buf[4096];
    CHECK(pread(fd, buf, n, off) == (ssize_t)n);
    for (size_t i = 0; i < n; i++)
        buf[i] = flip ? (unsigned char)~buf[i] : 0;
    CHECK(pwrite(fd, buf, n, off) == (ssize_t)n);
    close(fd);
    if (keep_mtime) {
        struct timespec t[2] = {sb.st_atim, sb.st_mtim};
        CHECK(utimensat(AT_FDCWD, db, t, 0) == 0);
    }
}

static void damage(size_t n, int flip, int keep_mtime)
{
    damage_at(0, n, flip, keep_mtime);
}

/* Readers refuse the damaged index and leave it; a writer rebuilds it. */
static void check_refused_then_rebuilt(Shape want)
{
    int64_t size = file_size(db);
    for (int k = 0; k < 2; k++) {
        IdxStore *st = NULL;
        ErrInfo e = {0};
        CHECK_INT(open_store(k ? IDX_OPEN_READONLY : IDX_OPEN_EXISTING, &st, &e), CR_ECORRUPT);
        CHECK(strstr(e.msg, "coderag index") != NULL);
        CHECK(st == NULL);
        CHECK_INT(file_size(db), size); /* still there, untouched */
    }
    Shape got = build();
    CHECK_INT(got.files, want.files);
    CHECK_INT(got.chunks, want.chunks);
    CHECK_INT(got.edges, want.edges);
    CHECK_INT(got.symbols, want.symbols);
    /* whole again: a reader opens it */
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(open_store(IDX_OPEN_EXISTING, &st, &e), CR_OK);
    if (st) CHECK_INT(idx_verify(st, &e), CR_OK);
    idx_close(st);
}

static void test_zeroed_page(void)
{
    Shape want = build();
    CHECK(want.chunks > 0);
    damage(4096, 0, 0);
    check_refused_then_rebuilt(want);
}

static void test_flipped_bytes(void)
{
    Shape want = build();
    damage(64, 1, 0);
    check_refused_then_rebuilt(want);
}

/* A header that is no database's: `ask --no-update` must not delete it. */
static void test_header_damaged(void)
{
    Shape want = build();
    damage_at(1, 100, 1, 0);
    check_refused_then_rebuilt(want);
}

/* Damage the clean mark cannot see: the first read that meets it marks the
 * database damaged, and from then on it is refused and rebuilt. */
static void test_damage_met_while_reading(void)
{
    Shape want = build();
    damage_at(2, 4096, 0, 1);
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(open_store(IDX_OPEN_EXISTING, &st, &e), CR_OK);
    if (st) {
        /* every chunk read once: one of them sits in the damaged page */
        CrErr first = CR_OK;
        for (int64_t id = 1; id <= want.chunks + 10 && !first; id++) {
            IdxChunk c = {0};
            CrErr rc = idx_chunk_get(st, id, &c, &e);
            if (rc == CR_OK) idx_chunk_release(&c);
            if (rc != CR_OK && rc != CR_ENOENT) first = rc;
        }
        CHECK_INT(first, CR_EDB);
        idx_close(st);
    }
    check_refused_then_rebuilt(want);
}

/* Damage quick_check cannot see (a row's bytes changed, the pages whole:
 * a chunk's row no longer what its postings were built from): `status
 * --check` finds it on a read-only open and marks the database damaged, so
 * readers refuse it and the next writer rebuilds it (issue 25: the check
 * failed again after every `coderag index`). */
static void test_content_damaged(void)
{
    Shape want = build();
    sqlite3 *h = NULL;
    CHECK_INT(sqlite3_open(db, &h), SQLITE_OK);
    CHECK_INT(sqlite3_exec(h,
                           "UPDATE chunks SET symbol = 'zzqq_' || symbol "
                           "WHERE id = (SELECT min(id) FROM chunks)",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(open_store(IDX_OPEN_READONLY, &st, &e), CR_OK);
    if (st) {
        CHECK_INT(idx_verify(st, &e), CR_ECORRUPT);
        CHECK(strstr(e.msg, "coderag index") != NULL);
        idx_close(st);
    }
    check_refused_then_rebuilt(want);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-test-integrity-XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    snprintf(db, sizeof db, "%s/index.db", index_dir);
    test_sh("cp -R '%s/shop/.' '%s'", FIXTURE_DIR, root);
    /* enough files for a database of many pages */
    for (int i = 0; i < 40; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s/gen_%02d.py", root, i);
        FILE *f = fopen(p, "w");
        if (!f) return 1;
        for (int k = 0; k < 30; k++)
            fprintf(f, "def helper_%d_%d(x):\n    \"\"\"Helper %d.\"\"\"\n    return x + %d\n\n\n",
                    i, k, k, k);
        fclose(f);
    }
    RUN(test_zeroed_page);
    RUN(test_flipped_bytes);
    RUN(test_damage_met_while_reading);
    RUN(test_header_damaged);
    RUN(test_content_damaged);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    return test_summary();
}
