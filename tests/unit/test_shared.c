#include "idx.h"
#include "index/chunk/lang/lang.h"
#include "index/store/store_int.h"
#include "index/dense/vec_int.h"
#include "test.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a server with many roots holds per root (issue 25). IdxShared:
 * stores opened with one handle share one copy of the builtin model (a
 * server with 200 roots held 200 copies, 1.8 GB) and the compiled queries;
 * the model outlives the handle while a store uses it; a model file changed
 * on disk is loaded anew; without a handle each store loads its own as
 * before. And a full pass gives its page cache back. */

#define MODEL FIXTURE_DIR "/../../models/code-nbow-py-v1.crm"

static char tmpdir[] = "/tmp/coderag-test-shared-XXXXXX";
static char model[300];

static IdxStore *open_store(const char *name, IdxShared *sh, const char *model_path)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, name);
    IdxConfig cfg = {.root = FIXTURE_DIR "/shop",
                     .index_dir = dir,
                     .embed_provider = "builtin",
                     .embed_model = model_path,
                     .shared = sh};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (rc) fprintf(stderr, "idx_open %s: %s\n", name, e.msg);
    CHECK_INT(rc, CR_OK);
    return st;
}

/* The first dense hit for a question, or 0. */
static int64_t first_dense(IdxStore *st)
{
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_dense(st, "total price with tax", 3, &hits, &n, NULL), CR_OK);
    int64_t id = n ? hits[0].chunk_id : 0;
    free(hits);
    return id;
}

static void test_one_copy(void)
{
    IdxShared *sh = idx_shared_new();
    IdxStore *a = open_store("a", sh, model), *b = open_store("b", sh, model);
    IdxStore *own = open_store("own", NULL, model);
    if (!a || !b || !own) return;
    /* opening reads no model: the first use does */
    CHECK(a->dense.em == NULL && b->dense.em == NULL && own->dense.em == NULL);
    CHECK(idx_has_dense(a));
    CHECK(idx_dense_embedder(a) != NULL);
    CHECK(idx_dense_embedder(a) == idx_dense_embedder(b));
    CHECK(idx_dense_embedder(own) != NULL && idx_dense_embedder(own) != a->dense.em);
    /* the opener lets go while the stores still embed with it */
    idx_shared_unref(sh);
    CHECK_INT(idx_update(a, NULL, NULL, NULL, NULL), CR_OK);
    idx_close(a);
    CHECK_INT(idx_update(b, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(idx_update(own, NULL, NULL, NULL, NULL), CR_OK);
    /* the shared model answers as a store's own does */
    int64_t hb = first_dense(b);
    CHECK(hb != 0);
    CHECK_INT(hb, first_dense(own));
    idx_close(b);
    idx_close(own);
}

/* A model file rewritten on disk is a new model for the stores opened
 * after; the stores opened before keep theirs. */
static void test_changed_file(void)
{
    IdxShared *sh = idx_shared_new();
    IdxStore *a = open_store("c1", sh, model);
    if (a) CHECK(idx_dense_embedder(a) != NULL);
    struct timespec t[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
    CHECK_INT(utimensat(AT_FDCWD, model, t, 0), 0);
    IdxStore *b = open_store("c2", sh, model), *c = open_store("c3", sh, model);
    if (a && b && c) {
        CHECK(idx_dense_embedder(b) != NULL && a->dense.em != b->dense.em);
        CHECK(b->dense.em == idx_dense_embedder(c));
    }
    idx_shared_unref(sh);
    idx_close(a);
    idx_close(b);
    idx_close(c);
}

/* A damaged or missing model costs the dense leg, shared or not, and is
 * not remembered as good. */
static void test_bad_model(void)
{
    char bad[320];
    snprintf(bad, sizeof bad, "%s/bad.crm", tmpdir);
    FILE *f = fopen(bad, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("not a model", f);
        fclose(f);
    }
    IdxShared *sh = idx_shared_new();
    IdxStore *a = open_store("bad1", sh, bad), *b = open_store("bad2", sh, "/no/such/model.crm");
    if (a && b) {
        /* reported at first use, and the dense leg is gone */
        CHECK(a->dense.note[0] == '\0' && idx_has_dense(a));
        CHECK(idx_dense_embedder(a) == NULL && strstr(a->dense.note, "unusable") != NULL);
        CHECK(!idx_has_dense(a));
        CHECK(idx_dense_embedder(b) == NULL && !idx_has_dense(b));
        IdxStatus s;
        CHECK_INT(idx_status(a, &s, NULL), CR_OK);
        CHECK(strstr(s.embedder, "unusable") != NULL);
    }
    idx_close(a);
    idx_close(b);
    idx_shared_unref(sh);
}

/* A store whose workspace has no Python reads no model to answer: an
 * index of Go files is searched (both legs) with the model never loaded,
 * since there are no vectors to compare a question with. */
static void test_no_python_no_model(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/go", tmpdir);
    IdxConfig cfg = {.root = FIXTURE_DIR "/lang/go",
                     .index_dir = dir,
                     .embed_provider = "builtin",
                     .embed_model = model};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    idx_close(st);
    st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, "new", 5, &hits, &n, NULL), CR_OK);
    CHECK(n > 0);
    free(hits);
    hits = NULL;
    CHECK_INT(idx_search_dense(st, "route group", 5, &hits, &n, NULL), CR_OK);
    CHECK_INT(n, 0);
    free(hits);
    CHECK(st->dense.em == NULL && idx_has_dense(st));
    idx_close(st);
}

typedef struct Opener {
    IdxShared *sh;
    char name[16];
    IdxStore *st;
} Opener;

static void *opener(void *arg)
{
    Opener *o = arg;
    o->st = open_store(o->name, o->sh, model);
    if (o->st) idx_dense_embedder(o->st); /* the first uses, at once */
    return NULL;
}

/* Stores opened and first used on several threads at once load the model once. */
static void test_threads(void)
{
    IdxShared *sh = idx_shared_new();
    Opener o[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        o[i].sh = sh;
        snprintf(o[i].name, sizeof o[i].name, "t%d", i);
        o[i].st = NULL;
        CHECK_INT(pthread_create(&th[i], NULL, opener, &o[i]), 0);
    }
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    idx_shared_unref(sh);
    for (int i = 0; i < 6; i++)
        CHECK(o[i].st && o[i].st->dense.em && o[i].st->dense.em == o[0].st->dense.em);
    for (int i = 0; i < 6; i++)
        idx_close(o[i].st);
}

/* A chunker lent a handle whose query is not compiled yet starts the
 * compile on a thread of its own before its parse and waits for it after:
 * the chunks equal a Chunker's own; a second start is none; every ask
 * after gets the one query. */
static void test_queries_started(void)
{
    const IdxLang *c = idx_lang_by_name("c");
    CHECK(c != NULL);
    if (!c) return;
    IdxShared *sh = idx_shared_new();
    const char *src = "#include \"box.h\"\nstruct box { int n; };\nstatic int twice(int x) { "
                      "return 2 * x; }\nint size(struct box *b) { return twice(b->n); }\n";
    Chunker *own = idx_chunker_new(), *lent = idx_chunker_new_shared(sh);
    ChunkSet a = {0}, b = {0};
    CHECK_INT(idx_chunker_run_lang(own, c, src, strlen(src), 0, &a, NULL), CR_OK);
    CHECK_INT(idx_chunker_run_lang(lent, c, src, strlen(src), 0, &b, NULL), CR_OK);
    CHECK(a.n_chunks >= 3);
    CHECK_INT(a.n_chunks, b.n_chunks);
    CHECK_INT(a.n_refs, b.n_refs);
    for (size_t i = 0; i < a.n_chunks && i < b.n_chunks; i++) {
        CHECK_STR(a.chunks[i].symbol, b.chunks[i].symbol);
        CHECK_INT(a.chunks[i].start_line, b.chunks[i].start_line);
    }
    idx_queries_start(idx_shared_queries(sh), c);
    const TSQuery *q = idx_queries_get(idx_shared_queries(sh), c);
    CHECK(q != NULL);
    CHECK(idx_queries_get(idx_shared_queries(sh), c) == q);
    idx_chunk_set_release(&a);
    idx_chunk_set_release(&b);
    idx_chunker_free(own);
    idx_chunker_free(lent);
    /* started and never asked for: joined when the handle goes */
    IdxShared *idle = idx_shared_new();
    idx_queries_start(idx_shared_queries(idle), c);
    idx_shared_unref(idle);
    idx_shared_unref(sh);
}

/* Compiled tree-sitter queries are kept by the handle: one per language
 * for every store and thread (the C++ query takes ~200 ms to compile; each
 * save compiled it again), and chunking with them equals chunking with a
 * Chunker's own. */
static void test_queries(void)
{
    const IdxLang *cpp = idx_lang_by_name("cpp");
    CHECK(cpp != NULL);
    if (!cpp) return;
    IdxShared *sh = idx_shared_new();
    const TSQuery *q = idx_queries_get(idx_shared_queries(sh), cpp);
    CHECK(q != NULL);
    CHECK(idx_queries_get(idx_shared_queries(sh), cpp) == q);
    const char *src = "#include <vector>\nnamespace n {\nclass Box {\n public:\n  int size() const "
                      "{ return 1; }\n};\nint twice(int x) { return 2 * x; }\n}\n";
    Chunker *own = idx_chunker_new(), *lent = idx_chunker_new_shared(sh);
    ChunkSet a = {0}, b = {0};
    CHECK_INT(idx_chunker_run_lang(own, cpp, src, strlen(src), 0, &a, NULL), CR_OK);
    CHECK_INT(idx_chunker_run_lang(lent, cpp, src, strlen(src), 0, &b, NULL), CR_OK);
    CHECK(a.n_chunks >= 2);
    CHECK_INT(a.n_chunks, b.n_chunks);
    for (size_t i = 0; i < a.n_chunks && i < b.n_chunks; i++) {
        CHECK_STR(a.chunks[i].symbol, b.chunks[i].symbol);
        CHECK_INT(a.chunks[i].start_line, b.chunks[i].start_line);
    }
    idx_chunk_set_release(&a);
    idx_chunk_set_release(&b);
    idx_chunker_free(own);
    idx_chunker_free(lent);
    /* re-finding a definition in an unsaved buffer borrows them too */
    uint32_t s1 = 0, e1 = 0, s2 = 0, e2 = 0;
    CHECK_INT(idx_find_definition("n/box.cc", src, strlen(src), "n.twice", 1, &s1, &e1), 1);
    CHECK_INT(idx_find_definition_shared(sh, "n/box.cc", src, strlen(src), "n.twice", 1, &s2, &e2),
              1);
    CHECK_INT(s1, 7);
    CHECK_INT(s2, s1);
    CHECK_INT(e2, e1);
    /* a store's updates take theirs from its handle */
    IdxStore *st = open_store("q", sh, model);
    if (st) {
        CHECK(st->shared == sh);
        idx_close(st);
    }
    idx_shared_unref(sh);
}

/* A full pass gives its page cache back: a server keeps one connection per
 * root for good, and the pages a build wrote (up to 16 MB each) were held
 * for nothing. */
static void test_update_releases_cache(void)
{
    IdxShared *sh = idx_shared_new();
    IdxStore *st = open_store("cache", sh, model);
    if (st) {
        CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
        int used = 0, hi = 0;
        CHECK_INT(sqlite3_db_status(st->db, SQLITE_DBSTATUS_CACHE_USED, &used, &hi, 0), SQLITE_OK);
        fprintf(stderr, "  cache used after a full pass: %d bytes\n", used);
        CHECK(used < 32 * 1024);
        idx_close(st);
    }
    idx_shared_unref(sh);
}

/* TSX is TypeScript's row on the tsx grammar: the one query compiles for
 * both grammars, and a .tsx file's definitions come out as a .ts file's,
 * JSX in a body included. */
static void test_tsx_row(void)
{
    const IdxLang *ts = idx_lang_by_name("typescript"), *tsx = idx_lang_by_name("tsx");
    CHECK(ts != NULL && tsx != NULL);
    if (!ts || !tsx) return;
    CHECK(ts->query == tsx->query);
    CHECK(ts->grammar != tsx->grammar);
    IdxShared *sh = idx_shared_new();
    CHECK(idx_queries_get(idx_shared_queries(sh), tsx) != NULL);
    CHECK(idx_queries_get(idx_shared_queries(sh), tsx) !=
          idx_queries_get(idx_shared_queries(sh), ts));
    const char *src = "export class Panel {\n  render(): string {\n    return \"p\";\n  }\n}\n"
                      "export function view(n: number) {\n  return <div>{n}</div>;\n}\n";
    Chunker *c = idx_chunker_new_shared(sh);
    ChunkSet set = {0};
    CHECK_INT(idx_chunker_run_lang(c, tsx, src, strlen(src), 0, &set, NULL), CR_OK);
    int panel = 0, render = 0, view = 0;
    for (size_t i = 0; i < set.n_chunks; i++) {
        panel |= !strcmp(set.chunks[i].symbol, "Panel");
        render |= !strcmp(set.chunks[i].symbol, "Panel.render");
        view |= !strcmp(set.chunks[i].symbol, "view") && set.chunks[i].start_line == 6;
    }
    CHECK(panel && render && view);
    idx_chunk_set_release(&set);
    idx_chunker_free(c);
    idx_shared_unref(sh);
}

int main(void)
{
    CHECK(mkdtemp(tmpdir) != NULL);
    snprintf(model, sizeof model, "%s/model.crm", tmpdir);
    test_sh("cp '%s' '%s'", MODEL, model);
    RUN(test_one_copy);
    RUN(test_changed_file);
    RUN(test_bad_model);
    RUN(test_threads);
    RUN(test_no_python_no_model);
    RUN(test_queries);
    RUN(test_queries_started);
    RUN(test_tsx_row);
    RUN(test_update_releases_cache);
    test_sh("rm -rf '%s' # %s", tmpdir, "");
    return test_summary();
}
