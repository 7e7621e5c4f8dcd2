/* Receivers of a known type (tests/fixtures/graph_typed), through rtv_refs
 * as every door asks it: Go parameters, receivers, `s := NewStore()` and
 * struct fields, package-level variables typed in another file of the
 * package; calls through an interface its implementations do not
 * name (Go's); a Go import without go.mod found by its package folder; a
 * library's package (`http.HandlerFunc`) never linked to a workspace
 * method by its name; TypeScript through a re-export file (`export *`,
 * `export { a as b }`), fields, parameter properties and results, and a
 * base's call of a method its subclass overrides (and the reverse), a
 * variable holding a field, a variable of module code, a callback's
 * parameter typed as the function called declares it, and definition at
 * a call site whose chain starts on the line above; C++ fields used
 * without `this` and results; Java parameters and fields. Each case names a
 * method another class also defines, so that the name alone cannot pick it.
 * A C++ method defined in two files (a build variant each) reaches both; a
 * macro's body calls a method on a global of a known type; adjacent
 * overloads apart, a va_list one from its variadic namesake, constructors
 * as calls, a definition a macro writes as that macro's use. And a C++
 * definition's name after an export macro and a qualified type
 * (`FMT_API std::system_error vsystem_error(…)`); a call from the global
 * scope, an overload defined in another file, an #if splitting a call;
 * constructors reached by `Foo f;`, `Foo f{a};`, `Foo{a}` and
 * std::make_unique<Foo>, a class without one reached by none; operators
 * on a name of a class type as calls, on an address or an int none; an
 * annotation macro after a parameter list (`f(…) LOCKS_EXCLUDED(mu) {`);
 * a constructor's initializer list building its base and a field. */
#include "idx.h"
#include "rtv.h"
#include "fixture_util.h"
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

/* "symbol@line" of every definition the calls of the definition of
 * symbol in path reach, one per line. */
static char *callee_lines(IdxStore *st, const char *path, const char *symbol)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0, total = 0;
    CHECK_INT(rtv_defs_named(st, symbol, path, 0, 1, &defs, &n, &total, NULL), CR_OK);
    CHECK(n == 1);
    RtvRef *refs = NULL;
    size_t nr = 0;
    if (n)
        CHECK_INT(rtv_refs(st, &defs[0], 1, RTV_REF_BIT(IDX_EDGE_CALL), 0, &refs, &nr, NULL, NULL),
                  CR_OK);
    for (size_t i = 0; i < nr; i++)
        sb_addf(&sb, "%s@%u\n", refs[i].other.head.symbol, refs[i].other.start_line);
    rtv_refs_free(refs, nr);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

static void check_callee_lines(IdxStore *st, const char *path, const char *symbol, const char *want)
{
    char *got = callee_lines(st, path, symbol);
    if (strcmp(got, want)) fprintf(stderr, "%s %s: got\n%s", path, symbol, got);
    CHECK_STR(got, want);
    free(got);
}

static char tmp_root[256];
static char tmp_index[256];

/* "path:symbol" of every call edge to (outgoing 0) or from the definition
 * of symbol in path, one per line, as rtv_refs sorts them. */
static char *calls_of(IdxStore *st, const char *path, const char *symbol, int outgoing)
{
    StrBuf sb;
    sb_init(&sb);
    RtvDef *defs = NULL;
    size_t n = 0, total = 0;
    CHECK_INT(rtv_defs_named(st, symbol, path, 0, 1, &defs, &n, &total, NULL), CR_OK);
    CHECK(n == 1 && !strcmp(defs[0].head.path, path));
    RtvRef *refs = NULL;
    size_t nr = 0;
    if (n)
        CHECK_INT(
            rtv_refs(st, &defs[0], outgoing, RTV_REF_BIT(IDX_EDGE_CALL), 0, &refs, &nr, NULL, NULL),
            CR_OK);
    for (size_t i = 0; i < nr; i++)
        sb_addf(&sb, "%s:%s\n", refs[i].other.head.path, refs[i].other.head.symbol);
    rtv_refs_free(refs, nr);
    rtv_defs_free(defs, n);
    return sb.buf ? sb_detach(&sb, NULL) : xstrdup("");
}

static void check_calls(IdxStore *st, const char *path, const char *symbol, int outgoing,
                        const char *want)
{
    char *got = calls_of(st, path, symbol, outgoing);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "%s of %s:%s:\n got:\n%s want:\n%s", outgoing ? "callees" : "callers", path,
                symbol, got, want);
    CHECK(!strcmp(got, want));
    free(got);
}

static void test_typed(void)
{
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-graph-typed-XXXXXX");
    IdxStore *st = fixture_copy_store("graph_typed", tmp_root, tmp_index);
    if (!st) return;
    /* Go: a receiver and a parameter of a known type; a package by its folder */
    check_calls(st, "gopkg/main.go", "Router.Get", 0, "gopkg/main.go:serve\n");
    /* ... and package-level variables another file of the package declares
     * (`var Default = NewStore()`, `Spare = &Store{…}`; `s := Spare`) */
    check_calls(st, "gopkg/store/store.go", "Store.Get", 0,
                "gopkg/main.go:serve\ngopkg/main.go:fetch\ngopkg/store/warm.go:warm\n");
    /* ... a field's type; the standard library's HandlerFunc is not Router's */
    check_calls(st, "gopkg/store/store.go", "Cache.Touch", 0, "gopkg/store/store.go:Store.Get\n");
    check_calls(st, "gopkg/main.go", "Router.HandlerFunc", 0, "");
    /* a call through an interface its implementations do not name: the
     * declaration and the methods of every type that defines all of its
     * methods (Label defines Name only); through an embedded interface */
    check_calls(st, "gopkg/shape/shape.go", "Describe", 1,
                "gopkg/shape/shape.go:Shape.Area\ngopkg/shape/shape.go:Shape.Name\n"
                "gopkg/shape/shape.go:Square.Area\ngopkg/shape/shape.go:Square.Name\n"
                "gopkg/shape/shape.go:Circle.Area\ngopkg/shape/shape.go:Circle.Name\n");
    check_calls(st, "gopkg/shape/shape.go", "Label.Name", 0, "");
    /* at the call site: the interface's declaration, as gopls answers */
    int64_t at = 0;
    CHECK_INT(idx_call_target(st, "gopkg/shape/shape.go", 34, "Name", "s.Name", &at, NULL), CR_OK);
    IdxChunk c = {0};
    CHECK_INT(idx_chunk_get(st, at, &c, NULL), CR_OK);
    CHECK(c.symbol && !strcmp(c.symbol, "Shape.Name"));
    idx_chunk_release(&c);
    check_calls(st, "gopkg/shape/shape.go", "Circle.Area", 0,
                "gopkg/shape/shape.go:Describe\ngopkg/shape/shape.go:Weigh\n");
    /* TypeScript: through the re-export file, a field, a parameter property */
    check_calls(st, "ts/internal/atom.ts", "Atom.reportChanged", 0,
                "ts/internal/value.ts:Value.set\nts/use.ts:touch\n");
    /* ... and a variable holding a field (`const a = this.atom_`) */
    check_calls(st, "ts/internal/atom.ts", "Atom.reportObserved", 0,
                "ts/internal/value.ts:Value.get\nts/internal/value.ts:Value.peek\n");
    check_calls(st, "ts/internal/value.ts", "Value.set", 0, "ts/use.ts:touch\n");
    /* ... a base's call of a method a subclass overrides is a caller of the
     * override too, and the subclass's a caller of the base's (as tsserver
     * lists them), neither of another class's method of the name */
    check_calls(st, "ts/observer.ts", "Observer.onSubscribe", 0,
                "ts/observer.ts:Observer.restart\nts/subscribable.ts:Subscribable.subscribe\n");
    check_calls(st, "ts/subscribable.ts", "Subscribable.onSubscribe", 0,
                "ts/observer.ts:Observer.restart\nts/subscribable.ts:Subscribable.subscribe\n");
    check_calls(st, "ts/subscribable.ts", "Other.onSubscribe", 0, "");
    /* ... a variable of module code (a test's describe callback) */
    check_calls(st, "ts/observer.ts", "Observer.start", 0,
                "ts/observer.ts:Observer.onSubscribe\nts/spec.ts:\n");
    check_calls(st, "ts/subscribable.ts", "Other.start", 0, "");
    /* ... a callback's parameter, typed as the function called (or the
     * class's constructor) declares it (`this:` takes no place), or as an
     * element of the array a forEach or map goes over; a variable declared
     * as a type or nothing */
    check_calls(st, "ts/callback.ts", "Sink.push", 0,
                "ts/callback.ts:pipeAll\nts/callback.ts:Bag.drain\n");
    check_calls(st, "ts/callback.ts", "Sink.close", 0,
                "ts/callback.ts:pipeAll\nts/callback.ts:Box.flush\n");
    check_calls(st, "ts/callback.ts", "Tap.push", 0, "ts/callback.ts:holdOne\n");
    check_calls(st, "ts/callback.ts", "Tap.close", 0,
                "ts/callback.ts:Box.flush\nts/callback.ts:closeAll\n");
    /* a field holding an arrow function is a method: its `this` is its class */
    check_calls(st, "ts/callback.ts", "Shelf.save", 0, "ts/callback.ts:Shelf.put\n");
    check_calls(st, "ts/callback.ts", "Crate.save", 0, "");
    /* definition at a call site whose chain starts on the line above
     * (`this.sink` over `.close()`), beside `this.tap.close()` */
    RtvDef d;
    CHECK_INT(rtv_def_under(st, "ts/callback.ts", 41, "close", &d, NULL), CR_OK);
    CHECK(d.head.symbol && !strcmp(d.head.symbol, "Sink.close"));
    rtv_def_release(&d);
    /* C++: a field without `this`, a pointer field, a method's result (a
     * call in the chain), parameters; each method defined out of line */
    check_calls(st, "cpp/lock.cc", "Db::Write", 1,
                "cpp/lock.cc:Mutex.AssertHeld\ncpp/lock.cc:Table.Unref\ncpp/lock.cc:Table.Ref\n"
                "cpp/lock.cc:Db.Find\n");
    check_calls(st, "cpp/lock.cc", "Flush", 1, "cpp/lock.cc:Mutex.Lock\ncpp/lock.cc:Db.Write\n");
    /* a field whose class the header only declares (`struct Status;`):
     * its method, and no override of a pure virtual one by its name */
    check_calls(st, "cpp/runner.cc", "Runner::Go", 1, "cpp/status.cc:Status.Flush\n");
    /* a field of a field */
    check_calls(st, "cpp/lock.cc", "Shard::Sync", 1, "cpp/lock.cc:Mutex.Lock\n");
    /* a method a base class defines out of line */
    check_calls(st, "cpp/lock.cc", "Db::Drop", 1, "cpp/lock.cc:Table.Ref\n");
    /* a method defined once per build variant (scan-posix.cc, scan-win.cc):
     * a call reaches both, from inside the class, through a pointer, and
     * through a global a macro's body calls it on (`g_scanner->Fail()`) */
    const char *fail_callers = "cpp/drive.cc:Drive\ncpp/drive.cc:Panic\n"
                               "cpp/scan-posix.cc:Scanner.Step\ncpp/scan-win.cc:Scanner.Step\n";
    check_calls(st, "cpp/scan-posix.cc", "Scanner::Fail", 0, fail_callers);
    check_calls(st, "cpp/scan-win.cc", "Scanner::Fail", 0, fail_callers);
    /* overloads told apart by arity (two units: together they span more
     * than half a window); a function a header declares found in the
     * source beside it though a test defines its own of that name */
    const uint32_t want_line[] = {3, 8};
    for (int k = 0; k < 2; k++) {
        int64_t at_c = 0;
        CHECK_INT(idx_call_target(st, "cpp/use_canon.cc", k ? 5 : 3, "Canon", "Canon", &at_c, NULL),
                  CR_OK);
        IdxChunk cc = {0};
        CHECK_INT(idx_chunk_get(st, at_c, &cc, NULL), CR_OK);
        CHECK(cc.path && !strcmp(cc.path, "cpp/canon.cc") && cc.start_line == want_line[k]);
        idx_chunk_release(&cc);
    }
    /* small adjacent overloads a call's arity tells apart are two units;
     * the one taking a va_list is reached from the variadic one only */
    const struct {
        uint32_t line;
        const char *word;
        uint32_t want;
    } sites[] = {
        {11, "Log", 3},  /* Log(msg, ap) in Log(msg, ...) */
        {25, "Log", 8},  /* Log("%s", …) elsewhere: the variadic one */
        {29, "Buf", 19}, /* Buf one(1): the constructor taking one */
        {30, "Buf", 19}, /* a temporary Buf(3) */
        {33, "Buf", 20}, /* new Buf(1, 2) */
    };
    for (size_t k = 0; k < sizeof sites / sizeof sites[0]; k++) {
        int64_t target = 0;
        CHECK_INT(idx_call_target(st, "cpp/log.cc", sites[k].line, sites[k].word, sites[k].word,
                                  &target, NULL),
                  CR_OK);
        IdxChunk cc = {0};
        CHECK_INT(idx_chunk_get(st, target, &cc, NULL), CR_OK);
        if (cc.start_line != sites[k].want)
            fprintf(stderr, "log.cc:%u %s -> %u\n", sites[k].line, sites[k].word, cc.start_line);
        CHECK(cc.path && !strcmp(cc.path, "cpp/log.cc") && cc.start_line == sites[k].want);
        idx_chunk_release(&cc);
    }
    /* overloads of one arity told apart by argument types: a string
     * literal, a wide one, a number, a variable's declared type, an
     * operator's operand, a parameter of a scalar type */
    check_callee_lines(st, "cpp/print.cc", "ShowNarrow", "Show@10\n");
    check_callee_lines(st, "cpp/print.cc", "ShowWide", "Show@11\n");
    check_callee_lines(st, "cpp/print.cc", "ShowInt", "Show@12\n");
    check_callee_lines(st, "cpp/print.cc", "ShowSome", "Show@10\n");
    /* a template's parameter: any of them, as one unit's would */
    check_callee_lines(st, "cpp/print.cc", "ShowAny", "Show@10\nShow@11\nShow@12\n");
    check_callee_lines(st, "cpp/print.cc", "FromName", "Path.Path@5\n");
    check_callee_lines(st, "cpp/print.cc", "FromPath", "Path.Path@6\n");
    check_callee_lines(st, "cpp/print.cc", "PutWide", "Sink.operator<<@16\n");
    check_callee_lines(st, "cpp/print.cc", "PutBool", "Sink.operator<<@17\n");
    /* a const method's call on its own object: the const overload */
    check_callee_lines(st, "cpp/print.cc", "Box::Read", "Box.get@42\n");
    check_callee_lines(st, "cpp/print.cc", "Box::Write", "Box.get@41\n");
    /* a definition a macro writes (`CASE(Log, Twice) {…}`) makes the calls of
     * the macro's body, not the functions it declares (`Run`, `Create`) */
    check_calls(st, "cpp/log.cc", "Register", 0, "cpp/log.cc:CASE\n");
    check_calls(st, "cpp/log.cc", "CASE", 1, "cpp/log.cc:Log\ncpp/log.cc:Register\n");
    /* a macro before a declaration's qualified type is no part of its name */
    check_calls(st, "cpp/lock.cc", "vsystem_error", 1, "");
    /* a call from the global scope (`::Open`) is the top-level Open, not
     * the method around it; an overload defined in another file (the
     * header's inline `Show()` calls the .cc's `Show(name, bits)`); an
     * #if that splits a call's arguments leaves its function whole */
    check_calls(st, "cpp/node.cc", "Open", 0, "cpp/node.cc:Node.Open\n");
    check_calls(st, "cpp/node.cc", "Node::Open", 0, "");
    check_calls(st, "cpp/node.cc", "Node::Show", 0, "cpp/node.h:Node.Show\n");
    check_calls(st, "cpp/node.h", "Node.Show", 0, "");
    check_calls(st, "cpp/node.cc", "Join", 0, "cpp/node.cc:Node.List\n");
    /* a variable constructed from names (`Reader reader(fd, size);`, which
     * the grammar reads as a function's declaration) */
    check_calls(st, "cpp/node.cc", "Reader::Next", 0, "cpp/node.cc:Drain\n");
    check_calls(st, "cpp/node.cc", "Reader::Reader", 0, "cpp/node.cc:Drain\n");
    /* a variable built with no arguments or from a braced list, a
     * temporary from one, std::make_unique/make_shared: the constructor
     * taking as many arguments; a class without one of its own is no call */
    check_calls(st, "cpp/build.cc", "Meta::Meta", 0,
                "cpp/build.cc:Defaulted\ncpp/build.cc:Factory\ncpp/build.cc:Guarded\n"
                "cpp/build.cc:Holder.Holder\n");
    check_calls(st, "cpp/build.cc", "Defaulted", 1, "cpp/build.cc:Meta.Meta\n");
    check_calls(st, "cpp/build.cc", "Braced", 1, "cpp/build.cc:Meta.Meta\n");
    check_calls(st, "cpp/build.cc", "Temporary", 1, "cpp/build.cc:Meta.Meta\n");
    check_calls(st, "cpp/build.cc", "Factory", 1,
                "cpp/build.cc:Meta.Meta\ncpp/build.cc:Meta.Meta\n");
    /* an operator on a name of a class type is a call of the operator the
     * class declares; on an address or a name of no known type, none */
    check_calls(st, "cpp/build.cc", "Same", 1,
                "cpp/build.cc:Meta.operator==\ncpp/build.cc:Meta.operator[]\n");
    check_calls(st, "cpp/build.cc", "Meta::operator==", 0, "cpp/build.cc:Same\n");
    check_calls(st, "cpp/build.cc", "Address", 1, "");
    check_calls(st, "cpp/build.cc", "Numbers", 1, "");
    /* a library's type built (`std::string text;`, `std::string("/")`) is
     * no call of a workspace method of its name */
    check_calls(st, "cpp/build.cc", "Text", 1, "");
    /* an annotation macro after the parameter list is no part of the name */
    check_calls(st, "cpp/build.cc", "Guarded", 1, "cpp/build.cc:Meta.Meta\n");
    /* a constructor's initializer list: the base's constructor, a field
     * built with no arguments (a pointer field given a value builds none) */
    check_calls(st, "cpp/build.cc", "Holder::Holder", 1,
                "cpp/build.cc:Meta.Meta\ncpp/build.cc:Meta.Meta\n");
    /* a call on a call's result through `->`: a bare member call in a
     * method (`impl()->Count()`), a function named through its namespace,
     * a static member; a type alias's receiver (`using`, `typedef`) */
    check_calls(st, "cpp/chain.cc", "Outer::Count", 1,
                "cpp/chain.cc:internal.Impl.Count\ncpp/chain.h:Outer.impl\n");
    check_calls(st, "cpp/chain.cc", "Outer::Add", 1,
                "cpp/chain.cc:internal.Impl.Add\ncpp/chain.cc:internal.GetImpl\n");
    check_calls(st, "cpp/chain.cc", "Report", 1,
                "cpp/chain.cc:Outer.Get\ncpp/chain.cc:Outer.Add\n");
    check_calls(st, "cpp/chain.cc", "Tally", 1,
                "cpp/chain.cc:internal.Impl.Count\ncpp/chain.cc:Outer.Count\n");
    /* `out.str()` on a `std::ostringstream` is no workspace method of the
     * name (nor is `it->Add()` on an iterator, whose element is not read:
     * two classes define Add) */
    check_calls(st, "cpp/chain.cc", "Walk", 1, "");
    check_calls(st, "cpp/chain.cc", "Buffer::str", 0, "");
    /* an operator returning a reference is a function of its own */
    check_calls(st, "cpp/chain.cc", "Note", 0, "cpp/chain.cc:operator<<\n");
    /* definition at a bare call of the class's member, in an overload of it */
    CHECK_INT(rtv_def_under(st, "cpp/node.cc", 49, "Skip", &d, NULL), CR_OK);
    CHECK(d.head.symbol && !strcmp(d.head.symbol, "Reader.Skip") && d.start_line == 52);
    rtv_def_release(&d);
    CHECK_INT(rtv_def_under(st, "cpp/node.cc", 8, "Open", &d, NULL), CR_OK);
    CHECK(d.head.symbol && !strcmp(d.head.symbol, "Open"));
    rtv_def_release(&d);
    /* Java: a field used without `this`, a parameter */
    check_calls(st, "java/Shop.java", "Shop.checkout", 1,
                "java/Shop.java:Cart.clear\njava/Shop.java:Order.submit\n");
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
}

/* Go: an import of the workspace's root package (go.mod's module path);
 * a call on a value written with its type (`(T{…}).m()`, `T{…}.m()`), and
 * on a variable a type assertion types (`x := v.(*T)`); definition at such
 * a call site (its receiver no name: the one typed call of the name) */
static void test_go_values(void)
{
    char root[256], index[256];
    snprintf(root, sizeof root, "/tmp/coderag-test-go-root-XXXXXX");
    IdxStore *st = fixture_copy_store("go_root", root, index);
    if (!st) return;
    check_calls(st, "app.go", "Default", 0, "ginS/gins.go:engine\n");
    check_calls(st, "app.go", "Engine.Run", 0, "ginS/gins.go:Run\n");
    check_calls(st, "app.go", "Stop.Run", 0, "");
    check_calls(st, "render/render.go", "JSON.Render", 0, "render/render.go:literal\n");
    check_calls(st, "render/render.go", "XML.Render", 0,
                "render/render.go:bare\nrender/render.go:asserted\n");
    RtvDef d;
    CHECK_INT(rtv_def_under(st, "render/render.go", 12, "Render", &d, NULL), CR_OK);
    CHECK(d.head.symbol && !strcmp(d.head.symbol, "JSON.Render"));
    rtv_def_release(&d);
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", root, index);
}

int main(void)
{
    RUN(test_typed);
    RUN(test_go_values);
    return test_summary();
}
