/* One reference resolves the same whatever one resolver looked up before
 * it (index/graph/graph_lookup.c's memo): the threaded pass (graph_par.c) hands
 * blocks of references to threads as they come free, so which references
 * share a memo depends on timing. A chain of headers longer than the depth
 * a lookup walks: a.c includes its first header (the definition is past
 * the cut), b.c its middle one (the definition is within reach); a.c's
 * type reference must resolve as it does in a fresh resolver after b.c's
 * has filled the memo with answers found nearer the definition. And one
 * whose walk meets a header past the cut, then again, nearer, through
 * another include: the answer found nearer is the walk's, whether the
 * header's was kept from another reference or is walked again. */
#include "idx.h"
#include "index/graph/graph_int.h"
#include "fixture_util.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_CHAIN = 9 };

static void make_tree(const char *root)
{
    char rel[64], text[256];
    for (int h = 0; h < N_CHAIN; h++) {
        snprintf(rel, sizeof rel, "h%d.h", h);
        if (h + 1 < N_CHAIN)
            snprintf(text, sizeof text, "#include \"h%d.h\"\n\nint level%d(void);\n", h + 1, h);
        else
            snprintf(text, sizeof text, "struct deep_conf {\n    int x;\n};\n");
        test_put(root, rel, text);
    }
    /* a second definition of each name: no answer by the name alone */
    test_put(root, "a.c",
             "#include \"h0.h\"\n\nint fa(struct deep_conf *p)\n{\n    return p->x;\n}\n");
    test_put(root, "b.c",
             "#include \"h5.h\"\n\nint fb(struct deep_conf *p)\n{\n    return p->x;\n}\n");
    /* w0 .. w4 -> wx -> wy -> wz (the definition), and wp -> wx */
    for (int w = 0; w < 5; w++) {
        snprintf(rel, sizeof rel, "w%d.h", w);
        if (w < 4)
            snprintf(text, sizeof text, "#include \"w%d.h\"\n", w + 1);
        else
            snprintf(text, sizeof text, "#include \"wx.h\"\n");
        test_put(root, rel, text);
    }
    test_put(root, "wx.h", "#include \"wy.h\"\n");
    test_put(root, "wy.h", "#include \"wz.h\"\n");
    test_put(root, "wz.h", "struct wide_conf {\n    int x;\n};\n");
    test_put(root, "wp.h", "#include \"wx.h\"\n");
    test_put(root, "other.h",
             "struct deep_conf {\n    long y;\n};\nstruct wide_conf {\n    long y;\n};\n");
    test_put(root, "c.c",
             "#include \"w0.h\"\n#include \"wp.h\"\n\nint fc(struct wide_conf *p)\n{\n    return "
             "p->x;\n}\n");
    test_put(root, "d.c",
             "#include \"wp.h\"\n\nint fd(struct wide_conf *p)\n{\n    return p->x;\n}\n");
}

/* The reference named name written in path (one). */
static int load_ref(IdxStore *st, const char *path, const char *name, RefRow *row)
{
    sqlite3_stmt *s = NULL;
    CHECK_INT(sqlite3_prepare_v2(st->db,
                                 "SELECT r.id, c.file_id, r.chunk_id, r.kind, r.name, f.module, "
                                 "c.symbol FROM refs r JOIN chunks c ON c.id = r.chunk_id JOIN "
                                 "files f ON f.id = c.file_id WHERE f.path = ?1 AND r.name = ?2",
                                 -1, &s, NULL),
              SQLITE_OK);
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    int n = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (n++) continue;
        *row = (RefRow){.id = sqlite3_column_int64(s, 0),
                        .file_id = sqlite3_column_int64(s, 1),
                        .chunk_id = sqlite3_column_int64(s, 2),
                        .kind = sqlite3_column_int(s, 3),
                        .name = xstrdup((const char *)sqlite3_column_text(s, 4)),
                        .module = xstrdup((const char *)sqlite3_column_text(s, 5)),
                        .symbol = xstrdup((const char *)sqlite3_column_text(s, 6)),
                        .lang = idx_lang_for_path(path)};
    }
    sqlite3_finalize(s);
    CHECK_INT(n, 1);
    return n == 1;
}

static void row_free(RefRow *row)
{
    free(row->name);
    free(row->module);
    free(row->symbol);
}

/* The first target of each of rows[order[0..n)], looked up in that order by
 * one resolver (with names: the threaded pass's, else the serial one's). */
static void lookup(IdxStore *st, const GraphNames *names, const RefRow *rows, const int *order,
                   size_t n, int64_t *out)
{
    Resolver r;
    ErrInfo e = {0};
    idx_graph_resolver_init(&r, st, &e);
    r.names = names;
    for (size_t i = 0; i < n; i++) {
        int64_t dst[DISPATCH_MAX];
        size_t nd = idx_graph_lookup_row(&r, &rows[order[i]], dst);
        out[order[i]] = nd ? dst[0] : 0;
        CHECK_INT(r.rc, CR_OK);
    }
    idx_graph_resolver_release(&r);
}

/* Rows 0 and 1 each resolve alone as after the other; want0: whether row
 * 0 reaches a definition (row 1 does). */
static void check_orders(IdxStore *st, const GraphNames *names, const RefRow *rows, int want0)
{
    static const int ab[] = {0, 1}, ba[] = {1, 0};
    int64_t alone[2], first[2], second[2];
    lookup(st, names, rows, ab, 1, alone);
    lookup(st, names, rows, ba + 0, 1, alone);
    lookup(st, names, rows, ab, 2, first);
    lookup(st, names, rows, ba, 2, second);
    CHECK(alone[1] > 0);
    CHECK_INT(alone[0] > 0, want0);
    for (int i = 0; i < 2; i++) {
        if (first[i] != alone[i] || second[i] != alone[i])
            fprintf(stderr, "ref %d: alone %lld, a then b %lld, b then a %lld (names %d)\n", i,
                    (long long)alone[i], (long long)first[i], (long long)second[i], names != NULL);
        CHECK(first[i] == alone[i]);
        CHECK(second[i] == alone[i]);
    }
}

static void test_order_independent(void)
{
    char root[] = "/tmp/coderag-test-graph-order-XXXXXX";
    CHECK(mkdtemp(root) != NULL);
    make_tree(root);
    char index[] = "/tmp/coderag-test-graph-order-idx-XXXXXX";
    IdxStore *st = fixture_store(root, index);
    if (!st) return;
    RefRow rows[4] = {0};
    GraphNames *names = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_graph_names_load(st, &names, &e), CR_OK);
    /* a.c's reference is cut short, b.c's reaches the definition */
    if (load_ref(st, "a.c", "deep_conf", &rows[0]) && load_ref(st, "b.c", "deep_conf", &rows[1])) {
        check_orders(st, NULL, rows, 0);
        if (names) check_orders(st, names, rows, 0);
    }
    /* c.c's reaches it through wp.h, nearer than through w0.h */
    if (load_ref(st, "c.c", "wide_conf", &rows[2]) && load_ref(st, "d.c", "wide_conf", &rows[3])) {
        check_orders(st, NULL, rows + 2, 1);
        if (names) check_orders(st, names, rows + 2, 1);
    }
    idx_graph_names_free(names);
    for (int i = 0; i < 4; i++)
        row_free(&rows[i]);
    fixture_drop(st, index);
    test_sh("rm -rf '%s'%s", root, "");
}

int main(void)
{
    RUN(test_order_independent);
    return test_summary();
}
