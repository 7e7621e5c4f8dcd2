/* base/path.c: normalising, containment, file URIs both ways, realpath. */
#include "base.h"
#include "test.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_normalize(void)
{
    static const struct {
        const char *path;
        int ok;
        const char *want;
    } cases[] = {
        {"a/b.py", 1, "a/b.py"},
        {"./a//b/./c.py", 1, "a/b/c.py"},
        {"a/b/../c.py", 1, "a/c.py"},
        {"a/b/", 1, "a/b"},
        {"a/..", 1, ""},
        {".", 1, ""},
        {"", 1, ""},
        {"..", 0, ""},
        {"../a", 0, ""},
        {"a/../../b", 0, ""},
        {"a/.../b", 1, "a/.../b"},
        {"a/..b/c", 1, "a/..b/c"},
        {"/", 1, "/"},
        {"//", 1, "/"},
        {"/a/b/../../..", 1, "/"},
        {"/../etc/passwd", 1, "/etc/passwd"},
        {"/ws/sub/../../etc/passwd", 1, "/etc/passwd"},
        {"/ws//sub/./x.py/", 1, "/ws/sub/x.py"},
    };
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int ok = path_normalize(cases[i].path, &sb);
        if (ok != cases[i].ok || strcmp(sb.buf, cases[i].want) != 0)
            fprintf(stderr, "  normalize case %zu: %s\n", i, cases[i].path);
        CHECK_INT(ok, cases[i].ok);
        CHECK_STR(sb.buf, cases[i].want);
        CHECK_INT(sb.len, strlen(cases[i].want));
    }
    sb_release(&sb);
}

static void test_normal_rel(void)
{
    static const struct {
        const char *rel;
        int ok;
    } cases[] = {
        {"a.py", 1},   {"pkg/a.py", 1}, {"..a/b.", 1},   {"", 0},   {"/a.py", 0},
        {"a//b", 0},   {"./a", 0},      {"a/./b", 0},    {"a/", 0}, {"..", 0},
        {"a/../b", 0}, {"a/..", 0},     {".../x.py", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (path_is_normal_rel(cases[i].rel) != cases[i].ok)
            fprintf(stderr, "  normal_rel case %zu: %s\n", i, cases[i].rel);
        CHECK_INT(path_is_normal_rel(cases[i].rel), cases[i].ok);
    }
    CHECK(!path_is_normal_rel(NULL));
}

static void test_under(void)
{
    static const struct {
        const char *root, *path, *want; /* want NULL: not under */
    } cases[] = {
        {"/ws", "/ws/a.py", "a.py"}, {"/ws", "/ws", ""},      {"/ws", "/wsx/a.py", NULL},
        {"/ws", "/w", NULL},         {"/ws", "/", NULL},      {"/ws/sub", "/ws/a.py", NULL},
        {"/", "/a/b.py", "a/b.py"},  {"/", "/", ""},          {"", "/a.py", "a.py"},
        {"/ws", "ws/a.py", NULL},    {"ws", "ws/a.py", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = path_under(cases[i].root, cases[i].path);
        if (cases[i].want)
            CHECK_STR(got, cases[i].want);
        else
            CHECK(got == NULL);
    }
}

static void test_percent(void)
{
    static const struct {
        const char *in, *want; /* want NULL: refused */
    } cases[] = {
        {"a%20b", "a b"}, {"%2e%2E%2f", "../"}, {"%C3%a9", "\xC3\xA9"},
        {"100%", NULL},   {"%2", NULL},         {"%zz", NULL},
        {"%00", NULL},    {"a%0", NULL},        {"plain", "plain"},
        {"", ""},
    };
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_reset(&sb);
        int ok = path_percent_decode(cases[i].in, strlen(cases[i].in), &sb);
        CHECK_INT(ok, cases[i].want != NULL);
        if (cases[i].want) CHECK_STR(sb.buf, cases[i].want);
    }
    /* the length bounds the input: an escape cut by it is refused */
    sb_reset(&sb);
    CHECK_INT(path_percent_decode("a%41", 3, &sb), 0);
    sb_reset(&sb);
    CHECK_INT(path_percent_decode("a%41", 4, &sb), 1);
    CHECK_STR(sb.buf, "aA");
    sb_reset(&sb);
    path_percent_encode("a b/%\xC3\xA9~-_.", &sb);
    CHECK_STR(sb.buf, "a%20b/%25%C3%A9~-_.");
    sb_release(&sb);
}

static void test_from_uri(void)
{
    static const struct {
        const char *uri, *want; /* want NULL: refused with rc */
        CrErr rc;
    } cases[] = {
        {"file:///work/proj/a.py", "/work/proj/a.py", CR_OK},
        {"file:///work/my%20proj/a%20b/c%231.py", "/work/my proj/a b/c#1.py", CR_OK},
        {"file:///w/%C3%A9.py", "/w/\xC3\xA9.py", CR_OK},
        {"file:///w/%c3%a9.py", "/w/\xC3\xA9.py", CR_OK},
        {"FILE:///w/a.py", "/w/a.py", CR_OK},
        {"file://localhost/w/a.py", "/w/a.py", CR_OK},
        {"file://LOCALHOST/w/a.py", "/w/a.py", CR_OK},
        {"file:///w/a.py?query#frag", "/w/a.py", CR_OK},
        {"file:///w/a.py#L3", "/w/a.py", CR_OK},
        {"file:///", "/", CR_OK},
        /* decoded, not normalised: containment is the caller's next step */
        {"file:///ws/sub/%2e%2e/%2E%2E/etc/passwd", "/ws/sub/../../etc/passwd", CR_OK},
        {"file:///ws/sub%2F..%2F..%2Fetc/passwd", "/ws/sub/../../etc/passwd", CR_OK},
        {"file://host/w/a.py", NULL, CR_EOUTSIDE},
        {"file://localhost", NULL, CR_EOUTSIDE},
        {"file://", NULL, CR_EINVAL},
        {"file:w/a.py", NULL, CR_EINVAL},
        {"http:///w/a.py", NULL, CR_EINVAL},
        {"untitled:Untitled-1", NULL, CR_EINVAL},
        {"file:///w/a%00.py", NULL, CR_EINVAL},
        {"file:///w/a%2", NULL, CR_EINVAL},
        {"file:///w/a%zz", NULL, CR_EINVAL},
        {"", NULL, CR_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = (char *)"unset";
        CrErr rc = path_from_uri(cases[i].uri, &p);
        if (rc != cases[i].rc) fprintf(stderr, "  from_uri case %zu: %s\n", i, cases[i].uri);
        CHECK_INT(rc, cases[i].rc);
        if (cases[i].want)
            CHECK_STR(p, cases[i].want);
        else
            CHECK(p == NULL);
        free(p);
    }
    char *p = NULL;
    CHECK_INT(path_from_uri(NULL, &p), CR_EINVAL);
    CHECK(p == NULL);
}

static void test_to_uri(void)
{
    static const struct {
        const char *root, *rel, *want;
    } cases[] = {
        {"/work/proj", "pkg/mod.py", "file:///work/proj/pkg/mod.py"},
        {"/work/proj/", "a.py", "file:///work/proj/a.py"},
        {"/work/my proj", "a b/c#1.py", "file:///work/my%20proj/a%20b/c%231.py"},
        {"/w", "p%q?r:s@t~u_v-w.py", "file:///w/p%25q%3Fr%3As%40t~u_v-w.py"},
        {"/w", "\xC3\xA9.py", "file:///w/%C3%A9.py"},
        {"/w", NULL, "file:///w"},
        {"/", "a.py", "file:///a.py"},
        {"/", "", "file:///"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *u = path_to_uri(cases[i].root, cases[i].rel);
        CHECK_STR(u, cases[i].want);
        free(u);
    }
    static const char *const rels[] = {"a.py", "p q/r#s%t?.py", "\xC3\xA9t\xC3\xA9/x.py",
                                       "~u_v-w.py"};
    for (size_t i = 0; i < sizeof rels / sizeof rels[0]; i++) {
        char *uri = path_to_uri("/root dir", rels[i]), *back = NULL;
        char want[256];
        snprintf(want, sizeof want, "/root dir/%s", rels[i]);
        CHECK_INT(path_from_uri(uri, &back), CR_OK);
        CHECK_STR(back, want);
        free(uri);
        free(back);
    }
}

static void test_relative(void)
{
    static const struct {
        const char *root, *path;
        CrErr rc;
        const char *want;
    } cases[] = {
        {"/ws", "a.py", CR_OK, "a.py"},
        {"/ws", "./pkg//m.py", CR_OK, "pkg/m.py"},
        {"/ws", "pkg/../a.py", CR_OK, "a.py"},
        {"/ws", "../a.py", CR_EOUTSIDE, NULL},
        {"/ws", "pkg/../../a.py", CR_EOUTSIDE, NULL},
        {"/ws", "/ws/pkg/m.py", CR_OK, "pkg/m.py"},
        {"/ws/", "/ws/./pkg/../m.py", CR_OK, "m.py"},
        {"/ws", "/ws/../other/m.py", CR_EOUTSIDE, NULL},
        {"/ws", "/wsx/m.py", CR_EOUTSIDE, NULL},
        {"/ws", "/etc/passwd", CR_EOUTSIDE, NULL},
        {"/ws", "/ws", CR_EINVAL, NULL},
        {"/ws", "/ws/pkg/..", CR_EINVAL, NULL},
        {"/", "/a.py", CR_OK, "a.py"},
        {"/ws", "file:///ws/my%20dir/m%2epy", CR_OK, "my dir/m.py"},
        {"/ws", "FILE://localhost/ws/a.py", CR_OK, "a.py"},
        {"/ws", "file://evil/ws/a.py", CR_EOUTSIDE, NULL},
        {"/ws", "file:///ws/a%00.py", CR_EINVAL, NULL},
        {"/ws", "file:///ws/a%zz.py", CR_EINVAL, NULL},
        /* the encoded climbs of a didSave: decoded first, then judged */
        {"/ws", "file:///ws/sub/%2e%2e/%2e%2e/etc/passwd", CR_EOUTSIDE, NULL},
        {"/ws", "file:///ws/sub/%2E%2E/%2E%2E/etc/x.py", CR_EOUTSIDE, NULL},
        {"/ws", "file:///ws/sub%2F..%2F..%2Fetc/x.py", CR_EOUTSIDE, NULL},
        {"/ws", "file:///ws/sub%2f%2e%2e%2f%2e%2e%2fetc/x.py", CR_EOUTSIDE, NULL},
        {"/ws", "file:///ws/sub/%2e%2e/a.py", CR_OK, "a.py"},
        /* not decoded outside a URI: a file may be called "%2e%2e" */
        {"/ws", "sub/%2e%2e/a.py", CR_OK, "sub/%2e%2e/a.py"},
        {"/ws", "", CR_EINVAL, NULL},
        {"/ws", ".", CR_EINVAL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = (char *)"unset";
        CrErr rc = path_relative(cases[i].root, cases[i].path, &got);
        if (rc != cases[i].rc) fprintf(stderr, "  relative case %zu: %s\n", i, cases[i].path);
        CHECK_INT(rc, cases[i].rc);
        if (cases[i].want) {
            CHECK_STR(got, cases[i].want);
            CHECK(path_is_normal_rel(got));
        } else {
            CHECK(got == NULL);
        }
        free(got);
    }
}

/* A real tree: root/{a.py, in -> a.py, out -> ../secret.py, d -> ../outdir,
 * loop -> loop}, with secret.py and outdir/ beside root. */
static void test_real_under(void)
{
    char tmpl[] = "/tmp/coderag-path.XXXXXX", real[PATH_MAX], p[PATH_MAX + 64];
    CHECK(mkdtemp(tmpl) != NULL);
    CHECK(realpath(tmpl, real) != NULL);
#define AT(rel) (snprintf(p, sizeof p, "%s/%s", real, rel), p)
    CHECK_INT(mkdir(AT("root"), 0700), 0);
    CHECK_INT(mkdir(AT("outdir"), 0700), 0);
    FILE *f = fopen(AT("root/a.py"), "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    f = fopen(AT("secret.py"), "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_INT(symlink("a.py", AT("root/in")), 0);
    CHECK_INT(symlink("../secret.py", AT("root/out")), 0);
    CHECK_INT(symlink("../outdir", AT("root/d")), 0);
    CHECK_INT(symlink("loop", AT("root/loop")), 0);
    char root[PATH_MAX + 8];
    snprintf(root, sizeof root, "%s/root", real);

    char *r = NULL;
    CHECK_INT(path_real_under(root, AT("root/a.py"), &r), CR_OK);
    CHECK_STR(r, AT("root/a.py"));
    free(r);
    CHECK_INT(path_real_under(root, AT("root/in"), &r), CR_OK);
    CHECK_STR(r, AT("root/a.py"));
    free(r);
    CHECK_INT(path_real_under(root, AT("root"), NULL), CR_OK);
    CHECK_INT(path_real_under(root, AT("root/out"), &r), CR_EOUTSIDE);
    CHECK(r == NULL);
    CHECK_INT(path_real_under(root, AT("root/d"), NULL), CR_EOUTSIDE);
    CHECK_INT(path_real_under(root, AT("root/../secret.py"), NULL), CR_EOUTSIDE);
    CHECK_INT(path_real_under(root, AT("root/missing.py"), NULL), CR_ENOENT);
    CHECK_INT(path_real_under(root, AT("root/a.py/x"), NULL), CR_ENOENT);
    CHECK_INT(path_real_under(root, AT("root/loop"), NULL), CR_EIO);
    CHECK_INT(path_real_under("/", AT("root/out"), NULL), CR_OK);

    static const char *const junk[] = {"root/in",   "root/out",  "root/d",
                                       "root/loop", "root/a.py", "secret.py"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        unlink(AT(junk[i]));
    rmdir(AT("root"));
    rmdir(AT("outdir"));
    rmdir(real);
#undef AT
}

/* Reads the workspace file rel the one way readers do; "" when refused. */
static CrErr read_under(const char *root, const char *rel, StrBuf *sb)
{
    sb_reset(sb);
    return path_read_under(root, rel, sb, 0, NULL);
}

/* path_open_under and path_open_beneath on a real tree: root/{a.py,
 * in -> a.py, d/b.py, out -> ../secret.py, fifo}, with secret.py and
 * outdir/b.py beside root. The race of issue 25 is played at a chosen
 * moment: a path is resolved, then a directory (or the file) on it is
 * swapped for a symlink leading out of the root, then it is opened. */
static void test_open_under(void)
{
    char tmpl[] = "/tmp/coderag-open.XXXXXX", real[PATH_MAX], p[PATH_MAX + 64];
    CHECK(mkdtemp(tmpl) != NULL);
    CHECK(realpath(tmpl, real) != NULL);
    char root[PATH_MAX + 8];
    snprintf(root, sizeof root, "%s/root", real);
    test_sh("mkdir -p %s/d %s/../outdir", root, root);
    test_sh("printf inside > %s/a.py; printf inside-b > %s/d/b.py", root, root);
    test_sh("printf SECRET > %s/../secret.py; printf SECRET-B > %s/../outdir/b.py", root, root);
    test_sh("ln -s a.py %s/in; ln -s ../secret.py %s/out", root, root);
    test_sh("mkfifo %s/fifo; ln -s d %s/dl", root, root);
    StrBuf sb;
    sb_init(&sb);
    CHECK_INT(read_under(root, "a.py", &sb), CR_OK);
    CHECK_STR(sb.buf, "inside");
    CHECK_INT(read_under(root, "in", &sb), CR_OK); /* a link inside: followed */
    CHECK_STR(sb.buf, "inside");
    CHECK_INT(read_under(root, "dl/b.py", &sb), CR_OK);
    CHECK_STR(sb.buf, "inside-b");
    CHECK_INT(read_under(root, "out", &sb), CR_EOUTSIDE);
    CHECK_INT(read_under(root, "../secret.py", &sb), CR_EOUTSIDE);
    CHECK_INT(read_under(root, "missing.py", &sb), CR_ENOENT);
    CHECK_INT(read_under(root, "fifo", &sb), CR_EIO); /* refused, never blocks */
    CHECK_INT(read_under(root, "d", &sb), CR_EIO);
    CHECK(strstr(sb.buf, "SECRET") == NULL);

    /* Resolved while d is a directory, opened after it became a link out. */
    char *r = NULL;
    snprintf(p, sizeof p, "%s/d/b.py", root);
    CHECK_INT(path_real_under(root, p, &r), CR_OK);
    const char *sub = r ? path_under(root, r) : NULL;
    CHECK(sub && !strcmp(sub, "d/b.py"));
    test_sh("mv %s/d %s/d.real", root, root);
    test_sh("ln -s ../outdir %s/d", root, NULL);
    sb_reset(&sb);
    CHECK_INT(sb_read_file(&sb, r, 0, NULL), CR_OK); /* check-then-use reads outside */
    CHECK_STR(sb.buf, "SECRET-B");
    int fd = -1;
    CHECK_INT(path_open_beneath(root, sub ? sub : "d/b.py", &fd), CR_ENOENT);
    CHECK_INT(fd, -1);
    CHECK_INT(read_under(root, "d/b.py", &sb), CR_EOUTSIDE); /* resolved again */
    free(r);

    /* The file itself swapped for a link out after it was resolved. */
    test_sh("rm %s/a.py; ln -s ../secret.py %s/a.py", root, root);
    CHECK_INT(path_open_beneath(root, "a.py", &fd), CR_ENOENT);
    CHECK_INT(read_under(root, "a.py", &sb), CR_EOUTSIDE);
    CHECK_INT(path_open_beneath(root, "../secret.py", &fd), CR_EOUTSIDE);
    CHECK_INT((int)sb.len, 0);
    sb_release(&sb);
    test_sh("rm -rf %s", real, NULL);
}

int main(void)
{
    RUN(test_normalize);
    RUN(test_normal_rel);
    RUN(test_under);
    RUN(test_percent);
    RUN(test_from_uri);
    RUN(test_to_uri);
    RUN(test_relative);
    RUN(test_real_under);
    RUN(test_open_under);
    return test_summary();
}
