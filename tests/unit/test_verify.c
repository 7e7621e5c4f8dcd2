#include "test.h"
#include "vfy.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- a fake workspace */

typedef struct FakeFile {
    const char *path;
    const char *text;
    int indexed;
} FakeFile;

typedef struct Fake {
    const FakeFile *files;
    size_t n;
    CrErr fail_with; /* CR_OK, or an error every read returns */
    int reads;
} Fake;

static const FakeFile *fake_find(const Fake *f, const char *path)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->files[i].path, path) == 0) return &f->files[i];
    return NULL;
}

static int fake_is_indexed(void *ud, const char *path)
{
    const FakeFile *ff = fake_find(ud, path);
    return ff && ff->indexed;
}

static CrErr fake_read_lines(void *ud, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                             uint32_t *out_total, ErrInfo *e)
{
    Fake *f = ud;
    f->reads++;
    if (f->fail_with != CR_OK) return err_set(e, f->fail_with, "injected");
    const FakeFile *ff = fake_find(f, path);
    if (!ff) return err_set(e, CR_ENOENT, "%s: gone", path);
    size_t len = strlen(ff->text);
    uint32_t total = (uint32_t)count_lines(ff->text, len);
    if (out_total) *out_total = total;
    if (start < 1 || end < start || end > total) return err_set(e, CR_EINVAL, "range");
    uint32_t line = 1;
    for (size_t i = 0; i < len; i++) {
        if (line >= start && line <= end) sb_addc(out, ff->text[i]);
        if (ff->text[i] == '\n') line++;
    }
    return CR_OK;
}

#define A_PY "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
#define B_PY "b1\nb2\nb3\nb4\nb5"

static const FakeFile files[] = {
    {"pkg/a.py", A_PY, 1},
    {"pkg/b.py", B_PY, 1},
    {"notindexed.py", "x = 1\n", 0},
};

static Fake fake;

static VfySource fake_source(void)
{
    fake = (Fake){.files = files, .n = sizeof files / sizeof files[0]};
    VfySource s = {.root = "/work/proj",
                   .is_indexed = fake_is_indexed,
                   .read_lines = fake_read_lines,
                   .ud = &fake};
    return s;
}

/* a.py lines 3-6 as packed; b.py packed when line 2 still read "old". */
#define LIT(s) s, sizeof s - 1
static const VfyContextItem ctx[] = {
    {"pkg/a.py", 3, 6, "A.f", LIT("l3\nl4\nl5\nl6\n")},
    {"pkg/b.py", 1, 5, "pkg.b", LIT("b1\nold\nb3\nb4\nb5")},
};

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
        {"[file:///root/a.py:3-4]", 1, "file:///root/a.py", 3, 4, 0},
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
    if (r.n_citations == 1) CHECK_STR(r.citations[0].source, "auto");
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

int main(void)
{
    RUN(test_parse);
    RUN(test_parse_offsets);
    RUN(test_normalize);
    RUN(test_reason_names);
    RUN(test_check_reasons);
    RUN(test_check_rewrite);
    RUN(test_auto_cite);
    RUN(test_source_error);
    return test_summary();
}
