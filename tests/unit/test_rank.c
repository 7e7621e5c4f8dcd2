/* Ranking pieces: the file blend, kind priors, window choice, and graph
 * expansion over the shop fixture's known edges. */
#include "retrieve/rtv_int.h"
#include "index_util.h"
#include "fixture_util.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)
#define CAND(id, file, k, s, v)                                                                    \
    {                                                                                              \
        .chunk_id = (id), .file_id = (file), .kind = (k), .score = (s), .via = (v)                 \
    }

static void test_file_boost(void)
{
    /* file 1 has three hits, file 2 one strong hit, file 3 one weak hit */
    RtvCand v[] = {
        CAND(10, 1, IDX_KIND_FUNCTION, 0.6, RTV_VIA_BM25),
        CAND(11, 1, IDX_KIND_FUNCTION, 0.5, RTV_VIA_BM25),
        CAND(12, 1, IDX_KIND_FUNCTION, 0.4, RTV_VIA_BM25),
        CAND(20, 2, IDX_KIND_FUNCTION, 1.0, RTV_VIA_BM25),
        CAND(30, 3, IDX_KIND_FUNCTION, 0.2, RTV_VIA_BM25),
        CAND(40, 0, IDX_KIND_FUNCTION, 0.9, RTV_VIA_GRAPH),
    };
    rtv_file_boost(v, 6, 0.5);
    /* file scores: 1 -> .6 + .25 + .1 = .95 (best), 2 -> 1.0 ... so 2 is best: 1.0 */
    double f1 = 0.95 / 1.0, f2 = 1.0, f3 = 0.2 / 1.0;
    static const int64_t order[] = {20, 40, 10, 11, 12, 30};
    const double want[] = {0.5 * 1.0 + 0.5 * f2, 0.9,
                           0.5 * 0.6 + 0.5 * f1, 0.5 * 0.5 + 0.5 * f1,
                           0.5 * 0.4 + 0.5 * f1, 0.5 * 0.2 + 0.5 * f3};
    for (int i = 0; i < 6; i++) {
        CHECK_INT(v[i].chunk_id, order[i]);
        CHECK(NEAR(v[i].score, want[i]));
    }
    RtvCand w[] = {CAND(1, 1, IDX_KIND_FUNCTION, 0.3, 1), CAND(2, 2, IDX_KIND_FUNCTION, 0.3, 1)};
    rtv_file_boost(w, 2, 0); /* off: unchanged */
    CHECK(NEAR(w[0].score, 0.3) && NEAR(w[1].score, 0.3));
    rtv_file_boost(NULL, 0, 0.5);
}

/* Any grouping: a group's score is its best three candidates' (1, 1/2,
 * 1/4) relative to the best group's; ungrouped candidates keep theirs. */
static void test_group_blend(void)
{
    /* folder 7: two matches; folder 8: one stronger match; one ungrouped */
    RtvCand v[] = {
        CAND(1, 1, IDX_KIND_FUNCTION, 0.9, RTV_VIA_BM25),
        CAND(2, 2, IDX_KIND_FUNCTION, 0.8, RTV_VIA_BM25),
        CAND(3, 3, IDX_KIND_FUNCTION, 0.7, RTV_VIA_BM25),
        CAND(4, 4, IDX_KIND_FUNCTION, 0.5, RTV_VIA_BM25),
    };
    const int64_t group[] = {8, 7, 7, -1};
    rtv_group_blend(v, 4, group, 0.5);
    double g7 = 0.8 + 0.5 * 0.7, g8 = 0.9; /* 7 is the best group */
    static const int64_t order[] = {2, 3, 1, 4};
    const double want[] = {0.5 * 0.8 + 0.5, 0.5 * 0.7 + 0.5, 0.5 * 0.9 + 0.5 * g8 / g7, 0.5};
    for (int i = 0; i < 4; i++) {
        CHECK_INT(v[i].chunk_id, order[i]);
        CHECK(NEAR(v[i].score, want[i]));
    }
    rtv_group_blend(v, 4, group, 0); /* off: unchanged */
    CHECK(NEAR(v[0].score, want[0]));
    rtv_group_blend(NULL, 0, NULL, 0.5);
}

static void test_priors(void)
{
    RtvCand v[] = {CAND(1, 1, IDX_KIND_MODULE, 1.0, 1), CAND(2, 1, IDX_KIND_CLASS, 1.0, 1),
                   CAND(3, 1, IDX_KIND_METHOD, 0.9, 1)};
    RtvTuning t = rtv_tuning;
    t.module_prior = 0.5;
    t.class_prior = 0.8;
    rtv_apply_priors(v, 3, &t);
    /* weighted, then best first */
    CHECK(v[0].chunk_id == 3 && NEAR(v[0].score, 0.9));
    CHECK(v[1].chunk_id == 2 && NEAR(v[1].score, 0.8));
    CHECK(v[2].chunk_id == 1 && NEAR(v[2].score, 0.5));
}

/* The pool grows past bm25_candidates * units_per_candidate units, with
 * the centrality weight rising to central_weight at bm25_candidates_max;
 * below, the tuning is the same but for no weight. The folder, name and
 * short-unit weights are whole past subsystem_units, 0 up to it. */
static void test_at_size(void)
{
    RtvTuning t = rtv_tuning, out;
    t.bm25_candidates = 50;
    t.keep = 50;
    t.units_per_candidate = 2500;
    t.bm25_candidates_max = 500;
    t.central_weight = 0.8;
    t.driver_weight = 0.1;
    t.graph.seeds = 8;
    t.graph_seeds_max = 16;
    t.subsystem_units = 8000;
    t.folder_beta = 0.45;
    t.name_weight = 0.2;
    t.short_helpers = 1;
    t.rerank = 1;
    CHECK_INT(rtv_tuning_at_size(&t, 6343, &out), 0); /* xarray's size */
    CHECK(out.central_weight == 0 && out.folder_beta == 0 && out.name_weight == 0);
    CHECK_INT(out.short_helpers, 0);
    CHECK_INT(rtv_tuning_at_size(&t, 8000, &out), 0);
    CHECK(out.folder_beta == 0 && out.name_weight == 0);
    CHECK_INT(rtv_tuning_at_size(&t, 47630, &out), 0); /* SymPy's size */
    CHECK_INT(out.bm25_candidates, 50);
    CHECK_INT(out.keep, 50);
    CHECK_INT(out.rerank, 1);
    CHECK(out.central_weight == 0 && out.driver_weight == 0);
    CHECK_INT(out.graph.seeds, 8);
    CHECK(NEAR(out.folder_beta, 0.45) && NEAR(out.name_weight, 0.2));
    CHECK_INT(out.short_helpers, 1);
    CHECK_INT(rtv_tuning_at_size(&t, 125000, &out), 0);
    CHECK_INT(rtv_tuning_at_size(&t, 275000, &out), 1); /* 110 candidates */
    CHECK_INT(out.bm25_candidates, 110);
    CHECK_INT(out.keep, 110);
    CHECK_INT(out.rerank, 1);
    CHECK(NEAR(out.central_weight, 0.8 * 60.0 / 450.0));
    CHECK(NEAR(out.driver_weight, 0.1 * 60.0 / 450.0));
    CHECK_INT(out.graph.seeds, 9); /* 8 + 8 * 60 / 450, rounded */
    CHECK(NEAR(out.folder_beta, 0.45) && NEAR(out.name_weight, 0.2));
    CHECK_INT(rtv_tuning_at_size(&t, 1346689, &out), 1); /* the Linux kernel's */
    CHECK_INT(out.bm25_candidates, 500);
    CHECK(NEAR(out.central_weight, 0.8) && NEAR(out.driver_weight, 0.1));
    CHECK_INT(out.graph.seeds, 16);
    CHECK(NEAR(out.folder_beta, 0.45) && NEAR(out.name_weight, 0.2));
    t.units_per_candidate = 0; /* off */
    CHECK_INT(rtv_tuning_at_size(&t, 1346689, &out), 0);
    CHECK_INT(out.bm25_candidates, 50);
    t.subsystem_units = 0; /* off */
    rtv_tuning_at_size(&t, 1346689, &out);
    CHECK(out.folder_beta == 0 && out.name_weight == 0);
}

/* A candidate's score times 1 + w ln(1 + f) / ln(1 + cap): the file many
 * folders call overtakes the one none does. */
static void test_central_prior(void)
{
    RtvCand v[] = {CAND(1, 1, IDX_KIND_FUNCTION, 1.0, 1), CAND(2, 2, IDX_KIND_FUNCTION, 0.9, 1),
                   CAND(3, 3, IDX_KIND_FUNCTION, 0.5, 1)};
    const int f[] = {0, 300, 15};
    rtv_central_prior(v, 3, f, 256, 0.8);
    CHECK_INT(v[0].chunk_id, 2);
    CHECK(NEAR(v[0].score, 0.9 * 1.8)); /* capped at 256: the whole weight */
    CHECK_INT(v[1].chunk_id, 1);
    CHECK(NEAR(v[1].score, 1.0));
    CHECK_INT(v[2].chunk_id, 3);
    CHECK(NEAR(v[2].score, 0.5 * (1 + 0.8 * log(16.0) / log(257.0))));
    RtvCand w[] = {CAND(1, 1, IDX_KIND_FUNCTION, 1.0, 1), CAND(2, 2, IDX_KIND_FUNCTION, 0.9, 1)};
    const int g[] = {0, 256};
    rtv_central_prior(w, 2, g, 256, 0); /* no weight: unchanged */
    CHECK(w[0].chunk_id == 1 && NEAR(w[0].score, 1.0) && NEAR(w[1].score, 0.9));
}

static void test_trim_window(void)
{
    /* 10 lines; the question's words sit on lines 6-8 */
    RtvItem it = {0};
    it.start_line = 21;
    it.end_line = 30;
    it.text = xstrdup("def f(x):\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n"
                      "    redirectSlash = x\n    if append_slash:\n        return redirect\n"
                      "    e = 5\n    return e\n");
    static const char *const words[] = {"redirect", "append", "slash"};
    rtv_trim_item(&it, words, 3, 4);
    /* lines 26-28 mention 2, 2 and 1 words; of the two windows holding
     * them all, the earlier wins */
    CHECK_INT(it.start_line, 25);
    CHECK_INT(it.end_line, 28);
    CHECK_STR(it.text,
              "    d = 4\n    redirectSlash = x\n    if append_slash:\n        return redirect\n");
    /* short enough: untouched */
    rtv_trim_item(&it, words, 3, 4);
    CHECK_INT(it.start_line, 25);
    /* no words anywhere: the unit's head */
    free(it.text);
    it.start_line = 1;
    it.end_line = 10;
    it.text = xstrdup("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    rtv_trim_item(&it, words, 3, 3);
    CHECK_INT(it.start_line, 1);
    CHECK_INT(it.end_line, 3);
    CHECK_STR(it.text, "1\n2\n3\n");
    free(it.text);
    /* issue 27's drift: a window one line past the definition's first line
     * holds a mention more (the last line); the citation still starts at
     * the `def` (a quarter-window of 8 lines: windows at +1 are none) */
    it.start_line = 1825;
    it.end_line = 1840;
    it.text = xstrdup("def finalize_request(\n    response,\n    rv,\n):\n    \"\"\"Given\n"
                      "    the response\n    \"\"\"\n    response = x\n    response = y\n"
                      "    return r\n    pass\n    pass\n    pass\n    pass\n"
                      "    pass\n    pass\n");
    static const char *const rw[] = {"response"};
    rtv_trim_item(&it, rw, 1, 8);
    CHECK_INT(it.start_line, 1825);
    CHECK_INT(it.end_line, 1832);
    free(it.text);
}

static void test_trim_to_call(void)
{
    /* a caller of the focus `check` (issue 36): 30 lines, the call on the
     * 26th (line 125), past the head's window of 8 */
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, "def run(self):\n    \"\"\"Runs.\n");
    for (int l = 3; l <= 30; l++)
        sb_addf(&sb, l == 26 ? "    self.check(x)\n" : "    n%d = 0  # check\n", l);
    RtvItem it = {0};
    it.start_line = 100;
    it.end_line = 129;
    it.text = sb_detach(&sb, NULL);
    sb_release(&sb);
    /* a name no line calls: unchanged; "check" without "(" is no call */
    CHECK_INT(rtv_trim_item_to_call(&it, "checked", 8), 0);
    CHECK_INT(it.start_line, 100);
    CHECK_INT(rtv_trim_item_to_call(&it, "check", 8), 1);
    /* the call in the middle of the window */
    CHECK_INT(it.start_line, 121);
    CHECK_INT(it.end_line, 128);
    CHECK(strstr(it.text, "    self.check(x)\n") == it.text + strlen("    n22 = 0  # check\n") * 4);
    /* a call in the head's window: from the head; a short item: as it is */
    free(it.text);
    it.start_line = 1;
    it.end_line = 12;
    it.text = xstrdup("void f(void)\n{\n  a();\n  check (1);\n  b();\n  c();\n  d();\n  e();\n"
                      "  g();\n  h();\n  i();\n}\n");
    CHECK_INT(rtv_trim_item_to_call(&it, "check", 8), 1);
    CHECK_INT(it.start_line, 1);
    CHECK_INT(it.end_line, 8);
    CHECK_INT(rtv_trim_item_to_call(&it, "check", 8), 1);
    CHECK_INT(it.end_line, 8);
    CHECK(rtv_calls_name("x = self.check(1)", 17, "check", 5) &&
          !rtv_calls_name("x = self.rcheck(1)", 18, "check", 5) &&
          rtv_calls_name("check!(x)", 9, "check", 5) &&
          !rtv_calls_name("check = 1", 9, "check", 5));
    free(it.text);
}

static void test_expand_graph(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    int64_t total = chunk_id(st, "shop/models.py", "Order.total");
    int64_t tax = chunk_id(st, "shop/models.py", "apply_tax");
    int64_t charge = chunk_id(st, "shop/payments/gateway.py", "Gateway.charge");
    int64_t order = chunk_id(st, "shop/models.py", "Order");
    CHECK(total && tax && charge && order);

    /* One seed, Order.total: it calls apply_tax (out) and Gateway.charge
     * calls it (in); Order's containment edge is not followed. apply_tax is
     * already a candidate with a lower score, which the graph raises. */
    size_t n = 2, cap = 2;
    RtvCand *v = xcalloc(cap, sizeof *v);
    v[0] = (RtvCand)CAND(total, 0, IDX_KIND_METHOD, 1.0, RTV_VIA_BM25);
    v[1] = (RtvCand)CAND(tax, 0, IDX_KIND_FUNCTION, 0.2, RTV_VIA_BM25);
    RtvGraphParams gp = {1, 8, 0.7, 0.5, 1.0};
    CHECK_INT(rtv_expand_graph(st, &v, &n, &cap, &gp, NULL, NULL), CR_OK);
    rtv_cands_sort(v, n);
    CHECK_INT(n, 3);
    CHECK(v[0].chunk_id == total && NEAR(v[0].score, 1.0) && v[0].via == RTV_VIA_BM25);
    CHECK(v[1].chunk_id == tax && NEAR(v[1].score, 0.7) &&
          v[1].via == (RTV_VIA_BM25 | RTV_VIA_GRAPH));
    CHECK(v[2].chunk_id == charge && NEAR(v[2].score, 0.5) && v[2].via == RTV_VIA_GRAPH);
    CHECK(v[2].kind == IDX_KIND_METHOD && v[2].file_id != 0); /* known without loading */
    for (size_t i = 0; i < n; i++)
        CHECK(v[i].chunk_id != order);

    /* Callers off: only the callee. */
    n = 1;
    gp.in_factor = 0;
    CHECK_INT(rtv_expand_graph(st, &v, &n, &cap, &gp, NULL, NULL), CR_OK);
    CHECK_INT(n, 2);
    CHECK(v[1].chunk_id == tax);
    free(v);
    fixture_drop(st, tmp);
}

/* The name prior: a definition whose name the question's words make
 * (stem-alike) overtakes one that only mentions them; and the folder
 * numbers: one per folder, shared by its files. */
static void test_name_prior_folders(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    int64_t total = chunk_id(st, "shop/models.py", "Order.total");
    int64_t tax = chunk_id(st, "shop/models.py", "apply_tax");
    int64_t charge = chunk_id(st, "shop/payments/gateway.py", "Gateway.charge");
    CHECK(total && tax && charge);
    RtvQuery q;
    CHECK_INT(rtv_query_read(st, "tax applied", &q, NULL), CR_OK);
    CHECK_INT(q.n_words, 2);
    RtvCand v[] = {CAND(total, 0, IDX_KIND_METHOD, 1.0, RTV_VIA_BM25),
                   CAND(tax, 0, IDX_KIND_FUNCTION, 0.7, RTV_VIA_BM25),
                   CAND(-5, 0, IDX_KIND_FUNCTION, 0.1, RTV_VIA_BM25)}; /* gone: kept */
    RtvTuning t = {.name_weight = 0.5};
    rtv_name_prior(st, &q, v, 3, &t);
    /* apply_tax: both question words are its name's ("applied" is
     * "apply" stem-alike) and both its subwords are the question's:
     * .7 (1 + .5 (1 + 1)) */
    CHECK_INT(v[0].chunk_id, tax);
    CHECK(NEAR(v[0].score, 0.7 * 2.0));
    CHECK(v[1].chunk_id == total && NEAR(v[1].score, 1.0));
    CHECK(v[2].chunk_id == -5 && NEAR(v[2].score, 0.1));
    t.name_weight = 0;
    rtv_name_prior(st, &q, v, 3, &t); /* off: unchanged */
    CHECK(NEAR(v[1].score, 1.0));
    /* Python writes behaviour in short definitions: none is a helper. */
    int helper = -1;
    StrBuf sym;
    sb_init(&sym);
    CHECK(idx_chunk_symbol(st, tax, &sym, &helper) && helper == 0);
    sb_release(&sym);
    rtv_query_release(&q);

    RtvCand a = {0}, b = {0}, c = {0};
    IdxChunk ch;
    CHECK_INT(idx_chunk_get(st, total, &ch, NULL), CR_OK);
    a.file_id = ch.file_id;
    idx_chunk_release(&ch);
    CHECK_INT(idx_chunk_get(st, charge, &ch, NULL), CR_OK);
    b.file_id = ch.file_id;
    idx_chunk_release(&ch);
    int64_t errors = 0;
    IdxChunk *all = NULL;
    size_t n_all = 0;
    CHECK_INT(idx_file_chunks(st, "shop/errors.py", &all, &n_all, NULL), CR_OK);
    if (n_all) errors = all[0].file_id;
    idx_chunks_free(all, n_all);
    c.file_id = errors;
    RtvLookups lk = {0};
    int64_t fa = rtv_file_folder(st, &lk, a.file_id), fb = rtv_file_folder(st, &lk, b.file_id);
    int64_t fc = rtv_file_folder(st, &lk, c.file_id);
    CHECK(fa >= 0 && fb >= 0 && fa != fb);              /* shop/ and shop/payments/ */
    CHECK_INT(fc, fa);                                  /* models.py and errors.py: shop/ */
    CHECK_INT(rtv_file_folder(st, &lk, a.file_id), fa); /* again, through lk */
    CHECK_INT(rtv_file_folder(st, &lk, 999999), -1);
    rtv_lookups_release(&lk);
    fixture_drop(st, tmp);
}

/* The definitions that drive the others: Gateway.charge calls
 * Order.total, which calls apply_tax; each calling another candidate
 * weighs 1 + w per callee among the first `depth`. */
static void test_driver_prior(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    int64_t total = chunk_id(st, "shop/models.py", "Order.total");
    int64_t tax = chunk_id(st, "shop/models.py", "apply_tax");
    int64_t charge = chunk_id(st, "shop/payments/gateway.py", "Gateway.charge");
    CHECK(total && tax && charge);
    RtvCand v[] = {CAND(tax, 0, IDX_KIND_FUNCTION, 1.0, RTV_VIA_BM25),
                   CAND(charge, 0, IDX_KIND_METHOD, 0.95, RTV_VIA_BM25),
                   CAND(total, 0, IDX_KIND_METHOD, 0.9, RTV_VIA_BM25)};
    CHECK_INT(rtv_driver_prior(st, v, 3, 3, 0.2, NULL, NULL), CR_OK);
    /* charge calls total (and its own _send, not a candidate): .95 x 1.2;
     * total calls apply_tax: .9 x 1.2; apply_tax calls none */
    CHECK(v[0].chunk_id == charge && NEAR(v[0].score, 0.95 * 1.2));
    CHECK(v[1].chunk_id == total && NEAR(v[1].score, 0.9 * 1.2));
    CHECK(v[2].chunk_id == tax && NEAR(v[2].score, 1.0));
    /* within the first two only: total's callee is past them */
    RtvCand w[] = {CAND(total, 0, IDX_KIND_METHOD, 1.0, RTV_VIA_BM25),
                   CAND(charge, 0, IDX_KIND_METHOD, 0.9, RTV_VIA_BM25),
                   CAND(tax, 0, IDX_KIND_FUNCTION, 0.8, RTV_VIA_BM25)};
    CHECK_INT(rtv_driver_prior(st, w, 3, 2, 0.2, NULL, NULL), CR_OK);
    CHECK(w[0].chunk_id == charge && NEAR(w[0].score, 0.9 * 1.2));
    CHECK(w[1].chunk_id == total && NEAR(w[1].score, 1.0));
    CHECK(w[2].chunk_id == tax && NEAR(w[2].score, 0.8));
    fixture_drop(st, tmp);
}

/* C's helpers (a row's helper_lines: whole definitions of at most 12
 * lines) weigh short_prior at size; a longer definition, or a window of
 * one split at 100 lines, does not. */
static void test_helper_prior(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/explain/c", tmp);
    if (!st) return;
    int64_t small = chunk_id(st, "util/render.c", "render");      /* 5 lines */
    int64_t update = chunk_id(st, "headers.c", "headers_update"); /* 17 lines */
    int64_t window = chunk_id(st, "headers.c", "render");         /* 125 lines: windows */
    CHECK(small && update && window);
    StrBuf sym;
    sb_init(&sym);
    int helper = -1;
    CHECK(idx_chunk_symbol(st, small, &sym, &helper) && helper == 1 && !strcmp(sym.buf, "render"));
    CHECK(idx_chunk_symbol(st, update, &sym, &helper) && helper == 0);
    CHECK(idx_chunk_symbol(st, window, &sym, &helper) && helper == 0);
    CHECK(!idx_chunk_symbol(st, -5, &sym, &helper));
    sb_release(&sym);

    RtvQuery q;
    CHECK_INT(rtv_query_read(st, "how are values drawn", &q, NULL), CR_OK);
    RtvCand v[] = {CAND(small, 0, IDX_KIND_FUNCTION, 1.0, RTV_VIA_BM25),
                   CAND(update, 0, IDX_KIND_FUNCTION, 0.8, RTV_VIA_BM25),
                   CAND(window, 0, IDX_KIND_FUNCTION, 0.6, RTV_VIA_BM25)};
    RtvTuning t = {.short_helpers = 1, .short_prior = 0.5}; /* no name weight */
    rtv_name_prior(st, &q, v, 3, &t);
    CHECK(v[0].chunk_id == update && NEAR(v[0].score, 0.8));
    CHECK(v[1].chunk_id == window && NEAR(v[1].score, 0.6));
    CHECK(v[2].chunk_id == small && NEAR(v[2].score, 0.5));
    t.short_helpers = 0; /* off: unchanged */
    rtv_name_prior(st, &q, v, 3, &t);
    CHECK(NEAR(v[2].score, 0.5));
    rtv_query_release(&q);
    fixture_drop(st, tmp);
}

/* A one-line definition reached through the graph (a macro, a
 * declaration) says little: it enters at one_line of the usual share. */
static void test_expand_one_line(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/lang/c", tmp);
    if (!st) return;
    int64_t main_fn = chunk_id(st, "main.c", "main");
    int64_t add = chunk_id(st, "util.c", "add");
    int64_t square = chunk_id(st, "util.h", "SQUARE");
    CHECK(main_fn && add && square);
    size_t n = 1, cap = 1;
    RtvCand *v = xcalloc(cap, sizeof *v);
    v[0] = (RtvCand)CAND(main_fn, 0, IDX_KIND_FUNCTION, 1.0, RTV_VIA_BM25);
    RtvGraphParams gp = {1, 8, 0.7, 0, 0.5};
    CHECK_INT(rtv_expand_graph(st, &v, &n, &cap, &gp, NULL, NULL), CR_OK);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].chunk_id == add) {
            seen |= 1;
            CHECK(NEAR(v[i].score, 0.7));
        }
        if (v[i].chunk_id == square) {
            seen |= 2;
            CHECK(NEAR(v[i].score, 0.35));
        }
    }
    CHECK_INT(seen, 3);
    free(v);
    fixture_drop(st, tmp);
}

/* A definition in a Rust `mod tests` ranks as a test file's: below the
 * code it exercises, even when it names the question's words best. */
static void test_test_module_prior(void)
{
    char tmp[64] = "/tmp/coderag-rank-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/lang/rust", tmp);
    if (!st) return;
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    rtv_request_init(&req);
    req.question = "How does relay add the widened value?";
    req.mode = RTV_MODE_EXTRACTIVE;
    req.use_dense = 0;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    int test_at = -1, code_at = -1;
    for (size_t i = 0; i < a.n_items; i++) {
        const char *s = rtv_item_symbol(&a.items[i]);
        if (!strcmp(s, "tests.relay_adds")) test_at = (int)i;
        if (!strcmp(s, "Relay.relay")) code_at = (int)i;
    }
    CHECK(code_at >= 0);
    CHECK(test_at < 0 || test_at > code_at);
    rtv_answer_release(&a);
    fixture_drop(st, tmp);
}

int main(void)
{
    RUN(test_file_boost);
    RUN(test_group_blend);
    RUN(test_priors);
    RUN(test_at_size);
    RUN(test_central_prior);
    RUN(test_trim_window);
    RUN(test_trim_to_call);
    RUN(test_expand_graph);
    RUN(test_expand_one_line);
    RUN(test_name_prior_folders);
    RUN(test_helper_prior);
    RUN(test_driver_prior);
    RUN(test_test_module_prior);
    return test_summary();
}
