/* The question read once (retrieve/query.c): its words, the identifiers it
 * names and whether they are defined, and the legs and signals that use
 * them, over the shop fixture. */
#include "retrieve/rtv_int.h"
#include "fixture_util.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_query_read(void)
{
    char tmp[64] = "/tmp/coderag-query-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    const char *text = "Who calls apply_tax and Order.total. with no_such_helper?";
    RtvQuery q;
    CHECK_INT(rtv_query_read(st, text, &q, NULL), CR_OK);
    CHECK(q.text == text);
    StrBuf w;
    sb_init(&w);
    idx_query_words(text, &w);
    CHECK_STR(q.search_words, w.buf);
    /* the word list is the search words, split */
    StrBuf joined;
    sb_init(&joined);
    for (size_t i = 0; i < q.n_words; i++) {
        if (i) sb_addc(&joined, ' ');
        sb_adds(&joined, q.words[i]);
    }
    CHECK_STR(joined.buf, w.buf);
    CHECK_INT(q.n_terms, q.n_words);
    CHECK_INT(q.n_idents, 3);
    CHECK_INT(q.idents_hit, 2);
    if (q.n_idents == 3) {
        CHECK_STR(q.idents[0].name, "apply_tax");
        CHECK_STR(q.idents[1].name, "Order.total"); /* trailing dot dropped */
        CHECK_STR(q.idents[2].name, "no_such_helper");
        CHECK(q.idents[0].defined && q.idents[1].defined && !q.idents[2].defined);
    }
    /* the match signals come from it without reading the question again */
    RtvRankInfo info = {.coverage = 0.5};
    RtvMatchSignals sig;
    rtv_match_signals(&q, &info, 4, &sig);
    CHECK_INT(sig.terms, q.n_terms);
    CHECK_INT(sig.idents, 3);
    CHECK_INT(sig.idents_hit, 2);
    CHECK_INT(sig.n_items, 4);
    CHECK(sig.coverage == 0.5);
    rtv_query_release(&q);
    rtv_query_release(&q); /* twice is harmless */
    sb_release(&w);
    sb_release(&joined);
    fixture_drop(st, tmp);
}

/* A long question keeps its first RTV_QUERY_MAX_WORDS words in the list and
 * counts all of them as terms; a question of stop words has none. */
static void test_query_long_and_empty(void)
{
    char tmp[64] = "/tmp/coderag-query-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    StrBuf text;
    sb_init(&text);
    for (int i = 0; i < 80; i++)
        sb_addf(&text, "word%c%c ", 'a' + i / 26, 'a' + i % 26);
    RtvQuery q;
    CHECK_INT(rtv_query_read(st, text.buf, &q, NULL), CR_OK);
    CHECK_INT(q.n_words, RTV_QUERY_MAX_WORDS);
    CHECK_INT(q.n_terms, 80);
    CHECK_STR(q.words[0], "wordaa");
    CHECK_INT(q.n_idents, 0);
    rtv_query_release(&q);
    CHECK_INT(rtv_query_read(st, "what is the", &q, NULL), CR_OK);
    CHECK_INT(q.n_words, 0);
    CHECK_INT(q.n_terms, 0);
    CHECK_STR(q.search_words, "");
    rtv_query_release(&q);
    sb_release(&text);
    fixture_drop(st, tmp);
}

/* BM25 over the query's words finds what BM25 over the text finds. */
static void test_bm25_words(void)
{
    static const char *const questions[] = {"how are orders saved", "payment declined retry",
                                            "apply_tax to the order total", "unknown coupon"};
    char tmp[64] = "/tmp/coderag-query-XXXXXX";
    IdxStore *st = fixture_store(FIXTURE_DIR "/shop", tmp);
    if (!st) return;
    for (size_t k = 0; k < sizeof questions / sizeof *questions; k++) {
        RtvQuery q;
        IdxHit *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK_INT(rtv_query_read(st, questions[k], &q, NULL), CR_OK);
        CHECK_INT(idx_search_bm25(st, questions[k], 10, &a, &na, NULL), CR_OK);
        CHECK_INT(idx_search_bm25_words(st, q.search_words, 10, &b, &nb, NULL), CR_OK);
        CHECK_INT(na, nb);
        for (size_t i = 0; i < na && i < nb; i++)
            CHECK(a[i].chunk_id == b[i].chunk_id && a[i].score == b[i].score);
        free(a);
        free(b);
        rtv_query_release(&q);
    }
    fixture_drop(st, tmp);
}

int main(void)
{
    RUN(test_query_read);
    RUN(test_query_long_and_empty);
    RUN(test_bm25_words);
    return test_summary();
}
