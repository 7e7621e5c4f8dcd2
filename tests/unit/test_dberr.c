/* What the store does when SQLite fails under it (tests/unit/fault_vfs.h):
 * a lookup that cannot read says so (CR_EDB), never "not found"; an update
 * that fails at any one read, write, sync or lock leaves an index that the
 * next update brings to exactly what an update without the failure gives,
 * with no reference marked resolved that was not. */
#include "fault_vfs.h"
#include "index/store/store_int.h" /* the connection, to shrink its page cache */
#include "index_util.h"
#include "retrieve/rtv_int.h" /* rtv_named_identifiers */
#include "rtv.h"
#include "test.h"

#include <stdlib.h>

static char root[128], index_dir[160];

static IdxStore *open_store(void)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e)) fprintf(stderr, "idx_open: %s\n", e.msg);
    /* A small page cache sends most lookups to the file, where they can
     * fail, instead of answering them from memory. */
    if (st) sqlite3_exec(st->db, "PRAGMA cache_size = 4", NULL, NULL, NULL);
    return st;
}

static CrErr update(IdxStore *st)
{
    ErrInfo e = {0};
    return idx_update(st, NULL, NULL, NULL, &e);
}

/* Every lookup fails while the database cannot be read; none answers
 * "no such row" or an empty list. */
static void test_lookups_report_errors(void)
{
    IdxStore *st = open_store();
    CHECK(st != NULL);
    if (!st) return;
    CHECK_INT(update(st), CR_OK);
    int64_t id = chunk_id(st, "shop/models.py", "apply_tax");
    CHECK(id > 0);
    IdxChunk c = {0};
    RtvDef d = {0};
    CHECK_INT(rtv_def_of_chunk(st, id, &d, NULL), CR_OK);

    fault_vfs_arm(1, 1);
    CHECK_INT(idx_chunk_get(st, id, &c, NULL), CR_EDB);
    CHECK_INT(idx_chunk_get(st, id + 100000, &c, NULL), CR_EDB);
    IdxChunk *v = NULL;
    size_t n = 0;
    CHECK_INT(idx_file_chunks(st, "shop/models.py", &v, &n, NULL), CR_EDB);
    CHECK_INT(n, 0);
    RtvDef *defs = NULL;
    CHECK_INT(rtv_defs_named(st, "apply_tax", NULL, 0, 0, &defs, &n, NULL, NULL), CR_EDB);
    RtvRef *refs = NULL;
    CHECK_INT(rtv_refs(st, &d, 0, 0, 0, &refs, &n, NULL, NULL), CR_EDB);
    size_t callers = 0, others = 0;
    CHECK_INT(rtv_def_counts(st, &d, &callers, &others, NULL), CR_EDB);
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, NULL), CR_EDB);
    /* the identifiers a question names: an error, never "none indexed" */
    size_t idents = 0, hit = 0;
    CHECK_INT(rtv_named_identifiers(st, "Who calls apply_tax?", &idents, &hit, NULL), CR_EDB);
    CHECK(fault_vfs.injected > 0);
    fault_vfs_disarm();

    /* The same lookups, readable again. */
    CHECK_INT(idx_chunk_get(st, id, &c, NULL), CR_OK);
    idx_chunk_release(&c);
    CHECK_INT(idx_chunk_get(st, id + 100000, &c, NULL), CR_ENOENT);
    CHECK_INT(rtv_refs(st, &d, 0, 0, 0, &refs, &n, NULL, NULL), CR_OK);
    CHECK(n >= 1); /* Order.total calls it */
    rtv_refs_free(refs, n);
    rtv_def_release(&d);
    CHECK_INT(idx_verify(st, NULL), CR_OK);
    idx_close(st);
}

/* errors.py in two versions: the original, and one whose base class is
 * renamed, so that the other files' imports, raises and the subclass lose
 * (and, switching back, regain) their edges. */
static void write_errors(int version)
{
    char path[256];
    snprintf(path, sizeof path, "%s/shop/errors.py", root);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f,
            "\"\"\"Errors raised by the shop.\"\"\"\n\n\nclass %s(Exception):\n"
            "    \"\"\"Base class for shop errors.\"\"\"\n\n\nclass PaymentDeclined(%s):\n"
            "    \"\"\"The card issuer refused the payment.\"\"\"\n\n    code = 402\n%s",
            version ? "ShopFault" : "ShopError", version ? "ShopFault" : "ShopError",
            version ? "\n\nFAULT_CODES = (402, 409)\n" : "");
    fclose(f);
}

typedef struct Shape {
    int64_t files, chunks, edges, symbols;
} Shape;

static Shape shape(IdxStore *st)
{
    IdxStatus s;
    Shape out = {-1, -1, -1, -1};
    if (idx_status(st, &s, NULL) == CR_OK) out = (Shape){s.files, s.chunks, s.edges, s.symbols};
    return out;
}

static int same_shape(Shape a, Shape b)
{
    return a.files == b.files && a.chunks == b.chunks && a.edges == b.edges &&
           a.symbols == b.symbols;
}

/* One failure at the k-th database call of an update, for every k until an
 * update runs through without reaching it: the failed update reports an
 * error or survives it, and the next one gives the index a fault-free
 * update gives. */
static void test_update_survives_any_one_failure(void)
{
    IdxStore *st = open_store();
    CHECK(st != NULL);
    if (!st) return;
    Shape want[2];
    for (int v = 1; v >= 0; v--) {
        write_errors(v);
        CHECK_INT(update(st), CR_OK);
        want[v] = shape(st);
    }
    CHECK(want[0].edges != want[1].edges);

    int version = 0, failed = 0, k;
    for (k = 1; k < 5000; k++) {
        version = !version;
        write_errors(version);
        fault_vfs_arm(k, 0);
        CrErr rc = update(st);
        int reached = fault_vfs.calls >= k;
        fault_vfs_disarm();
        if (rc) failed++;
        CHECK(rc == CR_OK || rc == CR_EDB || rc == CR_EIO);
        CHECK_INT(update(st), CR_OK);
        Shape got = shape(st);
        if (!same_shape(got, want[version])) {
            fprintf(stderr,
                    "failure at call %d: files %lld chunks %lld edges %lld symbols %lld, want "
                    "%lld %lld %lld %lld\n",
                    k, (long long)got.files, (long long)got.chunks, (long long)got.edges,
                    (long long)got.symbols, (long long)want[version].files,
                    (long long)want[version].chunks, (long long)want[version].edges,
                    (long long)want[version].symbols);
            CHECK(0);
            break;
        }
        ErrInfo e = {0};
        if (idx_verify(st, &e)) {
            fprintf(stderr, "failure at call %d: %s\n", k, e.msg);
            CHECK(0);
            break;
        }
        if (!reached) break;
    }
    fprintf(stderr, "%d failure points, %d updates failed\n", k - 1, failed);
    CHECK(k > 10 && k < 5000);
    CHECK(failed > 0);
    idx_close(st);
}

/* A full disk during an update (whole-tree or one file) is an error that
 * says so, and loses nothing: once there is room, the next update gives the
 * index a fault-free update gives. */
static void test_disk_full(void)
{
    IdxStore *st = open_store();
    CHECK(st != NULL);
    if (!st) return;
    write_errors(0);
    CHECK_INT(update(st), CR_OK);
    Shape want = shape(st);
    for (int single = 0; single < 2; single++) {
        write_errors(1);
        fault_vfs.full = 1;
        ErrInfo e = {0};
        char path[256];
        snprintf(path, sizeof path, "%s/shop/errors.py", root);
        CrErr rc = single ? idx_update_file(st, path, &e) : idx_update(st, NULL, NULL, NULL, &e);
        fault_vfs.full = 0;
        CHECK_INT(rc, CR_EIO);
        CHECK(strstr(e.msg, "no space left") != NULL);
        CHECK(strstr(e.msg, index_dir) != NULL);
        write_errors(0);
        CHECK_INT(update(st), CR_OK);
        CHECK(same_shape(shape(st), want));
        CHECK_INT(idx_verify(st, NULL), CR_OK);
    }
    idx_close(st);
}

int main(void)
{
    if (fault_vfs_install() != 0) {
        fprintf(stderr, "cannot register the fault VFS\n");
        return 1;
    }
    snprintf(root, sizeof root, "/tmp/coderag-test-dberr-XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    test_sh("cp -R '%s/shop/.' '%s'", FIXTURE_DIR, root);
    RUN(test_lookups_report_errors);
    RUN(test_update_survives_any_one_failure);
    RUN(test_disk_full);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    return test_summary();
}
