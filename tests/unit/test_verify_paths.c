/* Citation checks in a real workspace with links out of it: a citation that
 * leads outside the root through a symlinked file or folder is rejected,
 * whether the root is given as it is or through a link. */
#include "verify_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
typedef struct Links {
    char base[32], ws[256], out_dir[256], wslink[256];
} Links;

/* 0 when the temporary folder cannot be made (a failed check). */
static int make_links(Links *l)
{
    char p[512], q[512];
    snprintf(l->base, sizeof l->base, "/tmp/vfy_test_XXXXXX");
    if (!mkdtemp(l->base)) {
        CHECK(0);
        return 0;
    }
    snprintf(l->ws, sizeof l->ws, "%s/ws", l->base);
    snprintf(l->out_dir, sizeof l->out_dir, "%s/out", l->base);
    snprintf(l->wslink, sizeof l->wslink, "%s/wslink", l->base);
    CHECK(mkdir(l->ws, 0700) == 0);
    CHECK(mkdir(l->out_dir, 0700) == 0);
    snprintf(p, sizeof p, "%s/pkg", l->ws);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/pkg/a.py", l->ws);
    CHECK(write_text(p, A_PY));
    snprintf(p, sizeof p, "%s/secret.py", l->out_dir);
    CHECK(write_text(p, A_PY));
    snprintf(p, sizeof p, "%s/inner.py", l->ws);
    CHECK(symlink("pkg/a.py", p) == 0);
    snprintf(p, sizeof p, "%s/link.py", l->ws);
    snprintf(q, sizeof q, "%s/secret.py", l->out_dir);
    CHECK(symlink(q, p) == 0);
    snprintf(p, sizeof p, "%s/ext", l->ws);
    CHECK(symlink("../out", p) == 0);
    snprintf(p, sizeof p, "%s/etc", l->ws);
    CHECK(symlink("/etc", p) == 0);
    snprintf(p, sizeof p, "%s/dangling.py", l->ws);
    CHECK(symlink("../out/gone/x.py", p) == 0);
    CHECK(symlink(l->ws, l->wslink) == 0);
    return 1;
}

static void remove_links(const Links *l)
{
    char p[512];
    static const char *const links[] = {"inner.py", "link.py", "ext", "etc", "dangling.py"};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", l->ws, links[i]);
        unlink(p);
    }
    unlink(l->wslink);
    snprintf(p, sizeof p, "%s/pkg/a.py", l->ws);
    unlink(p);
    snprintf(p, sizeof p, "%s/pkg", l->ws);
    rmdir(p);
    rmdir(l->ws);
    snprintf(p, sizeof p, "%s/secret.py", l->out_dir);
    unlink(p);
    rmdir(l->out_dir);
    CHECK(rmdir(l->base) == 0);
}

/* Every file is "indexed" and in context, so only the path check can fail them. */
static const FakeFile lfiles[] = {
    {"pkg/a.py", A_PY, 1},      {"inner.py", A_PY, 1},     {"link.py", A_PY, 1},
    {"ext/secret.py", A_PY, 1}, {"ext/other.py", A_PY, 1}, {"etc/passwd", A_PY, 1},
    {"dangling.py", A_PY, 1},
};
#define N_LFILES (sizeof lfiles / sizeof lfiles[0])

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

/* The cases with the root given as root (ws itself, or a link to it). */
static void check_cases(const char *root, const char *ws, const VfyContextItem *lctx, int pass)
{
    Fake lf = {.files = lfiles, .n = N_LFILES};
    VfySource src = {
        .root = root, .is_indexed = fake_is_indexed, .read_lines = fake_read_lines, .ud = &lf};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VfyResult r;
        CHECK_INT(vfy_check(&src, cases[i].cite, strlen(cases[i].cite), lctx, N_LFILES,
                            VFY_AUTHOR_MODEL, &r, NULL),
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

static void test_check_symlinks(void)
{
    Links l;
    if (!make_links(&l)) return;
    VfyContextItem lctx[N_LFILES];
    for (size_t i = 0; i < N_LFILES; i++)
        lctx[i] = (VfyContextItem){lfiles[i].path, 1, 10, "m", LIT(A_PY)};
    for (int pass = 0; pass < 2; pass++)
        check_cases(pass ? l.wslink : l.ws, l.ws, lctx, pass);
    remove_links(&l);
}

int main(void)
{
    RUN(test_check_symlinks);
    return test_summary();
}
