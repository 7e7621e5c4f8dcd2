/* The learned re-ranker (retrieve/rerank.c): its features over the shop
 * fixture, reordering by a model, and the compiled model being the
 * committed models/ranker-v1.json. */
#include "retrieve/rtv_int.h"
#include "fixture_util.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first ranking of a question, and where a symbol is in it (or -1). */
static RtvCand *ranked(IdxStore *st, const RtvQuery *q, size_t *n)
{
    RtvRequest req;
    RtvCand *v = NULL;
    RtvTimings tm = {0};
    RtvRankInfo info;
    rtv_request_init(&req);
    req.question = q->text;
    CHECK_INT(rtv_rank(st, &req, q, &rtv_tuning, &v, n, &tm, &info, NULL), CR_OK);
    return v;
}

static long find_symbol(IdxStore *st, const RtvCand *v, size_t n, const char *symbol)
{
    for (size_t i = 0; i < n; i++) {
        IdxChunk c;
        if (idx_chunk_get(st, v[i].chunk_id, &c, NULL)) continue;
        int same = !strcmp(c.symbol, symbol);
        idx_chunk_release(&c);
        if (same) return (long)i;
    }
    return -1;
}

static void test_features(void)
{
    char tmp[64] = "/tmp/coderag-rerank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    RtvQuery q;
    CHECK_INT(
        rtv_query_read(st, "where does apply_tax compute taxes for the order total", &q, NULL),
        CR_OK);
    size_t n = 0;
    RtvCand *v = ranked(st, &q, &n);
    CHECK(n > 2);
    double *f = xcalloc(n * RTV_N_FEATURES, sizeof *f);
    CHECK_INT(rtv_features(st, &q, v, n, f, NULL), CR_OK);
    long tax = find_symbol(st, v, n, "apply_tax"), total = find_symbol(st, v, n, "Order.total");
    CHECK(tax >= 0 && total >= 0);
    if (tax >= 0 && total >= 0) {
        const double *ft = f + tax * RTV_N_FEATURES, *fo = f + total * RTV_N_FEATURES;
        CHECK(ft[RTV_F_IDENT] == 1); /* named */
        CHECK(fo[RTV_F_IDENT] == 0);
        CHECK(ft[RTV_F_FUNCTION] == 1 && fo[RTV_F_FUNCTION] == 1);
        CHECK(ft[RTV_F_NAME_COVER] == 1); /* "apply", "tax": both in the question */
        CHECK(fo[RTV_F_NAME] > 0);        /* "total" */
        CHECK(ft[RTV_F_PATH] == 0);       /* shop/models.py */
        CHECK(ft[RTV_F_RANK] == 1.0 / (1.0 + (double)tax));
        CHECK(ft[RTV_F_LINES] > 0);
    }
    for (size_t i = 0; i < n * RTV_N_FEATURES; i++)
        CHECK(isfinite(f[i]) && f[i] >= 0 && f[i] <= 1);
    free(f);
    free(v);
    rtv_query_release(&q);
    fixture_drop(st, tmp);
}

/* A model weighing only the first ranking's position keeps the order; one
 * weighing the name's cover first puts the named definition first. */
static void test_rerank_order(void)
{
    char tmp[64] = "/tmp/coderag-rerank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    RtvQuery q;
    CHECK_INT(rtv_query_read(st, "how are orders charged through the payment gateway", &q, NULL),
              CR_OK);
    size_t n = 0;
    RtvCand *v = ranked(st, &q, &n);
    CHECK(n > 2);
    RtvCand *w = xcalloc(n + 1, sizeof *w);
    memcpy(w, v, n * sizeof *v);
    RtvRanker keep = {.name = "keep"};
    keep.w[RTV_F_RANK] = 1;
    CHECK_INT(rtv_rerank(st, &q, &keep, w, n, 0, NULL), CR_OK);
    for (size_t i = 0; i < n; i++)
        CHECK(w[i].chunk_id == v[i].chunk_id);
    RtvRanker by_name = {.name = "by name"};
    by_name.w[RTV_F_NAME_COVER] = 10;
    by_name.w[RTV_F_RANK] = 1;
    CHECK_INT(rtv_rerank(st, &q, &by_name, w, n, 0, NULL), CR_OK);
    double *f = xcalloc(n * RTV_N_FEATURES, sizeof *f);
    CHECK_INT(rtv_features(st, &q, w, n, f, NULL), CR_OK);
    CHECK(f[RTV_F_NAME_COVER] > 0); /* "charge" of "charged" */
    for (size_t i = 1; i < n; i++)
        CHECK(f[RTV_F_NAME_COVER] >= f[i * RTV_N_FEATURES + RTV_F_NAME_COVER]);
    free(f);
    CHECK(w[0].score == v[0].score); /* the best keeps the first ranking's best score */
    /* the lexical head stays where it is: only candidates after it move */
    RtvRanker reverse = {.name = "reverse"};
    reverse.w[RTV_F_RANK] = -1;
    memcpy(w, v, n * sizeof *v);
    CHECK_INT(rtv_rerank(st, &q, &reverse, w, n, 2, NULL), CR_OK);
    CHECK(w[0].chunk_id == v[0].chunk_id && w[1].chunk_id == v[1].chunk_id);
    size_t last = (n < RTV_RERANK_DEPTH ? n : RTV_RERANK_DEPTH) - 1;
    if (last > 2) CHECK(w[2].chunk_id == v[last].chunk_id && w[last].chunk_id == v[2].chunk_id);
    for (size_t i = 1; i < n && i < RTV_RERANK_DEPTH; i++)
        CHECK(w[i].score <= w[i - 1].score);
    free(w);
    free(v);
    rtv_query_release(&q);
    fixture_drop(st, tmp);
}

/* The compiled model is models/ranker-v1.json's: its features named in
 * rtv_feature_names's order, the same bias and weights. */
static void test_model_is_committed_file(void)
{
    json_error_t je;
    json_t *m = json_load_file(FIXTURE_DIR "/../../models/ranker-v1.json", 0, &je);
    CHECK(m != NULL);
    if (!m) return;
    json_t *names = json_object_get(m, "features"), *w = json_object_get(m, "weights");
    CHECK_INT(json_array_size(names), RTV_N_FEATURES);
    CHECK_INT(json_array_size(w), RTV_N_FEATURES);
    for (size_t k = 0; k < RTV_N_FEATURES && k < json_array_size(names); k++) {
        CHECK_STR(json_string_value(json_array_get(names, k)), rtv_feature_names[k]);
        CHECK(fabs(json_number_value(json_array_get(w, k)) - rtv_ranker.w[k]) < 1e-12);
    }
    CHECK(fabs(json_number_value(json_object_get(m, "bias")) - rtv_ranker.bias) < 1e-12);
    CHECK_STR(json_string_value(json_object_get(m, "name")), rtv_ranker.name);
    CHECK_INT(strlen(rtv_ranker.sha256), 64);
    json_decref(m);
}

/* Packing by coverage asks whether a piece of the same definition (path,
 * symbol, kind) is packed already. */
static void test_packer_has_def(void)
{
    RtvItem a = {0}, b = {0}, c = {0}, d = {0};
    a.chunk = (IdxChunk){.path = "x.go", .symbol = "node.addRoute", .kind = IDX_KIND_METHOD};
    a.start_line = 228, a.end_line = 247, a.text = "piece one";
    b = a; /* a later piece of it */
    b.start_line = 249, b.end_line = 264;
    c = a; /* another definition of the same file */
    c.chunk.symbol = "findWildcard", c.chunk.kind = IDX_KIND_FUNCTION;
    d = a; /* the same name in another file */
    d.chunk.path = "y.go";
    RtvPacker p;
    rtv_packer_init(&p, 1000, 10);
    CHECK(!rtv_packer_has_def(&p, &a));
    CHECK(rtv_packer_offer(&p, &a));
    CHECK(rtv_packer_has_def(&p, &b));
    CHECK(!rtv_packer_has_def(&p, &c));
    CHECK(!rtv_packer_has_def(&p, &d));
    rtv_packer_release(&p);
}

int main(void)
{
    RUN(test_packer_has_def);
    RUN(test_features);
    RUN(test_rerank_order);
    RUN(test_model_is_committed_file);
    return test_summary();
}
