/* Citation checks against a fake workspace: why a citation is rejected,
 * the text rebuilt around them, auto-citing, a failing source, every form,
 * hostile input (the parser is test_verify_parse.c's, links out of a real
 * workspace test_verify_paths.c's, anchors test_verify_anchor.c's). */
#include "verify_util.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- checking */

static const char *reason_of(const VfyResult *r, const char *text)
{
    for (size_t i = 0; i < r->n_rejected; i++)
        if (strcmp(r->rejected[i].text, text) == 0) return r->rejected[i].reason;
    return "(not rejected)";
}

static void test_check_reasons(void)
{
    VfySource src = fake_source();
    const char *answer = "A [pkg/a.py:4-5] B [pkg/a.py:1-20] C [missing.py:1] D [../x.py:1] "
                         "E [pkg/a.py:8-9] F [pkg/b.py:2] G [pkg/b.py:4] H [pkg/a.py:9-2] "
                         "I [notindexed.py:1] J [pkg/a.py:0-2] K [/etc/x.py:1].";
    VfyResult r;
    ErrInfo e = {0};
    CHECK_INT(vfy_check(&src, answer, strlen(answer), ctx, 2, VFY_AUTHOR_MODEL, &r, &e), CR_OK);
    CHECK_INT(r.n_citations, 2);
    if (r.n_citations == 2) {
        VfyCitation *c = &r.citations[0];
        CHECK_STR(c->path, "pkg/a.py");
        CHECK_INT(c->start_line, 4);
        CHECK_INT(c->end_line, 5);
        CHECK_STR(c->symbol, "A.f");
        CHECK_INT(c->verified, 1);
        CHECK_STR(c->source, "model");
        CHECK_STR(c->origin, "model");
        char h[17];
        idx_hash_text("l4\nl5\n", 6, h);
        CHECK_STR(c->anchor, h);
        CHECK_STR(r.citations[1].path, "pkg/b.py");
        CHECK_INT(r.citations[1].start_line, 4);
        CHECK_STR(r.citations[1].symbol, "pkg.b");
    }
    CHECK_INT(r.n_rejected, 9);
    CHECK_STR(reason_of(&r, "[pkg/a.py:1-20]"), "out-of-range");
    CHECK_STR(reason_of(&r, "[missing.py:1]"), "file-not-found");
    CHECK_STR(reason_of(&r, "[../x.py:1]"), "outside-workspace");
    CHECK_STR(reason_of(&r, "[/etc/x.py:1]"), "outside-workspace");
    CHECK_STR(reason_of(&r, "[pkg/a.py:8-9]"), "not-in-context");
    CHECK_STR(reason_of(&r, "[pkg/b.py:2]"), "stale");
    CHECK_STR(reason_of(&r, "[pkg/a.py:9-2]"), "malformed");
    CHECK_STR(reason_of(&r, "[notindexed.py:1]"), "file-not-found");
    CHECK_STR(reason_of(&r, "[pkg/a.py:0-2]"), "out-of-range");
    CHECK_STR(r.answer, "A [pkg/a.py:4-5] B C D E F G [pkg/b.py:4] H I J K.");
    vfy_result_release(&r);
}

/* Files of every language, at any depth, and dot-files are checked and
 * flagged, never left as text; a bracket naming a file without extension
 * is a citation only when that file is indexed ("[x:1]" is prose). */
static void test_check_any_file(void)
{
    VfySource src = fake_source();
    const char *answer = "A [pkg/a.py:4-5] B [routing.go:12-30] C [README.md:1-2] D [.env:1] "
                         "E [Makefile:1] F [x:1] G [src/@x/y-z+w.tsx:3] H [main.c:1, note] I.";
    VfyResult r;
    ErrInfo e = {0};
    CHECK_INT(vfy_check(&src, answer, strlen(answer), ctx, 2, VFY_AUTHOR_MODEL, &r, &e), CR_OK);
    CHECK_INT(r.n_citations, 1);
    CHECK_INT(r.n_rejected, 5);
    CHECK_STR(reason_of(&r, "[routing.go:12-30]"), "file-not-found");
    CHECK_STR(reason_of(&r, "[README.md:1-2]"), "file-not-found");
    CHECK_STR(reason_of(&r, "[.env:1]"), "file-not-found");
    CHECK_STR(reason_of(&r, "[Makefile:1]"), "not-in-context");
    CHECK_STR(reason_of(&r, "[src/@x/y-z+w.tsx:3]"), "file-not-found");
    CHECK_STR(r.answer, "A [pkg/a.py:4-5] B C D E F [x:1] G H [main.c:1, note] I.");
    vfy_result_release(&r);
}

static void test_check_rewrite(void)
{
    static const struct {
        const char *in, *out;
        size_t n_cit, n_rej;
    } cases[] = {
        {"see [pkg/a.py:4; missing.py:2].", "see [pkg/a.py:4].", 1, 1},
        {"see [pkg/a.py:3-4, 9].", "see [pkg/a.py:3-4].", 1, 1},
        {"[./pkg/a.py:L4-L4] x", "[pkg/a.py:4] x", 1, 0},
        {"[file:///work/proj/pkg/a.py:3-6]", "[pkg/a.py:3-6]", 1, 0},
        {"[/work/proj/pkg/../pkg/a.py:5]", "[pkg/a.py:5]", 1, 0},
        {"x [pkg/a.py:4] y [pkg/a.py:4]", "x [pkg/a.py:4] y [pkg/a.py:4]", 1, 0},
        {"Intro [missing.py:1] text", "Intro text", 1, 1},
        {"[missing.py:1] text", "text", 1, 1},
        {"end [missing.py:1].\nnext", "end.\nnext", 1, 1},
        {"a [missing.py:1] [missing.py:1] b", "a b", 1, 1},
        {"code x[1:2] stays, as does [a note]", "code x[1:2] stays, as does [a note]", 1, 0},
        {"partly [pkg/a.py:2-4]", "partly [pkg/a.py:2-4]", 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfySource src = fake_source();
        VfyResult r;
        CHECK_INT(
            vfy_check(&src, cases[i].in, strlen(cases[i].in), ctx, 2, VFY_AUTHOR_MODEL, &r, NULL),
            CR_OK);
        CHECK_STR(r.answer, cases[i].out);
        CHECK_INT(r.n_citations, cases[i].n_cit);
        CHECK_INT(r.n_rejected, cases[i].n_rej);
        vfy_result_release(&r);
    }
}

static void test_auto_cite(void)
{
    VfySource src = fake_source();
    VfyResult r;
    const char *answer = "No citations here [missing.py:3].";
    CHECK_INT(vfy_check(&src, answer, strlen(answer), ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    CHECK_INT(r.n_rejected, 1);
    if (r.n_citations == 1) {
        CHECK_STR(r.citations[0].path, "pkg/a.py");
        CHECK_INT(r.citations[0].start_line, 3);
        CHECK_INT(r.citations[0].end_line, 6);
        CHECK_STR(r.citations[0].source, "auto");
        CHECK_STR(r.citations[0].origin, "fallback"); /* the server's pick */
        CHECK_STR(r.citations[0].symbol, "A.f");
    }
    CHECK_STR(r.answer, "No citations here.");
    vfy_result_release(&r);

    /* The best item is stale: the next one that passes is cited. */
    VfyContextItem swapped[] = {ctx[1], ctx[0]};
    CHECK_INT(vfy_check(&src, "plain", 5, swapped, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    if (r.n_citations == 1) CHECK_STR(r.citations[0].path, "pkg/a.py");
    vfy_result_release(&r);

    /* No context: nothing to cite. */
    CHECK_INT(vfy_check(&src, "plain", 5, NULL, 0, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 0);
    CHECK_STR(r.answer, "plain");
    vfy_result_release(&r);

    /* Server-written citations are "auto" too. */
    CHECK_INT(vfy_check(&src, "[pkg/a.py:3]", 12, ctx, 2, VFY_AUTHOR_SERVER, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    if (r.n_citations == 1) {
        CHECK_STR(r.citations[0].source, "auto");
        CHECK_STR(r.citations[0].origin, "extractive"); /* in the server's own text */
    }
    vfy_result_release(&r);
}

static void test_source_error(void)
{
    VfySource src = fake_source();
    fake.fail_with = CR_EDB;
    VfyResult r;
    ErrInfo e = {0};
    CHECK_INT(vfy_check(&src, "[pkg/a.py:4]", 12, ctx, 2, VFY_AUTHOR_MODEL, &r, &e), CR_EDB);
    CHECK(r.answer == NULL);
    CHECK_INT(r.n_citations, 0);
    CHECK_STR(e.msg, "injected");
    vfy_result_release(&r);
}

static void test_check_forms(void)
{
    static const struct {
        const char *in, *out;
        size_t n_cit, n_rej;
        const char *rejected, *reason; /* the first rejected entry */
    } cases[] = {
        {"see `pkg/a.py:4-5`.", "see [pkg/a.py:4-5].", 1, 0, NULL, NULL},
        {"see `missing.py:4`.", "see.", 1, 1, "`missing.py:4`", "file-not-found"},
        {"see pkg/a.py#L4-L5 now", "see [pkg/a.py:4-5] now", 1, 0, NULL, NULL},
        {"see ./pkg/a.py:4 now", "see [pkg/a.py:4] now", 1, 0, NULL, NULL},
        {"see file:///work/proj/pkg/a.py#L4 now", "see [pkg/a.py:4] now", 1, 0, NULL, NULL},
        {"see /work/proj/pkg/a.py:4-5.", "see [pkg/a.py:4-5].", 1, 0, NULL, NULL},
        {"In [the loop](pkg/a.py#L4-L5) we", "In the loop [pkg/a.py:4-5] we", 1, 0, NULL, NULL},
        {"In [the loop](missing.py#L4-L5) we", "In the loop we", 1, 1,
         "[the loop](missing.py#L4-L5)", "file-not-found"},
        {"In [pkg/a.py](pkg/a.py#L4) we", "In [pkg/a.py:4] we", 1, 0, NULL, NULL},
        {"see [missing.py:4](missing.py#L4).", "see.", 1, 1, "[missing.py:4](missing.py#L4)",
         "file-not-found"},
        {"see [](pkg/a.py:9).", "see.", 1, 1, "[](pkg/a.py:9)", "not-in-context"},
        {"in pkg/a.py, lines 4-5.", "in [pkg/a.py:4-5].", 1, 0, NULL, NULL},
        {"in `pkg/a.py`, lines 4-5.", "in [pkg/a.py:4-5].", 1, 0, NULL, NULL},
        {"in missing.py, lines 4-5.", "in.", 1, 1, "missing.py, lines 4-5", "file-not-found"},
        {"in [pkg/a.py, lines 4-5].", "in [pkg/a.py:4-5].", 1, 0, NULL, NULL},
        {"File \"pkg/a.py\", line 4, in f", "File [pkg/a.py:4], in f", 1, 0, NULL, NULL},
        {"see (missing.py:3).", "see.", 1, 1, "missing.py:3", "file-not-found"},
        {"see ([missing.py:1], [pkg/a.py:4])", "see ([pkg/a.py:4])", 1, 1, "[missing.py:1]",
         "file-not-found"},
        {"see ([pkg/a.py:4], [missing.py:1])", "see ([pkg/a.py:4])", 1, 1, "[missing.py:1]",
         "file-not-found"},
        {"say \"missing.py:3\" ok", "say ok", 1, 1, "missing.py:3", "file-not-found"},
        {"x `[missing.py:1]` y", "x y", 1, 1, "`[missing.py:1]`", "file-not-found"},
        {"as shown, [missing.py:1].", "as shown.", 1, 1, "[missing.py:1]", "file-not-found"},
        {"f([missing.py:1])", "f()", 1, 1, "[missing.py:1]", "file-not-found"},
        {"see **[missing.py:1]** now", "see now", 1, 1, "[missing.py:1]", "file-not-found"},
        {"see _`missing.py:1`_.", "see.", 1, 1, "`missing.py:1`", "file-not-found"},
        {"a**b**[missing.py:1]**c**", "a**b****c**", 1, 1, "[missing.py:1]", "file-not-found"},
        {"[missing.py:1] and [missing.py:2]", "and", 1, 2, "[missing.py:1]", "file-not-found"},
        {"- [missing.py:1]\n- b", "-\n- b", 1, 1, "[missing.py:1]", "file-not-found"},
        {"a `x`[missing.py:1]`y` b", "a `x``y` b", 1, 1, "[missing.py:1]", "file-not-found"},
        {"pkg/a.py:9-3 x", "x", 1, 1, "pkg/a.py:9-3", "malformed"},
        {"see `pkg/a.py:7-2`.", "see.", 1, 1, "`pkg/a.py:7-2`", "malformed"},
        {"see ../x.py:1 and", "see and", 1, 1, "../x.py:1", "outside-workspace"},
        {"see /etc/passwd:1-3.", "see.", 1, 1, "/etc/passwd:1-3", "outside-workspace"},
        {"see [x](file:///etc/passwd#L1).", "see x.", 1, 1, "[x](file:///etc/passwd#L1)",
         "outside-workspace"},
        {"see `pkg/a.py:1-20`.", "see.", 1, 1, "`pkg/a.py:1-20`", "out-of-range"},
        {"see pkg/a.py, lines 8-9.", "see.", 1, 1, "pkg/a.py, lines 8-9", "not-in-context"},
        {"see pkg/b.py#L2.", "see.", 1, 1, "pkg/b.py#L2", "stale"},
        {"`tests/test_a.py::test_f` runs", "`tests/test_a.py::test_f` runs", 1, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfySource src = fake_source();
        VfyResult r;
        int before = test_state_.failed_checks;
        CHECK_INT(
            vfy_check(&src, cases[i].in, strlen(cases[i].in), ctx, 2, VFY_AUTHOR_MODEL, &r, NULL),
            CR_OK);
        CHECK_STR(r.answer, cases[i].out);
        CHECK_INT(r.answer_len, strlen(cases[i].out));
        CHECK_INT(r.n_citations, cases[i].n_cit);
        CHECK_INT(r.n_rejected, cases[i].n_rej);
        if (cases[i].rejected && r.n_rejected) {
            CHECK_STR(r.rejected[0].text, cases[i].rejected);
            CHECK_STR(r.rejected[0].reason, cases[i].reason);
        }
        if (test_state_.failed_checks != before)
            fprintf(stderr, "  case %zu: %s\n", i, cases[i].in);
        vfy_result_release(&r);
    }
}

/* ---------------------------------------------------------------- hostile input */

static void test_hostile(void)
{
    VfySource src = fake_source();
    VfyResult r;
    StrBuf sb;
    sb_init(&sb);

    /* More citations than are checked: the answer is cut and says so. */
    for (int i = 0; i < 1500; i++)
        sb_addf(&sb, "x [pkg/a.py:4] y [m%d.py:1] ", i);
    CHECK_INT(vfy_check(&src, sb.buf, sb.len, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.truncated, 1);
    CHECK_INT(r.n_citations, 1);
    CHECK_INT(r.n_rejected, 500);
    CHECK(r.answer && strstr(r.answer, "only the first 1000 were checked") != NULL);
    VfyMention *m = NULL;
    size_t n = vfy_parse(r.answer, r.answer_len, &m);
    CHECK_INT(n, 500);
    vfy_mentions_free(m, n);
    vfy_result_release(&r);

    /* A very long line, NUL bytes and invalid UTF-8 pass through. */
    sb_reset(&sb);
    for (int i = 0; i < 1 << 20; i++)
        sb_addc(&sb, (char)('a' + i % 26));
    sb_add(&sb, "\0\xff\xfe [pkg/a.py:4] \xc3\0", 18);
    CHECK_INT(vfy_check(&src, sb.buf, sb.len, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    CHECK_INT(r.answer_len, sb.len);
    CHECK(r.answer && memcmp(r.answer, sb.buf, sb.len) == 0);
    vfy_result_release(&r);

    /* Deeply nested brackets, parentheses and backticks. */
    sb_reset(&sb);
    for (int i = 0; i < 100000; i++)
        sb_adds(&sb, "[(`");
    sb_adds(&sb, "[pkg/a.py:4]");
    for (int i = 0; i < 100000; i++)
        sb_adds(&sb, "`)]");
    /* No clock here: a scan that went quadratic on these megabyte inputs
     * would run for hours, and ctest's time limit fails it. */
    CHECK_INT(vfy_check(&src, sb.buf, sb.len, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    CHECK_INT(r.answer_len, sb.len);
    vfy_result_release(&r);

    /* Long runs that each start a would-be citation. */
    sb_reset(&sb);
    for (int i = 0; i < 200000; i++)
        sb_adds(&sb, i % 2 ? "a.py:" : "[a/");
    for (int i = 0; i < 100000; i++)
        sb_adds(&sb, "` `` ");
    for (int i = 0; i < 5000; i++)
        sb_addc(&sb, 'p');
    sb_adds(&sb, ".py:1 ");
    for (int i = 0; i < 3000; i++)
        sb_addc(&sb, '9');
    CHECK_INT(vfy_check(&src, sb.buf, sb.len, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK(r.answer != NULL);
    vfy_result_release(&r);

    /* Random bytes from the characters citations are made of. */
    static const char alphabet[] = "[]()`#:-L/.py a1\n,;\"'<>\\" NDASH "file://%0";
    uint64_t seed = 42;
    for (int round = 0; round < 3000; round++) {
        sb_reset(&sb);
        int len = (int)(seed % 64);
        for (int i = 0; i < len; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            sb_addc(&sb, alphabet[(seed >> 33) % (sizeof alphabet - 1)]);
        }
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        CHECK_INT(vfy_check(&src, sb.buf, sb.len, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
        CHECK(r.answer != NULL && r.answer_len <= sb.len + 200);
        vfy_result_release(&r);
        VfyAnchor a = {
            .start_line = (uint32_t)(seed % 5), .end_line = (uint32_t)(seed % 7), .symbol = "A.p"};
        vfy_anchor_hash(sb.buf, sb.len, a.hash);
        VfyAnchorMatch am;
        vfy_anchor_resolve(&a, sb.buf, sb.len, &am);
    }
    sb_release(&sb);
}

int main(void)
{
    RUN(test_check_reasons);
    RUN(test_check_any_file);
    RUN(test_check_rewrite);
    RUN(test_auto_cite);
    RUN(test_source_error);
    RUN(test_check_forms);
    RUN(test_hostile);
    return test_summary();
}
