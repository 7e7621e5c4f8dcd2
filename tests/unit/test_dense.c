/* The dense leg end to end against the loopback fake embeddings server:
 * vectors for every chunk, reconciliation after deletions and simulated
 * crashes, embedder changes, search, and an endpoint that goes away. */
#include "fake_server.h"
#include "rtv.h"
#include "test.h"

#include <sys/stat.h>

static Fake fake;
static char root[128], index_dir[160];

static IdxStore *open_store(const char *model)
{
    IdxConfig cfg = {.root = root,
                     .index_dir = index_dir,
                     .threads = 1,
                     .embed_provider = "openai",
                     .embed_url = fake.base,
                     .embed_model = model};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (rc) fprintf(stderr, "idx_open: %s\n", e.msg);
    return st;
}

static void expect_synced(IdxStore *st, const char *embedder)
{
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, NULL), CR_OK);
    CHECK(s.chunks > 0);
    CHECK_INT(s.vectors, s.chunks);
    CHECK_STR(s.embedder, embedder);
}

static void update_ok(IdxStore *st)
{
    ErrInfo e = {0};
    CrErr rc = idx_update(st, NULL, NULL, NULL, &e);
    if (rc) fprintf(stderr, "idx_update: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
}

static int fake_requests(void)
{
    json_t *log = fake_log(&fake);
    int n = log ? (int)json_array_size(log) : -1;
    json_decref(log);
    return n;
}

static void test_vectors_follow_chunks(void)
{
    fake_script(&fake, 8, "[]");
    IdxStore *st = open_store("m1");
    CHECK(st != NULL);
    if (!st) return;
    CHECK(idx_has_dense(st));
    update_ok(st);
    expect_synced(st, "openai:m1");
    CHECK(fake_requests() >= 1);

    /* Nothing changed: no request at all. */
    fake_script(&fake, 8, "[]");
    update_ok(st);
    CHECK_INT(fake_requests(), 0);

    /* A deleted file's vectors go with its chunks. */
    test_sh("rm '%s/%s'", root, "shop/errors.py");
    update_ok(st);
    expect_synced(st, "openai:m1");
    idx_close(st);

    /* A crash between the stores: the vector file from before is back,
     * with orphans (and, had chunks been added, gaps). Reconciled. */
    char vec[256], saved[256];
    snprintf(vec, sizeof vec, "%s/vectors.faiss", index_dir);
    snprintf(saved, sizeof saved, "%s/vectors.saved", index_dir);
    test_sh("cp '%s' '%s'", vec, saved);
    st = open_store("m1");
    test_sh("printf 'def refund(order):\\n    return -order.total()\\n' > '%s/%s'", root,
            "shop/refund.py");
    update_ok(st);
    expect_synced(st, "openai:m1");
    idx_close(st);
    test_sh("cp '%s' '%s'", saved, vec);
    st = open_store("m1");
    update_ok(st); /* no file changed, but the vectors are out of step */
    expect_synced(st, "openai:m1");

    /* A vector file that is gone is recomputed whole. */
    unlink(vec);
    idx_close(st);
    st = open_store("m1");
    update_ok(st);
    expect_synced(st, "openai:m1");
    idx_close(st);

    /* Another model: the old vectors are dropped, never mixed. */
    fake_script(&fake, 12, "[]");
    st = open_store("m2");
    update_ok(st);
    expect_synced(st, "openai:m2");
    IdxStatus s;
    idx_status(st, &s, NULL);
    json_t *log = fake_log(&fake);
    size_t embedded = 0;
    for (size_t i = 0; log && i < json_array_size(log); i++) {
        json_int_t n = 0;
        json_unpack(json_array_get(log, i), "{s:I}", "n_inputs", &n);
        embedded += (size_t)n;
    }
    json_decref(log);
    CHECK_INT(embedded, s.chunks);
    idx_close(st);
}

static void test_search(void)
{
    fake_script(&fake, 12, "[]");
    IdxStore *st = open_store("m2");
    if (!st) return;
    update_ok(st);
    /* The fake's vectors are a hash of the text: the chunk whose embedded
     * text is the query comes first, with cosine 1. */
    StrBuf q;
    sb_init(&q);
    sb_adds(&q, "shop/models.py apply_tax\n");
    CHECK_INT(idx_read_lines(st, "shop/models.py", 39, 41, &q, NULL, NULL), CR_OK);
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_dense(st, q.buf, 5, &hits, &n, NULL), CR_OK);
    CHECK_INT(n, 5);
    IdxChunk c = {0};
    if (n) {
        CHECK_INT(idx_chunk_get(st, hits[0].chunk_id, &c, NULL), CR_OK);
        CHECK_STR(c.symbol, "apply_tax");
        CHECK(hits[0].score > 0.999 && hits[0].score < 1.001);
        CHECK(hits[1].score < hits[0].score);
        idx_chunk_release(&c);
    }
    free(hits);

    /* Through rtv_ask with BM25 off, the context comes from the dense leg. */
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = q.buf;
    req.use_bm25 = 0;
    req.use_graph = 0;
    CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
    CHECK(a.n_items > 0);
    if (a.n_items) {
        CHECK_STR(a.items[0].chunk.symbol, "apply_tax");
        CHECK_INT(a.items[0].via, RTV_VIA_DENSE);
    }
    rtv_answer_release(&a);

    /* The endpoint goes away: the question is still answered from BM25,
     * and the answer says the dense leg was skipped. */
    fake_script(&fake, 12, "[{\"status\": 500, \"times\": 100}]");
    req.use_bm25 = 1;
    req.question = "How is tax applied to an order total?";
    CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
    CHECK(a.n_items > 0);
    CHECK(strstr(a.answer, "dense retrieval was skipped") != NULL);
    for (size_t i = 0; i < a.n_items; i++)
        CHECK(!(a.items[i].via & RTV_VIA_DENSE));
    rtv_answer_release(&a);

    /* ... and an update indexes the text but reports the endpoint. */
    test_sh("printf 'def rebate(order):\\n    return 1\\n' >> '%s/%s'", root, "shop/models.py");
    ErrInfo e = {0};
    CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_EHTTP);
    IdxChunk *v = NULL;
    size_t nv = 0;
    idx_file_chunks(st, "shop/models.py", &v, &nv, NULL);
    CHECK(nv > 0 && !strcmp(v[nv - 1].symbol, "rebate"));
    idx_chunks_free(v, nv);
    IdxStatus s;
    idx_status(st, &s, NULL);
    CHECK(s.vectors < s.chunks);
    fake_script(&fake, 12, "[]");
    update_ok(st); /* back: the vectors catch up */
    expect_synced(st, "openai:m2");
    sb_release(&q);
    idx_close(st);
}

/* A later piece of a unit (the second window of a long function, a class's
 * body after its methods) is embedded as the search text has it: where it
 * is and what it is called, its unit's signature, then its lines. */
static void test_continuation_text(void)
{
    StrBuf src;
    sb_init(&src);
    sb_adds(&src, "def long_body(a):\n");
    for (int k = 0; k < 150; k++)
        sb_addf(&src, "    x%d = a + %d\n", k, k);
    sb_adds(&src, "    return a\n\n\nclass Box:\n    size = 1\n\n    def grow(self):\n"
                  "        return 2\n\n    limit = 3\n");
    char path[256];
    snprintf(path, sizeof path, "%s/shop/longbody.py", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(src.buf, 1, src.len, f);
    fclose(f);
    sb_release(&src);

    fake_script(&fake, 12, "[]");
    IdxStore *st = open_store("m2");
    if (!st) return;
    update_ok(st);
    IdxChunk *v = NULL;
    size_t nv = 0;
    CHECK_INT(idx_file_chunks(st, "shop/longbody.py", &v, &nv, NULL), CR_OK);
    int windows = 0, box_runs = 0;
    for (size_t i = 0; i < nv; i++) {
        if (!strcmp(v[i].symbol, "long_body")) {
            windows++;
            CHECK_INT(v[i].cont, v[i].window > 1);
        }
        if (!strcmp(v[i].symbol, "Box")) CHECK_INT(v[i].cont, box_runs++ > 0);
        if (!strcmp(v[i].symbol, "Box.grow")) CHECK_INT(v[i].cont, 0);
    }
    CHECK_INT(windows, 2);
    CHECK_INT(box_runs, 2);
    for (size_t i = 0; i < nv; i++) {
        if (!v[i].cont) continue;
        StrBuf q;
        sb_init(&q);
        sb_addf(&q, "shop/longbody.py %s\n%s\n", v[i].symbol, v[i].signature);
        CHECK(v[i].signature[0] != 0);
        CHECK_INT(idx_read_lines(st, v[i].path, v[i].start_line, v[i].end_line, &q, NULL, NULL),
                  CR_OK);
        IdxHit *hits = NULL;
        size_t n = 0;
        CHECK_INT(idx_search_dense(st, q.buf, 1, &hits, &n, NULL), CR_OK);
        CHECK_INT(n, 1);
        if (n) {
            CHECK(hits[0].chunk_id == v[i].id);
            CHECK(hits[0].score > 0.999);
        }
        free(hits);
        sb_release(&q);
    }
    idx_chunks_free(v, nv);
    idx_close(st);
}

int main(void)
{
    if (fake_start(&fake) != 0) {
        fprintf(stderr, "cannot start the fake server\n");
        fake_stop(&fake);
        return 1;
    }
    snprintf(root, sizeof root, "/tmp/coderag-test-dense-XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    test_sh("cp -R '%s/shop/.' '%s'", FIXTURE_DIR, root);
    RUN(test_vectors_follow_chunks);
    RUN(test_search);
    RUN(test_continuation_text);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    fake_stop(&fake);
    return test_summary();
}
