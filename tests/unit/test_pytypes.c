/* Calls on receivers of a known type (tests/fixtures/pytypes): a
 * self-attribute typed in __init__ or by a class annotation, an annotated
 * parameter, a module-level instance, a proxy named in the row, super(),
 * a property read through self;
 * builtins and library types not matched by name; the definition a call
 * site names, as the graph resolved it; @overload stubs and their
 * implementation one function. Each case has another definition of the
 * same name, so that a match by the name alone cannot pass it. */
#include "idx.h"
#include "index_util.h"
#include "rtv.h"
#include "fixture_util.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char tmp_root[256];
static char tmp_index[256];
static IdxStore *st;

static IdxStore *index_fixture(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-pytypes-XXXXXX");
    return fixture_copy_store("pytypes", tmp_root, tmp_index);
}

/* The edges of a kind out of path:sym, as "path:symbol" lines. */
static char *edges_of(const char *path, const char *sym, IdxEdgeKind kind)
{
    IdxEdge *v = NULL;
    size_t n = 0;
    StrBuf sb;
    sb_init(&sb);
    idx_edges(st, chunk_id(st, path, sym), 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++) {
        IdxChunk c;
        if (v[i].kind != kind || idx_chunk_get(st, v[i].dst, &c, NULL)) continue;
        sb_addf(&sb, "%s:%s\n", c.path, c.symbol);
        idx_chunk_release(&c);
    }
    free(v);
    return sb_detach(&sb, NULL);
}

/* The call edges out of path:sym. */
static char *callees(const char *path, const char *sym)
{
    return edges_of(path, sym, IDX_EDGE_CALL);
}

static void check_callees(const char *path, const char *sym, const char *want)
{
    char *got = callees(path, sym);
    if (strcmp(got, want) != 0) fprintf(stderr, "%s:%s calls\n%s want\n%s", path, sym, got, want);
    CHECK(!strcmp(got, want));
    free(got);
}

static void test_self_attributes(void)
{
    check_callees("pkg/use.py", "Response.by_init", "pkg/ds.py:Headers.get\n");
    check_callees("pkg/use.py", "Response.by_annotation", "pkg/ds.py:Headers.get\n");
}

static void test_parameters_and_module_instances(void)
{
    check_callees("pkg/use.py", "by_param", "pkg/ds.py:Headers.get\n");
    check_callees("pkg/use.py", "by_module", "pkg/ds.py:Headers.get\n");
    /* an item of self.parts, parts: Iterable[Headers] */
    check_callees("pkg/use.py", "Chain.first", "pkg/ds.py:Headers.get\n");
    /* h = make(), make() -> Headers in this file */
    check_callees("pkg/use.py", "by_return", "pkg/use.py:make\npkg/ds.py:Headers.get\n");
}

/* Attributes of another file's class (pkg/reply.py: a class annotation,
 * `self.store = Headers()`, a property's `-> Headers`), results of calls
 * (`-> "Reply"`, `return self`, a function's `-> Reply`), attributes a
 * class inherits from its base in another file, properties read through a
 * typed receiver, classes held in variables. */
static void test_attributes_and_results_across_files(void)
{
    const char *get = "pkg/ds.py:Headers.get\n";
    check_callees("pkg/chains.py", "class_annotation", get);
    check_callees("pkg/chains.py", "init_attribute", get);
    check_callees("pkg/chains.py", "annotated_result",
                  "pkg/ds.py:Headers.get\npkg/reply.py:Reply.clone\n");
    check_callees("pkg/chains.py", "returns_self",
                  "pkg/ds.py:Headers.get\npkg/reply.py:Reply.me\n");
    check_callees("pkg/chains.py", "returns_self_later",
                  "pkg/ds.py:Headers.get\npkg/reply.py:Reply.me_or_none\n");
    /* rv.first: a property's getter runs */
    check_callees("pkg/chains.py", "property_result",
                  "pkg/ds.py:Headers.get\npkg/reply.py:Reply.first\n");
    /* a class held in a variable (`Type[Reply]`, `reply_class = Reply` in a
     * class body) called; `rv = rv.me()` keeps rv's type */
    check_callees("pkg/chains.py", "class_in_variable",
                  "pkg/reply.py:Reply.me\npkg/ds.py:Headers.get\n");
    check_callees("pkg/chains.py", "Maker.make", get);
    /* h: Union[Headers, ...] narrowed by its one assignment, h = Headers(h) */
    check_callees("pkg/chains.py", "narrowed", "pkg/ds.py:Headers\npkg/ds.py:Headers.get\n");
    /* self.width = 3: the property's setter runs */
    check_callees("pkg/chains.py", "Box.__init__", "pkg/chains.py:Box.width\n");
    /* a method read as a value and a data attribute: no call */
    check_callees("pkg/chains.py", "reads_no_call", "");
    check_callees("pkg/chains.py", "function_result",
                  "pkg/ds.py:Headers.get\npkg/reply.py:make_reply\n");
    /* `return self.__class__(...)`, `return type(self)(...)`: the class's own */
    check_callees("pkg/chains.py", "class_of_self",
                  "pkg/reply.py:Reply.dup\npkg/ds.py:Headers.get\npkg/ds.py:Headers.get\n"
                  "pkg/reply.py:Reply.twin\n");
    check_callees("pkg/chains.py", "reparsed", "pkg/reply.py:make_reply\npkg/ds.py:Headers.get\n");
    /* the last assignment, a statement of the body, types the code below it;
     * not the code above it, nor below a later assignment in a branch */
    check_callees("pkg/chains.py", "reassigned",
                  "pkg/reply.py:make_reply\npkg/ds.py:Headers.get\n");
    check_callees("pkg/chains.py", "reassigned_in_branch",
                  "pkg/reply.py:make_reply\npkg/chains.py:Maker\n");
    /* a variable assigned a chain on self's attribute */
    check_callees("pkg/chains.py", "Envelope.opened",
                  "pkg/reply.py:Reply.dup\npkg/ds.py:Headers.get\n");
    /* a value of a mapping annotated Dict[str, Reply] */
    check_callees("pkg/chains.py", "Registry.lookup", get);
    check_callees("pkg/chains.py", "by_key", get);
    /* below `if not isinstance(rv, Reply): return`, rv is a Reply (not above) */
    check_callees("pkg/chains.py", "guarded", get);
    /* inside `if isinstance(rv, Reply):` rv is a Reply; not once assigned there */
    check_callees("pkg/chains.py", "narrowed_block", "pkg/ds.py:Headers.get\npkg/ds.py:Cache\n");
    check_callees("pkg/chains.py", "Derived.inherited", get);
    check_callees("pkg/chains.py", "Derived.own_result",
                  "pkg/ds.py:Headers.get\npkg/reply.py:Reply.clone\n");
}

/* Items of what a call returns (`-> Iterator[X]`, `-> List[X]`, a
 * generator's first argument) in a loop or a comprehension, through self
 * too; `cast(X, v)`; an attribute assigned a call on a parameter of the
 * method assigning it; a nested function's
 * annotated parameter; a mapping's values; recursion through an attribute. */
static void test_items_casts_and_attributes(void)
{
    const char *p = "pkg/loops.py", *get = "pkg/ds.py:Headers.get\n";
    check_callees(p, "Table.each_row", "pkg/loops.py:Table.rows\npkg/ds.py:Headers.get\n");
    check_callees(p, "Table.by_param_attr", get);
    check_callees(p, "by_loop", "pkg/loops.py:all_headers\npkg/ds.py:Headers.get\n");
    check_callees(p, "by_generator", "pkg/loops.py:made\npkg/ds.py:Headers.get\n");
    check_callees(p, "by_comprehension", "pkg/ds.py:Headers.get\npkg/loops.py:all_headers\n");
    check_callees(p, "by_cast", get);
    check_callees(p, "by_inner", get);
    /* a mapping's values in `for k, v in m.items()`; another instance of the
     * method's own class calls the method itself */
    check_callees(p, "Registry.lookup", "pkg/ds.py:Headers.get\npkg/loops.py:Registry.lookup\n");
}

static void test_super(void)
{
    /* Headers.load's own name is not the target: the base's is */
    check_callees("pkg/ds.py", "Headers.load", "pkg/ds.py:Base.load\n");
}

static void test_property_reads(void)
{
    /* self.size: a property the class inherits from another file's class */
    check_callees("pkg/use.py", "Measured.total", "pkg/ds.py:Sized.size\n");
    /* self.snapshot not called: the method passed as a value, no call */
    check_callees("pkg/ds.py", "Sized.callback", "");
}

static void test_proxy(void)
{
    /* current_app stands for flask.Flask (the row's receiver_proxies) */
    check_callees("flask/helpers.py", "stream", "flask/app.py:Flask.ensure_sync\n");
}

static void test_decorator_is_no_call(void)
{
    /* @cached: Memo.value is passed to cached, it calls nothing */
    check_callees("pkg/ds.py", "Memo.value", "");
    char *ref = edges_of("pkg/ds.py", "Memo.value", IDX_EDGE_REFERENCE);
    CHECK_STR(ref, "pkg/ds.py:cached\n");
    free(ref);
}

static void test_locals_and_decorators(void)
{
    /* snapshot = items.pop; snapshot(): the function's variable, not
     * Headers.snapshot by its name */
    check_callees("pkg/local.py", "gather", "");
    /* @register("x") runs in the module's code, not in registered */
    check_callees("pkg/local.py", "registered", "");
    check_callees("pkg/local.py", "", "pkg/local.py:register\n");
    /* an import under `if sys.platform.startswith("win")` binds nothing on
     * Linux: helper() is the else branch's */
    check_callees("pkg/local.py", "use_helper", "pkg/local.py:helper\n");
    /* t.cast("Headers", v).snapshot(): a Headers' */
    check_callees("pkg/local.py", "casted", "pkg/ds.py:Headers.snapshot\n");
    /* for h in self, in a class deriving from t.List[Headers] */
    check_callees("pkg/local.py", "Many.snap_all", "pkg/ds.py:Headers.snapshot\n");
    /* for i, h in enumerate(hs): an item of hs */
    check_callees("pkg/local.py", "snap_each", "pkg/ds.py:Headers.snapshot\n");
}

static void test_builtins_and_library_types(void)
{
    /* range, compile: builtins, not Request.range / Rule.compile;
     * re.match(...).group: a library type's, not AppGroup.group */
    check_callees("pkg/use.py", "builtins_and_library", "");
}

/* rtv_def_under: what the LSP definition, hover, call hierarchy and explain ask. */
static void check_under(const char *path, uint32_t line, const char *word, const char *want)
{
    RtvDef d = {0};
    CHECK_INT(rtv_def_under(st, path, line, word, &d, NULL), CR_OK);
    char got[256];
    snprintf(got, sizeof got, "%s:%s", d.head.path ? d.head.path : "", d.head.symbol);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "%s:%u %s: %s, want %s\n", path, line, word, got, want);
    CHECK(!strcmp(got, want));
    rtv_def_release(&d);
}

static void test_definition_from_call_site(void)
{
    /* an inherited self.copy(), another copy in the same file */
    check_under("pkg/use.py", 45, "copy", "pkg/ds.py:Headers.copy");
    /* h: Optional[Headers], another get defined first */
    check_under("pkg/use.py", 21, "get", "pkg/ds.py:Headers.get");
    check_under("pkg/use.py", 14, "get", "pkg/ds.py:Headers.get");
    /* super().__init__ inside an __init__ is the base's; the def line, its own */
    check_under("pkg/over.py", 27, "__init__", "pkg/over.py:Base2.__init__");
    check_under("pkg/over.py", 26, "__init__", "pkg/over.py:Child.__init__");
    /* a method's own name on its def line, though its body calls a function of that name */
    check_under("pkg/over.py", 31, "wrap", "pkg/over.py:Holder.wrap");
    check_under("pkg/over.py", 32, "wrap", "pkg/over.py:wrap");
    /* on an untyped receiver (`obj.render()` in def render): a method, not
     * the top-level function of that name */
    check_under("pkg/recv.py", 12, "render", "pkg/recv.py:Panel.render");
}

static void test_overload_is_one_function(void)
{
    /* at the implementation, as at the first stub: the same callers */
    size_t counts[2] = {0, 0};
    const uint32_t lines[2] = {5, 13};
    for (int i = 0; i < 2; i++) {
        RtvDef d = {0};
        RtvRef *refs = NULL;
        size_t n = 0;
        CHECK_INT(rtv_def_under(st, "pkg/over.py", lines[i], "wrap", &d, NULL), CR_OK);
        CHECK_INT(rtv_refs(st, &d, 0, RTV_REF_BIT(IDX_EDGE_CALL), 0, &refs, &n, NULL, NULL), CR_OK);
        counts[i] = n;
        rtv_refs_free(refs, n);
        rtv_def_release(&d);
    }
    CHECK_INT(counts[0], 2); /* caller and Holder.wrap */
    CHECK_INT(counts[1], 2);
}

/* A name defined again once per branch, the branches' definitions
 * interleaved (C's `#if` variants, a version check): each definition is its
 * own, not one spanning the other's lines. */
static void test_interleaved_variants(void)
{
    const uint32_t lines[4] = {6, 9, 14, 17};
    const char *want[4] = {"pick_a", "pick_b", "pick_a", "pick_b"};
    for (int i = 0; i < 4; i++) {
        RtvDef d = {0};
        CHECK_INT(rtv_def_at(st, "pkg/variants.py", lines[i], &d, NULL), CR_OK);
        if (!d.head.symbol || strcmp(d.head.symbol, want[i]) != 0)
            fprintf(stderr, "line %u: %s, want %s\n", lines[i], d.head.symbol, want[i]);
        CHECK(d.head.symbol && !strcmp(d.head.symbol, want[i]));
        rtv_def_release(&d);
    }
}

int main(void)
{
    st = index_fixture();
    if (!st) return test_summary();
    RUN(test_self_attributes);
    RUN(test_parameters_and_module_instances);
    RUN(test_attributes_and_results_across_files);
    RUN(test_items_casts_and_attributes);
    RUN(test_super);
    RUN(test_property_reads);
    RUN(test_proxy);
    RUN(test_decorator_is_no_call);
    RUN(test_locals_and_decorators);
    RUN(test_builtins_and_library_types);
    RUN(test_definition_from_call_site);
    RUN(test_overload_is_one_function);
    RUN(test_interleaved_variants);
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
    return test_summary();
}
