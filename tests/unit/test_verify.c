#include "test.h"
#include "vfy.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Citation checks against a fake workspace and real files (the parser is
 * test_verify_parse.c's). */

#define NDASH "\xE2\x80\x93"

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

/* ---------------------------------------------------------------- symlinks */

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

/* A real workspace with links out of it, made at run time:
 *   ws/pkg/a.py, ws/inner.py -> pkg/a.py, ws/link.py -> out/secret.py,
 *   ws/ext -> out, ws/etc -> /etc, ws/dangling.py -> out/gone/x.py,
 *   wslink -> ws (the root as given may itself be a link). */
static void test_check_symlinks(void)
{
    char base[] = "/tmp/vfy_test_XXXXXX";
    if (!mkdtemp(base)) {
        CHECK(0);
        return;
    }
    char ws[256], out_dir[256], p[512], q[512], wslink[256];
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(out_dir, sizeof out_dir, "%s/out", base);
    snprintf(wslink, sizeof wslink, "%s/wslink", base);
    CHECK(mkdir(ws, 0700) == 0);
    CHECK(mkdir(out_dir, 0700) == 0);
    snprintf(p, sizeof p, "%s/pkg", ws);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/pkg/a.py", ws);
    CHECK(write_text(p, A_PY));
    snprintf(p, sizeof p, "%s/secret.py", out_dir);
    CHECK(write_text(p, A_PY));
    snprintf(p, sizeof p, "%s/inner.py", ws);
    CHECK(symlink("pkg/a.py", p) == 0);
    snprintf(p, sizeof p, "%s/link.py", ws);
    snprintf(q, sizeof q, "%s/secret.py", out_dir);
    CHECK(symlink(q, p) == 0);
    snprintf(p, sizeof p, "%s/ext", ws);
    CHECK(symlink("../out", p) == 0);
    snprintf(p, sizeof p, "%s/etc", ws);
    CHECK(symlink("/etc", p) == 0);
    snprintf(p, sizeof p, "%s/dangling.py", ws);
    CHECK(symlink("../out/gone/x.py", p) == 0);
    CHECK(symlink(ws, wslink) == 0);

    /* Every file is "indexed" and in context, so only the path check can fail them. */
    static const FakeFile lfiles[] = {
        {"pkg/a.py", A_PY, 1},      {"inner.py", A_PY, 1},     {"link.py", A_PY, 1},
        {"ext/secret.py", A_PY, 1}, {"ext/other.py", A_PY, 1}, {"etc/passwd", A_PY, 1},
        {"dangling.py", A_PY, 1},
    };
    VfyContextItem lctx[sizeof lfiles / sizeof lfiles[0]];
    for (size_t i = 0; i < sizeof lfiles / sizeof lfiles[0]; i++)
        lctx[i] = (VfyContextItem){lfiles[i].path, 1, 10, "m", LIT(A_PY)};
    static const struct {
        const char *cite, *reason; /* NULL: kept */
    } cases[] = {
        {"[pkg/a.py:2]", NULL},
        {"[inner.py:2]", NULL},
        {"[link.py:2]", "outside-workspace"},
        {"[pkg/../link.py:2]", "outside-workspace"},
        {"[ext/secret.py:2]", "outside-workspace"},
        {"[ext/other.py:2]", "outside-workspace"}, /* not there, but under a link out */
        {"[etc/passwd:1]", "outside-workspace"},
        {"[dangling.py:1]", "outside-workspace"},
        {"`link.py:2`", "outside-workspace"},
        {"[x](ext/secret.py#L2)", "outside-workspace"}, /* the link text stays */
    };
    for (int pass = 0; pass < 2; pass++) {
        Fake lf = {.files = lfiles, .n = sizeof lfiles / sizeof lfiles[0]};
        VfySource src = {.root = pass ? wslink : ws,
                         .is_indexed = fake_is_indexed,
                         .read_lines = fake_read_lines,
                         .ud = &lf};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            VfyResult r;
            CHECK_INT(vfy_check(&src, cases[i].cite, strlen(cases[i].cite), lctx,
                                sizeof lctx / sizeof lctx[0], VFY_AUTHOR_MODEL, &r, NULL),
                      CR_OK);
            if (cases[i].reason) {
                CHECK_INT(r.n_rejected, 1);
                if (r.n_rejected == 1) {
                    CHECK_STR(r.rejected[0].text, cases[i].cite);
                    CHECK_STR(r.rejected[0].reason, cases[i].reason);
                }
                CHECK_STR(r.answer, cases[i].cite[0] == '[' && cases[i].cite[1] == 'x' ? "x" : "");
            } else {
                CHECK_INT(r.n_rejected, 0);
                CHECK_INT(r.n_citations, 1);
                if (r.n_citations == 1) CHECK_STR(r.citations[0].source, "model");
            }
            if (r.n_rejected != (cases[i].reason != NULL))
                fprintf(stderr, "  pass %d: %s\n", pass, cases[i].cite);
            vfy_result_release(&r);
        }

        /* An absolute path through the canonical root, while the root was given as a link. */
        char *real = realpath(ws, NULL);
        char text[600];
        snprintf(text, sizeof text, "[%s/pkg/a.py:2]", real ? real : ws);
        VfyResult r;
        CHECK_INT(vfy_check(&src, text, strlen(text), lctx, 1, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
        CHECK_INT(r.n_rejected, 0);
        CHECK_STR(r.answer, "[pkg/a.py:2]");
        vfy_result_release(&r);
        free(real);
    }

    static const char *const links[] = {"inner.py", "link.py", "ext", "etc", "dangling.py"};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", ws, links[i]);
        unlink(p);
    }
    unlink(wslink);
    snprintf(p, sizeof p, "%s/pkg/a.py", ws);
    unlink(p);
    snprintf(p, sizeof p, "%s/pkg", ws);
    rmdir(p);
    rmdir(ws);
    snprintf(p, sizeof p, "%s/secret.py", out_dir);
    unlink(p);
    rmdir(out_dir);
    CHECK(rmdir(base) == 0);
}

/* ---------------------------------------------------------------- anchors */

#define CLS                                                                                        \
    "import os\n\nclass A:\n    def f(self):\n        return 1\n\n"                                \
    "    def g(self):\n        return 2\n"

static void test_anchor_hash(void)
{
    char h1[17], h2[17];
    idx_hash_text("a\nb\n", 4, h1);
    vfy_anchor_hash("a\nb\n", 4, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\r\nb\r\n", 6, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\nb", 3, h2);
    CHECK_STR(h2, h1);
    vfy_anchor_hash("a\nc\n", 4, h2);
    CHECK(strcmp(h1, h2) != 0);
    vfy_anchor_hash("", 0, h2);
    CHECK_INT(strlen(h2), 16);
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_UNCHANGED), "unchanged");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_SHIFTED), "shifted");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_MOVED), "moved");
    CHECK_STR(vfy_anchor_status_name(VFY_ANCHOR_LOST), "lost");
}

static char *crlf(const char *s)
{
    StrBuf sb;
    sb_init(&sb);
    for (; *s; s++) {
        if (*s == '\n') sb_addc(&sb, '\r');
        sb_addc(&sb, *s);
    }
    return sb_detach(&sb, NULL);
}

static void test_anchor_resolve(void)
{
    /* the anchor of A.f, lines 4-5 of CLS */
    VfyAnchor a = {.path = "m.py", .start_line = 4, .end_line = 5, .symbol = "A.f"};
    vfy_anchor_hash("    def f(self):\n        return 1\n", 33, a.hash);
    static const struct {
        const char *text;
        VfyAnchorStatus status;
        uint32_t a, b;
    } cases[] = {
        {CLS, VFY_ANCHOR_UNCHANGED, 4, 5},
        {"# one\n# two\n" CLS, VFY_ANCHOR_SHIFTED, 6, 7},
        {CLS "\n\ndef h():\n    pass\n", VFY_ANCHOR_UNCHANGED, 4, 5},
        {"import os\nclass A:\n    def f(self):\n        return 1\n", VFY_ANCHOR_SHIFTED, 3, 4},
        /* a line inserted inside: the definition, header and body */
        {"import os\n\nclass A:\n    def f(self):\n        x = 0\n        return 1\n\n"
         "    def g(self):\n        return 2\n",
         VFY_ANCHOR_MOVED, 4, 6},
        /* the cited block edited */
        {"import os\n\nclass A:\n    def f(self):\n        return 42\n", VFY_ANCHOR_MOVED, 4, 5},
        /* moved far away, unchanged */
        {"import os\n\nclass B:\n    pass\n"
         "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"
         "class A:\n    def f(self):\n        return 1\n",
         VFY_ANCHOR_SHIFTED, 26, 27},
        /* edited, and two functions called f: the one in class A wins, far as it is */
        {"def f():\n    return 0\n\n\n\n\n\n\nclass A:\n    # note\n    async def f(self):\n"
         "        return 9\n",
         VFY_ANCHOR_MOVED, 11, 12},
        /* renamed */
        {"import os\n\nclass A:\n    def f2(self):\n        return 3\n", VFY_ANCHOR_LOST, 0, 0},
        /* emptied */
        {"", VFY_ANCHOR_LOST, 0, 0},
        /* shorter than the citation */
        {"x\n", VFY_ANCHOR_LOST, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyAnchorMatch m;
        int before = test_state_.failed_checks;
        CHECK_INT(vfy_anchor_resolve(&a, cases[i].text, strlen(cases[i].text), &m),
                  cases[i].status);
        CHECK_INT(m.status, cases[i].status);
        CHECK_INT(m.start_line, cases[i].a);
        CHECK_INT(m.end_line, cases[i].b);
        /* the same with CRLF line ends */
        char *t = crlf(cases[i].text);
        CHECK_INT(vfy_anchor_resolve(&a, t, strlen(t), &m), cases[i].status);
        CHECK_INT(m.start_line, cases[i].a);
        CHECK_INT(m.end_line, cases[i].b);
        free(t);
        if (test_state_.failed_checks != before) fprintf(stderr, "  case %zu\n", i);
    }

    /* A multi-line header; the body ends before the next statement at its level. */
    const char *t = "x = 1\n\ndef h(\n    a,\n    b,\n):\n    return a\n\n# done\ny = 2\n";
    VfyAnchor ah = {.start_line = 1, .end_line = 2, .symbol = "h"};
    vfy_anchor_hash("gone\n", 5, ah.hash);
    VfyAnchorMatch m;
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_MOVED);
    CHECK_INT(m.start_line, 3);
    CHECK_INT(m.end_line, 7);

    /* Module code is named after its module: no definition is looked for. */
    VfyAnchor am = {.path = "pkg/h.py", .start_line = 1, .end_line = 2, .symbol = "pkg.h"};
    vfy_anchor_hash("gone\n", 5, am.hash);
    const char *th = "def h():\n    pass\n";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_LOST);
    am.path = "pkg/h/__init__.py";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_LOST);
    am.path = "other.py";
    CHECK_INT(vfy_anchor_resolve(&am, th, strlen(th), &m), VFY_ANCHOR_MOVED);

    /* No symbol (module code): content gone means lost. */
    ah.symbol = "";
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_LOST);
    ah.symbol = NULL;
    CHECK_INT(vfy_anchor_resolve(&ah, t, strlen(t), &m), VFY_ANCHOR_LOST);

    /* The last line without '\n', and NUL bytes in the buffer. */
    VfyAnchor al = {.start_line = 2, .end_line = 2, .symbol = ""};
    vfy_anchor_hash("b\0c", 3, al.hash);
    CHECK_INT(vfy_anchor_resolve(&al, "a\nb\0c", 5, &m), VFY_ANCHOR_UNCHANGED);
    CHECK_INT(vfy_anchor_resolve(&al, "a\nb\0c\nd\n", 8, &m), VFY_ANCHOR_UNCHANGED);
    CHECK_INT(vfy_anchor_resolve(&al, "z\na\nb\0c", 7, &m), VFY_ANCHOR_SHIFTED);
    CHECK_INT(m.start_line, 3);

    /* A bad anchor: no crash, lost. */
    VfyAnchor bad = {.start_line = 5, .end_line = 2, .symbol = "A.f", .hash = "zz"};
    CHECK_INT(vfy_anchor_resolve(&bad, CLS, strlen(CLS), &m), VFY_ANCHOR_MOVED);
    bad.symbol = ".";
    CHECK_INT(vfy_anchor_resolve(&bad, CLS, strlen(CLS), &m), VFY_ANCHOR_LOST);
}

/* A verified citation's anchor re-finds its lines in the file as it is,
 * and after lines are added above. */
static void test_citation_anchor(void)
{
    VfySource src = fake_source();
    VfyResult r;
    CHECK_INT(vfy_check(&src, "see `pkg/a.py:4-5`", 18, ctx, 2, VFY_AUTHOR_MODEL, &r, NULL), CR_OK);
    CHECK_INT(r.n_citations, 1);
    if (r.n_citations == 1) {
        VfyAnchor a;
        VfyAnchorMatch m;
        vfy_citation_anchor(&r.citations[0], &a);
        CHECK_STR(a.path, "pkg/a.py");
        CHECK_STR(a.symbol, "A.f");
        CHECK_INT(a.start_line, 4);
        CHECK_INT(vfy_anchor_resolve(&a, A_PY, strlen(A_PY), &m), VFY_ANCHOR_UNCHANGED);
        const char *edited = "new\n" A_PY;
        CHECK_INT(vfy_anchor_resolve(&a, edited, strlen(edited), &m), VFY_ANCHOR_SHIFTED);
        CHECK_INT(m.start_line, 5);
        CHECK_INT(m.end_line, 6);
    }
    vfy_result_release(&r);
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
    RUN(test_check_rewrite);
    RUN(test_auto_cite);
    RUN(test_source_error);
    RUN(test_check_forms);
    RUN(test_check_symlinks);
    RUN(test_anchor_hash);
    RUN(test_anchor_resolve);
    RUN(test_citation_anchor);
    RUN(test_hostile);
    return test_summary();
}
