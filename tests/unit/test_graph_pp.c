/* Preprocessor conditions in the call graph (tests/fixtures/graph_pp):
 * each definition and reference carries the #if branches it is written
 * under, decided at query time by compile_commands.json's -D/-U and the
 * workspace's own #defines, so that a configuration or a #define changing
 * changes the answers; a definition per branch is a variant; what the
 * build compiles comes first. */
#include "idx.h"
#include "fixture_util.h"
#include "index/pp/pp_int.h"
#include "rtv.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_root[256];
static char tmp_index[256];

static IdxStore *index_fixture(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-graph-pp-XXXXXX");
    return fixture_copy_store("graph_pp", tmp_root, tmp_index);
}

static char built_char(IdxBuilt b)
{
    return b == IDX_BUILT_YES ? '+' : b == IDX_BUILT_NO ? '-' : '?';
}

/* "start-end +|-|? condition" per variant of the first definition of
 * symbol in path, one per line. */
static char *variants_of(IdxStore *st, const char *path, const char *symbol)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0;
    CHECK_INT(rtv_defs_named(st, symbol, path, 0, 1, &defs, &n, NULL, NULL), CR_OK);
    RtvVariant *v = NULL;
    size_t nv = 0;
    if (n) CHECK_INT(rtv_def_variants(st, &defs[0], &v, &nv, NULL), CR_OK);
    for (size_t i = 0; i < nv; i++)
        sb_addf(&sb, "%u-%u %c %s\n", v[i].start_line, v[i].end_line, built_char(v[i].built),
                v[i].cond ? v[i].cond : "");
    rtv_variants_free(v, nv);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

/* "symbol +|-|? condition" per caller (outgoing 0) or callee of symbol. */
static char *calls_of(IdxStore *st, const char *path, const char *symbol, int outgoing)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0;
    CHECK_INT(rtv_defs_named(st, symbol, path, 0, 1, &defs, &n, NULL, NULL), CR_OK);
    RtvRef *refs = NULL;
    size_t nr = 0;
    if (n)
        CHECK_INT(
            rtv_refs(st, &defs[0], outgoing, RTV_REF_BIT(IDX_EDGE_CALL), 0, &refs, &nr, NULL, NULL),
            CR_OK);
    for (size_t i = 0; i < nr; i++) {
        const RtvDef *o = &refs[i].other;
        sb_adds(&sb, o->head.symbol);
        if (!strcmp(o->head.symbol, "mix")) sb_addf(&sb, ":%u", o->start_line);
        sb_addf(&sb, " %c %s\n", built_char(refs[i].built), refs[i].cond ? refs[i].cond : "");
    }
    rtv_refs_free(refs, nr);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

/* "start-end" of every definition of symbol, in rtv_defs_named's order. */
static char *defs_of(IdxStore *st, const char *symbol)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0;
    CHECK_INT(rtv_defs_named(st, symbol, NULL, 0, 0, &defs, &n, NULL, NULL), CR_OK);
    for (size_t i = 0; i < n; i++)
        sb_addf(&sb, "%u-%u\n", defs[i].start_line, defs[i].end_line);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

#define CHECK_TEXT(got_expr, want)                                                                 \
    do {                                                                                           \
        char *got_ = (got_expr);                                                                   \
        if (strcmp(got_, want) != 0) fprintf(stderr, "got:\n%swant:\n%s", got_, want);             \
        CHECK(!strcmp(got_, want));                                                                \
        free(got_);                                                                                \
    } while (0)

/* compile_commands.json compiling main.c with flags, and a file outside */
static void write_config(const char *flags)
{
    char path[512];
    snprintf(path, sizeof path, "%s/compile_commands.json", tmp_root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "[{\"directory\": \"%s\", \"file\": \"main.c\", \"command\": \"cc -c %s main.c\"},\n"
            " {\"directory\": \"/\", \"file\": \"/elsewhere.c\", \"arguments\": [\"cc\", \"-D\", "
            "\"API\"]}]\n",
            tmp_root, flags);
    fclose(f);
}

static void test_conditions(void)
{
    IdxStore *st = index_fixture();
    if (!st) return;
    CHECK(!idx_pp_configured(st));
    /* a definition per #if branch is a variant of one definition, each
     * with its whole condition (the include guard is none); a macro no
     * file defines is not defined */
    CHECK_TEXT(variants_of(st, "clock.h", "clock_now"),
               "7-7 - defined(_WIN32)\n"
               "9-9 - !defined(_WIN32) && defined(__APPLE__)\n"
               "11-11 + !defined(_WIN32) && !defined(__APPLE__)\n");
    /* `#ifdef __cplusplus` / `extern "C" {` / `#endif`: the grammar's
     * node spans the header, the branch is the one line */
    CHECK_TEXT(variants_of(st, "cxx.h", "f2"), "");
    CHECK_TEXT(variants_of(st, "cxx.h", "f1"), "8-8 - defined(FOO)\n");
    /* a macro's value from the workspace's #define */
    CHECK_TEXT(variants_of(st, "main.c", "deep"), "9-9 + (LEVEL > 2)\n11-11 - !(LEVEL > 2)\n");
    /* a macro the workspace defines only under conditions that do not
     * hold is 0 (`#if defined(_WIN32)` / `#define OS_WINDOWS 1`); a
     * default under `#ifndef` itself holds (HAS_SEH 0); without a build
     * configuration the row's predefined macros are this machine's, so
     * the header's Linux branch is built (as clangd reads a file it has
     * no flags for) */
    CHECK_TEXT(variants_of(st, "plat.h", "p_win"), "19-19 - OS_WINDOWS\n");
    CHECK_TEXT(variants_of(st, "plat.h", "p_seh"), "22-22 - HAS_SEH\n");
    CHECK_TEXT(variants_of(st, "plat.h", "p_linux"), "25-25 + OS_LINUX\n");
    /* callers marked: FASTPATH is defined only under USE_FAST, which
     * nothing defines; #if 0; API's default (`#if !defined(API)` around
     * its #define) is defined */
    CHECK_TEXT(calls_of(st, "main.c", "deep", 0),
               "fast - defined(FASTPATH)\ndead - 0\napi + defined(API)\nmain + \n");
    /* each variant's calls carry its condition */
    CHECK_TEXT(calls_of(st, "clock.h", "clock_now", 1),
               "win_now - defined(_WIN32)\n"
               "mac_now - !defined(_WIN32) && defined(__APPLE__)\n"
               "posix_now + !defined(_WIN32) && !defined(__APPLE__)\n");
    /* a call under a branch of the body carries that branch; a name also
     * called outside it does not */
    CHECK_TEXT(calls_of(st, "main.c", "body", 1),
               "win_now - defined(_WIN32)\nmac_now + \nposix_now + \n");
    /* ... in any window of a long definition */
    CHECK_TEXT(calls_of(st, "main.c", "longer", 1), "posix_now + \n");
    CHECK_TEXT(calls_of(st, "main.c", "win_now", 0),
               "clock_now - defined(_WIN32)\nbody - defined(_WIN32)\n");
    /* interleaved variants are two definitions: the built one first */
    CHECK_TEXT(defs_of(st, "rot"), "31-31\n28-28\n");
    /* a callee defined under a branch not built is marked; of a function
     * defined once per branch, the variant built is the callee */
    CHECK_TEXT(calls_of(st, "main.c", "main", 1),
               "deep + \nfast - defined(FASTPATH)\ndead - 0\napi + defined(API)\nmix:32 + \n");

    /* a build configuration: its -D decides, what it builds comes first */
    write_config("-DUSE_FAST");
    CHECK(idx_pp_configured(st));
    CHECK_TEXT(calls_of(st, "main.c", "deep", 0),
               "fast + defined(FASTPATH)\napi + defined(API)\nmain + \ndead - 0\n");
    CHECK_TEXT(defs_of(st, "rot"), "28-28\n31-31\n");
    CHECK_TEXT(calls_of(st, "main.c", "main", 1),
               "deep + \nfast + defined(FASTPATH)\napi + defined(API)\nmix:29 + \ndead - 0\n");
    /* the row's predefined macros: Linux's, not Windows' */
    CHECK_TEXT(variants_of(st, "plat.h", "p_linux"), "25-25 + OS_LINUX\n");
    CHECK_TEXT(variants_of(st, "plat.h", "p_win"), "19-19 - OS_WINDOWS\n");
    /* -U undefines; the row's predefined macros are the build's */
    write_config("-UAPI -D__APPLE__");
    CHECK_TEXT(calls_of(st, "main.c", "deep", 0),
               "main + \nfast - defined(FASTPATH)\ndead - 0\napi - defined(API)\n");
    CHECK_TEXT(variants_of(st, "clock.h", "clock_now"),
               "7-7 - defined(_WIN32)\n"
               "9-9 + !defined(_WIN32) && defined(__APPLE__)\n"
               "11-11 - !defined(_WIN32) && !defined(__APPLE__)\n");
    test_sh("rm '%s/compile_commands.json'%s", tmp_root, "");
    CHECK(!idx_pp_configured(st));

    /* a #define edited: answers follow at the next update */
    test_sh("sed -i 's/define LEVEL 3/define LEVEL 1/' '%s/conf.h'%s", tmp_root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_TEXT(variants_of(st, "main.c", "deep"), "9-9 - (LEVEL > 2)\n11-11 + !(LEVEL > 2)\n");
    /* ... and a macro removed: what it enabled is not built */
    test_sh("sed -i 's/define API extern/undef NOTHING/' '%s/conf.h'%s", tmp_root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_TEXT(calls_of(st, "main.c", "deep", 0),
               "fast - defined(FASTPATH)\ndead - 0\napi - defined(API)\nmain + \n");
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
}

/* expr under A defined as 2, B not defined, U unknown: "v" or "?" */
static void check_eval(const char *expr, const char *want)
{
    size_t n;
    PpName *names = idx_pp_names(expr, &n);
    for (size_t i = 0; i < n; i++) {
        int a = !strcmp(names[i].name, "A"), b = !strcmp(names[i].name, "B");
        names[i].defined = a ? IDX_BUILT_YES : b ? IDX_BUILT_NO : IDX_BUILT_UNKNOWN;
        names[i].known = a || b;
        names[i].value = a ? 2 : 0;
    }
    PpFacts f = {names, n};
    int64_t v = 0;
    char got[32];
    if (idx_pp_eval(expr, &f, &v))
        snprintf(got, sizeof got, "%lld", (long long)v);
    else
        snprintf(got, sizeof got, "?");
    if (strcmp(got, want)) fprintf(stderr, "%s: got %s, want %s\n", expr, got, want);
    CHECK(!strcmp(got, want));
    idx_pp_names_free(names, n);
}

static void test_eval(void)
{
    check_eval("defined(A) && !defined B", "1");
    check_eval("A * 3 + 1 == 7", "1");
    check_eval("(A << 4) | 1", "33");
    check_eval("A > 1 ? 10 : 20", "10");
    check_eval("U && 0", "0"); /* the known side decides */
    check_eval("U || A", "1");
    check_eval("U + 1", "?"); /* an unknown value */
    check_eval("defined(U)", "?");
    check_eval("A / B", "?"); /* no division by zero */
    check_eval("'a' == 97", "1");
    check_eval("0x10 >= 16UL", "1");
    check_eval("F(A)", "?"); /* a function-like macro */
    check_eval("A +", "?");  /* not an expression */
}

int main(void)
{
    RUN(test_eval);
    RUN(test_conditions);
    return test_summary();
}
