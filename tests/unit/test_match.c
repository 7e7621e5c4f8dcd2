/* Relevance (rtv_match): words of the languages' syntax and question words
 * never make a match by themselves (issue 27: "what else?" was a strong
 * match, `else` being in every file), over a real index. */
#include "idx.h"
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
}

int main(void)
{
    RUN(test_labels);
    RUN(test_syntax_words);
    return test_summary();
}
