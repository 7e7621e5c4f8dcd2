/* The language table end to end: small fixtures in each language
 * (tests/fixtures/lang/<language>) indexed for real, asserting exact
 * definitions and line ranges, doc comments, imports and calls resolved to
 * their definitions, methods attached to their class, impl or receiver,
 * inheritance, docs sections and detection by shebang. */
#include "idx.h"
#include "index/chunk/lang/lang.h"
#include "index_util.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char tmp_root[256];
static char tmp_index[256];

/* Indexes a copy of fixtures/lang/<name> as a workspace of its own. */
static IdxStore *index_fixture(const char *name)
{
    char src[512];
    snprintf(tmp_root, sizeof tmp_root, "/tmp/coderag-test-lang-XXXXXX");
    CHECK(mkdtemp(tmp_root) != NULL);
    snprintf(tmp_index, sizeof tmp_index, "%.200s.idx", tmp_root);
    snprintf(src, sizeof src, "%s/lang/%s", FIXTURE_DIR, name);
    test_sh("cp -R '%s/.' '%s'", src, tmp_root);
    IdxConfig cfg = {.root = tmp_root, .index_dir = tmp_index, .threads = 2};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (rc) fprintf(stderr, "idx_open: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    if (!st) return NULL;
    IdxUpdateStats s = {0};
    rc = idx_update(st, NULL, NULL, &s, &e);
    if (rc) fprintf(stderr, "idx_update: %s\n", e.msg);
    CHECK_INT(rc, CR_OK);
    CHECK_INT(idx_verify(st, &e), CR_OK);
    return st;
}

static void done(IdxStore *st)
{
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", tmp_root, tmp_index);
}

/* "kind start-end symbol" per chunk, then "  doc: ..." when it has one. */
static char *describe(IdxStore *st, const char *path)
{
    IdxChunk *v = NULL;
    size_t n = 0;
    StrBuf sb;
    sb_init(&sb);
    CHECK_INT(idx_file_chunks(st, path, &v, &n, NULL), CR_OK);
    for (size_t i = 0; i < n; i++) {
        sb_addf(&sb, "%s %u-%u %s\n", idx_kind_name(v[i].kind), v[i].start_line, v[i].end_line,
                v[i].symbol);
        if (v[i].docstring[0]) sb_addf(&sb, "  doc: %s\n", v[i].docstring);
    }
    idx_chunks_free(v, n);
    if (getenv("LANG_TEST_DUMP")) fprintf(stderr, "--- %s\n%s", path, sb.buf ? sb.buf : "");
    return sb_detach(&sb, NULL);
}

static void check_file(IdxStore *st, const char *path, const char *want)
{
    char *got = describe(st, path);
    if (strcmp(got, want) != 0) fprintf(stderr, "%s:\n got:\n%s want:\n%s", path, got, want);
    CHECK(!strcmp(got, want));
    free(got);
}

static int has_edge_quiet(IdxStore *st, const char *sp, const char *ss, const char *dp,
                          const char *ds, IdxEdgeKind kind)
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

static int has_edge(IdxStore *st, const char *sp, const char *ss, const char *dp, const char *ds,
                    IdxEdgeKind kind)
{
    int64_t a = chunk_id(st, sp, ss), b = chunk_id(st, dp, ds);
    IdxEdge *v = NULL;
    size_t n = 0;
    int found = 0;
    if (!a || !b) return 0;
    idx_edges(st, a, 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++)
        if (v[i].dst == b && v[i].kind == kind) found = 1;
    free(v);
    if (!found)
        fprintf(stderr, "no %s edge %s:%s -> %s:%s\n", idx_edge_kind_name(kind), sp, ss, dp, ds);
    return found;
}

static void test_c(void)
{
    IdxStore *st = index_fixture("c");
    /* a table is a definition; a one-line variable stays module code */
    check_file(st, "util.c",
               "module 1-4 \nfunction 5-8 add\n  doc: Adds two integers.\nfunction 10-13 twice\n"
               "class 16-18 ops\n  doc: Operations by name.\nmodule 19-19 \n");
    check_file(st, "util.h",
               "module 1-4 \nclass 5-7 point\n  doc: A point on the grid.\nmodule 9-9 \n"
               "function 11-11 SQUARE\nmodule 13-13 \n");
    CHECK(has_edge(st, "main.c", "main", "util.c", "add", IDX_EDGE_CALL));
    CHECK(has_edge(st, "util.c", "twice", "util.c", "add", IDX_EDGE_CALL));
    CHECK(has_edge(st, "main.c", "", "util.h", "", IDX_EDGE_IMPORT));
    CHECK(has_edge(st, "main.c", "main", "util.h", "point", IDX_EDGE_TYPE)); /* type use */
    /* a macro before a function returning a typedef: the grammar's error
     * node holds the name, not the return type */
    check_file(st, "api.c",
               "module 1-5 \nfunction 6-9 lua_atpanic\n"
               "  doc: Sets the panic function and returns the old one.\n");
    done(st);
}

static void test_cpp(void)
{
    IdxStore *st = index_fixture("cpp");
    /* a .h holding C++ is read as C++; methods belong to their class */
    check_file(st, "shape.h",
               "module 1-3 \nclass 5-6 Shape\nmethod 7-7 Shape.~Shape\nclass 8-9 Shape\n"
               "class 12-13 Circle\n  doc: A circle of a given radius.\nmethod 14-14 Circle.area\n"
               "class 15-19 Circle\nmodule 21-21 \n");
    check_file(
        st, "shape.cc",
        "module 1-5 \nmethod 6-10 Circle.scale\n  doc: Grows the circle by k.\nmodule 12-12 \n");
    CHECK(has_edge(st, "shape.h", "Circle", "shape.h", "Shape", IDX_EDGE_INHERIT));
    /* an operator is named with its symbol: one class's operators apart */
    CHECK(chunk_id(st, "point.h", "Point.operator==") != 0);
    CHECK(chunk_id(st, "point.h", "Point.operator!=") != 0);
    CHECK(chunk_id(st, "point.h", "Point.operator[]") != 0);
    CHECK(has_edge(st, "shape.h", "Circle", "shape.h", "Circle.area", IDX_EDGE_CONTAIN));
    CHECK(has_edge(st, "shape.cc", "Circle.scale", "shape.h", "Circle.area", IDX_EDGE_CALL));
    CHECK(has_edge(st, "shape.cc", "", "shape.h", "", IDX_EDGE_IMPORT));
    /* an export macro between `class` and the name is read past */
    check_file(st, "store.h",
               "module 1-5 \nclass 6-7 Store\n  doc: Keeps values by key.\nmethod 8-8 Store.Get\n");
    CHECK(has_edge(st, "store.h", "Store", "shape.h", "Shape", IDX_EDGE_INHERIT));
    done(st);
}

static void test_go(void)
{
    IdxStore *st = index_fixture("go");
    check_file(st, "store/store.go",
               "module 1-3 \nclass 4-6 Store\n  doc: Store keeps values by key.\n"
               "function 9-11 New\n  doc: New makes an empty Store.\n"
               "method 14-16 Store.Get\n  doc: Get returns the value of k.\n"
               "class 19-21 defaults\n  doc: defaults seeds every new Store.\nmodule 23-23 \n");
    CHECK(has_edge(st, "store/store.go", "Store", "store/store.go", "Store.Get", IDX_EDGE_CONTAIN));
    CHECK(has_edge(st, "main.go", "main", "store/store.go", "New", IDX_EDGE_CALL));
    CHECK(has_edge(st, "main.go", "main", "store/store.go", "Store.Get", IDX_EDGE_CALL));
    CHECK(has_edge(st, "main.go", "", "store/store.go", "", IDX_EDGE_IMPORT));
    done(st);
}

static void test_rust(void)
{
    IdxStore *st = index_fixture("rust");
    /* attributes belong to the item; impl blocks hold the type's methods; a
     * lone closing brace makes no chunk of its own; a /// doc of several
     * lines is whole, without its fenced example; a table is a definition,
     * a one-line constant stays module code */
    check_file(st, "src/parser.rs",
               "class 2-2 Visit\n  doc: Walks a token stream.\nmethod 3-3 Visit.visit\n"
               "class 7-10 Parser\n  doc: The parser state.\nclass 12-13 Parser\n"
               "method 14-16 Parser.new\n  doc: Makes a parser over text.\n"
               "method 24-26 Parser.parse\n  doc: Parses the text\nand counts its bytes.\n"
               "class 29-29 Parser\nmethod 30-32 Parser.visit\nfunction 35-37 count\n");
    check_file(st, "src/lib.rs",
               "module 1-5 \nfunction 6-9 run\n  doc: Parses the input once.\nmodule 11-13 \n"
               "class 14-16 STOPS\n  doc: Bytes that end a token.\n");
    /* mod parser; -> the module's first chunk (it has no loose code) */
    CHECK(has_edge(st, "src/lib.rs", "", "src/parser.rs", "Visit", IDX_EDGE_IMPORT));
    CHECK(has_edge(st, "src/lib.rs", "run", "src/parser.rs", "Parser.new", IDX_EDGE_CALL));
    CHECK(has_edge(st, "src/parser.rs", "Parser.visit", "src/parser.rs", "Parser.parse",
                   IDX_EDGE_CALL));
    CHECK(has_edge(st, "src/parser.rs", "Parser.parse", "src/parser.rs", "count", IDX_EDGE_CALL));
    /* a module's type alias is a definition, an impl's associated type is
     * part of the impl; an impl for `&'a mut Tap` holds Tap's methods */
    check_file(st, "src/emit.rs",
               "class 1-2 Emit\nmethod 3-3 Emit.emit\nclass 6-6 Count\nclass 8-8 Sink\n"
               "class 10-11 Sink\nmethod 12-14 Sink.emit\nclass 17-17 Tap\nclass 19-20 Tap\n"
               "method 21-23 Tap.emit\n");
    /* a call through a field of a generic type reaches the trait's
     * declaration and its implementation, not a same-named method of a type
     * that does not implement the trait; a call with generic arguments
     * (`widen::<u8>()`) is a call of its function */
    const char *relay = "src/relay.rs", *parser = "src/parser.rs";
    CHECK(has_edge(st, relay, "Relay.relay", parser, "Visit.visit", IDX_EDGE_CALL));
    CHECK(has_edge(st, relay, "Relay.relay", parser, "Parser.visit", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, relay, "Relay.relay", relay, "Other.visit", IDX_EDGE_CALL));
    CHECK(has_edge(st, relay, "Relay.relay", relay, "widen", IDX_EDGE_CALL));
    /* calls in a macro's arguments, which the grammar leaves as tokens */
    CHECK(has_edge(st, relay, "wrapped", relay, "widen", IDX_EDGE_CALL));
    CHECK(has_edge(st, relay, "wrapped", relay, "Other.plain", IDX_EDGE_CALL));
    CHECK(has_edge(st, relay, "wrapped", relay, "tri", IDX_EDGE_CALL));
    /* and in a `$(...)*` repetition of a macro's body: its receiver
     * patterns name no parent (under `token_tree` they took 0.4 s to
     * compile, bench_query) */
    CHECK(has_edge(st, relay, "plain_each", relay, "Other.plain", IDX_EDGE_CALL));
    /* `pub use` re-exports followed to the definition (`self::circle::Circle`,
     * `crate::…::{area, Unit as Measure}`), through a `use` and through a path
     * from `crate::` in code, never square.rs's same-named ones; `use
     * super::…` in `mod tests` names the file's own module */
    const char *draw = "src/draw.rs", *circle = "src/shapes/circle.rs";
    CHECK(has_edge(st, draw, "draw", circle, "Circle.new", IDX_EDGE_CALL));
    CHECK(has_edge(st, draw, "draw", circle, "Unit.scale", IDX_EDGE_CALL));
    CHECK(has_edge(st, draw, "draw", circle, "area", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, draw, "draw", "src/square.rs", "area", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, draw, "draw", "src/square.rs", "Circle.new", IDX_EDGE_CALL));
    CHECK(has_edge(st, draw, "tests.outlined", draw, "outline", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, draw, "tests.outlined", "src/square_user.rs", "outline",
                          IDX_EDGE_CALL));
    /* a test of the package names its crate as Cargo.toml does (`fixture-shapes`) */
    CHECK(has_edge(st, "tests/shapes.rs", "circle_is_made", circle, "Circle.new", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, "tests/shapes.rs", "circle_is_made", "src/square.rs", "Circle.new",
                          IDX_EDGE_CALL));
    /* a definition in `mod tests` is a test, as a tests/ file is */
    CHECK(idx_chunk_in_test_module(st, chunk_id(st, relay, "tests.relay_adds")));
    CHECK(!idx_chunk_in_test_module(st, chunk_id(st, relay, "Relay.relay")));
    done(st);
}

/* Whether chunk (path, symbol) calls the chunk of its file starting at line. */
static int calls_line(IdxStore *st, const char *path, const char *symbol, uint32_t line)
{
    int64_t a = chunk_id(st, path, symbol);
    IdxEdge *v = NULL;
    size_t n = 0;
    int found = 0;
    idx_edges(st, a, 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++) {
        IdxChunk c;
        if (v[i].kind != IDX_EDGE_CALL || idx_chunk_get(st, v[i].dst, &c, NULL) != CR_OK) continue;
        if (c.start_line == line && !strcmp(c.path, path)) found = 1;
        idx_chunk_release(&c);
    }
    free(v);
    return found;
}

/* Whether a's first edge of kind call goes to b and its last call or type use to c. */
static int edges_first_last(IdxStore *st, const char *path, const char *a, const char *b,
                            const char *c)
{
    IdxEdge *v = NULL;
    size_t n = 0, first = SIZE_MAX, last = 0;
    idx_edges(st, chunk_id(st, path, a), 1, &v, &n, NULL);
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == IDX_EDGE_CALL || v[i].kind == IDX_EDGE_TYPE) {
            if (first == SIZE_MAX && v[i].kind == IDX_EDGE_CALL) first = i;
            last = i;
        }
    int ok = first != SIZE_MAX && v[first].dst == chunk_id(st, path, b) &&
             v[last].dst == chunk_id(st, "src/main/java/com/ex/Animal.java", c);
    free(v);
    return ok;
}

static void test_java(void)
{
    IdxStore *st = index_fixture("java");
    const char *dog = "src/main/java/com/ex/zoo/Dog.java",
               *animal = "src/main/java/com/ex/Animal.java";
    const char *mood = "src/main/java/com/ex/zoo/Mood.java";
    /* adjacent overloads are one unit */
    check_file(st, dog,
               "module 1-3 \nclass 5-6 Dog\nmethod 7-10 Dog.sound\n  doc: Barks.\n"
               "method 12-18 Dog.bark\nmethod 20-22 Dog.echo\nmethod 24-26 Dog.introduce\n");
    check_file(st, animal,
               "module 1-5 \nclass 6-6 Animal\n  doc: Something that makes a sound.\n"
               "method 7-7 Animal.sound\nmethod 9-11 Animal.greet\nmethod 13-15 Animal.name\n");
    /* an enum constant with a body is a class of its own */
    check_file(st, mood,
               "module 1-1 \nclass 3-3 Mood\nclass 4-4 Mood.HAPPY\nmethod 5-7 Mood.HAPPY.say\n"
               "class 9-9 Mood.SAD\nmethod 10-12 Mood.SAD.say\nmethod 15-15 Mood.say\n");
    CHECK(has_edge(st, dog, "Dog", animal, "Animal", IDX_EDGE_INHERIT));
    CHECK(has_edge(st, dog, "", animal, "Animal", IDX_EDGE_IMPORT));
    CHECK(has_edge(st, dog, "Dog.sound", dog, "Dog.bark", IDX_EDGE_CALL));
    /* a bare call is the class's own method (an implicit this) ... */
    CHECK(has_edge(st, animal, "Animal.greet", animal, "Animal.sound", IDX_EDGE_CALL));
    /* ... not one of the same name in a subclass */
    CHECK(!has_edge_quiet(st, animal, "Animal.greet", dog, "Dog.sound", IDX_EDGE_CALL));
    /* calls of the file's own functions first, the types a signature names last */
    CHECK(has_edge(st, dog, "Dog.echo", animal, "Animal.greet", IDX_EDGE_CALL));
    CHECK(has_edge(st, dog, "Dog.echo", animal, "Animal", IDX_EDGE_TYPE));
    CHECK(edges_first_last(st, dog, "Dog.echo", "Dog.bark", "Animal"));
    /* a bare call of an inherited method: the base's, not another class's
     * method of the same name */
    CHECK(has_edge(st, dog, "Dog.introduce", animal, "Animal.name", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, dog, "Dog.introduce", "src/main/java/com/ex/zoo/Robot.java",
                          "Robot.name", IDX_EDGE_CALL));
    /* a static member of java.lang's (System.nanoTime) is not the one
     * workspace method of its name */
    const char *timer = "src/main/java/com/ex/zoo/Timer.java";
    CHECK(chunk_id(st, timer, "Timer.nanoTime") != 0);
    CHECK(!has_edge_quiet(st, timer, "Timer.now", timer, "Timer.nanoTime", IDX_EDGE_CALL));
    done(st);
}

static void test_js(void)
{
    IdxStore *st = index_fixture("js");
    /* a doc block keeps its definition across one blank line (JSDoc) */
    check_file(st, "lib/util.js",
               "module 1-5 \nfunction 6-8 slug\n  doc: Lowercases and dashes a title.\n"
               "function 14-16 dash\n  doc: Joins words with dashes.\nmodule 18-18 \n");
    check_file(st, "lib/app.js",
               "module 1-1 \nclass 3-3 App\nmethod 4-6 App.route\n"
               "method 9-11 App.prototype.home\nmodule 13-13 \n");
    check_file(st, "cli", "module 1-2 \n"); /* by its shebang */
    check_file(st, "NOTICE", "");           /* neither extension nor shebang */
    CHECK(has_edge(st, "lib/app.js", "App.route", "lib/util.js", "slug", IDX_EDGE_CALL));
    CHECK(has_edge(st, "lib/app.js", "", "lib/util.js", "slug", IDX_EDGE_IMPORT));
    CHECK(
        has_edge(st, "lib/app.js", "App.prototype.home", "lib/app.js", "App.route", IDX_EDGE_CALL));
    /* a call on an untyped receiver resolves by a unique name, unless the
     * name is a method of the language's built-in types (Map's has) */
    CHECK(has_edge(st, "lib/store.js", "fetchOne", "lib/store.js", "Store.fetch", IDX_EDGE_CALL));
    CHECK(
        !has_edge_quiet(st, "lib/store.js", "lookup", "lib/store.js", "Store.has", IDX_EDGE_CALL));
    CHECK(has_edge(st, "lib/store.js", "Store.fetch", "lib/store.js", "Store.has", IDX_EDGE_CALL));
    /* `this` is bound by the call: in a constructor function, its
     * prototype's member; in a function that is no method, nothing (not
     * the one method of the name anywhere) */
    CHECK(has_edge(st, "lib/queue.js", "Queue", "lib/queue.js", "Queue.prototype.drain",
                   IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, "lib/queue.js", "onIdle", "lib/queue.js", "Queue.prototype.drain",
                          IDX_EDGE_CALL));
    /* a global function of the language (setTimeout) is not the workspace
     * method of that name */
    CHECK(!has_edge_quiet(st, "lib/store.js", "later", "lib/store.js", "Clock.setTimeout",
                          IDX_EDGE_CALL));
    /* a module called as its value (module.exports = f): a function
     * assigned there (named as it names itself), a class named there */
    CHECK(has_edge(st, "lib/serve.js", "serve", "lib/render.js", "render", IDX_EDGE_CALL));
    CHECK(has_edge(st, "lib/serve.js", "serve", "lib/app.js", "App", IDX_EDGE_CALL));
    CHECK(has_edge(st, "lib/serve.js", "serve", "lib/app.js", "App.route", IDX_EDGE_CALL));
    /* a bare specifier: a path from the workspace root where a file is */
    CHECK(has_edge(st, "lib/serve.js", "", "lib/util.js", "", IDX_EDGE_IMPORT));
    CHECK(has_edge(st, "lib/serve.js", "serve", "lib/util.js", "slug", IDX_EDGE_CALL));
    /* a library's module bound whole calls none of the workspace's
     * (iconv.decode), nor does a built-in object (JSON.stringify) */
    CHECK(!has_edge_quiet(st, "lib/serve.js", "serve", "lib/render.js", "decode", IDX_EDGE_CALL));
    CHECK(!has_edge_quiet(st, "lib/render.js", "render", "lib/render.js", "stringify",
                          IDX_EDGE_CALL));
    /* a function a wrapper takes is a definition under the property's name */
    check_file(st, "lib/render.js",
               "function 1-3 render\nmethod 5-7 exports.plain\n"
               "function 9-11 stringify\nfunction 13-15 decode\nmodule 17-17 \n");
    CHECK(has_edge(st, "lib/render.js", "exports.plain", "lib/render.js", "stringify",
                   IDX_EDGE_CALL));
    /* a name exported under another (exports.dashed = stringify) */
    CHECK(has_edge(st, "lib/serve.js", "serve", "lib/render.js", "stringify", IDX_EDGE_CALL));
    done(st);
}

static void test_ts(void)
{
    IdxStore *st = index_fixture("ts");
    check_file(st, "src/cache.ts",
               "module 1-1 \nclass 3-6 Cache\nmethod 7-9 Cache.get\n  doc: Looks an entry up.\n"
               "method 11-13 Cache.find\nfunction 16-16 makeCache\n");
    check_file(st, "src/types.ts",
               "class 2-4 Keyed\n  doc: What a cache entry is keyed by.\nclass 6-6 Key\n");
    CHECK(has_edge(st, "src/cache.ts", "Cache", "src/types.ts", "Keyed", IDX_EDGE_INHERIT));
    CHECK(has_edge(st, "src/cache.ts", "Cache.get", "src/cache.ts", "Cache.find", IDX_EDGE_CALL));
    CHECK(has_edge(st, "src/cache.ts", "makeCache", "src/cache.ts", "Cache", IDX_EDGE_CALL));
    /* overload signatures and their implementation are one unit, with every
     * signature's doc (the first one's lines stay outside it) */
    check_file(st, "src/share.ts",
               "function 4-7 share\n  doc: Keeps the parts of b equal to a's.\n"
               "class 9-10 Box\nmethod 11-16 Box.read\n"
               "  doc: @deprecated Use a string key.\nReads a value.\n");
    CHECK(has_edge(st, "src/share.ts", "Box.read", "src/share.ts", "share", IDX_EDGE_CALL));
    /* an implementation with its own doc after its signatures is the
     * definition (its doc outside its lines, as every definition's), the
     * signatures module code; a module binding made by a call wrapping a
     * function is a definition, one inside a function is not */
    check_file(st, "src/ops.ts",
               "class 1-1 EmptyError\nmodule 3-7 \n"
               "function 8-11 first\n  doc: Takes the first element, or the fallback.\n"
               "function 14-16 EmptyError\n  doc: Thrown when there is no element.\n"
               "function 18-21 createErrorClass\n");
    /* `new EmptyError()` means the value, not the interface merged with it */
    CHECK(calls_line(st, "src/ops.ts", "first", 14));
    CHECK(!calls_line(st, "src/ops.ts", "first", 1));
    done(st);
}

static void test_docs(void)
{
    IdxStore *st = index_fixture("docs");
    /* a '#' line inside a code fence is no heading */
    check_file(st, "guide.md",
               "section 1-3 Guide\nsection 5-12 Install\nsection 14-16 Configure-the-thing\n");
    check_file(st, "setup.toml", "section 1-2 \n");
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, NULL), CR_OK);
    CHECK_INT(s.n_langs, 2);
    CHECK(s.n_langs == 2 && !strcmp(s.langs[0].name, "markdown") && s.langs[0].files == 1);
    CHECK(s.n_langs == 2 && !strcmp(s.langs[1].name, "text") && s.langs[1].files == 1);
    /* kebab-case headings are searchable by their words */
    IdxHit *h = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, "configure thing", 5, &h, &n, NULL), CR_OK);
    CHECK(n >= 1 && h[0].chunk_id == chunk_id(st, "guide.md", "Configure-the-thing"));
    free(h);
    done(st);
}

/* Test files by each language's conventions rank below code. */
static void test_test_paths(void)
{
    static const struct {
        const char *path;
        int test;
    } cases[] = {
        {"pkg/tests/test_api.py", 1},
        {"pkg/test_api.py", 1},
        {"pkg/api_test.py", 1},
        {"pkg/tests/helpers.py", 1},
        {"django/test/testcases.py", 0},
        {"pkg/latest_api.py", 0},
        {"pkg/testing.py", 0},
        {"cmd/root_test.go", 1},
        {"cmd/root.go", 0},
        {"src/FooTest.java", 1},
        {"src/Foo.java", 0},
        {"lib/a.spec.ts", 1},
        {"src/parser_tests.rs", 1},
        {"src/lexer.c", 0},
        {"tests/lexer.c", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int got = idx_is_test_path(cases[i].path);
        if (got != cases[i].test)
            fprintf(stderr, "%s: want test=%d\n", cases[i].path, cases[i].test);
        CHECK_INT(got, cases[i].test);
    }
}

/* What the layers above ask of the table (idx.h): a fence tag per
 * language, the root rule's project markers, which paths are read. */
static void test_table_answers(void)
{
    static const struct {
        const char *path, *fence;
    } fences[] = {
        {"a.py", "python"},   {"src/main.c", "c"},       {"db/db_impl.cc", "cpp"},
        {"x.h", "c"},         {"gin.go", "go"},          {"src/lib.rs", "rust"},
        {"A.java", "java"},   {"a.mjs", "javascript"},   {"src/x.ts", "typescript"},
        {"src/x.tsx", "tsx"}, {"README.md", "markdown"}, {"pyproject.toml", ""},
        {"Makefile", ""},     {"photo.png", ""},
    };
    for (size_t i = 0; i < sizeof fences / sizeof fences[0]; i++)
        CHECK_STR(idx_fence_tag(fences[i].path), fences[i].fence);
    CHECK_STR(idx_fence_tag(NULL), "");

    /* the object a method runs on, as each row names it */
    static const struct {
        const char *path, *chain;
        int on_self;
    } selfs[] = {
        {"a.py", "self.run", 1}, {"a.py", "cls.make", 1},    {"a.py", "this.run", 0},
        {"a.js", "this.run", 1}, {"a.ts", "this.a.b", 1},    {"a.js", "cls.make", 0},
        {"A.java", "this.x", 1}, {"x.cc", "this.x", 1},      {"src/lib.rs", "Self.new", 1},
        {"x.c", "this.x", 0},    {"x.c", "self.x", 1},       {"gin.go", "c.JSON", 0},
        {"a.js", "this", 0},     {"README.md", "self.x", 1},
    };
    for (size_t i = 0; i < sizeof selfs / sizeof selfs[0]; i++)
        CHECK_INT(idx_chain_on_self(selfs[i].path, selfs[i].chain), selfs[i].on_self);

    static const char *const want[] = {"pyproject.toml", "setup.py", "go.mod",
                                       "Cargo.toml",     "pom.xml",  "package.json",
                                       "tsconfig.json"};
    size_t n = 0;
    for (; idx_project_marker(n); n++)
        for (size_t k = 0; k < n; k++) /* each once */
            CHECK(strcmp(idx_project_marker(k), idx_project_marker(n)) != 0);
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= !strcmp(idx_project_marker(i), want[w]);
        CHECK(found);
    }
    CHECK(idx_project_marker(n) == NULL);

    CHECK(idx_may_index_path("gin.go"));
    CHECK(idx_may_index_path("src/a/b.rs"));
    CHECK(idx_may_index_path("bin/tool")); /* a script, by its shebang */
    CHECK(!idx_may_index_path("photo.png"));
    CHECK(!idx_may_index_path("dir/"));
}

/* A suffix rows share (C's ".h") follows the project's other files: the
 * row sharing its import hook with more of them; a tie keeps the row. */
static void test_pick(void)
{
    static const struct {
        const char *paths[6];
        const char *h_row, *text;
    } cases[] = {
        {{"a.c", "b.h", "x.cc", "y.cpp", NULL}, "cpp", "c=cpp;"},
        {{"a.c", "b.h", "x.cc", NULL}, "c", "c+;"},
        {{"a.c", "b.c", "b.h", "c.h", "x.cc", NULL}, "c", "c+;"},
        {{"a.c", "b.c", "b.h", NULL}, "c", ""},
        {{"b.h", "c.h", "d.h", "x.cc", NULL}, "cpp", "c=cpp;"},
        {{"b.h", "m.py", "n.py", NULL}, "c", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t others[IDX_LANG_MAX_ROWS] = {0};
        for (size_t k = 0; cases[i].paths[k]; k++)
            idx_lang_pick_count(others, cases[i].paths[k]);
        IdxLangPick pick, back;
        idx_lang_pick_decide(&pick, others);
        CHECK_STR(idx_lang_for_file(&pick, "src/b.h")->name, cases[i].h_row);
        CHECK_STR(idx_lang_for_file(&pick, "src/a.c")->name, "c"); /* only .h follows */
        CHECK_STR(idx_lang_for_file(NULL, "src/b.h")->name, "c");
        char text[64];
        idx_lang_pick_text(&pick, text, sizeof text);
        CHECK_STR(text, cases[i].text);
        idx_lang_pick_parse(&back, text);
        CHECK(!memcmp(&back, &pick, sizeof pick));
        /* by content: a header, in a project holding C++ sources, and
         * only by a declaration that starts a line (not prose in a comment) */
        static const char cxx[] = "namespace a {\nclass B {};\n}\n";
        static const char prose[] = "/* the class of a namespace */\nint f(void);\n";
        const IdxLang *c = idx_lang_by_name("c");
        const char *h = idx_lang_for_content(&pick, "src/b.h", c, cxx, strlen(cxx))->name;
        CHECK_STR(h, strstr(text, "c+;") ? "cpp" : "c");
        CHECK_STR(idx_lang_for_content(&pick, "src/a.c", c, cxx, strlen(cxx))->name, "c");
        CHECK_STR(idx_lang_for_content(&pick, "src/b.h", c, prose, strlen(prose))->name, "c");
    }
    CHECK(idx_lang_path_follows("inc/x.h") && !idx_lang_path_follows("x.hpp") &&
          !idx_lang_path_follows("x.c"));
    IdxLangPick junk;
    idx_lang_pick_parse(&junk, "c=nosuch;nosuch=cpp;c");
    CHECK(idx_lang_for_file(&junk, "b.h") == idx_lang_by_name("c"));
}

int main(void)
{
    RUN(test_pick);
    RUN(test_table_answers);
    RUN(test_test_paths);
    RUN(test_c);
    RUN(test_cpp);
    RUN(test_go);
    RUN(test_rust);
    RUN(test_java);
    RUN(test_js);
    RUN(test_ts);
    RUN(test_docs);
    return test_summary();
}
