/* Citations verified in every language the index reads (issue 23). Per
 * language, a fixture with files at the root and in folders
 * (tests/fixtures/lang/<name>) is indexed; the LLM (tests/fake_openai.py on
 * loopback) answers with 2 citations of lines it was shown and 5 fabricated
 * ones: past the end of a file, a file that does not exist (at the root,
 * named in the language), real lines never shown, a "../" escape and an
 * absolute one. Target: 0 fabricated passed, 0 valid lost, 5 of 5 flagged
 * with their reasons, nothing of them left as plain text; and the prompt's
 * code fences name the language. */
#include "fake_server.h"
#include "rtv.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static Fake fake;

typedef struct Lang {
    const char *dir, *ext, *fence, *question;
} Lang;

static const Lang langs[] = {
    {"c", ".c", "c", "How does the ring buffer push a byte, and how does add sum two integers?"},
    {"cpp", ".cc", "cpp",
     "How does the journal append a record, and how does a circle scale its area?"},
    {"go", ".go", "go", "How does main get a value from the store?"},
    {"rust", ".rs", "rust",
     "How does the build script read a setting, and how does the parser parse?"},
    {"java", ".java", "java",
     "How does Main welcome the visitors, and how does the dog greet another animal?"},
    {"js", ".js", "javascript",
     "How does the emitter call every listener of an event, and how does the store keep items?"},
    {"ts", ".ts", "typescript",
     "How does the clock measure elapsed time, and how does the cache look an entry up?"},
    {"python", ".py", "python", "How is the total of the cart computed?"},
};

/* One line of a file the index holds that no packed item covers. */
static int unshown_line(IdxStore *st, const char *root, const RtvAnswer *a, char *path, size_t size,
                        uint32_t *line)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f -not -path './.coderag*' | sort", root);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    char buf[512];
    int found = 0;
    while (!found && fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = '\0';
        const char *rel = buf + 2; /* "./" */
        IdxChunk *ch = NULL;
        size_t n = 0;
        if (idx_file_chunks(st, rel, &ch, &n, NULL) != CR_OK) continue;
        for (size_t i = 0; i < n && !found; i++) {
            uint32_t l = ch[i].start_line;
            int shown = 0;
            for (size_t k = 0; k < a->n_items; k++)
                shown |= !strcmp(a->items[k].chunk.path, rel) && a->items[k].start_line <= l &&
                         l <= a->items[k].end_line;
            if (!shown) {
                snprintf(path, size, "%.255s", rel);
                *line = l;
                found = 1;
            }
        }
        idx_chunks_free(ch, n);
    }
    pclose(p);
    return found;
}

/* The packed item to cite: the first at the root (want_root) or in a folder;
 * else any other than skip. */
static const RtvItem *pick_item(const RtvAnswer *a, int want_root, const RtvItem *skip)
{
    for (size_t k = 0; k < a->n_items; k++)
        if (&a->items[k] != skip && (strchr(a->items[k].chunk.path, '/') == NULL) == want_root)
            return &a->items[k];
    for (size_t k = 0; k < a->n_items; k++)
        if (&a->items[k] != skip) return &a->items[k];
    return skip;
}

static int has_rejection(const RtvAnswer *a, const char *text, const char *reason)
{
    for (size_t i = 0; i < a->n_rejected; i++)
        if (!strcmp(a->rejected[i].text, text) && !strcmp(a->rejected[i].reason, reason)) return 1;
    return 0;
}

static void run_lang(const Lang *lg, int *fab_passed, int *valid_lost, int *flagged)
{
    char root[128], index_dir[160];
    snprintf(root, sizeof root, "/tmp/coderag-test-cite-XXXXXX");
    if (!mkdtemp(root)) {
        CHECK(0);
        return;
    }
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    char src[512];
    snprintf(src, sizeof src, "%s/lang/%s", FIXTURE_DIR, lg->dir);
    test_sh("cp -R '%s/.' '%s'", src, root);

    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1, .embed_provider = "none"};
    ErrInfo e = {0};
    IdxStore *st = NULL;
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (!rc) rc = idx_update(st, NULL, NULL, NULL, &e);
    CHECK_INT(rc, CR_OK);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", lg->dir, e.msg);
        idx_close(st);
        return;
    }

    RtvRequest req;
    rtv_request_init(&req);
    req.question = lg->question;
    req.mode = RTV_MODE_LLM;
    req.budget = 900; /* a small context: some lines of the workspace are never shown */
    req.llm_url = fake.base;
    req.llm_model = "test-model";
    req.llm_timeout_ms = 30000;
    RtvAnswer a;
    RtvDraft *d = rtv_draft_new();
    rc = rtv_ask_prepare(st, &req, &a, d, &e);
    CHECK_INT(rc, CR_OK);
    CHECK(a.n_items >= 1);
    if (rc || !a.n_items || !rtv_draft_wants_llm(d)) {
        fprintf(stderr, "  %s: nothing packed (%s)\n", lg->dir, e.msg);
        rtv_draft_free(d);
        rtv_answer_release(&a);
        idx_close(st);
        test_sh("rm -rf '%s' '%s'", root, index_dir);
        return;
    }

    /* the two valid citations: lines it was shown, at the root and in a folder when it can */
    const RtvItem *v1 = pick_item(&a, 1, NULL), *v2 = pick_item(&a, 0, v1);
    char valid[2][256];
    snprintf(valid[0], sizeof valid[0], "%s:%u-%u", v1->chunk.path, v1->start_line, v1->end_line);
    if (v2 != v1)
        snprintf(valid[1], sizeof valid[1], "%s:%u-%u", v2->chunk.path, v2->start_line,
                 v2->end_line);
    else /* one item only: its last line alone */
        snprintf(valid[1], sizeof valid[1], "%s:%u", v1->chunk.path, v1->end_line);

    CHECK(strchr(valid[0], '/') == NULL); /* a file at the root */
    CHECK(strchr(valid[1], '/') != NULL); /* one in a folder */

    /* the five fabricated ones */
    uint32_t total = 0;
    StrBuf tmp;
    sb_init(&tmp);
    CHECK_INT(idx_read_lines(st, v1->chunk.path, 1, 1, &tmp, &total, NULL), CR_OK);
    sb_release(&tmp);
    char unshown[256];
    uint32_t uline = 0;
    CHECK(unshown_line(st, root, &a, unshown, sizeof unshown, &uline));
    char fab[5][300];
    static const char *const reasons[5] = {"out-of-range", "file-not-found", "not-in-context",
                                           "outside-workspace", "outside-workspace"};
    snprintf(fab[0], sizeof fab[0], "[%s:%u-%u]", v1->chunk.path, total + 3, total + 8);
    snprintf(fab[1], sizeof fab[1], "[routing%s:12-30]", lg->ext);
    snprintf(fab[2], sizeof fab[2], "[%s:%u]", unshown, uline);
    snprintf(fab[3], sizeof fab[3], "[../outside%s:1-2]", lg->ext);
    snprintf(fab[4], sizeof fab[4], "[/etc/passwd:1-2]");

    StrBuf answer;
    sb_init(&answer);
    sb_addf(&answer, "It is done here [%s], and there [%s].\n\n", valid[0], valid[1]);
    sb_addf(&answer, "See also %s, %s and %s; compare %s with %s.\n", fab[0], fab[1], fab[2],
            fab[3], fab[4]);
    json_t *s = json_stringn(answer.buf, answer.len);
    char *q = json_dumps(s, JSON_ENCODE_ANY);
    StrBuf actions;
    sb_init(&actions);
    sb_addf(&actions, "[{\"content\": %s}]", q);
    fake_script_chat(&fake, actions.buf);
    free(q);
    json_decref(s);
    sb_release(&actions);

    CHECK_INT(rtv_ask_llm(&req, &a, d), CR_OK);
    CHECK_INT(rtv_ask_finish(st, &req, &a, d, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_LLM);

    /* the prompt fences the code in the language's tag */
    json_t *log = fake_log(&fake);
    char fence[32];
    snprintf(fence, sizeof fence, "```%s\\n", lg->fence);
    char *dump = log ? json_dumps(log, 0) : NULL;
    CHECK(dump && strstr(dump, fence) != NULL);
    free(dump);
    json_decref(log);

    int passed = 0, lost = 0, flag = 0;
    for (int v = 0; v < 2; v++) {
        int kept = 0;
        for (size_t i = 0; i < a.n_citations; i++) {
            char c[256];
            if (a.citations[i].start_line == a.citations[i].end_line && !strchr(valid[v], '-'))
                snprintf(c, sizeof c, "%s:%u", a.citations[i].path, a.citations[i].start_line);
            else
                snprintf(c, sizeof c, "%s:%u-%u", a.citations[i].path, a.citations[i].start_line,
                         a.citations[i].end_line);
            kept |= !strcmp(c, valid[v]) && !strcmp(a.citations[i].source, "model");
        }
        lost += !kept;
    }
    passed = (int)a.n_citations - (2 - lost);
    for (int f = 0; f < 5; f++) {
        int ok = has_rejection(&a, fab[f], reasons[f]);
        flag += ok;
        if (!ok) fprintf(stderr, "  %s: %s not flagged %s\n", lg->dir, fab[f], reasons[f]);
        /* never left in the text */
        char inner[300];
        snprintf(inner, sizeof inner, "%.*s", (int)strlen(fab[f]) - 2, fab[f] + 1);
        CHECK(strstr(a.answer, inner) == NULL);
    }
    CHECK_INT(a.n_rejected, 5);
    fprintf(stderr,
            "  %-6s fabricated passed %d/5, valid lost %d/2, fabricated flagged %d/5 "
            "(valid %s, %s)\n",
            lg->dir, passed, lost, flag, valid[0], valid[1]);
    *fab_passed += passed;
    *valid_lost += lost;
    *flagged += flag;

    sb_release(&answer);
    rtv_draft_free(d);
    rtv_answer_release(&a);
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
}

static void test_cite_every_language(void)
{
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        int passed = 0, lost = 0, flagged = 0;
        run_lang(&langs[i], &passed, &lost, &flagged);
        CHECK_INT(passed, 0);
        CHECK_INT(lost, 0);
        CHECK_INT(flagged, 5);
    }
}

int main(void)
{
    setenv("CODERAG_LOG", "error", 0);
    if (fake_start(&fake) != 0) {
        fprintf(stderr, "cannot start the fake server\n");
        fake_stop(&fake);
        return 1;
    }
    fake_script(&fake, 8, "[]");
    RUN(test_cite_every_language);
    fake_stop(&fake);
    return test_summary();
}
