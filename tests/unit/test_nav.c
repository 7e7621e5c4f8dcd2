/* Navigation over the code graph (retrieve/nav.c) on tests/fixtures/longdef,
 * whose Application.__init__, make_response and run are longer than the
 * indexer's window and so stored as several chunks, and where
 * helpers.make_response shares a method's name. */
#include "rtv.h"
#include "retrieve/rtv_int.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROOT FIXTURE_DIR "/longdef"
#define APP "webapp/app.py"

static IdxStore *st;
static char tmp[64];

static IdxStore *open_indexed(void)
{
    IdxStore *s = NULL;
    ErrInfo e = {0};
    IdxUpdateStats stats;
    strcpy(tmp, "/tmp/coderag-nav-XXXXXX");
    if (!mkdtemp(tmp)) return NULL;
    IdxConfig cfg = {.root = ROOT, .index_dir = tmp, .threads = 1};
    if (idx_open(&cfg, 0, &s, &e) != CR_OK || idx_update(s, NULL, NULL, &stats, &e) != CR_OK) {
        fprintf(stderr, "index: %s\n", e.msg);
        idx_close(s);
        return NULL;
    }
    return s;
}

static const RtvDef *find_def(const RtvDef *v, size_t n, const char *symbol)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].head.symbol, symbol)) return &v[i];
    return NULL;
}

/* The fixture does what it is for: the long methods are several chunks. */
static void test_fixture_is_split(void)
{
    IdxChunk *c = NULL;
    size_t n = 0, pieces = 0;
    CHECK_INT(idx_file_chunks(st, APP, &c, &n, NULL), CR_OK);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].symbol, "Application.make_response")) {
            pieces++;
            CHECK(c[i].window >= 1);
        }
    CHECK(pieces >= 2);
    idx_chunks_free(c, n);
}

static void test_file_defs_whole(void)
{
    RtvDef *d = NULL;
    size_t n = 0;
    CHECK_INT(rtv_file_defs(st, APP, &d, &n, NULL), CR_OK);
    const char *names[] = {"Application", "Application.__init__", "Application.make_response",
                           "Application.run", "Application.dispatch"};
    CHECK_INT(n, 5); /* each definition once, however many pieces */
    for (size_t i = 0; i < 5; i++)
        CHECK(find_def(d, n, names[i]) != NULL);
    const RtvDef *mr = find_def(d, n, "Application.make_response");
    if (mr) {
        CHECK_INT(mr->start_line, 124);
        CHECK_INT(mr->end_line, 276);
        CHECK(mr->n_pieces >= 2);
        CHECK(strstr(mr->head.signature, "def make_response(self, rv") != NULL);
        CHECK(strstr(mr->head.docstring, "Convert a view") != NULL);
    }
    const RtvDef *run = find_def(d, n, "Application.run");
    if (run) CHECK_INT(run->end_line, 400);
    rtv_defs_free(d, n);
}

static void test_def_at(void)
{
    static const struct {
        uint32_t line;
        const char *symbol;
    } cases[] = {
        {8, "Application"},
        {10, "Application.__init__"},
        {124, "Application.make_response"},
        {250, "Application.make_response"},
        {276, "Application.make_response"},
        {300, "Application.run"},
        {403, "Application.dispatch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RtvDef d;
        CHECK_INT(rtv_def_at(st, APP, cases[i].line, &d, NULL), CR_OK);
        CHECK_STR(d.head.symbol, cases[i].symbol);
        rtv_def_release(&d);
    }
    RtvDef d;
    CHECK_INT(rtv_def_at(st, APP, 2, &d, NULL), CR_ENOENT); /* the module docstring */
    rtv_def_release(&d);
}

/* Hover's lookup: the definition under the cursor wins, long or not. */
static void test_defs_named_near(void)
{
    RtvDef *d = NULL;
    size_t n = 0, total = 0;
    CHECK_INT(rtv_defs_named(st, "make_response", APP, 124, 3, &d, &n, &total, NULL), CR_OK);
    CHECK_INT(total, 2);
    CHECK(n == 2);
    if (n == 2) {
        CHECK_STR(d[0].head.path, APP);
        CHECK_STR(d[0].head.symbol, "Application.make_response");
        CHECK_STR(d[1].head.path, "webapp/helpers.py");
    }
    rtv_defs_free(d, n);
    CHECK_INT(rtv_defs_named(st, "make_response", "webapp/helpers.py", 10, 1, &d, &n, &total, NULL),
              CR_OK);
    CHECK_INT(n, 1);
    if (n) CHECK_STR(d[0].head.path, "webapp/helpers.py");
    rtv_defs_free(d, n);
    CHECK_INT(rtv_defs_named(st, "webapp.app.Application.run", NULL, 0, 0, &d, &n, NULL, NULL),
              CR_OK);
    CHECK_INT(n, 1);
    if (n) CHECK_INT(d[0].start_line, 278);
    rtv_defs_free(d, n);
    CHECK_INT(rtv_defs_named(st, "no_such_name", NULL, 0, 0, &d, &n, NULL, NULL), CR_OK);
    CHECK_INT(n, 0);
}

/* A partly qualified name finds the definitions it names, not every one
 * that shares its last component; "::" reads as ".". */
static void test_defs_named_qualified(void)
{
    static const struct {
        const char *q;
        size_t want;
        const char *path; /* of the one found, when want is 1 */
    } cases[] = {
        {"Application.make_response", 1, APP},
        {"app.Application.make_response", 1, APP},
        {"Application::make_response", 1, APP},
        {"helpers.make_response", 1, "webapp/helpers.py"},
        {"make_response", 2, NULL},
        {"NoSuchClass.make_response", 0, NULL},
        {"plication.make_response", 0, NULL}, /* a component boundary, not any suffix */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RtvDef *d = NULL;
        size_t n = 0, total = 0;
        CHECK_INT(rtv_defs_named(st, cases[i].q, NULL, 0, 0, &d, &n, &total, NULL), CR_OK);
        if (total != cases[i].want) fprintf(stderr, "  case %s\n", cases[i].q);
        CHECK_INT(total, cases[i].want);
        if (n == 1 && cases[i].path) CHECK_STR(d[0].head.path, cases[i].path);
        rtv_defs_free(d, n);
    }
}

static RtvDef def_named(const char *q)
{
    RtvDef *d = NULL, one = {0};
    size_t n = 0;
    rtv_defs_named(st, q, NULL, 0, 1, &d, &n, NULL, NULL);
    if (n) {
        one = d[0];
        memset(&d[0], 0, sizeof d[0]);
    } else {
        fprintf(stderr, "no definition %s\n", q);
    }
    rtv_defs_free(d, n);
    return one;
}

static const RtvRef *find_ref(const RtvRef *v, size_t n, const char *symbol, IdxEdgeKind k)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].kind == k && !strcmp(v[i].other.head.symbol, symbol)) return &v[i];
    return NULL;
}

static void test_refs(void)
{
    RtvRef *r = NULL;
    size_t n = 0, total = 0;
    /* callees of a long method: its last piece calls the helper and raises */
    RtvDef mr = def_named("webapp.app.Application.make_response");
    CHECK_INT(rtv_refs(st, &mr, 1, 0, 0, &r, &n, &total, NULL), CR_OK);
    CHECK_INT(n, total);
    const RtvRef *h = find_ref(r, n, "make_response", IDX_EDGE_CALL);
    CHECK(h && !strcmp(h->other.head.path, "webapp/helpers.py"));
    if (h) CHECK(h->at_start > mr.head.end_line); /* written in a later piece */
    CHECK(find_ref(r, n, "ResponseError", IDX_EDGE_RAISE) ||
          find_ref(r, n, "ResponseError", IDX_EDGE_CALL));
    rtv_refs_free(r, n);
    /* callers: dispatch calls self.make_response; helpers.render calls
     * app.make_response on an untyped receiver, with two definitions of the
     * name: no edge is made up for it */
    CHECK_INT(rtv_refs(st, &mr, 0, RTV_REF_BIT(IDX_EDGE_CALL), 0, &r, &n, &total, NULL), CR_OK);
    CHECK_INT(n, 1);
    CHECK(find_ref(r, n, "Application.dispatch", IDX_EDGE_CALL) != NULL);
    CHECK(find_ref(r, n, "render", IDX_EDGE_CALL) == NULL);
    rtv_refs_free(r, n);
    size_t callers, refs;
    CHECK_INT(rtv_def_counts(st, &mr, &callers, &refs, NULL), CR_OK);
    CHECK_INT(callers, 1);
    CHECK_INT(refs, 0);
    rtv_def_release(&mr);

    /* the class: instantiated and imported by serve.py */
    RtvDef cls = def_named("webapp.app.Application");
    CHECK_INT(rtv_def_counts(st, &cls, &callers, &refs, NULL), CR_OK);
    CHECK_INT(callers, 1);
    CHECK_INT(refs, 1);
    CHECK_INT(rtv_refs(st, &cls, 0, 0, 1, &r, &n, &total, NULL), CR_OK);
    CHECK_INT(n, 1); /* max respected */
    CHECK_INT(total, 2);
    rtv_refs_free(r, n);
    rtv_def_release(&cls);

    RtvDef run = def_named("webapp.app.Application.run");
    CHECK_INT(rtv_def_counts(st, &run, &callers, &refs, NULL), CR_OK);
    CHECK_INT(callers, 1); /* serve.main */
    rtv_def_release(&run);
    StrBuf lim;
    sb_init(&lim);
    rtv_graph_limits(NULL, &lim);
    CHECK(strstr(lim.buf, "dynamic dispatch") != NULL);
    sb_reset(&lim);
    rtv_graph_limits("serve.py", &lim); /* the row's own: Python's getattr */
    CHECK(strstr(lim.buf, "getattr") != NULL);
    sb_reset(&lim);
    rtv_graph_limits("main.go", &lim); /* not Python's */
    CHECK(strstr(lim.buf, "getattr") == NULL && strstr(lim.buf, "interface") != NULL);
    sb_release(&lim);
}

static void test_symbols(void)
{
    RtvDef *d = NULL;
    size_t n = 0;
    CHECK_INT(rtv_symbols(st, "make_response", 10, &d, &n, NULL), CR_OK);
    CHECK_INT(n, 2); /* exact names first, each definition once */
    if (n == 2) {
        CHECK_STR(d[0].head.symbol, "Application.make_response");
        CHECK_INT(d[0].start_line, 124);
        CHECK_STR(d[1].head.path, "webapp/helpers.py");
    }
    rtv_defs_free(d, n);
    CHECK_INT(rtv_symbols(st, "dispatch request", 10, &d, &n, NULL), CR_OK);
    CHECK(n >= 1 && !strcmp(d[0].head.symbol, "Application.dispatch"));
    for (size_t i = 0; i < n; i++)
        CHECK(d[i].head.kind != IDX_KIND_MODULE);
    rtv_defs_free(d, n);
    CHECK_INT(rtv_symbols(st, "   ", 10, &d, &n, NULL), CR_OK);
    CHECK_INT(n, 0);
}

/* Two excerpts of one long method: joined when the lines between fit the
 * budget left, else kept apart and the answer says what is missing. */
static RtvItem piece(int64_t id, uint32_t a, uint32_t b)
{
    RtvItem it = {0};
    StrBuf sb;
    sb_init(&sb);
    idx_chunk_get(st, id, &it.chunk, NULL);
    idx_read_lines(st, APP, a, b, &sb, NULL, NULL);
    it.start_line = a;
    it.end_line = b;
    it.score = 1;
    it.via = RTV_VIA_BM25;
    it.text = sb_detach(&sb, NULL);
    return it;
}

static void test_join_pieces(void)
{
    RtvDef mr = def_named("webapp.app.Application.make_response");
    CHECK(mr.n_pieces >= 2);
    if (mr.n_pieces < 2) return;
    IdxChunk second;
    CHECK_INT(idx_chunk_get(st, mr.pieces[1], &second, NULL), CR_OK);
    uint32_t b0 = second.start_line + 2;
    RtvItem v[2];
    v[0] = piece(mr.pieces[1], b0, b0 + 9);
    v[1] = piece(mr.pieces[0], 130, 139);
    size_t n = 2, left = 0;
    CHECK_INT(rtv_join_pieces(st, NULL, v, &n, &left, NULL), CR_OK);
    CHECK_INT(n, 2); /* nothing left to pay for the hole */
    RtvAnswerIn in = {.st = st, .items = v, .n = n};
    char *a = rtv_extractive_answer(&in);
    char want[160];
    snprintf(want, sizeof want,
             "(lines 140-%u of it, between the parts shown, are not in the context)", b0 - 1);
    CHECK(strstr(a, want) != NULL);
    free(a);

    left = 100000;
    CHECK_INT(rtv_join_pieces(st, NULL, v, &n, &left, NULL), CR_OK);
    CHECK_INT(n, 1);
    CHECK_INT(v[0].start_line, 130);
    CHECK_INT(v[0].end_line, b0 + 9);
    CHECK_INT(v[0].chunk.window, 1); /* named by the first piece */
    CHECK_INT(count_lines(v[0].text, strlen(v[0].text)), b0 + 9 - 130 + 1);
    CHECK(left < 100000);
    in.n = n;
    a = rtv_extractive_answer(&in);
    CHECK(strstr(a, "not in the context") == NULL);
    free(a);
    for (size_t i = 0; i < n; i++)
        rtv_item_release(&v[i]);
    idx_chunk_release(&second);
    rtv_def_release(&mr);
}

/* An answer about the long method cites no two parts with a silent hole. */
static void test_ask_no_silent_hole(void)
{
    RtvRequest req;
    RtvAnswer a = {0};
    rtv_request_init(&req);
    req.question = "make_response response_step header_step merged_headers";
    CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
    for (size_t i = 0; i < a.n_items; i++)
        for (size_t k = 0; k < a.n_items; k++) {
            const RtvItem *x = &a.items[i], *y = &a.items[k];
            if (i == k || strcmp(x->chunk.symbol, "Application.make_response") ||
                strcmp(y->chunk.symbol, "Application.make_response") ||
                x->end_line >= y->start_line)
                continue;
            if (x->end_line + 1 < y->start_line) CHECK(strstr(a.answer, "not in the context"));
        }
    /* rtv_search is the same context */
    RtvAnswer s = {0};
    CHECK_INT(rtv_search(st, &req, &s, NULL), CR_OK);
    CHECK_INT(s.n_items, a.n_items);
    for (size_t i = 0; i < s.n_items && i < a.n_items; i++) {
        CHECK_INT(s.items[i].chunk.id, a.items[i].chunk.id);
        CHECK_INT(s.items[i].start_line, a.items[i].start_line);
    }
    CHECK(s.answer == NULL);
    rtv_answer_release(&s);
    rtv_answer_release(&a);
}

int main(void)
{
    st = open_indexed();
    CHECK(st != NULL);
    if (!st) return test_summary() | 1;
    RUN(test_fixture_is_split);
    RUN(test_file_defs_whole);
    RUN(test_def_at);
    RUN(test_defs_named_near);
    RUN(test_defs_named_qualified);
    RUN(test_refs);
    RUN(test_symbols);
    RUN(test_join_pieces);
    RUN(test_ask_no_silent_hole);
    idx_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmp);
    return test_summary();
}
