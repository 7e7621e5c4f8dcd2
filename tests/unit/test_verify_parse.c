/* Citation parsing: the strict and tolerant forms, what is not a citation,
 * path normalisation, the cap on mentions. No files are read. */
#include "test.h"
#include "vfy.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- parsing */

static void test_parse(void)
{
    static const struct {
        const char *text;
        size_t n;
        const char *path; /* of the first mention */
        uint32_t a, b;
        int malformed;
    } cases[] = {
        {"see [a.py:3-5].", 1, "a.py", 3, 5, 0},
        {"[a.py:7]", 1, "a.py", 7, 7, 0},
        {"[pkg/mod.py:L10-L20]", 1, "pkg/mod.py", 10, 20, 0},
        {"[a.py: 10 \xE2\x80\x93 12]", 1, "a.py", 10, 12, 0},
        {"[a.py:10..12]", 1, "a.py", 10, 12, 0},
        {"[a.py#L3-L4]", 1, "a.py", 3, 4, 0},
        {"[`a.py`:3]", 1, "a.py", 3, 3, 0},
        {"[`a.py:3`]", 1, "a.py", 3, 3, 0},
        {"[pkg/mod:3]", 1, "pkg/mod", 3, 3, 0},
        {"[file:///srv/ws/a.py:3-4]", 1, "file:///srv/ws/a.py", 3, 4, 0},
        {"[a.py:1-2; b/c.py:5]", 2, "a.py", 1, 2, 0},
        {"[a.py:1-2, 5-7]", 2, "a.py", 1, 2, 0},
        {"[a.py:9-3]", 1, "a.py", 0, 0, 1},
        {"[a.py:x]", 1, "a.py", 0, 0, 1},
        {"[a.py:]", 1, "a.py", 0, 0, 1},
        {"[a.py:99999999999]", 1, "a.py", 0, 0, 1},
        {"[a.py:3 (the function)]", 1, "a.py", 0, 0, 1},
        {"x[1:2] and d[key:value]", 0, NULL, 0, 0, 0},
        {"[note: see below]", 0, NULL, 0, 0, 0},
        {"[a.py]", 0, NULL, 0, 0, 0},
        {"\\[a.py:1]", 0, NULL, 0, 0, 0},
        {"[a.py:1\n]", 0, NULL, 0, 0, 0},
        {"[http://example.com/a.py:3]", 0, NULL, 0, 0, 0},
        {"[a.py:1-2, hello]", 0, NULL, 0, 0, 0},
        {"[]", 0, NULL, 0, 0, 0},
        {"[a.py:1,]", 0, NULL, 0, 0, 0},
        {"[[a.py:2]]", 1, "a.py", 2, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyMention *m = NULL;
        size_t n = vfy_parse(cases[i].text, strlen(cases[i].text), &m);
        CHECK_INT(n, cases[i].n);
        if (n != cases[i].n) fprintf(stderr, "  case %zu: %s\n", i, cases[i].text);
        if (n && cases[i].n) {
            CHECK_STR(m[0].path, cases[i].path);
            CHECK_INT(m[0].malformed, cases[i].malformed);
            if (!cases[i].malformed) {
                CHECK_INT(m[0].start_line, cases[i].a);
                CHECK_INT(m[0].end_line, cases[i].b);
            }
        }
        vfy_mentions_free(m, n);
    }
}

static void test_parse_offsets(void)
{
    const char *t = "x [a.py:1-2; b.py:5] y";
    VfyMention *m = NULL;
    size_t n = vfy_parse(t, strlen(t), &m);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_INT(m[0].group_off, 2);
        CHECK_INT(m[0].group_len, 18);
        CHECK_INT(m[1].group_off, 2);
        CHECK_INT(m[0].off, 3);
        CHECK_INT(m[0].len, 8);
        CHECK_INT(m[1].off, 13);
        CHECK_INT(m[1].len, 6);
        CHECK_STR(m[1].path, "b.py");
        CHECK_INT(m[1].start_line, 5);
    }
    vfy_mentions_free(m, n);
}

static void test_normalize(void)
{
    static const struct {
        const char *root, *path;
        CrErr rc;
        const char *want;
    } cases[] = {
        {"/work/proj", "a.py", CR_OK, "a.py"},
        {"/work/proj", "./a.py", CR_OK, "a.py"},
        {"/work/proj", " `pkg/m.py` ", CR_OK, "pkg/m.py"},
        {"/work/proj", "pkg/../a.py", CR_OK, "a.py"},
        {"/work/proj", "pkg/./sub//m.py", CR_OK, "pkg/sub/m.py"},
        {"/work/proj", "../a.py", CR_EOUTSIDE, NULL},
        {"/work/proj", "pkg/../../a.py", CR_EOUTSIDE, NULL},
        {"/work/proj", "/work/proj/pkg/m.py", CR_OK, "pkg/m.py"},
        {"/work/proj", "/work/proj/./pkg/../m.py", CR_OK, "m.py"},
        {"/work/proj", "/work/proj/../other/m.py", CR_EOUTSIDE, NULL},
        {"/work/proj", "/work/projx/m.py", CR_EOUTSIDE, NULL},
        {"/work/proj", "/etc/passwd", CR_EOUTSIDE, NULL},
        {"/work/proj", "/work/proj", CR_EINVAL, NULL},
        {"/work/proj/", "/work/proj/a.py", CR_OK, "a.py"},
        {"/", "/a.py", CR_OK, "a.py"},
        {"/work/proj", "file:///work/proj/pkg/m.py", CR_OK, "pkg/m.py"},
        {"/work/proj", "FILE:///work/proj/m.py", CR_OK, "m.py"},
        {"/work/proj", "file:///work/proj/my%20dir/m%2epy", CR_OK, "my dir/m.py"},
        {"/work/proj", "file://localhost/work/proj/a.py", CR_OK, "a.py"},
        {"/work/proj", "file://evil/work/proj/a.py", CR_EOUTSIDE, NULL},
        {"/work/proj", "file:///work/proj/a%00.py", CR_EINVAL, NULL},
        {"/work/proj", "file:///etc/passwd", CR_EOUTSIDE, NULL},
        {"/work/proj", "", CR_EINVAL, NULL},
        {"/work/proj", ".", CR_EINVAL, NULL},
        {"/work/proj", "pkg/..", CR_EINVAL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = NULL;
        CrErr rc = vfy_normalize_path(cases[i].root, cases[i].path, &got);
        CHECK_INT(rc, cases[i].rc);
        if (cases[i].want)
            CHECK_STR(got, cases[i].want);
        else
            CHECK(got == NULL);
        if (rc != cases[i].rc) fprintf(stderr, "  case %zu: %s\n", i, cases[i].path);
        free(got);
    }
}

static void test_reason_names(void)
{
    CHECK_STR(vfy_reason_name(VFY_MALFORMED), "malformed");
    CHECK_STR(vfy_reason_name(VFY_OUTSIDE), "outside-workspace");
    CHECK_STR(vfy_reason_name(VFY_FILE_NOT_FOUND), "file-not-found");
    CHECK_STR(vfy_reason_name(VFY_OUT_OF_RANGE), "out-of-range");
    CHECK_STR(vfy_reason_name(VFY_NOT_IN_CONTEXT), "not-in-context");
    CHECK_STR(vfy_reason_name(VFY_STALE), "stale");
}

/* ---------------------------------------------------------------- tolerant forms */

#define NDASH "\xE2\x80\x93"

static void test_parse_forms(void)
{
    static const struct {
        const char *text;
        VfyForm form;
        const char *group; /* the whole citation as written */
        const char *path;
        uint32_t a, b;
        int malformed;
    } cases[] = {
        {"see `pkg/a.py:3-5` here", VFY_FORM_CODE, "`pkg/a.py:3-5`", "pkg/a.py", 3, 5, 0},
        {"``pkg/a.py#L3``", VFY_FORM_CODE, "``pkg/a.py#L3``", "pkg/a.py", 3, 3, 0},
        {"in `[a.py:3]`.", VFY_FORM_CODE, "`[a.py:3]`", "a.py", 3, 3, 0},
        {"in `pkg/a.py`:12.", VFY_FORM_CODE, "`pkg/a.py`:12", "pkg/a.py", 12, 12, 0},
        {"pkg/a.py#L3-L5", VFY_FORM_BARE, "pkg/a.py#L3-L5", "pkg/a.py", 3, 5, 0},
        {"see pkg/a.py#L3.", VFY_FORM_BARE, "pkg/a.py#L3", "pkg/a.py", 3, 3, 0},
        {"at a.py:12, and", VFY_FORM_BARE, "a.py:12", "a.py", 12, 12, 0},
        {"at a.py:12 " NDASH " 14 x", VFY_FORM_BARE, "a.py:12 " NDASH " 14", "a.py", 12, 14, 0},
        {"(./pkg/a.py:3-4)", VFY_FORM_BARE, "./pkg/a.py:3-4", "./pkg/a.py", 3, 4, 0},
        {"file:///srv/ws/my%20a.py:3 x", VFY_FORM_BARE, "file:///srv/ws/my%20a.py:3",
         "file:///srv/ws/my%20a.py", 3, 3, 0},
        {"from /abs/x.py:3-4", VFY_FORM_BARE, "/abs/x.py:3-4", "/abs/x.py", 3, 4, 0},
        {"../../etc/passwd:1-3", VFY_FORM_BARE, "../../etc/passwd:1-3", "../../etc/passwd", 1, 3,
         0},
        {"**pkg/a.py:3**", VFY_FORM_BARE, "pkg/a.py:3", "pkg/a.py", 3, 3, 0},
        {"[the matcher](pkg/a.py#L3-L5)", VFY_FORM_LINK, "[the matcher](pkg/a.py#L3-L5)",
         "pkg/a.py", 3, 5, 0},
        {"[x](pkg/a.py:3-5).", VFY_FORM_LINK, "[x](pkg/a.py:3-5)", "pkg/a.py", 3, 5, 0},
        {"[x](<./a.py#L3>)", VFY_FORM_LINK, "[x](<./a.py#L3>)", "./a.py", 3, 3, 0},
        {"[x](a.py#L3 \"title\")", VFY_FORM_LINK, "[x](a.py#L3 \"title\")", "a.py", 3, 3, 0},
        {"[x](file:///r/a.py#L3-L4)", VFY_FORM_LINK, "[x](file:///r/a.py#L3-L4)", "file:///r/a.py",
         3, 4, 0},
        {"pkg/a.py, lines 3-5", VFY_FORM_PROSE, "pkg/a.py, lines 3-5", "pkg/a.py", 3, 5, 0},
        {"in pkg/a.py, line 7.", VFY_FORM_PROSE, "pkg/a.py, line 7", "pkg/a.py", 7, 7, 0},
        {"pkg/a.py lines 3-5 do", VFY_FORM_PROSE, "pkg/a.py lines 3-5", "pkg/a.py", 3, 5, 0},
        {"a.py Line 3", VFY_FORM_PROSE, "a.py Line 3", "a.py", 3, 3, 0},
        {"pkg/a.py (lines 3" NDASH "5) do", VFY_FORM_PROSE, "pkg/a.py (lines 3" NDASH "5)",
         "pkg/a.py", 3, 5, 0},
        {"`pkg/a.py`, lines 3 to 5.", VFY_FORM_PROSE, "`pkg/a.py`, lines 3 to 5", "pkg/a.py", 3, 5,
         0},
        {"File \"pkg/a.py\", line 3, in f", VFY_FORM_PROSE, "\"pkg/a.py\", line 3", "pkg/a.py", 3,
         3, 0},
        {"see [pkg/a.py, lines 3-5].", VFY_FORM_PROSE, "[pkg/a.py, lines 3-5]", "pkg/a.py", 3, 5,
         0},
        {"see [`a.py` line 3]", VFY_FORM_PROSE, "[`a.py` line 3]", "a.py", 3, 3, 0},
        {"a.py:9-3", VFY_FORM_BARE, "a.py:9-3", "a.py", 0, 0, 1},
        {"a.py:99999999999 x", VFY_FORM_BARE, "a.py:99999999999", "a.py", 0, 0, 1},
        {"pkg/a.py:12:5 x", VFY_FORM_BARE, "pkg/a.py:12:5", "pkg/a.py", 0, 0, 1},
        {"pkg/a.py, lines 9-3", VFY_FORM_PROSE, "pkg/a.py, lines 9-3", "pkg/a.py", 0, 0, 1},
        {"[x](a.py#L9-L3)", VFY_FORM_LINK, "[x](a.py#L9-L3)", "a.py", 0, 0, 1},
        {"`a.py:7-2`", VFY_FORM_CODE, "`a.py:7-2`", "a.py", 0, 0, 1},
        {"```\ncode [a.py:1]\n```\nsee a.py:3", VFY_FORM_BARE, "a.py:3", "a.py", 3, 3, 0},
        {"```x``` then\nsee a.py:3", VFY_FORM_BARE, "a.py:3", "a.py", 3, 3, 0},
        /* any file at any depth, in any language the index reads (issue 23) */
        {"see [main.c:3-5].", VFY_FORM_BRACKET, "[main.c:3-5]", "main.c", 3, 5, 0},
        {"[routergroup.go:41-60]", VFY_FORM_BRACKET, "[routergroup.go:41-60]", "routergroup.go", 41,
         60, 0},
        {"[README.md:10-20]", VFY_FORM_BRACKET, "[README.md:10-20]", "README.md", 10, 20, 0},
        {"[src/x.tsx:1-2]", VFY_FORM_BRACKET, "[src/x.tsx:1-2]", "src/x.tsx", 1, 2, 0},
        {"[lib.rs:7]", VFY_FORM_BRACKET, "[lib.rs:7]", "lib.rs", 7, 7, 0},
        {"[Main.java:1-2]", VFY_FORM_BRACKET, "[Main.java:1-2]", "Main.java", 1, 2, 0},
        {"[db_impl.cc:10]", VFY_FORM_BRACKET, "[db_impl.cc:10]", "db_impl.cc", 10, 10, 0},
        {"[src/@types/x-y+z.d.ts:4]", VFY_FORM_BRACKET, "[src/@types/x-y+z.d.ts:4]",
         "src/@types/x-y+z.d.ts", 4, 4, 0},
        {"[my-mod.c++:2]", VFY_FORM_BRACKET, "[my-mod.c++:2]", "my-mod.c++", 2, 2, 0},
        {"[.env:1]", VFY_FORM_BRACKET, "[.env:1]", ".env", 1, 1, 0},
        {"[a.pyi:3]", VFY_FORM_BRACKET, "[a.pyi:3]", "a.pyi", 3, 3, 0},
        {"`util.go:12`", VFY_FORM_CODE, "`util.go:12`", "util.go", 12, 12, 0},
        {"at main.c:12, and", VFY_FORM_BARE, "main.c:12", "main.c", 12, 12, 0},
        {"in gin.go, lines 3-5", VFY_FORM_PROSE, "gin.go, lines 3-5", "gin.go", 3, 5, 0},
        {"see README.md:4 x", VFY_FORM_BARE, "README.md:4", "README.md", 4, 4, 0},
        {"see src/notes.weird:4 x", VFY_FORM_BARE, "src/notes.weird:4", "src/notes.weird", 4, 4, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyMention *m = NULL;
        size_t n = vfy_parse(cases[i].text, strlen(cases[i].text), &m);
        CHECK_INT(n, 1);
        if (n == 1) {
            CHECK_INT(m[0].form, cases[i].form);
            char *g = strndup(cases[i].text + m[0].group_off, m[0].group_len);
            CHECK_STR(g, cases[i].group);
            free(g);
            CHECK_STR(m[0].path, cases[i].path);
            CHECK_INT(m[0].malformed, cases[i].malformed);
            CHECK_INT(m[0].start_line, cases[i].a);
            CHECK_INT(m[0].end_line, cases[i].b);
        }
        if (n != 1 || test_state_.failed_checks)
            fprintf(stderr, "  case %zu: %s\n", i, cases[i].text);
        vfy_mentions_free(m, n);
    }
}

static void test_parse_not_citations(void)
{
    static const char *const cases[] = {
        "version 3:1-2",
        "a ratio of 1:2",
        "at 10:30 today",
        "on 10/12:30",
        "pkg/mod:3 in prose",
        "x[1:2] and d[key:value]",
        "x[a/b:3]",
        "see a.py.",
        "e.g. foo.py: the module",
        "http://example.com/a.py:3",
        "<https://github.com/o/r/blob/main/a.py#L3-L5>",
        "https://github.com/o/r/blob/main/a.py#L3-L5",
        "run `tests/test_a.py::test_foo`",
        "`a.py:x`",
        "`a.py:3 (f)`",
        "`arr[n/2:5]`",
        "[docs](docs/guide.md#install)",
        "[link](http://x/a.py#L3)",
        "setup.py lines up with",
        "see [1] and [2]",
        "[see note: 3]",
        "[1.5:3]",
        "[v1.2:3]",
        "at example.com:8080 or api.example.org:443",
        "localhost:8080",
        "ratio 1.5:2",
        "the .env:1 file",
        "a.py:3abc",
        "a.py:3.5",
        "pkg/a.py,lines",
        "pkg/a.py (lines 3-5 and 9)",
        "[pkg/a.py, lines 3-5 and 9]",
        "[see pkg/a.py, the lines]",
        "```\npkg/a.py:3 and [a.py:4] and `a.py:5`\n```",
        "~~~python\nx = 'a.py:3'\n",
        "\xff\xfe a.py\xc3:3",
        "",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyMention *m = NULL;
        size_t n = vfy_parse(cases[i], strlen(cases[i]), &m);
        CHECK_INT(n, 0);
        if (n) fprintf(stderr, "  case %zu: %s (%s)\n", i, cases[i], m[0].path);
        vfy_mentions_free(m, n);
    }
}

/* "[NAME:LINES]" with a file name without extension: weak, for vfy_check
 * to keep only when the file is indexed; never inside a longer bracket. */
static void test_parse_weak(void)
{
    static const struct {
        const char *text;
        int n, weak;
    } cases[] = {
        {"as in [x:1] here", 1, 1}, {"[Makefile:2-3]", 1, 1}, {"[cli:3]", 1, 1},
        {"[main.c:3]", 1, 0},       {"[x:1, note]", 0, 0},    {"[x:1; y:2]", 0, 0},
        {"[a.py:1; x:2]", 0, 0},    {"[x:y]", 0, 0},          {"[1x:2]", 0, 0},
        {"[see x:1]", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyMention *m = NULL;
        size_t n = vfy_parse(cases[i].text, strlen(cases[i].text), &m);
        CHECK_INT(n, cases[i].n);
        if (n == 1) CHECK_INT(m[0].weak, cases[i].weak);
        if ((int)n != cases[i].n) fprintf(stderr, "  case %zu: %s\n", i, cases[i].text);
        vfy_mentions_free(m, n);
    }
}

static void test_parse_cap(void)
{
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < 1500; i++)
        sb_addf(&sb, "x [a.py:%d] ", i + 1);
    VfyMention *m = NULL;
    size_t stop = 0;
    size_t n = vfy_parse_ex(sb.buf, sb.len, 0, 1000, &m, &stop);
    CHECK_INT(n, 1000);
    CHECK(stop < sb.len);
    CHECK(strncmp(sb.buf + stop, "[a.py:1001]", 11) == 0);
    vfy_mentions_free(m, n);
    n = vfy_parse_ex(sb.buf, sb.len, 0, SIZE_MAX, &m, &stop);
    CHECK_INT(n, 1500);
    CHECK_INT(stop, sb.len);
    vfy_mentions_free(m, n);
    sb_release(&sb);

    /* a bracket's parts are never split */
    const char *t = "[a.py:1; a.py:2]";
    n = vfy_parse_ex(t, strlen(t), 0, 1, &m, &stop);
    CHECK_INT(n, 0);
    CHECK_INT(stop, 0);
    vfy_mentions_free(m, n);

    /* server text: brackets only */
    t = "`a.py:1` a.py:2 [x](a.py#L3) [a.py:4]";
    n = vfy_parse_ex(t, strlen(t), VFY_PARSE_BRACKETS_ONLY, SIZE_MAX, &m, NULL);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_INT(m[0].start_line, 4);
    vfy_mentions_free(m, n);
}

int main(void)
{
    RUN(test_parse);
    RUN(test_parse_offsets);
    RUN(test_normalize);
    RUN(test_reason_names);
    RUN(test_parse_forms);
    RUN(test_parse_weak);
    RUN(test_parse_not_citations);
    RUN(test_parse_cap);
    return test_summary();
}
