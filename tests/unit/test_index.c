/* The index over a fixture repository: chunks, qualified names, edges,
 * skips, incremental updates and consistency, asserted exactly. */
#include "idx.h"
#include "index/store/store_int.h" /* the connection, to list the indexes */
#include "index_util.h"
#include "test.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[256];
static char tmp_index[256];

static void write_file(const char *rel, const char *text, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp_root, rel);
    FILE *f = fopen(p, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(text, 1, len, f);
    fclose(f);
}

static IdxStore *open_store(size_t max_bytes, const char *const *exclude, size_t n_exclude)
{
    IdxConfig cfg = {.root = tmp_root,
                     .index_dir = tmp_index,
                     .exclude = exclude,
                     .n_exclude = n_exclude,
                     .max_file_bytes = max_bytes,
                     .threads = 2};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (rc) fprintf(stderr, "idx_open: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    return st;
}

static IdxUpdateStats update(IdxStore *st)
{
    IdxUpdateStats s = {0};
    ErrInfo e = {0};
    CrErr rc = idx_update(st, NULL, NULL, &s, &e);
    if (rc) fprintf(stderr, "idx_update: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    rc = idx_verify(st, &e);
    if (rc) fprintf(stderr, "idx_verify: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    return s;
}

/* "kind start-end symbol" for every chunk of a file, one per line. */
static char *describe_file(IdxStore *st, const char *path)
{
    IdxChunk *v = NULL;
    size_t n = 0;
    StrBuf sb;
    sb_init(&sb);
    CHECK_INT(idx_file_chunks(st, path, &v, &n, NULL), CR_OK);
    for (size_t i = 0; i < n; i++)
        sb_addf(&sb, "%s %u-%u %s%s", idx_kind_name(v[i].kind), v[i].start_line, v[i].end_line,
                v[i].symbol, i + 1 < n ? "\n" : "");
    idx_chunks_free(v, n);
    return sb_detach(&sb, NULL);
}

/* Whether an edge of this kind goes from src (path:symbol) to dst. */
static int has_edge(IdxStore *st, const char *sp, const char *ss, const char *dp, const char *ds,
                    IdxEdgeKind kind)
{
    int64_t a = chunk_id(st, sp, ss), b = chunk_id(st, dp, ds);
    IdxEdge *v = NULL;
    size_t n = 0;
    int found = 0;
    if (!a || !b) return 0;
    idx_edges(st, a, 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++)
        if (v[i].dst == b && v[i].kind == kind) found = 1;
    free(v);
    return found;
}

static void setup_tree(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-index-XXXXXX");
    CHECK(mkdtemp(tmp_root) != NULL);
    snprintf(tmp_index, sizeof tmp_index, "%.200s.idx", tmp_root);
    test_sh("cp -R '%s/shop/.' '%s'", FIXTURE_DIR, tmp_root);
    /* Files the fixture's .gitignore leaves out (so git does not keep them). */
    test_sh("mkdir -p '%s/build'%s", tmp_root, "");
    static const char out_py[] = "def ignored_build():\n    pass\n";
    static const char gen_py[] = "def ignored_generated():\n    pass\n";
    write_file("build/out.py", out_py, sizeof out_py - 1);
    write_file("shop/cache.generated.py", gen_py, sizeof gen_py - 1);
}

static void teardown_tree(void)
{
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
}

static void test_chunks_and_names(void)
{
    IdxStore *st = open_store(0, NULL, 0);
    if (!st) return;
    IdxUpdateStats s = update(st);
    CHECK_INT(s.files_seen, 5);
    CHECK_INT(s.files_changed, 5);
    static const struct {
        const char *path;
        const char *chunks;
    } expect[] = {
        {"shop/__init__.py", "module 1-5 "},
        {"shop/errors.py", "module 1-1 \nclass 4-5 ShopError\nclass 8-11 PaymentDeclined"},
        {"shop/models.py",
         "module 1-6 \nclass 9-10 Customer\nmethod 12-14 Customer.__init__\n"
         "method 16-17 Customer.display_name\nclass 20-23 Order\nmethod 25-27 Order.__init__\n"
         "method 29-32 Order.add_line\nmethod 34-36 Order.total\nfunction 39-41 apply_tax"},
        {"shop/payments/__init__.py", "module 1-1 "},
        {"shop/payments/gateway.py",
         "module 1-4 \nclass 7-7 Gateway\nmethod 8-12 Gateway.charge\nmethod 14-15 Gateway._send\n"
         "class 18-18 RetryingGateway\nmethod 19-23 RetryingGateway.charge\n"
         "function 26-30 checkout"},
        {"build/out.py", ""},            /* .gitignore: build/ */
        {"shop/cache.generated.py", ""}, /* .gitignore: *.generated.py */
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        char *got = describe_file(st, expect[i].path);
        if (strcmp(got, expect[i].chunks) != 0) fprintf(stderr, "file %s\n", expect[i].path);
        CHECK_STR(got, expect[i].chunks);
        free(got);
    }
    IdxChunk c = {0};
    CHECK_INT(idx_chunk_get(st, chunk_id(st, "shop/models.py", "Order.add_line"), &c, NULL), CR_OK);
    CHECK_STR(c.module, "shop.models");
    CHECK_STR(c.signature, "def add_line(self, sku, price, quantity=1):");
    CHECK_INT(c.kind, IDX_KIND_METHOD);
    CHECK(c.parent_id == chunk_id(st, "shop/models.py", "Order"));
    CHECK_INT(strlen(c.hash), 16);
    idx_chunk_release(&c);
    CHECK_INT(idx_chunk_get(st, chunk_id(st, "shop/models.py", "apply_tax"), &c, NULL), CR_OK);
    CHECK_STR(c.docstring, "Adds value-added tax to an amount.");
    idx_chunk_release(&c);

    int64_t *ids = NULL;
    size_t n = 0;
    CHECK_INT(idx_lookup_symbol(st, "shop.models.Order.total", &ids, &n, NULL), CR_OK);
    CHECK_INT(n, 1);
    if (n) CHECK(ids[0] == chunk_id(st, "shop/models.py", "Order.total"));
    free(ids);
    CHECK_INT(idx_lookup_symbol(st, "charge", &ids, &n, NULL), CR_OK);
    CHECK_INT(n, 2);
    free(ids);

    IdxStatus status;
    CHECK_INT(idx_status(st, &status, NULL), CR_OK);
    CHECK_INT(status.files, 5);
    CHECK_INT(status.chunks, 21);
    CHECK(status.last_update > 0);
    idx_close(st);
}

static void test_edges(void)
{
    IdxStore *st = open_store(0, NULL, 0);
    if (!st) return;
    static const struct {
        const char *sp, *ss, *dp, *ds;
        IdxEdgeKind kind;
    } expect[] = {
        /* imports: relative, absolute, aliased, package through __init__ */
        {"shop/__init__.py", "", "shop/models.py", "Order", IDX_EDGE_IMPORT},
        {"shop/__init__.py", "", "shop/models.py", "Customer", IDX_EDGE_IMPORT},
        {"shop/__init__.py", "", "shop/errors.py", "ShopError", IDX_EDGE_IMPORT},
        {"shop/models.py", "", "shop/errors.py", "ShopError", IDX_EDGE_IMPORT},
        {"shop/payments/__init__.py", "", "shop/payments/gateway.py", "", IDX_EDGE_IMPORT},
        {"shop/payments/gateway.py", "", "shop/errors.py", "PaymentDeclined", IDX_EDGE_IMPORT},
        {"shop/payments/gateway.py", "", "shop/models.py", "Order", IDX_EDGE_IMPORT},
        {"shop/payments/gateway.py", "", "shop/models.py", "", IDX_EDGE_IMPORT},
        /* calls: imported name, local function, self method, module alias, unique method */
        {"shop/models.py", "Order.add_line", "shop/errors.py", "ShopError", IDX_EDGE_CALL},
        {"shop/models.py", "Order.total", "shop/models.py", "apply_tax", IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "Gateway.charge", "shop/payments/gateway.py", "Gateway._send",
         IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "Gateway.charge", "shop/errors.py", "PaymentDeclined",
         IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "Gateway.charge", "shop/models.py", "Order.total",
         IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "checkout", "shop/models.py", "Order", IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "checkout", "shop/models.py", "Order.add_line", IDX_EDGE_CALL},
        {"shop/payments/gateway.py", "checkout", "shop/payments/gateway.py", "Gateway",
         IDX_EDGE_CALL},
        /* Gateway().charge(): the method of the call's result, though a subclass has one too */
        {"shop/payments/gateway.py", "checkout", "shop/payments/gateway.py", "Gateway.charge",
         IDX_EDGE_CALL},
        /* inheritance, raise/except, containment */
        {"shop/errors.py", "PaymentDeclined", "shop/errors.py", "ShopError", IDX_EDGE_INHERIT},
        {"shop/payments/gateway.py", "RetryingGateway", "shop/payments/gateway.py", "Gateway",
         IDX_EDGE_INHERIT},
        {"shop/payments/gateway.py", "RetryingGateway.charge", "shop/errors.py", "PaymentDeclined",
         IDX_EDGE_RAISE},
        {"shop/models.py", "Order", "shop/models.py", "Order.total", IDX_EDGE_CONTAIN},
        {"shop/payments/gateway.py", "Gateway", "shop/payments/gateway.py", "Gateway._send",
         IDX_EDGE_CONTAIN},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        int ok =
            has_edge(st, expect[i].sp, expect[i].ss, expect[i].dp, expect[i].ds, expect[i].kind);
        if (!ok)
            fprintf(stderr, "missing %s edge %s:%s -> %s:%s\n", idx_edge_kind_name(expect[i].kind),
                    expect[i].sp, expect[i].ss, expect[i].dp, expect[i].ds);
        CHECK(ok);
    }
    /* super().charge() is the charge RetryingGateway inherits, not its own */
    CHECK(has_edge(st, "shop/payments/gateway.py", "RetryingGateway.charge",
                   "shop/payments/gateway.py", "Gateway.charge", IDX_EDGE_CALL));
    IdxStatus status;
    idx_status(st, &status, NULL);
    /* the listed edges, super()'s and six containments not listed: every edge is accounted for */
    CHECK_INT(status.edges, (long long)(sizeof expect / sizeof expect[0]) + 7);
    idx_close(st);
}

/* A call to a function that does not exist yet makes no edge until the
 * function appears: saving models.py resolves it, and edges into
 * models.py's re-created chunks are re-established. */
static void incremental_resolve(IdxStore *st, int64_t checkout_before)
{
    const char *gateway_v2 = "from ..models import Order\nimport shop.models as models\n\n\n"
                             "def checkout(customer, items, token):\n"
                             "    order = models.Order(customer)\n"
                             "    return models.refund(order)\n";
    write_file("shop/payments/gateway.py", gateway_v2, strlen(gateway_v2));
    CHECK_INT(idx_update_file(st, "shop/payments/gateway.py", NULL), CR_OK);
    CHECK_INT(idx_verify(st, NULL), CR_OK);
    char *got = describe_file(st, "shop/payments/gateway.py");
    CHECK_STR(got, "module 1-2 \nfunction 5-7 checkout");
    free(got);
    CHECK(chunk_id(st, "shop/payments/gateway.py", "checkout") != checkout_before);
    CHECK(has_edge(st, "shop/payments/gateway.py", "checkout", "shop/models.py", "Order",
                   IDX_EDGE_CALL));

    char *models = NULL;
    {
        char p[512];
        snprintf(p, sizeof p, "%s/shop/models.py", tmp_root);
        StrBuf sb;
        sb_init(&sb);
        CHECK_INT(sb_read_file(&sb, p, 0, NULL), CR_OK);
        sb_adds(&sb, "\n\ndef refund(order):\n    return -order.total()\n");
        models = sb_detach(&sb, NULL);
    }
    write_file("shop/models.py", models, strlen(models));
    free(models);
    char abs[512];
    snprintf(abs, sizeof abs, "%s/shop/models.py", tmp_root);
    CHECK_INT(idx_update_file(st, abs, NULL), CR_OK); /* absolute path inside the root */
    CHECK_INT(idx_verify(st, NULL), CR_OK);
    CHECK(has_edge(st, "shop/payments/gateway.py", "checkout", "shop/models.py", "refund",
                   IDX_EDGE_CALL));
    CHECK(has_edge(st, "shop/payments/gateway.py", "checkout", "shop/models.py", "Order",
                   IDX_EDGE_CALL));
    CHECK(has_edge(st, "shop/__init__.py", "", "shop/models.py", "Order", IDX_EDGE_IMPORT));
    CHECK(has_edge(st, "shop/models.py", "refund", "shop/models.py", "Order.total", IDX_EDGE_CALL));
}

/* A call through an import alias resolves once the module appears. */
static void incremental_alias(IdxStore *st)
{
    const char *alias_user = "from shop.later import compute as _compute\n\n\n"
                             "def use_later(x):\n    return _compute(x)\n";
    write_file("shop/alias_user.py", alias_user, strlen(alias_user));
    CHECK_INT(idx_update_file(st, "shop/alias_user.py", NULL), CR_OK);
    const char *later = "def compute(x):\n    return x * 2\n";
    write_file("shop/later.py", later, strlen(later));
    CHECK_INT(idx_update_file(st, "shop/later.py", NULL), CR_OK);
    CHECK(
        has_edge(st, "shop/alias_user.py", "use_later", "shop/later.py", "compute", IDX_EDGE_CALL));
    test_sh("rm '%s/%s'", tmp_root, "shop/alias_user.py");
    test_sh("rm '%s/%s'", tmp_root, "shop/later.py");
    update(st);
}

/* A deleted file's rows go, and so do the edges into it. */
static void incremental_delete(IdxStore *st)
{
    test_sh("rm '%s/%s'", tmp_root, "shop/errors.py");
    IdxUpdateStats s = update(st);
    CHECK_INT(s.files_removed, 1);
    CHECK_INT(s.files_unchanged, 4);
    char *got = describe_file(st, "shop/errors.py");
    CHECK_STR(got, "");
    free(got);
    CHECK(!has_edge(st, "shop/__init__.py", "", "shop/errors.py", "ShopError", IDX_EDGE_IMPORT));
}

/* Paths outside the root are refused, also through a symlink; a
 * single-file update of an ignored file indexes nothing. */
static void incremental_outside(IdxStore *st)
{
    char outside[600];
    snprintf(outside, sizeof outside, "%s.outside.py", tmp_root);
    FILE *of = fopen(outside, "w");
    if (of) {
        fputs("SECRET = 1\n", of);
        fclose(of);
    }
    test_sh("ln -s '%s' '%s/shop/out.py'", outside, tmp_root);
    StrBuf lines;
    sb_init(&lines);
    CHECK_INT(idx_read_lines(st, "shop/out.py", 1, 1, &lines, NULL, NULL), CR_EOUTSIDE);
    CHECK_INT(lines.len, 0);
    CHECK_INT(idx_read_lines(st, "../x.py", 1, 1, &lines, NULL, NULL), CR_EOUTSIDE);
    sb_release(&lines);
    test_sh("rm -f '%s/shop/out.py' '%s'", tmp_root, outside);
    ErrInfo e = {0};
    CHECK_INT(idx_update_file(st, "../etc/passwd", &e), CR_EOUTSIDE);
    CHECK_INT(idx_update_file(st, "/etc/passwd", &e), CR_EOUTSIDE);
    /* A single-file update of an ignored file indexes nothing. */
    CHECK_INT(idx_update_file(st, "build/out.py", NULL), CR_OK);
    char *got = describe_file(st, "build/out.py");
    CHECK_STR(got, "");
    free(got);
}

static void test_incremental(void)
{
    IdxStore *st = open_store(0, NULL, 0);
    if (!st) return;
    int64_t total_before = chunk_id(st, "shop/models.py", "Order.total");
    int64_t checkout_before = chunk_id(st, "shop/payments/gateway.py", "checkout");

    /* Nothing changed: every file costs a stat, ids stay. */
    IdxUpdateStats s = update(st);
    CHECK_INT(s.files_unchanged, 5);
    CHECK_INT(s.files_changed, 0);
    CHECK(chunk_id(st, "shop/models.py", "Order.total") == total_before);

    /* Touched but same content: re-hashed, not re-chunked. */
    test_sh("touch -d '2001-01-01' '%s/%s'", tmp_root, "shop/errors.py");
    s = update(st);
    CHECK_INT(s.files_unchanged, 5);
    CHECK_INT(s.files_changed, 0);

    incremental_resolve(st, checkout_before);
    incremental_alias(st);
    incremental_delete(st);
    incremental_outside(st);
    idx_close(st);
}

static void test_skips_and_excludes(void)
{
    write_file("shop/blob.py", "ab\0cd", 5);
    write_file("shop/latin1.py", "x = '\xe9'\n", 8);
    StrBuf big;
    sb_init(&big);
    for (int i = 0; i < 400; i++)
        sb_addf(&big, "VALUE_%d = %d\n", i, i);
    write_file("shop/big.py", big.buf, big.len);
    sb_release(&big);

    static const char *const exclude[] = {"payments/"};
    IdxStore *st = open_store(4096, exclude, 1);
    if (!st) return;
    update(st);
    IdxSkipped *sk = NULL;
    size_t n = 0;
    CHECK_INT(idx_skipped(st, &sk, &n, NULL), CR_OK);
    StrBuf got;
    sb_init(&got);
    for (size_t i = 0; i < n; i++)
        sb_addf(&got, "%s:%s ", sk[i].path, sk[i].reason);
    CHECK_STR(got.buf, "shop/big.py:too-large shop/blob.py:binary shop/latin1.py:not-utf8 ");
    sb_release(&got);
    idx_skipped_free(sk, n);
    char *desc = describe_file(st, "shop/payments/gateway.py");
    CHECK_STR(desc, ""); /* excluded now: its rows went */
    free(desc);
    IdxStatus status;
    idx_status(st, &status, NULL);
    CHECK_INT(status.files, 2);
    CHECK_INT(status.skipped, 3);
    idx_close(st);
}

static int stop_after_two(void *ud, size_t done, size_t total)
{
    int *calls = ud;
    return ++*calls >= 2;
}

/* The indexes of the store's tables (SQLite's own for UNIQUE aside). */
static int count_indexes(IdxStore *st)
{
    sqlite3_stmt *s = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                           "AND name NOT LIKE 'sqlite_autoindex%'",
                           -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return n;
}

static long long count_sql(IdxStore *st, const char *sql)
{
    sqlite3_stmt *s = NULL;
    long long n = -1;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* The edges by the paths and symbols of their ends (ids differ between
 * builds that wrote in other orders): a digest, as a count. */
#define EDGES_BY_NAME                                                                              \
    "SELECT sum(length(x) * 31 + unicode(x)) FROM (SELECT fs.path || ':' || cs.symbol || '>' || "  \
    "fd.path || ':' || cd.symbol || '#' || e.kind AS x FROM edges e "                              \
    "JOIN chunks cs ON cs.id = e.src JOIN files fs ON fs.id = cs.file_id "                         \
    "JOIN chunks cd ON cd.id = e.dst JOIN files fd ON fd.id = cd.file_id)"

static void test_stop(void)
{
    char idx2[300];
    snprintf(idx2, sizeof idx2, "%.200s.stop", tmp_root);
    IdxConfig cfg = {.root = tmp_root, .index_dir = idx2, .threads = 1};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    int calls = 0;
    IdxUpdateStats s = {0};
    CHECK_INT(idx_update(st, stop_after_two, &calls, &s, NULL), CR_ECANCELED);
    CHECK_INT(calls, 2);
    CHECK_INT(idx_verify(st, NULL), CR_OK); /* what was written stays, consistent */
    IdxStatus status;
    idx_status(st, &status, NULL);
    CHECK_INT(status.files, 2);
    /* a cold build loads the tables bare: the indexes come at its end */
    int stopped = count_indexes(st);
    /* and writes its calls resolved, which the meta says until resolved */
    CHECK_INT(count_sql(st, "SELECT count(*) FROM meta WHERE key = 'refs_born'"), 1);
    CHECK(count_sql(st, "SELECT count(*) FROM refs WHERE resolved = 1") > 0);
    s = update(st); /* the next update finishes the work, indexes too */
    idx_status(st, &status, NULL);
    CHECK(status.files > 2);
    CHECK_INT(s.files_unchanged, 2);
    CHECK(stopped < count_indexes(st));
    CHECK_INT(count_sql(st, "SELECT count(*) FROM meta WHERE key = 'refs_born'"), 0);
    CHECK_INT(count_sql(st, "SELECT count(*) FROM refs WHERE resolved = 0"), 0);
    {
        char idx3[320];
        snprintf(idx3, sizeof idx3, "%.200s.whole", tmp_root);
        IdxConfig c3 = {.root = tmp_root, .index_dir = idx3, .threads = 1};
        IdxStore *whole = NULL;
        CHECK_INT(idx_open(&c3, 0, &whole, NULL), CR_OK);
        if (whole) {
            update(whole);
            CHECK_INT(count_indexes(st), count_indexes(whole));
            /* the calls of the files the stopped build wrote are resolved
             * as the whole build resolves them */
            CHECK_INT(count_sql(st, EDGES_BY_NAME), count_sql(whole, EDGES_BY_NAME));
            CHECK_INT(count_sql(st, "SELECT count(*) FROM edges"),
                      count_sql(whole, "SELECT count(*) FROM edges"));
            CHECK_INT(count_sql(whole, "SELECT count(*) FROM meta WHERE key = 'refs_born'"), 0);
            idx_close(whole);
        }
        test_sh("rm -rf '%s'%s", idx3, "");
    }
    idx_close(st);
    test_sh("rm -rf '%s'%s", idx2, "");
}

static void test_other_writer(void)
{
    /* A reader's in-memory search sees what another handle (another
     * process, in practice) committed. */
    IdxStore *reader = open_store(0, NULL, 0), *writer = open_store(0, NULL, 0);
    if (!reader || !writer) return;
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(reader, "zebra crossing", 5, &hits, &n, NULL), CR_OK);
    free(hits);
    const char *src = "def zebra_crossing(x):\n    return x\n";
    write_file("shop/zebra.py", src, strlen(src));
    CHECK_INT(idx_update_file(writer, "shop/zebra.py", NULL), CR_OK);
    CHECK_INT(idx_search_bm25(reader, "zebra crossing", 5, &hits, &n, NULL), CR_OK);
    CHECK(n >= 1);
    IdxChunk c = {0};
    if (n && idx_chunk_get(reader, hits[0].chunk_id, &c, NULL) == CR_OK) {
        CHECK_STR(c.symbol, "zebra_crossing");
        idx_chunk_release(&c);
    }
    free(hits);
    test_sh("rm '%s/%s'", tmp_root, "shop/zebra.py");
    CHECK_INT(idx_update_file(writer, "shop/zebra.py", NULL), CR_OK);
    idx_close(reader);
    idx_close(writer);
}

/* How many chunks st's outline of rel's file has (-1: no such file). */
static long outline_len(IdxStore *st, const char *rel, int64_t *file_id)
{
    IdxChunk *v = NULL;
    size_t n = 0;
    if (idx_file_chunks(st, rel, &v, &n, NULL) != CR_OK || !n) return -1;
    *file_id = v[0].file_id;
    idx_chunks_free(v, n);
    CHECK_INT(idx_file_outline(st, *file_id, &v, &n, NULL), CR_OK);
    idx_chunks_free(v, n);
    return (long)n;
}

/* The chunks and outlines a store keeps from its last reads (rows.c) are
 * never those of an index that changed since: another handle's commit (in
 * and out of a read transaction) and the store's own write each show at
 * the next read. */
static void test_rows_cache_fresh(void)
{
    IdxStore *a = open_store(0, NULL, 0), *b = open_store(0, NULL, 0);
    if (!a || !b) return;
    const char *one = "def rows_one(x):\n    return x\n";
    const char *two = "def rows_one(x):\n    return x\n\n\ndef rows_two(y):\n    return y\n";
    write_file("shop/rows.py", one, strlen(one));
    CHECK_INT(idx_update_file(a, "shop/rows.py", NULL), CR_OK);
    int64_t fid = 0;
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 1);
    IdxChunk *v = NULL;
    size_t n = 0;
    CHECK_INT(idx_file_chunks(a, "shop/rows.py", &v, &n, NULL), CR_OK);
    int64_t old_id = n ? v[0].id : 0;
    idx_chunks_free(v, n);
    IdxChunk c = {0};
    CHECK_INT(idx_chunk_get(a, old_id, &c, NULL), CR_OK);
    idx_chunk_release(&c);
    /* another handle rewrites the file: its rows have new ids */
    write_file("shop/rows.py", two, strlen(two));
    CHECK_INT(idx_update_file(b, "shop/rows.py", NULL), CR_OK);
    CHECK_INT(idx_chunk_get(a, old_id, &c, NULL), CR_ENOENT);
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 2);
    /* and again while a reads in a transaction of its own, then after it */
    int txn = idx_read_begin(a);
    CHECK(txn);
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 2);
    write_file("shop/rows.py", one, strlen(one));
    CHECK_INT(idx_update_file(b, "shop/rows.py", NULL), CR_OK);
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 2); /* its snapshot */
    idx_read_end(a, txn);
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 1);
    /* its own write */
    write_file("shop/rows.py", two, strlen(two));
    CHECK_INT(idx_update_file(a, "shop/rows.py", NULL), CR_OK);
    CHECK_INT(outline_len(a, "shop/rows.py", &fid), 2);
    test_sh("rm '%s/%s'", tmp_root, "shop/rows.py");
    CHECK_INT(idx_update_file(a, "shop/rows.py", NULL), CR_OK);
    idx_close(a);
    idx_close(b);
}

static void test_schema_rebuild(void)
{
    char db[512];
    snprintf(db, sizeof db, "%s/index.db", tmp_index);
    sqlite3 *h = NULL;
    IdxConfig cfg = {.root = tmp_root, .index_dir = tmp_index, .threads = 1};
    IdxStore *st = NULL;
    /* the same schema made before the language queries counted (or by
     * other queries) holds other chunks: "coderag-N-digest" -> "coderag-N" */
    CHECK_INT(sqlite3_open(db, &h), SQLITE_OK);
    CHECK_INT(sqlite3_exec(h,
                           "UPDATE meta SET value = substr(value, 1, "
                           "instr(substr(value, 9), '-') + 7) WHERE key = 'schema'",
                           NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    CHECK_INT(idx_open(&cfg, IDX_OPEN_READONLY, &st, NULL), CR_ESCHEMA);

    CHECK_INT(sqlite3_open(db, &h), SQLITE_OK);
    CHECK_INT(sqlite3_exec(h, "UPDATE meta SET value = 'coderag-0' WHERE key = 'schema'", NULL,
                           NULL, NULL),
              SQLITE_OK);
    sqlite3_close(h);
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, IDX_OPEN_READONLY, &st, &e), CR_ESCHEMA);
    CHECK(strstr(e.msg, "another schema version") != NULL);
    /* `ask --no-update` answers from the index as it is: it says to
     * re-index, and leaves the old index alone */
    CHECK_INT(idx_open(&cfg, IDX_OPEN_EXISTING, &st, NULL), CR_ENOINDEX);
    CHECK_INT(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    CHECK_INT(sqlite3_prepare_v2(h, "SELECT count(*) FROM files", -1, &q, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(q), SQLITE_ROW);
    CHECK(sqlite3_column_int(q, 0) > 0);
    sqlite3_finalize(q);
    sqlite3_close(h);
    st = open_store(0, NULL, 0); /* rebuilt empty, never misread */
    if (!st) return;
    IdxStatus status;
    idx_status(st, &status, NULL);
    CHECK_INT(status.files, 0);
    update(st);
    idx_status(st, &status, NULL);
    CHECK(status.files > 0);
    idx_close(st);

    /* A damaged page where the schema is read: readers say it is damaged,
     * not of another version, and how to mend it; a writer rebuilds. */
    FILE *f = fopen(db, "r+b");
    CHECK(f != NULL);
    if (f) {
        char junk[512];
        memset(junk, 0xa5, sizeof junk);
        fseek(f, 4096, SEEK_SET); /* page 2: the first table's */
        fwrite(junk, 1, sizeof junk, f);
        fclose(f);
    }
    ErrInfo de = {0};
    CHECK_INT(idx_open(&cfg, IDX_OPEN_READONLY, &st, &de), CR_ECORRUPT);
    CHECK(strstr(de.msg, "is damaged") && strstr(de.msg, "run `coderag index`"));
    CHECK(!strstr(de.msg, "version"));
    CHECK_INT(idx_open(&cfg, IDX_OPEN_EXISTING, &st, &de), CR_ECORRUPT);
    CHECK(strstr(de.msg, "is damaged") && strstr(de.msg, "run `coderag index`"));
    st = open_store(0, NULL, 0);
    CHECK(st != NULL);
    if (st) {
        update(st);
        idx_status(st, &status, NULL);
        CHECK(status.files > 0);
        idx_close(st);
    }

    /* A foreign file where the database should be is replaced, not read. */
    f = fopen(db, "wb");
    fputs("this is not a database", f);
    fclose(f);
    char p[600];
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    st = open_store(0, NULL, 0);
    CHECK(st != NULL);
    idx_close(st);
}

/* An index folder holds one workspace's index: another root is refused
 * (never read with paths that mean other files, nor emptied by its
 * update); an index folder inside its root moves with it. */
static void test_index_of_another_root(void)
{
    char other[256] = "/tmp/coderag-test-index-other-XXXXXX", moved[300], p[600];
    CHECK(mkdtemp(other) != NULL);
    IdxStore *st = open_store(0, NULL, 0);
    if (!st) return;
    update(st);
    IdxStatus before;
    CHECK_INT(idx_status(st, &before, NULL), CR_OK);
    idx_close(st);
    static const unsigned modes[] = {IDX_OPEN_READONLY, IDX_OPEN_EXISTING, 0};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        IdxConfig cfg = {.root = other, .index_dir = tmp_index, .threads = 1};
        ErrInfo e = {0};
        st = NULL;
        CHECK_INT(idx_open(&cfg, modes[i], &st, &e), CR_EUSAGE);
        CHECK(strstr(e.msg, "holds the index of") && strstr(e.msg, tmp_root));
        idx_close(st);
    }
    st = open_store(0, NULL, 0); /* untouched: the same files */
    if (st) {
        IdxStatus after;
        CHECK_INT(idx_status(st, &after, NULL), CR_OK);
        CHECK_INT(after.files, before.files);
        idx_close(st);
    }

    /* a workspace moved with its .coderag/ keeps it */
    snprintf(p, sizeof p, "%s/ws", other);
    test_sh("cp -R '%s' '%s'", tmp_root, p);
    IdxConfig cfg = {.root = p, .threads = 1};
    st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK); /* its .coderag/, made for p */
    if (st) update(st);
    idx_close(st);
    snprintf(moved, sizeof moved, "%s/moved", other);
    test_sh("mv '%s' '%s'", p, moved);
    cfg.root = moved;
    st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    if (st) {
        IdxUpdateStats s = update(st);
        CHECK_INT(s.files_changed, 0);
        idx_close(st);
    }
    st = NULL;
    CHECK_INT(idx_open(&cfg, IDX_OPEN_READONLY, &st, &e), CR_OK);
    idx_close(st);
    test_sh("rm -rf '%s'%s", other, "");
}

int main(void)
{
    setup_tree();
    RUN(test_chunks_and_names);
    RUN(test_edges);
    RUN(test_incremental);
    RUN(test_skips_and_excludes);
    RUN(test_stop);
    RUN(test_other_writer);
    RUN(test_rows_cache_fresh);
    RUN(test_schema_rebuild);
    RUN(test_index_of_another_root);
    teardown_tree();
    return test_summary();
}
