#include "index/dense/embed_int.h"
#include "idx.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

/* The builtin embedder: the tokenizer and vectors agree with the Python
 * trainer (fixtures written by scripts/train/fixture.py), and a damaged
 * model file is refused with a clear error. */

#define MODEL FIXTURE_DIR "/../../models/code-nbow-py-v1.crm"

static char tmpdir[] = "/tmp/coderag-test-nbow-XXXXXX";

static void test_tokenizer_parity(void)
{
    json_error_t je;
    FILE *f = fopen(FIXTURE_DIR "/embed/tokens.jsonl", "r");
    CHECK(f != NULL);
    if (!f) return;
    char *line = NULL;
    size_t cap = 0, cases = 0;
    StrBuf sb;
    sb_init(&sb);
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, &je);
        const char *text = NULL, *want = NULL;
        CHECK(o && !json_unpack(o, "{s:s, s:s}", "text", &text, "tokens", &want));
        if (text && want) {
            sb_reset(&sb);
            idx_tok_code(text, strlen(text), &sb);
            if (strcmp(sb.buf ? sb.buf : "", want) != 0) CHECK_STR(sb.buf ? sb.buf : "", want);
            cases++;
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    sb_release(&sb);
    CHECK(cases >= 200);
}

static void test_vector_parity(void)
{
    json_error_t je;
    Embedder *em = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_builtin_new(MODEL, &em, &e), CR_OK);
    if (!em) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK(strncmp(idx_embedder_id(em), "builtin:code-nbow-py-v1:", 24) == 0);
    FILE *f = fopen(FIXTURE_DIR "/embed/vectors.jsonl", "r");
    CHECK(f != NULL);
    char *line = NULL;
    size_t cap = 0, cases = 0;
    while (f && getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, &je), *vec = NULL;
        const char *text = NULL;
        int query = 0;
        CHECK(o && !json_unpack(o, "{s:s, s:b, s:o}", "text", &text, "query", &query, "vec", &vec));
        float *v = NULL;
        int dim = 0;
        if (query)
            CHECK_INT(idx_embedder_embed_query(em, text, &v, &dim, &e), CR_OK);
        else
            CHECK_INT(idx_embedder_embed(em, &text, 1, &v, &dim, &e), CR_OK);
        CHECK_INT(dim, idx_embedder_dim(em));
        CHECK_INT(json_array_size(vec), dim);
        double worst = 0;
        for (int k = 0; v && k < dim && k < (int)json_array_size(vec); k++) {
            double d = fabs(json_real_value(json_array_get(vec, k)) - v[k]);
            if (json_is_integer(json_array_get(vec, k)))
                d = fabs((double)json_integer_value(json_array_get(vec, k)) - v[k]);
            if (d > worst) worst = d;
        }
        CHECK(worst < 1e-5);
        free(v);
        json_decref(o);
        cases++;
    }
    CHECK(cases >= 4);
    free(line);
    if (f) fclose(f);
    idx_embedder_free(em);
}

/* Writes a model file of dim 2 over vocab {"get", "user"} with chosen
 * weights; mutate() may damage it before the checksum is (re)computed. */
static char *write_tiny(const char *name, int fix_checksum,
                        void (*mutate)(unsigned char *, size_t *), size_t cut)
{
    unsigned char d[256] = {0};
    size_t n = 104;
    memcpy(d, "CRNBOW\0\0", 8);
    uint32_t hdr[4] = {1, 2, 2, 0};
    memcpy(d + 8, hdr, sizeof hdr);
    float w[6] = {1.0f, 2.0f, /* query */ 0.5f, 0.5f, /* code */ 0.01f, 0.02f /* scale */};
    memcpy(d + n, w, sizeof w);
    n += sizeof w;
    signed char emb[4] = {100, 0, 0, 50};
    memcpy(d + n, emb, 4);
    n += 4;
    memcpy(d + n, "\3get\4user", 9);
    n += 9;
    while (n % 8)
        d[n++] = 0;
    memcpy(d + 72, "tiny", 4);
    if (mutate) mutate(d, &n);
    uint64_t payload = n - 104, h = 0xcbf29ce484222325ull;
    memcpy(d + 24, &payload, 8);
    for (size_t i = 104; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, d + i, 8);
        h = (h ^ x) * 0x100000001b3ull;
    }
    if (fix_checksum) memcpy(d + 32, &h, 8);
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p.buf, "wb");
    fwrite(d, 1, n - cut, f);
    fclose(f);
    return sb_detach(&p, NULL);
}

static void test_tiny_model(void)
{
    char *path = write_tiny("tiny.crm", 1, NULL, 0);
    Embedder *em = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_builtin_new(path, &em, &e), CR_OK);
    if (em) {
        float *v = NULL;
        int dim = 0;
        /* query: get -> 1 * 0.01 * (100, 0) = (1, 0); user -> 2 * 0.02 * (0, 50) = (0, 2) */
        CHECK_INT(idx_embedder_embed_query(em, "getUser", &v, &dim, &e), CR_OK);
        CHECK_INT(dim, 2);
        /* "getUser" is the tokens getuser (unknown), get, user: (1, 2) / sqrt(5) */
        CHECK(v && fabsf(v[0] - 1 / sqrtf(5)) < 1e-6f && fabsf(v[1] - 2 / sqrtf(5)) < 1e-6f);
        free(v);
        const char *t = "get user";
        CHECK_INT(idx_embedder_embed(em, &t, 1, &v, &dim, &e), CR_OK);
        /* code: (0.5, 0) + (0, 0.5) */
        CHECK(v && fabsf(v[0] - v[1]) < 1e-6f && fabsf(v[0] - sqrtf(0.5f)) < 1e-6f);
        free(v);
        t = "nothing known here";
        CHECK_INT(idx_embedder_embed(em, &t, 1, &v, &dim, &e), CR_OK);
        CHECK(v && v[0] == 0 && v[1] == 0);
        free(v);
        CHECK(strncmp(idx_embedder_id(em), "builtin:tiny:", 13) == 0);
    }
    idx_embedder_free(em);
    free(path);
}

static void bump_version(unsigned char *d, size_t *n)
{
    d[8] = 2;
}
static void bad_magic(unsigned char *d, size_t *n)
{
    d[0] = 'X';
}
static void huge_vocab(unsigned char *d, size_t *n)
{
    d[16] = 0xff;
    d[17] = 0xff;
}
static void dup_token(unsigned char *d, size_t *n)
{
    memcpy(d + 104 + 28, "\3get\3get", 8);
}
static void nan_weight(unsigned char *d, size_t *n)
{
    float x = NAN;
    memcpy(d + 104, &x, 4);
}

static void test_damaged(void)
{
    static const struct {
        const char *name;
        int fix_checksum;
        void (*mutate)(unsigned char *, size_t *);
        const char *says;
    } cases[] = {
        {"version.crm", 1, bump_version, "version 2"},
        {"magic.crm", 1, bad_magic, "not a coderag embedding model"},
        {"truncated.crm", 1, NULL, "truncated"},
        {"checksum.crm", 0, NULL, "checksum"},
        {"vocab.crm", 1, huge_vocab, "payload too short"},
        {"dup.crm", 1, dup_token, "duplicate"},
        {"nan.crm", 1, nan_weight, "non-finite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *path = write_tiny(cases[i].name, cases[i].fix_checksum, cases[i].mutate,
                                strstr(cases[i].name, "trunc") ? 8 : 0);
        Embedder *em = NULL;
        ErrInfo e = {0};
        if (!cases[i].fix_checksum && !cases[i].mutate) {
            /* a flipped byte in the weights, checksum left as it was */
            char *good = write_tiny("good.crm", 1, NULL, 0);
            FILE *f = fopen(good, "rb");
            unsigned char d[256];
            size_t n = fread(d, 1, sizeof d, f);
            fclose(f);
            d[110] ^= 0x40;
            f = fopen(path, "wb");
            fwrite(d, 1, n, f);
            fclose(f);
            free(good);
        }
        CHECK_INT(idx_embedder_builtin_new(path, &em, &e), CR_EPARSE);
        CHECK(em == NULL);
        if (!strstr(e.msg, cases[i].says)) {
            fprintf(stderr, "%s: \"%s\" lacks \"%s\"\n", cases[i].name, e.msg, cases[i].says);
            CHECK(0);
        }
        free(path);
    }
    Embedder *em = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_builtin_new(FIXTURE_DIR "/no/such/model.crm", &em, &e), CR_ENOENT);
    EmbedConfig cfg = {.provider = "builtin", .model = FIXTURE_DIR "/no/such/model.crm"};
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_ENOENT);
    CHECK(em == NULL);
}

/* The index with the shipped model: every chunk gets a vector and dense
 * search finds them; with a damaged model the index still builds, without
 * a dense leg, and says why. */
static void test_index(void)
{
    static const struct {
        const char *model; /* NULL: the default */
        int dense;
    } cases[] = {{NULL, 1}, {"tiny-bad.crm", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[256], model[256] = "";
        snprintf(dir, sizeof dir, "%s/idx%zu", tmpdir, i);
        if (cases[i].model) {
            char *good = write_tiny(cases[i].model, 0, NULL, 0); /* checksum left wrong */
            snprintf(model, sizeof model, "%s", good);
            free(good);
        }
        IdxConfig cfg = {.root = FIXTURE_DIR "/shop",
                         .index_dir = dir,
                         .embed_provider = "builtin",
                         .embed_model = cases[i].model ? model : NULL};
        IdxStore *st = NULL;
        ErrInfo e = {0};
        CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
        if (!st) continue;
        CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_OK);
        CHECK_INT(idx_has_dense(st), cases[i].dense);
        IdxStatus s;
        CHECK_INT(idx_status(st, &s, &e), CR_OK);
        CHECK(s.chunks > 0);
        CHECK_INT(s.vectors, cases[i].dense ? s.chunks : 0);
        if (cases[i].dense)
            CHECK(strncmp(s.embedder, "builtin:code-nbow-py-v1:", 24) == 0);
        else
            CHECK(strstr(s.embedder, "checksum") != NULL);
        IdxHit *hits = NULL;
        size_t n = 0;
        CHECK_INT(idx_search_dense(st, "compute the total price of an order", 5, &hits, &n, &e),
                  CR_OK);
        CHECK_INT(n, cases[i].dense ? 5 : 0);
        for (size_t k = 1; k < n; k++)
            CHECK(hits[k - 1].score >= hits[k].score);
        free(hits);
        idx_close(st);
    }
}

/* A model trained on Python embeds Python only: in a workspace with C
 * beside it, the C chunks get no vector and no dense hit is C. */
static void test_languages(void)
{
    char root[256], dir[256];
    snprintf(root, sizeof root, "%s/poly", tmpdir);
    snprintf(dir, sizeof dir, "%s/poly-idx", tmpdir);
    test_sh("mkdir -p '%s' && cp " FIXTURE_DIR "/lang/c/util.c '%s/'", root, root);
    test_sh("cp " FIXTURE_DIR "/shop/shop/models.py '%s/' && test -d '%s'", root, root);
    IdxConfig cfg = {.root = root, .index_dir = dir, .embed_provider = "builtin"};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_OK);
    IdxChunk *py = NULL, *c = NULL;
    size_t n_py = 0, n_c = 0;
    CHECK_INT(idx_file_chunks(st, "models.py", &py, &n_py, &e), CR_OK);
    CHECK_INT(idx_file_chunks(st, "util.c", &c, &n_c, &e), CR_OK);
    CHECK(n_py > 0 && n_c > 0);
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, &e), CR_OK);
    CHECK_INT(s.chunks, (int64_t)(n_py + n_c));
    CHECK_INT(s.vectors, (int64_t)n_py);
    CHECK(strstr(s.embedder, " (embeds python files only)") != NULL); /* status says why */
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_dense(st, "add two integers", 50, &hits, &n, &e), CR_OK);
    CHECK_INT(n, n_py);
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < n_c; j++)
            CHECK(hits[k].chunk_id != c[j].id);
    free(hits);
    for (size_t j = 0; j < n_py; j++)
        idx_chunk_release(&py[j]);
    for (size_t j = 0; j < n_c; j++)
        idx_chunk_release(&c[j]);
    free(py);
    free(c);
    idx_close(st);
}

/* Every chunk of the index has its vector; returns how many chunks
 * (at least min). */
static int64_t expect_all_embedded(IdxStore *st, int64_t min)
{
    IdxStatus s;
    CHECK_INT(idx_status(st, &s, NULL), CR_OK);
    CHECK(s.chunks > min);
    CHECK_INT(s.vectors, s.chunks);
    return s.chunks;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* A store opened afresh on cfg's index finds every chunk with its vector. */
static void expect_reopened_all_embedded(const IdxConfig *cfg)
{
    IdxStore *st = NULL;
    CHECK_INT(idx_open(cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    expect_all_embedded(st, 0);
    idx_close(st);
}

/* Dense hits (ids and exact scores) of a few questions over every vector. */
static size_t dense_hits(IdxStore *st, int64_t *ids, float *scores, size_t cap)
{
    static const char *const qs[] = {"compute the total price of an order",
                                     "render the template for a request", "parse the header"};
    size_t total = 0;
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
        IdxHit *hits = NULL;
        size_t n = 0;
        CHECK_INT(idx_search_dense(st, qs[q], 1000, &hits, &n, NULL), CR_OK);
        for (size_t k = 0; k < n && total < cap; k++, total++) {
            ids[total] = hits[k].chunk_id;
            scores[total] = hits[k].score;
        }
        free(hits);
    }
    return total;
}

/* The parse workers embed each chunk as they prepare it (idx_dense_text
 * over the source they read); the sync embeds what they did not from the
 * index and the file. Both give the same vectors, bit for bit: here over a
 * file with split units (continuation pieces carry their signature). */
static void test_staged_parity(void)
{
    char root[256], dir[256], vec[300];
    snprintf(root, sizeof root, "%s/staged", tmpdir);
    snprintf(dir, sizeof dir, "%s/staged-idx", tmpdir);
    snprintf(vec, sizeof vec, "%s/vectors.faiss", dir);
    test_sh("mkdir -p '%s' && cp -R " FIXTURE_DIR "/longdef/. " FIXTURE_DIR "/shop/. '%s/'", root,
            root);
    IdxConfig cfg = {.root = root, .index_dir = dir, .embed_provider = "builtin"};
    enum { CAP = 4096 };
    static int64_t ids[2][CAP];
    static float scores[2][CAP];
    size_t n[2] = {0, 0};
    int64_t chunks = 0;
    for (int pass = 0; pass < 2; pass++) {
        IdxStore *st = NULL;
        ErrInfo e = {0};
        CHECK_INT(idx_open(&cfg, 0, &st, &e), CR_OK);
        if (!st) return;
        /* the first pass embeds while parsing; the second finds every file
         * unchanged and every vector missing, so the sync embeds them all */
        CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_OK);
        chunks = expect_all_embedded(st, 20);
        n[pass] = dense_hits(st, ids[pass], scores[pass], CAP);
        idx_close(st);
        CHECK_INT(unlink(vec), 0);
    }
    CHECK_INT(n[0], 3 * (size_t)chunks);
    CHECK_INT(n[1], n[0]);
    for (size_t k = 0; k < n[0] && k < n[1]; k++) {
        CHECK_INT(ids[1][k], ids[0][k]);
        CHECK(scores[1][k] == scores[0][k]);
    }
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every hit of a few questions, dense and keyword, as "path:line:symbol
 * score" lines sorted (chunk ids differ between an index saved into and a
 * fresh one of the same tree; the rest may not). */
static void hits_text(IdxStore *st, StrBuf *out)
{
    static const char *const qs[] = {"compute the total price of an order",
                                     "render the template for a request", "parse the header",
                                     "discount rate for a customer", "total"};
    size_t n_lines = 0, cap = 0;
    char **lines = NULL;
    for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
        for (int dense = 0; dense < 2; dense++) {
            IdxHit *hits = NULL;
            size_t n = 0;
            CHECK_INT(dense ? idx_search_dense(st, qs[q], 1000, &hits, &n, NULL)
                            : idx_search_bm25(st, qs[q], 1000, &hits, &n, NULL),
                      CR_OK);
            for (size_t k = 0; k < n; k++) {
                IdxChunk c = {0};
                CHECK_INT(idx_chunk_get(st, hits[k].chunk_id, &c, NULL), CR_OK);
                StrBuf l;
                sb_init(&l);
                sb_addf(&l, "%zu %d %s:%u:%u:%s %.9g", q, dense, c.path ? c.path : "", c.start_line,
                        c.window, c.symbol ? c.symbol : "", (double)hits[k].score);
                ARRAY_GROW(lines, n_lines + 1, cap);
                lines[n_lines++] = sb_detach(&l, NULL);
                idx_chunk_release(&c);
            }
            free(hits);
        }
    }
    qsort(lines, n_lines, sizeof *lines, cmp_line);
    for (size_t i = 0; i < n_lines; i++) {
        sb_addf(out, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
}

/* A save keeps what it tokenized and embedded per chunk for the next save
 * of the file (index/update/save_memo.c): saves that change one function,
 * move the others down, change a docstring alone and put a function back
 * leave every search field and vector those of a fresh index of the tree. */
static void test_save_memo_parity(void)
{
    char root[256], dir[256], fresh[256], file[300];
    snprintf(root, sizeof root, "%s/memo", tmpdir);
    snprintf(dir, sizeof dir, "%s/memo-idx", tmpdir);
    snprintf(fresh, sizeof fresh, "%s/memo-fresh", tmpdir);
    snprintf(file, sizeof file, "%s/shop/saved.py", root);
    test_sh("mkdir -p '%s' && cp -R " FIXTURE_DIR "/shop/. '%s/'", root, root);
    static const char *const saves[] = {
        "def order_total(order):\n    \"\"\"The total price of an order.\"\"\"\n"
        "    return sum(i.price for i in order.items)\n\n\n"
        "def discount_rate(customer):\n    return 0.1 if customer.vip else 0.0\n\n\n"
        "def parse_header(line):\n    return line.split(':', 1)\n",
        "def order_total(order):\n    \"\"\"The total price of an order.\"\"\"\n"
        "    return sum(i.price * i.count for i in order.items)\n\n\n"
        "def discount_rate(customer):\n    return 0.1 if customer.vip else 0.0\n\n\n"
        "def parse_header(line):\n    return line.split(':', 1)\n",
        "def tax(order):\n    return order_total(order) * 0.2\n\n\n"
        "def order_total(order):\n    \"\"\"The whole price of an order, counted.\"\"\"\n"
        "    return sum(i.price * i.count for i in order.items)\n\n\n"
        "def discount_rate(customer):\n    return 0.1 if customer.vip else 0.0\n\n\n"
        "def parse_header(line):\n    return line.split(':', 1)\n",
        "def order_total(order):\n    \"\"\"The total price of an order.\"\"\"\n"
        "    return sum(i.price for i in order.items)\n\n\n"
        "def discount_rate(customer):\n    return 0.1 if customer.vip else 0.0\n\n\n"
        "def parse_header(line):\n    return line.split(':', 1)\n"};
    IdxConfig cfg = {.root = root, .index_dir = dir, .embed_provider = "builtin"};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    for (size_t k = 0; k < sizeof saves / sizeof *saves; k++) {
        write_text(file, saves[k]);
        CHECK_INT(idx_update_file(st, file, NULL), CR_OK);
        /* a fresh index of the tree as this save left it */
        test_sh("rm -rf '%s' # %s", fresh, "");
        IdxConfig fcfg = {.root = root, .index_dir = fresh, .embed_provider = "builtin"};
        IdxStore *f = NULL;
        CHECK_INT(idx_open(&fcfg, 0, &f, NULL), CR_OK);
        if (!f) break;
        CHECK_INT(idx_update(f, NULL, NULL, NULL, NULL), CR_OK);
        StrBuf a, b;
        sb_init(&a);
        sb_init(&b);
        hits_text(st, &a);
        hits_text(f, &b);
        CHECK(a.len > 0);
        CHECK_STR(a.buf, b.buf);
        sb_release(&a);
        sb_release(&b);
        idx_close(f);
    }
    idx_close(st);
}

/* Two stores on one index (a language server and a command-line update in
 * the same workspace): each journals only the change from what the vector
 * files hold, so one that missed the other's writes reloads first. Here b
 * embeds a new file and a, loaded before, deletes it: without the reload a
 * would not know that file's vectors and leave them behind. */
static void test_two_stores(void)
{
    char root[256], dir[256], extra[300];
    snprintf(root, sizeof root, "%s/two", tmpdir);
    snprintf(dir, sizeof dir, "%s/two-idx", tmpdir);
    snprintf(extra, sizeof extra, "%s/extra.py", root);
    test_sh("mkdir -p '%s' && cp -R " FIXTURE_DIR "/shop/. '%s/'", root, root);
    IdxConfig cfg = {.root = root, .index_dir = dir, .embed_provider = "builtin"};
    IdxStore *a = NULL, *b = NULL;
    CHECK_INT(idx_open(&cfg, 0, &a, NULL), CR_OK);
    CHECK_INT(idx_open(&cfg, 0, &b, NULL), CR_OK);
    if (!a || !b) return;
    CHECK_INT(idx_update(a, NULL, NULL, NULL, NULL), CR_OK);
    IdxHit *hits = NULL;
    size_t n = 0;
    for (int k = 0; k < 2; k++) { /* both hold the vectors as built */
        CHECK_INT(idx_search_dense(k ? b : a, "total price", 3, &hits, &n, NULL), CR_OK);
        CHECK(n == 3);
        free(hits);
    }
    write_text(extra, "def sum_of_squares(values):\n    return sum(v * v for v in values)\n");
    CHECK_INT(idx_update_file(b, extra, NULL), CR_OK);
    CHECK_INT(unlink(extra), 0);
    CHECK_INT(idx_update_file(a, extra, NULL), CR_OK);
    expect_reopened_all_embedded(&cfg);
    idx_close(a);
    idx_close(b);
}

/* An update that changes nothing leaves the vectors unread (the last
 * sync's state is in the meta table), but one whose vector file was
 * removed or changed behind its back brings it back. */
static void test_unchanged_update(void)
{
    char dir[256], vec[300];
    snprintf(dir, sizeof dir, "%s/unchanged-idx", tmpdir);
    snprintf(vec, sizeof vec, "%s/vectors.faiss", dir);
    IdxConfig cfg = {.root = FIXTURE_DIR "/shop", .index_dir = dir, .embed_provider = "builtin"};
    for (int pass = 0; pass < 4; pass++) {
        IdxStore *st = NULL;
        CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
        if (!st) return;
        CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
        expect_all_embedded(st, 0);
        idx_close(st);
        CHECK_INT(access(vec, F_OK), 0);
        if (pass == 1) CHECK_INT(unlink(vec), 0);
        if (pass == 2) test_sh("printf 'not vectors' > '%s' # %s", vec, "");
    }
}

/* After a sync a store applies only its own writes to the vectors (the
 * chunks it deleted, those past the last synced id), unless another
 * connection wrote in between: then it compares every id. Here b, with no
 * dense leg, deletes a file behind a's back; a delta would leave that
 * file's vectors behind. */
static void test_delta_sync(void)
{
    char root[256], dir[256], extra[300], errors[300];
    snprintf(root, sizeof root, "%s/delta", tmpdir);
    snprintf(dir, sizeof dir, "%s/delta-idx", tmpdir);
    snprintf(extra, sizeof extra, "%s/extra.py", root);
    snprintf(errors, sizeof errors, "%s/shop/errors.py", root);
    test_sh("mkdir -p '%s' && cp -R " FIXTURE_DIR "/shop/. '%s/'", root, root);
    IdxConfig cfg = {.root = root, .index_dir = dir, .embed_provider = "builtin"};
    IdxConfig plain = {.root = root, .index_dir = dir, .embed_provider = "none"};
    IdxStore *a = NULL, *b = NULL;
    CHECK_INT(idx_open(&cfg, 0, &a, NULL), CR_OK);
    if (!a) return;
    CHECK_INT(idx_update(a, NULL, NULL, NULL, NULL), CR_OK);
    int64_t base = expect_all_embedded(a, 0);
    write_text(extra, "def sum_of_squares(values):\n    return sum(v * v for v in values)\n\n\n"
                      "def mean(values):\n    return sum(values) / len(values)\n");
    CHECK_INT(idx_update_file(a, extra, NULL), CR_OK);
    CHECK(expect_all_embedded(a, base) > base);
    write_text(extra, "def median(values):\n    return sorted(values)[len(values) // 2]\n");
    CHECK_INT(idx_update_file(a, extra, NULL), CR_OK);
    expect_all_embedded(a, base);
    CHECK_INT(unlink(extra), 0);
    CHECK_INT(idx_update(a, NULL, NULL, NULL, NULL), CR_OK);
    CHECK_INT(expect_all_embedded(a, 0), base);
    CHECK_INT(idx_open(&plain, 0, &b, NULL), CR_OK);
    if (b) {
        CHECK_INT(unlink(errors), 0);
        CHECK_INT(idx_update_file(b, errors, NULL), CR_OK);
        idx_close(b);
    }
    write_text(extra, "def mode(values):\n    return max(set(values), key=values.count)\n");
    CHECK_INT(idx_update_file(a, extra, NULL), CR_OK);
    expect_all_embedded(a, 0);
    idx_close(a);
    expect_reopened_all_embedded(&cfg);
}

int main(void)
{
    CHECK(mkdtemp(tmpdir) != NULL);
    RUN(test_tokenizer_parity);
    RUN(test_vector_parity);
    RUN(test_tiny_model);
    RUN(test_damaged);
    RUN(test_index);
    RUN(test_languages);
    RUN(test_staged_parity);
    RUN(test_save_memo_parity);
    RUN(test_two_stores);
    RUN(test_unchanged_update);
    RUN(test_delta_sync);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    CHECK(system(cmd) == 0);
    return test_summary();
}
