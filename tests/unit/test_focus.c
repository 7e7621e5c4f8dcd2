/* The definition under the cursor (rtv_def_under) and a request's focus
 * (RtvRequest.focus_chunk) on tests/fixtures/explain: in each language a
 * class First with a short render (the file's first), a class Headers whose
 * render is longer than the indexer's window (several chunks) and whose
 * update calls render after filler lines, then a class Other with a short
 * render (nearer to that call than Headers.render), and a module-level
 * render in a folder (util/). C has no classes: its render is a static
 * function, the other in util/. */
#include "rtv.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROOT FIXTURE_DIR "/explain"

static IdxStore *st;
static char tmp[64];

typedef struct Lang {
    const char *headers, *util; /* relative paths */
    const char *symbol;         /* Headers' render, qualified */
    const char *util_symbol;
    const char *name_after; /* the line before Headers.render's name, or its first line */
    const char *caller;     /* update, as the index names it; NULL: the call is not resolved */
} Lang;

static const Lang langs[] = {
    {"python/headers.py", "python/util/rendering.py", "Headers.render", "render", "class Headers",
     "Headers.update"},
    {"c/headers.c", "c/util/render.c", "render", "render", "one step at a time", "headers_update"},
    {"cpp/headers.cc", "cpp/util/render.cc", "Headers.render", "render", "one step at a time",
     "Headers.update"},
    {"go/headers.go", "go/util/render.go", "Headers.render", "render", "one step at a time", NULL},
    {"rust/headers.rs", "rust/util/render.rs", "Headers.render", "render", "one step at a time",
     "Headers.update"},
    {"java/Headers.java", "java/util/Render.java", "Headers.render", "Render.render",
     "one step at a time", "Headers.update"},
    {"js/headers.js", "js/util/render.js", "Headers.render", "render", "one step at a time",
     "Headers.update"},
    {"ts/headers.ts", "ts/util/render.ts", "Headers.render", "render", "one step at a time",
     "Headers.update"},
};

static IdxStore *open_indexed(void)
{
    IdxStore *s = NULL;
    ErrInfo e = {0};
    IdxUpdateStats stats;
    strcpy(tmp, "/tmp/coderag-focus-XXXXXX");
    if (!mkdtemp(tmp)) return NULL;
    IdxConfig cfg = {.root = ROOT, .index_dir = tmp, .threads = 1};
    if (idx_open(&cfg, 0, &s, &e) != CR_OK || idx_update(s, NULL, NULL, &stats, &e) != CR_OK) {
        fprintf(stderr, "index: %s\n", e.msg);
        idx_close(s);
        return NULL;
    }
    return s;
}

/* The 1-based line of path holding `after` (when not NULL), then the first
 * line from there holding `needle`; 0 when none. */
static uint32_t line_of(const char *path, const char *after, const char *needle)
{
    char full[512], buf[1024];
    snprintf(full, sizeof full, "%s/%s", ROOT, path);
    FILE *f = fopen(full, "r");
    uint32_t n = 0, found = 0;
    int armed = after == NULL;
    while (f && !found && fgets(buf, sizeof buf, f)) {
        n++;
        if (!armed && strstr(buf, after)) armed = 1;
        if (armed && strstr(buf, needle)) found = n;
    }
    if (f) fclose(f);
    return found;
}

/* d is Headers' whole render in l. */
static void check_headers_render(const Lang *l, const RtvDef *d, uint32_t name_line)
{
    CHECK_STR(d->head.path, l->headers);
    CHECK_STR(d->head.symbol, l->symbol);
    CHECK(d->n_pieces >= 2);
    CHECK(d->start_line <= name_line && name_line < d->start_line + 3);
    uint32_t last_step = line_of(l->headers, NULL, "n + 119");
    CHECK(d->end_line > last_step && d->end_line <= last_step + 2); /* its return and brace */
}

static void test_def_under(void)
{
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        const Lang *l = &langs[i];
        RtvDef d;
        fprintf(stderr, "  %s\n", l->headers);
        uint32_t name_line = line_of(l->headers, l->name_after, "render(");
        uint32_t call_line = line_of(l->headers, NULL, "fresh");
        CHECK(name_line > 0 && call_line > name_line);
        /* on its name */
        CHECK_INT(rtv_def_under(st, l->headers, name_line, "render", &d, NULL), CR_OK);
        check_headers_render(l, &d, name_line);
        rtv_def_release(&d);
        /* inside its own body (a recursive call would be there) */
        CHECK_INT(rtv_def_under(st, l->headers, name_line + 60, "render", &d, NULL), CR_OK);
        check_headers_render(l, &d, name_line);
        rtv_def_release(&d);
        /* called from update: the class's own, not Other's (nearer) or util's */
        CHECK_INT(rtv_def_under(st, l->headers, call_line, "render", &d, NULL), CR_OK);
        check_headers_render(l, &d, name_line);
        rtv_def_release(&d);
        /* util's own render there */
        uint32_t u = line_of(l->util, NULL, "render(");
        CHECK_INT(rtv_def_under(st, l->util, u, "render", &d, NULL), CR_OK);
        CHECK_STR(d.head.path, l->util);
        CHECK_STR(d.head.symbol, l->util_symbol);
        rtv_def_release(&d);
    }
}

static const char *last_dot(const char *s)
{
    const char *d = strrchr(s, '.');
    return d ? d + 1 : s;
}

static void test_def_under_elsewhere(void)
{
    RtvDef d;
    /* a file that defines no such name: another file's definition */
    CHECK_INT(rtv_def_under(st, "python/util/rendering.py", 2, "update", &d, NULL), CR_OK);
    CHECK(!strcmp(last_dot(d.head.symbol), "update"));
    rtv_def_release(&d);
    ErrInfo e = {0};
    CHECK_INT(rtv_def_under(st, "python/headers.py", 3, "no_such_name_here", &d, &e), CR_ENOENT);
    CHECK(strstr(e.msg, "no_such_name_here") != NULL);
    CHECK_INT(rtv_def_under(st, "python/headers.py", 3, "", &d, NULL), CR_EINVAL);
    CHECK_INT(rtv_def_under(st, "no/such/file.py", 3, "render", &d, NULL), CR_OK);
    rtv_def_release(&d);
}

static int nl_count(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The focus is the first item, whole (every piece), outside the budget
 * (the definition is longer than the smaller one); the other items fill the
 * budget and never repeat its lines. */
static void test_focus_first_whole(void)
{
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        const Lang *l = &langs[i];
        RtvDef d;
        fprintf(stderr, "  %s\n", l->headers);
        uint32_t call_line = line_of(l->headers, NULL, "fresh");
        CHECK_INT(rtv_def_under(st, l->headers, call_line, "render", &d, NULL), CR_OK);
        size_t budgets[] = {1000, 20000};
        for (size_t b = 0; b < 2; b++) {
            RtvRequest req;
            RtvAnswer a;
            rtv_request_init(&req);
            req.question = "What does render do, and how is it used?";
            req.budget = budgets[b];
            req.use_dense = 0;
            req.focus_chunk = d.pieces[d.n_pieces - 1]; /* any piece names it */
            CHECK_INT(rtv_search(st, &req, &a, NULL), CR_OK);
            CHECK(a.n_items >= 1);
            if (a.n_items) {
                CHECK_STR(a.items[0].chunk.path, l->headers);
                CHECK_STR(rtv_item_symbol(&a.items[0]), l->symbol);
                CHECK_INT(a.items[0].start_line, d.start_line);
                CHECK_INT(a.items[0].end_line, d.end_line);
                CHECK_INT(nl_count(a.items[0].text), (int)(d.end_line - d.start_line + 1));
                CHECK_INT(a.match, RTV_MATCH_STRONG);
            }
            CHECK(a.n_items > 1);             /* the rest of the context, in the budget */
            if (l->caller && a.n_items > 1) { /* its callers first */
                CHECK_STR(rtv_item_symbol(&a.items[1]), l->caller);
                CHECK(a.items[1].via & RTV_VIA_GRAPH);
            }
            size_t rest = 0;
            for (size_t k = 1; k < a.n_items; k++)
                rest += strlen(a.items[k].text);
            CHECK(rest <= budgets[b]);
            for (size_t k = 1; k < a.n_items; k++)
                CHECK(strcmp(a.items[k].chunk.path, l->headers) != 0 ||
                      a.items[k].end_line < d.start_line || a.items[k].start_line > d.end_line);
            rtv_answer_release(&a);
        }
        rtv_def_release(&d);
    }
}

/* The extractive explanation (issue 36): the focus first, then each of its
 * callers marked as one, its call line quoted with its number. */
static void test_focus_answer_callers(void)
{
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        const Lang *l = &langs[i];
        if (!l->caller) continue;
        RtvDef d;
        fprintf(stderr, "  %s\n", l->headers);
        uint32_t call_line = line_of(l->headers, NULL, "fresh");
        CHECK_INT(rtv_def_under(st, l->headers, call_line, "render", &d, NULL), CR_OK);
        RtvRequest req;
        RtvAnswer a;
        rtv_request_init(&req);
        req.question = "Explain render and its callers";
        req.mode = RTV_MODE_EXTRACTIVE;
        req.use_dense = 0;
        req.focus_chunk = d.pieces[0];
        CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
        char want[256];
        snprintf(want, sizeof want, "It is called by `%s`", l->caller);
        CHECK(a.answer && strstr(a.answer, want) != NULL);
        snprintf(want, sizeof want, "**2. `%s`** [%s:", l->caller, l->headers);
        const char *two = a.answer ? strstr(a.answer, want) : NULL;
        CHECK(two != NULL);
        snprintf(want, sizeof want, " calls `%s`\n```\n", l->symbol);
        CHECK(two && strstr(two, want) != NULL);
        snprintf(want, sizeof want, "%5u \xE2\x94\x82 ", call_line);
        const char *quoted = two ? strstr(two, want) : NULL;
        CHECK(quoted != NULL);
        CHECK(quoted && strstr(quoted, "render") &&
              strstr(quoted, "render") < strchr(quoted, '\n'));
        if (!two || !quoted) fprintf(stderr, "%s\n", a.answer ? a.answer : "(none)");
        rtv_answer_release(&a);
        rtv_def_release(&d);
    }
}

/* A definition longer than RTV_FOCUS_MAX_CHARS is packed up to the cap,
 * cut after a whole line, its end_line saying where. */
static void test_focus_capped(void)
{
    char root[64], ix[64], path[96];
    strcpy(root, "/tmp/coderag-focus-big-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    snprintf(ix, sizeof ix, "%s/.ix", root);
    snprintf(path, sizeof path, "%s/big.py", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "def huge(x):\n");
    for (int i = 0; i < 3000; i++) /* 3,000 lines of 31 bytes: past the cap */
        fprintf(f, "    x = x + %05d  # one step\n", i);
    fprintf(f, "    return x\n");
    fclose(f);
    IdxStore *big = NULL;
    IdxUpdateStats stats;
    IdxConfig cfg = {.root = root, .index_dir = ix, .threads = 1};
    CHECK_INT(idx_open(&cfg, 0, &big, NULL), CR_OK);
    CHECK_INT(idx_update(big, NULL, NULL, &stats, NULL), CR_OK);
    RtvDef d;
    CHECK_INT(rtv_def_under(big, "big.py", 1, "huge", &d, NULL), CR_OK);
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = "What does huge do?";
    req.budget = 50; /* nothing else: the pieces past the cap are not joined to it */
    req.use_dense = 0;
    req.focus_chunk = d.pieces[0];
    CHECK_INT(rtv_search(big, &req, &a, NULL), CR_OK);
    CHECK(a.n_items >= 1);
    if (a.n_items) {
        const RtvItem *it = &a.items[0];
        size_t len = strlen(it->text);
        CHECK(len <= RTV_FOCUS_MAX_CHARS && len > RTV_FOCUS_MAX_CHARS - 100);
        CHECK(it->text[len - 1] == '\n');
        CHECK_INT(it->start_line, 1);
        CHECK_INT(it->end_line, nl_count(it->text));
        CHECK(it->end_line < d.end_line);
    }
    rtv_answer_release(&a);
    rtv_def_release(&d);
    idx_close(big);
    test_sh("rm -rf '%s'", root, "");
}

/* A long caller whose call is far below its head, past a long doc string
 * (issue 36): its window holds the call, and the call line is quoted,
 * though the window starts inside the doc string. */
static void test_focus_long_caller(void)
{
    char root[64], ix[64], path[96];
    strcpy(root, "/tmp/coderag-focus-caller-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    snprintf(ix, sizeof ix, "%s/.ix", root);
    snprintf(path, sizeof path, "%s/calls.py", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "def target(x):\n    return x + 1\n\n\n"
               "def caller(y):\n    \"\"\"Runs the target.\n\n");
    for (int i = 0; i < 24; i++) /* lines 8-31: the doc string's body */
        fprintf(f, "    note %02d about what caller does\n", i);
    fprintf(f, "    \"\"\"\n"); /* 32 */
    for (int i = 0; i < 6; i++) /* 33-38 */
        fprintf(f, "    a%d = y * %d\n", i, i);
    fprintf(f, "    z = target(a5)\n    return z\n"); /* 39, 40 */
    fclose(f);
    IdxStore *s2 = NULL;
    IdxUpdateStats stats;
    IdxConfig cfg = {.root = root, .index_dir = ix, .threads = 1};
    CHECK_INT(idx_open(&cfg, 0, &s2, NULL), CR_OK);
    CHECK_INT(idx_update(s2, NULL, NULL, &stats, NULL), CR_OK);
    RtvDef d;
    CHECK_INT(rtv_def_under(s2, "calls.py", 1, "target", &d, NULL), CR_OK);
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = "What does target do, and how is it used?";
    req.mode = RTV_MODE_EXTRACTIVE;
    req.use_dense = 0;
    req.focus_chunk = d.pieces[0];
    CHECK_INT(rtv_ask(s2, &req, &a, NULL), CR_OK);
    const char *two = a.answer ? strstr(a.answer, "**2. `caller`**") : NULL;
    CHECK(two != NULL);
    CHECK(two && strstr(two, "   39 \xE2\x94\x82     z = target(a5)\n") != NULL);
    if (!two || !strstr(two, "   39 ")) fprintf(stderr, "%s\n", a.answer ? a.answer : "(none)");
    rtv_answer_release(&a);
    rtv_def_release(&d);
    idx_close(s2);
    test_sh("rm -rf '%s'", root, "");
}

static void test_focus_gone(void)
{
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = "render";
    req.focus_chunk = 999999;
    CHECK_INT(rtv_search(st, &req, &a, NULL), CR_ENOENT);
    rtv_answer_release(&a);
}

int main(void)
{
    st = open_indexed();
    CHECK(st != NULL);
    if (!st) return test_summary() | 1;
    RUN(test_def_under);
    RUN(test_def_under_elsewhere);
    RUN(test_focus_first_whole);
    RUN(test_focus_answer_callers);
    RUN(test_focus_capped);
    RUN(test_focus_long_caller);
    RUN(test_focus_gone);
    idx_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmp);
    return test_summary();
}
