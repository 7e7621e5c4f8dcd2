/* Relevance (rtv_match): words of the languages' syntax and question words
 * never make a match by themselves (issue 27: "what else?" was a strong
 * match, `else` being in every file), over a real index. */
#include "idx.h"
#include "retrieve/rtv_int.h"
#include "rtv.h"
#include "test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static RtvMatch ask_match(IdxStore *st, const char *question, char *why, size_t size)
{
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    rtv_request_init(&req);
    req.question = question;
    req.mode = RTV_MODE_EXTRACTIVE;
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    RtvMatch m = a.match;
    snprintf(why, size, "%s", a.match_reason);
    rtv_answer_release(&a);
    return m;
}

static void test_syntax_words(void)
{
    CHECK(idx_is_syntax_word("else", 4));
    CHECK(idx_is_syntax_word("func", 4)); /* any language's row */
    CHECK(!idx_is_syntax_word("discount", 8));

    char root[] = "/tmp/coderag-match-XXXXXX", idx[] = "/tmp/coderag-match-idx-XXXXXX";
    CHECK(mkdtemp(root) != NULL && mkdtemp(idx) != NULL);
    test_put(root, "pricing.py",
             "def apply_discount(amount, coupon):\n    if coupon:\n        return amount * 0.9\n"
             "    else:\n        return amount\n");
    test_put(root, "shipping.py",
             "def shipping_cost(weight):\n    if weight > 10:\n        return 20\n    else:\n"
             "        return 5\n");
    IdxConfig cfg = {.root = root, .index_dir = idx, .threads = 1, .embed_provider = "none"};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    if (st) {
        char why[256];
        CHECK_INT(ask_match(st, "what else?", why, sizeof why), RTV_MATCH_NONE);
        CHECK(strstr(why, "syntax or question words") != NULL);
        CHECK_INT(ask_match(st, "What else does it return?", why, sizeof why), RTV_MATCH_NONE);
        /* a word that names something still makes the match */
        CHECK_INT(ask_match(st, "How is a discount applied?", why, sizeof why), RTV_MATCH_STRONG);
        CHECK_INT(ask_match(st, "what else is the shipping cost?", why, sizeof why),
                  RTV_MATCH_STRONG);
        idx_close(st);
    }
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    nftw(idx, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_labels(void)
{
    char why[256];
    /* a full coverage of syntax words alone: nothing relevant */
    RtvMatchSignals sig = {.coverage = 1.0, .terms = 1, .empty_terms = 1, .n_items = 3};
    CHECK_INT(rtv_match(&sig, why, sizeof why), RTV_MATCH_NONE);
    sig.terms = 2; /* and one word that names something */
    CHECK_INT(rtv_match(&sig, why, sizeof why), RTV_MATCH_STRONG);
    sig.terms = 1;
    sig.idents = sig.idents_hit = 1; /* a named definition that exists wins */
    CHECK_INT(rtv_match(&sig, why, sizeof why), RTV_MATCH_STRONG);

    /* issue 36: a long question whose words spread over the best items
     * ("How does the page cache write back dirty pages?"): the best hit
     * holds 2 of 6 terms, the first items read hold 5 of its 6 words */
    RtvMatchSignals spread = {.coverage = 0.33, .terms = 6, .n_items = 20, .context_share = 0.83};
    CHECK_INT(rtv_match(&spread, why, sizeof why), RTV_MATCH_STRONG);
    spread.context_share = 0.5; /* half of them: still weak */
    CHECK_INT(rtv_match(&spread, why, sizeof why), RTV_MATCH_WEAK);
    spread.context_share = -1; /* not measured */
    CHECK_INT(rtv_match(&spread, why, sizeof why), RTV_MATCH_WEAK);
    /* too little of the weight: nothing relevant, however many words the items hold */
    RtvMatchSignals thin = {.coverage = 0.2, .terms = 5, .n_items = 20, .context_share = 1.0};
    CHECK_INT(rtv_match(&thin, why, sizeof why), RTV_MATCH_NONE);
}

/* The share of the question's words the first items' text mentions: at a
 * word start or a capital, a plural or tense ending aside; syntax words
 * left out; only the first RTV_MATCH_TOP items read. */
static void test_context_share(void)
{
    char words[] = "pages dirty write back else";
    RtvQuery q = {0};
    q.search_words = words;
    RtvItem items[RTV_MATCH_TOP + 1];
    memset(items, 0, sizeof items);
    char t0[] = "int write_page(struct page *p)\n{\n    return PageDirty(p);\n}\n";
    char other[] = "x = 1\n", late[] = "go back\n";
    items[0].text = t0;
    for (size_t i = 1; i < RTV_MATCH_TOP; i++)
        items[i].text = other;
    items[RTV_MATCH_TOP].text = late; /* not read */
    RtvMatchSignals sig = {0};
    rtv_match_context(&q, items, RTV_MATCH_TOP + 1, &sig);
    CHECK(sig.context_share > 0.74 && sig.context_share < 0.76); /* page, dirty, write of 4 */
    rtv_match_context(&q, items, 0, &sig);
    CHECK(sig.context_share < 0);
}

int main(void)
{
    RUN(test_labels);
    RUN(test_context_share);
    RUN(test_syntax_words);
    return test_summary();
}
