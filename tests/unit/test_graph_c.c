/* The call graph's rules for C (tests/fixtures/graph_c), through rtv_refs
 * as every door asks it: a macro's body calls are its users' calls
 * (through macros of macros), recursion is a call, prototypes outside
 * definitions are not callers, type names and macros are not callees, a
 * call through a struct field is not linked to a function by its name but
 * to the functions designated initializers store in the field (a few, or
 * the one most tables store);
 * functions a macro defines and loops a macro makes are read as such; a
 * function several source files define is the one sharing the caller's
 * includes; an include in angle brackets is looked for in the include
 * folders, not beside the includer. */
#include "idx.h"
#include "index_util.h"
#include "rtv.h"
#include "fixture_util.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

static char tmp_root[256];
static char tmp_index[256];

static IdxStore *index_fixture(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-graph-c-XXXXXX");
    return fixture_copy_store("graph_c", tmp_root, tmp_index);
}

/* "path:symbol[ via macro]" of every edge of the kinds to (outgoing 0) or
 * from the definition of symbol in path, sorted by rtv_refs, one per line. */
static char *refs_of(IdxStore *st, const char *path, const char *symbol, int outgoing,
                     unsigned kinds)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0, total = 0;
    CHECK_INT(rtv_defs_named(st, symbol, path, 0, 1, &defs, &n, &total, NULL), CR_OK);
    CHECK(n == 1 && !strcmp(defs[0].head.path, path));
    RtvRef *refs = NULL;
    size_t nr = 0;
    if (n) CHECK_INT(rtv_refs(st, &defs[0], outgoing, kinds, 0, &refs, &nr, NULL, NULL), CR_OK);
    for (size_t i = 0; i < nr; i++) {
        sb_addf(&sb, "%s:%s", refs[i].other.head.path, refs[i].other.head.symbol);
        if (refs[i].via) sb_addf(&sb, " via %s", refs[i].via);
        sb_addc(&sb, '\n');
    }
    rtv_refs_free(refs, nr);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

static void check_refs(IdxStore *st, const char *path, const char *symbol, int outgoing,
                       unsigned kinds, const char *want)
{
    char *got = refs_of(st, path, symbol, outgoing, kinds);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "%s of %s:%s:\n got:\n%s want:\n%s", outgoing ? "callees" : "callers", path,
                symbol, got, want);
    CHECK(!strcmp(got, want));
    free(got);
}

static void check_calls(IdxStore *st, const char *path, const char *symbol, int outgoing,
                        const char *want)
{
    check_refs(st, path, symbol, outgoing, RTV_REF_BIT(IDX_EDGE_CALL), want);
}

static int has_edge(IdxStore *st, const char *sp, const char *ss, const char *dp, const char *ds,
                    IdxEdgeKind kind)
{
    int64_t a = chunk_id(st, sp, ss), b = chunk_id(st, dp, ds);
    IdxEdge *v = NULL;
    size_t n = 0;
    int found = 0;
    idx_edges(st, a, 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++)
        if (v[i].dst == b && v[i].kind == kind) found = 1;
    free(v);
    return found;
}

static void test_rules(void)
{
    IdxStore *st = index_fixture();
    if (!st) return;
    /* a macro's calls (through a macro of macros) in its place; the type
     * named is no callee */
    check_calls(st, "api.c", "use", 1, "api.c:api_count via api_four\napi.c:api_total\n");
    /* ... and its users are the callers of what it calls; the prototypes
     * in api.h (`API int (api_count) (int n);`) are not */
    check_calls(st, "api.c", "api_count", 0,
                "api.c:guarded via api_guard\napi.c:use via api_twice\n"
                "aux.c:aux_main via api_twice\n");
    /* a macro body the grammar cut at a comment: calls on the lines after */
    check_calls(st, "api.c", "guarded", 1,
                "api.c:api_count via api_guard\napi.c:api_check via api_guard\n");
    check_calls(st, "api.c", "api_total", 0, "api.c:use\n");
    /* a macro whose body calls nothing is no callee either */
    check_calls(st, "api.c", "api_total", 1, "");
    /* recursion */
    check_calls(st, "api.c", "fact", 1, "api.c:fact\n");
    check_calls(st, "api.c", "fact", 0, "api.c:fact\n");
    /* g->panic() is not aux.c's static panic */
    check_calls(st, "api.c", "run", 1, "");
    check_calls(st, "aux.c", "panic", 0, "aux.c:aux_main\n");
    /* a macro's own callees are what its body calls */
    check_calls(st, "api.h", "api_twice", 1, "api.c:api_count\n");
    check_calls(st, "api.h", "api_four", 1, "api.c:api_count via api_twice\n");
    /* a function passed as a value: a reference, not a call */
    check_calls(st, "api.c", "wire", 1, "api.c:apply\n");
    /* ... and a local variable named like a function (fact) is the variable */
    check_refs(st, "api.c", "wire", 1, RTV_REF_BIT(IDX_EDGE_REFERENCE), "api.c:api_count\n");
    check_refs(st, "api.c", "api_count", 0, RTV_REF_BIT(IDX_EDGE_REFERENCE), "api.c:wire\n");
    /* the kinds say what they are */
    CHECK(has_edge(st, "api.c", "use", "api.h", "Node", IDX_EDGE_TYPE));
    CHECK(!has_edge(st, "api.c", "use", "api.h", "Node", IDX_EDGE_CALL));
    CHECK(has_edge(st, "api.c", "use", "api.h", "api_four", IDX_EDGE_CALL));
    CHECK(has_edge(st, "api.h", "api_four", "api.h", "api_twice", IDX_EDGE_EXPAND));
    CHECK(has_edge(st, "api.h", "api_four", "api.h", "api_four", IDX_EDGE_EXPAND));
    /* a call through a field reaches the functions tables store in it
     * (a table a macro names, an address taken) */
    check_calls(st, "ops.c", "schedule", 1, "ops.c:pick_fair\nops.c:pick_rt\nops.c:tick_rt\n");
    check_calls(st, "ops.c", "pick_fair", 0, "ops.c:schedule\n");
    check_refs(st, "ops.c", "pick_fair", 0, RTV_REF_BIT(IDX_EDGE_REFERENCE), "ops.c:fair\n");
    /* ... also where a loop a macro makes, with no braces, comes first */
    check_calls(st, "ops.c", "tick_all", 1, "ops.c:tick_rt\n");
    /* functions a macro defines are functions, named by their first argument */
    check_calls(st, "ops.c", "sched_run", 1, "ops.c:schedule\n");
    check_calls(st, "ops.c", "sched_entry", 1, "ops.c:tick_all\n");
    /* ... none when more functions than a call can tell apart are stored */
    check_calls(st, "ops.c", "probe_all", 1, "");
    /* ... but the one function most of them store, if one is */
    check_calls(st, "ops.c", "remove_all", 1, "ops.c:generic_remove\n");
    /* a table in a conditional branch stores as well */
    check_calls(st, "ops.c", "suspend_all", 1, "ops.c:suspend_one\n");
    /* a function two source files define: the one whose file shares the
     * caller's include (include/mem.h) */
    check_calls(st, "link/app/app.c", "run_app", 1, "link/mem/mem.c:release\n");
    check_calls(st, "link/fe/fe.c", "release", 0, "");
    /* an include in angle brackets is looked for where -I folders are, not
     * beside the includer (link/ang/wrap.h): include/wrap.h */
    check_calls(st, "link/ang/ang.c", "use_wrap", 1, "include/wrap.h:wrap_pick\n");
    /* the table edited: the calls through its fields follow */
    test_sh("sed -i 's/.pick = pick_rt,/.pick = pick_fair,/' '%s/ops.c'%s", tmp_root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    check_calls(st, "ops.c", "schedule", 1, "ops.c:pick_fair\nops.c:tick_rt\n");
    check_calls(st, "ops.c", "pick_rt", 0, "");
    /* the macro's body edited: its users' calls follow at the next update */
    test_sh("sed -i 's/define api_twice(n) api_count(api_count(n))/define api_twice(n) "
            "api_check(n, n)/' '%s/api.h'%s",
            tmp_root, "");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    check_calls(st, "api.c", "use", 1, "api.c:api_total\napi.c:api_check via api_four\n");
    check_calls(st, "aux.c", "aux_main", 1, "api.c:api_check via api_twice\naux.c:panic\n");
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
}

int main(void)
{
    RUN(test_rules);
    return test_summary();
}
