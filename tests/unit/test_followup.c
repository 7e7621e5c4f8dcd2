/* Follow-ups (issue 36): the history is a prior, never a replacement. What
 * the question alone finds first stays near the top when the last turn's
 * question, about something else, joins the search; before, it sank under
 * the definitions the earlier question's words named. Over a real index. */
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

/* The rank (0-based) of symbol among the packed items, or -1. */
static int rank_of(IdxStore *st, const char *question, const RtvTurn *history, size_t n_history,
                   const char *symbol)
{
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = question;
    req.mode = RTV_MODE_EXTRACTIVE;
    req.use_dense = 0;
    req.history = history;
    req.n_history = n_history;
    int rank = -1;
    CHECK_INT(rtv_search(st, &req, &a, NULL), CR_OK);
    for (size_t i = 0; i < a.n_items && rank < 0; i++)
        if (!strcmp(a.items[i].chunk.symbol, symbol)) rank = (int)i;
    rtv_answer_release(&a);
    return rank;
}

static void test_history_is_a_prior(void)
{
    char root[] = "/tmp/coderag-followup-XXXXXX", idx[] = "/tmp/coderag-followup-idx-XXXXXX";
    CHECK(mkdtemp(root) != NULL && mkdtemp(idx) != NULL);
    test_put(root, "errors.py",
             "def unknown_option(name):\n"
             "    \"\"\"Report an unknown option as an error.\"\"\"\n"
             "    raise UsageError('unknown option: ' + name)\n");
    /* definitions the earlier question names, many times over */
    static const char *const parsers[] = {"parse_options", "parse_option_value",
                                          "parse_long_option", "parse_short_option",
                                          "parse_command_options"};
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++) {
        char rel[64], text[512];
        snprintf(rel, sizeof rel, "parse%zu.py", i);
        snprintf(text, sizeof text,
                 "def %s(command, argv):\n"
                 "    \"\"\"Parse the command's options; errors are reported later.\"\"\"\n"
                 "    options = command.parse(argv)\n"
                 "    for option in options:\n"
                 "        command.parse_option(option)\n"
                 "    return options\n",
                 parsers[i]);
        test_put(root, rel, text);
    }
    IdxConfig cfg = {.root = root, .index_dir = idx, .threads = 1, .embed_provider = "none"};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    if (st) {
        const char *q = "how are unknown options reported as errors?";
        CHECK_INT(rank_of(st, q, NULL, 0, "unknown_option"), 0);
        RtvTurn turn = {"how do parse_options, parse_option_value, parse_long_option, "
                        "parse_short_option and parse_command_options parse a command's options?",
                        "They parse them."};
        int r = rank_of(st, q, &turn, 1, "unknown_option");
        CHECK(r >= 0 && r <= 1);
        if (r < 0 || r > 1) fprintf(stderr, "as a follow-up: rank %d\n", r);
        idx_close(st);
    }
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    nftw(idx, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    RUN(test_history_is_a_prior);
    return test_summary();
}
