/* A language is one table row for the whole engine: this binary links its
 * own table (index/chunk/lang/rows.c holds the product's array alone, so the
 * linker takes this file's instead) with a toy language added, and checks
 * that every layer picks the row up with no other change: detection and
 * chunking (index/), the fence tag, project markers, test-file convention
 * and built-in embedder coverage (idx.h), citations in brackets and in
 * prose verified and flagged (verify/), a moved citation re-found by the
 * row's own definition shape (verify/ anchors), retrieval and the LLM
 * prompt's fence (retrieve/). The toy language reads like C: its row
 * borrows C's grammar and query, under its own name and extension. */
#include "idx.h"
#include "index/dense/embed_int.h"
#include "index/chunk/lang/lang.h"
#include "retrieve/rtv_int.h"
#include "test.h"
#include "vfy.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODEL FIXTURE_DIR "/../../models/code-nbow-py-v1.crm"

/* ---------------------------------------------------------------- the table of this binary */

extern const char idx_query_c[];
const TSLanguage *tree_sitter_c(void);

static const char *const toy__exts[] = {".toy", NULL};
static const char *const toy__comments[] = {"comment", NULL};
static const char *const toy__tests[] = {"*_check.toy", NULL};
static const char *const toy__markers[] = {"toy.project", NULL};

static const IdxLang idx_lang_toy = {
    .name = "toy",
    .exts = toy__exts,
    .grammar = tree_sitter_c,
    .query = idx_query_c,
    .comments = toy__comments,
    .tests = toy__tests,
    .module_name = idx_lang_module_keep_ext,
    .fence = "toy",
    .markers = toy__markers,
    .builtin_embed = 1,
};

extern const IdxLang idx_lang_python, idx_lang_c, idx_lang_cpp, idx_lang_go, idx_lang_rust,
    idx_lang_java, idx_lang_javascript, idx_lang_typescript, idx_lang_tsx, idx_lang_markdown,
    idx_lang_rst, idx_lang_text;

const IdxLang *const idx_lang_rows[] = {
    &idx_lang_python, &idx_lang_c,          &idx_lang_cpp,        &idx_lang_go,  &idx_lang_rust,
    &idx_lang_java,   &idx_lang_javascript, &idx_lang_typescript, &idx_lang_tsx, &idx_lang_markdown,
    &idx_lang_rst,    &idx_lang_text,       &idx_lang_toy,
};
const size_t idx_lang_n_rows = sizeof idx_lang_rows / sizeof idx_lang_rows[0];

/* ---------------------------------------------------------------- the workspace */

#define MAIN_TOY                                                                                   \
    "/* The toy program. */\n"                                                                     \
    "int spin_wheel(int turns)\n"                                                                  \
    "{\n"                                                                                          \
    "    return turns * 3;\n"                                                                      \
    "}\n"

#define UTIL_TOY                                                                                   \
    "/** Counts the gears of a toy clock. */\n"                                                    \
    "int count_gears(int n)\n"                                                                     \
    "{\n"                                                                                          \
    "    int total = 0;\n"                                                                         \
    "    for (int i = 0; i < n; i++)\n"                                                            \
    "        total += i;\n"                                                                        \
    "    return total;\n"                                                                          \
    "}\n"

static char root[128], index_dir[160];

static void write_file(const char *rel, const char *text)
{
    test_put(root, rel, text);
}

static IdxStore *open_workspace(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-test-toy-XXXXXX");
    if (!mkdtemp(root)) return NULL;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/lib", root);
    CHECK(mkdir(dir, 0755) == 0);
    write_file("main.toy", MAIN_TOY);
    write_file("lib/util.toy", UTIL_TOY);
    write_file("lib/util_check.toy", "int check_gears(void)\n{\n    return 0;\n}\n");
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1, .embed_provider = "none"};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (!rc) rc = idx_update(st, NULL, NULL, NULL, &e);
    CHECK_INT(rc, CR_OK);
    if (rc) fprintf(stderr, "indexing: %s\n", e.msg);
    return st;
}

/* ---------------------------------------------------------------- the layers */

/* idx.h: what the layers above ask of the table. */
static void test_table(void)
{
    CHECK(idx_is_source_path("lib/util.toy"));
    CHECK(idx_may_index_path("main.toy"));
    CHECK_STR(idx_fence_tag("lib/util.toy"), "toy");
    int ext = 0, marker = 0;
    for (size_t i = 0; idx_source_ext(i); i++)
        ext |= !strcmp(idx_source_ext(i), ".toy");
    for (size_t i = 0; idx_project_marker(i); i++)
        marker |= !strcmp(idx_project_marker(i), "toy.project");
    CHECK(ext);
    CHECK(marker);
    CHECK(idx_is_test_path("lib/util_check.toy"));
    CHECK(!idx_is_test_path("lib/util.toy"));

    /* the built-in embedder covers the rows that say so */
    Embedder *em = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_builtin_new(MODEL, &em, &e), CR_OK);
    if (em) {
        CHECK(idx_embedder_covers(em, "lib/util.toy"));
        CHECK(idx_embedder_covers(em, "a.py"));
        CHECK(!idx_embedder_covers(em, "main.go"));
        char d[256];
        idx_embedder_describe(em, d, sizeof d);
        CHECK(strstr(d, " (embeds python, toy files only)") != NULL);
        idx_embedder_free(em);
    }
}

/* index/: found by extension, chunked by the row's query; verify/: cited
 * at the root and in a folder, in brackets and in prose; retrieve/: found
 * and fenced in the prompt. */
static IdxStore *st;

static void test_layers(void)
{
    IdxChunk *ch = NULL;
    size_t n = 0;
    CHECK_INT(idx_file_chunks(st, "lib/util.toy", &ch, &n, NULL), CR_OK);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(ch[i].symbol, "count_gears")) {
            found = 1;
            CHECK_INT(ch[i].kind, IDX_KIND_FUNCTION);
            CHECK_INT(ch[i].start_line, 2); /* its doc comment is its docstring */
            CHECK_INT(ch[i].end_line, 8);
        }
    CHECK(found);
    idx_chunks_free(ch, n);
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, NULL), CR_OK);
    int toy_files = 0;
    for (size_t i = 0; i < s.n_langs; i++)
        if (!strcmp(s.langs[i].name, "toy")) toy_files = (int)s.langs[i].files;
    CHECK_INT(toy_files, 3);

    /* retrieval finds it, and the prompt fences it as toy */
    RtvRequest req;
    rtv_request_init(&req);
    req.question = "How are the gears of the toy clock counted?";
    req.mode = RTV_MODE_EXTRACTIVE;
    RtvAnswer a;
    ErrInfo e = {0};
    CHECK_INT(rtv_ask(st, &req, &a, &e), CR_OK);
    CHECK(a.n_items >= 1 && !strcmp(a.items[0].chunk.path, "lib/util.toy"));
    StrBuf prompt;
    sb_init(&prompt);
    rtv_prompt_user(a.items, a.n_items, req.question, &prompt);
    CHECK(strstr(prompt.buf, "```toy\n") != NULL);
    sb_release(&prompt);

    /* verification: shown lines pass, at the root and in a folder; the rest is flagged */
    VfySource src;
    vfy_source_for_store(&src, st);
    static const char spin[] = "int spin_wheel(int turns)\n{\n    return turns * 3;\n}\n";
    const VfyContextItem ctx[] = {
        {"main.toy", 2, 5, "spin_wheel", spin, sizeof spin - 1},
        {"lib/util.toy", 1, 8, "count_gears", UTIL_TOY, sizeof UTIL_TOY - 1},
    };
    const char *answer = "Gears are summed [lib/util.toy:2-7], wheels spun in main.toy:2-5; "
                         "not [main.toy:40-41] nor [gears.toy:1] nor [main.toy:1].";
    VfyResult r;
    CHECK_INT(vfy_check(&src, answer, strlen(answer), ctx, 2, VFY_AUTHOR_MODEL, &r, &e), CR_OK);
    CHECK_INT(r.n_citations, 2);
    CHECK_INT(r.n_rejected, 3);
    for (size_t i = 0; i < r.n_rejected; i++) {
        const char *t = r.rejected[i].text, *why = r.rejected[i].reason;
        CHECK((!strcmp(t, "[main.toy:40-41]") && !strcmp(why, "out-of-range")) ||
              (!strcmp(t, "[gears.toy:1]") && !strcmp(why, "file-not-found")) ||
              (!strcmp(t, "[main.toy:1]") && !strcmp(why, "not-in-context")));
    }
    vfy_result_release(&r);
    rtv_answer_release(&a);

    /* a moved citation: found again by the row's definition shape */
    VfyAnchor an = {
        .path = "lib/util.toy", .start_line = 2, .end_line = 8, .symbol = "count_gears"};
    vfy_anchor_hash("gone\n", 5, an.hash);
    const char *now = "int other(void) { return 1; }\n\n" UTIL_TOY;
    VfyAnchorMatch m;
    CHECK_INT(vfy_anchor_resolve(&an, now, strlen(now), &m), VFY_ANCHOR_MOVED);
    CHECK_INT(m.start_line, 4);
    CHECK_INT(m.end_line, 10);
}

int main(void)
{
    setenv("CODERAG_LOG", "error", 0);
    RUN(test_table);
    st = open_workspace();
    if (st) {
        RUN(test_layers);
        idx_close(st);
    }
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    return test_summary();
}
