#include "index/dense/embed_int.h"
#include "test.h"
#include "fake_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEY_ENV "CODERAG_TEST_EMBED_KEY"
#define KEY "sk-test-7f3a9c0b1d2e4f56"

/* The vector the fake computes for text (see fake_openai.py), normalised. */
static void fake_vector(const char *text, int dim, float *out)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    for (int j = 0; j < dim; j++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        out[j] = (float)((double)((int)((h >> 33) % 2001) - 1000) / 1000.0);
    }
    idx_embed_normalize(out, dim);
}

static int vectors_match(const char *const *texts, size_t n, const float *got, int dim)
{
    float *want = xmalloc((size_t)dim * sizeof *want);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        fake_vector(texts[i], dim, want);
        double norm = 0;
        for (int j = 0; j < dim; j++) {
            norm += (double)got[i * (size_t)dim + j] * got[i * (size_t)dim + j];
            if (fabsf(want[j] - got[i * (size_t)dim + j]) > 1e-6f) ok = 0;
        }
        if (fabs(norm - 1.0) > 1e-5) ok = 0;
        if (!ok) fprintf(stderr, "vector %zu differs\n", i);
    }
    free(want);
    return ok;
}

static Fake fake;

static EmbedConfig openai_cfg(void)
{
    return (EmbedConfig){
        .provider = "openai",
        .url = fake.base,
        .model = "fake-model",
        .api_key_env = KEY_ENV,
        .timeout_ms = 5000,
    };
}

/* ---------------------------------------------------------------- tests */

static void test_config(void)
{
    Embedder *em = NULL;
    ErrInfo e = {0};
    EmbedConfig cfg = {0};
    cfg.model = "/nonexistent/model.crm"; /* builtin: the model file named */
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_ENOENT);
    CHECK(em == NULL);
    cfg.provider = "builtin";
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_ENOENT);
    cfg.model = NULL;
    cfg.provider = "word2vec";
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_EINVAL);
    CHECK(strstr(e.msg, "word2vec") != NULL);
    cfg.provider = "openai";
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_EINVAL); /* no url */
    CHECK(strstr(e.msg, "embed.url") != NULL);
    cfg.url = "ftp://h/v1";
    CHECK_INT(idx_embedder_new(&cfg, &em, &e), CR_EINVAL);
    CHECK(em == NULL);
    idx_embedder_free(NULL);
}

static void test_identity(void)
{
    Embedder *em = NULL;
    EmbedConfig cfg = openai_cfg();
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    CHECK_STR(idx_embedder_id(em), "openai:fake-model");
    CHECK_INT(idx_embedder_dim(em), 0);
    idx_embedder_free(em);
    cfg.model = NULL;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    CHECK_STR(idx_embedder_id(em), "openai:default");
    float *v = (float *)&cfg; /* must be overwritten */
    int dim = -1;
    CHECK_INT(idx_embedder_embed(em, NULL, 0, &v, &dim, NULL), CR_OK);
    CHECK(v == NULL);
    CHECK_INT(dim, 0);
    idx_embedder_free(em);
}

static void test_batching(void)
{
    enum { N = 150 };
    char *texts[N];
    for (int i = 0; i < N; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "def f%d():\n    return \"%d\" \xc3\xa9", i, i * 7);
        texts[i] = xstrdup(buf);
    }
    fake_script(&fake, 12, "[]");
    EmbedConfig cfg = openai_cfg();
    cfg.batch = 64;
    Embedder *em = NULL;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    float *v = NULL;
    int dim = 0;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_embed(em, (const char *const *)texts, N, &v, &dim, &e), CR_OK);
    CHECK_INT(dim, 12);
    CHECK_INT(idx_embedder_dim(em), 12);
    CHECK(v && vectors_match((const char *const *)texts, N, v, dim));
    free(v);

    json_t *reqs = fake_log(&fake);
    CHECK(reqs && json_array_size(reqs) == 3);
    static const int sizes[] = {64, 64, 22};
    for (size_t i = 0; reqs && i < 3 && i < json_array_size(reqs); i++) {
        json_int_t n = -1;
        const char *path = "", *model = "", *auth = "", *rest = "";
        CHECK(!json_unpack(json_array_get(reqs, i), "{s:I, s:s, s:s, s:s, s:s}", "n_inputs", &n,
                           "path", &path, "model", &model, "auth", &auth, "rest", &rest));
        CHECK_INT(n, sizes[i]);
        CHECK_STR(path, "/v1/embeddings");
        CHECK_STR(model, "fake-model");
        /* the key goes in the Authorization header and nowhere else */
        CHECK_STR(auth, "Bearer " KEY);
        CHECK(strstr(rest, "Content-Type: application/json") != NULL);
        CHECK(strstr(rest, KEY) == NULL);
    }
    json_decref(reqs);
    idx_embedder_free(em);
    for (int i = 0; i < N; i++)
        free(texts[i]);
}

static void test_no_key(void)
{
    static const char *const texts[] = {"a", "b"};
    EmbedConfig cfg = openai_cfg();
    cfg.api_key_env = "CODERAG_TEST_UNSET_KEY";
    cfg.url = NULL;
    char v1[128];
    snprintf(v1, sizeof v1, "%s/v1/", fake.base); /* the "/v1" form of the URL */
    cfg.url = v1;
    fake_script(&fake, 4, "[]");
    Embedder *em = NULL;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    float *v = NULL;
    int dim = 0;
    CHECK_INT(idx_embedder_embed(em, texts, 2, &v, &dim, NULL), CR_OK);
    CHECK(v && vectors_match(texts, 2, v, dim));
    free(v);
    json_t *reqs = fake_log(&fake);
    json_t *auth = NULL;
    const char *path = "";
    CHECK(reqs &&
          !json_unpack(json_array_get(reqs, 0), "{s:o, s:s}", "auth", &auth, "path", &path));
    CHECK(json_is_null(auth));
    CHECK_STR(path, "/v1/embeddings");
    json_decref(reqs);
    idx_embedder_free(em);
}

static void test_order(void)
{
    static const char *const texts[] = {"alpha", "beta", "gamma", "delta"};
    static const char *const scripts[] = {"[{\"reverse\": true}]", "[{\"no_index\": true}]"};
    for (size_t i = 0; i < 2; i++) {
        fake_script(&fake, 6, scripts[i]);
        EmbedConfig cfg = openai_cfg();
        Embedder *em = NULL;
        CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
        float *v = NULL;
        int dim = 0;
        CHECK_INT(idx_embedder_embed(em, texts, 4, &v, &dim, NULL), CR_OK);
        CHECK(v && vectors_match(texts, 4, v, dim));
        free(v);
        idx_embedder_free(em);
    }
}

static void test_failures(void)
{
    static const char *const texts[] = {"one", "two", "three"};
    static const struct {
        const char *script;
        int retries;
        long timeout_ms;
        CrErr rc;
        const char *msg; /* a part of the message */
    } cases[] = {
        {"[{\"status\": 500}]", 0, 0, CR_OK, NULL},
        {"[{\"status\": 503, \"times\": 3}]", 1, 0, CR_EHTTP, "HTTP 503"},
        {"[{\"status\": 429, \"retry_after\": \"0\"}]", 0, 0, CR_OK, NULL},
        {"[{\"delay_ms\": 60000}]", 0, 300, CR_ETIMEOUT,
         "timed out"}, /* only the timeout ends it */
        {"[{\"raw\": \"{not json\"}]", 0, 0, CR_EHTTP, "malformed response"},
        {"[{\"raw\": \"{\\\"data\\\": 3}\"}]", 0, 0, CR_EHTTP, "no \"data\" array"},
        {"[{\"count_delta\": -1}]", 0, 0, CR_EHTTP, "returned 2 vectors for 3 inputs"},
        {"[{\"count_delta\": 1}]", 0, 0, CR_EHTTP, "returned 4 vectors for 3 inputs"},
        {"[{\"bad_value\": \"nan\"}]", 0, 0, CR_EHTTP, "malformed response"},
        {"[{\"bad_value\": \"string\"}]", 0, 0, CR_EHTTP, "non-number"},
        {"[{\"bad_value\": \"huge\"}]", 0, 0, CR_EHTTP, "malformed response"}, /* 1e999 */
        {"[{\"dim\": 0}]", 0, 0, CR_EHTTP, "dimension"},
        {"[{\"big\": 17000000}]", 0, 0, CR_EHTTP, "larger than"},
        {"[{\"cut\": true}]", -1, 0, CR_EHTTP, "transfer closed"},
        {"[{\"cut\": true}]", 0, 0, CR_OK, NULL}, /* default: 3 retries */
        {"[{\"status\": 401, \"echo_auth\": true}]", 0, 0, CR_EHTTP, "HTTP 401"},
        {"[{\"status\": 400}]", 0, 0, CR_EHTTP, "HTTP 400"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_script(&fake, 8, cases[i].script);
        EmbedConfig cfg = openai_cfg();
        cfg.max_retries = cases[i].retries;
        if (cases[i].timeout_ms) cfg.timeout_ms = cases[i].timeout_ms;
        Embedder *em = NULL;
        CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
        float *v = (float *)&cfg;
        int dim = -1;
        ErrInfo e = {0};
        CrErr rc = idx_embedder_embed(em, texts, 3, &v, &dim, &e);
        if (rc != cases[i].rc || (cases[i].msg && !strstr(e.msg, cases[i].msg)))
            fprintf(stderr, "failure case %zu (%s): %s\n", i, cases[i].script, e.msg);
        CHECK_INT(rc, cases[i].rc);
        if (rc) {
            CHECK(v == NULL);
            CHECK_INT(idx_embedder_dim(em), 0);
            CHECK(strncmp(e.msg, "embeddings endpoint ", 20) == 0);
            CHECK(strstr(e.msg, cases[i].msg) != NULL);
            CHECK(strstr(e.msg, KEY) == NULL);
        } else {
            CHECK(v && vectors_match(texts, 3, v, dim));
        }
        free(rc ? NULL : v);
        idx_embedder_free(em);
    }
}

static void test_dimension_fixed(void)
{
    static const char *const texts[] = {"x", "y"};
    fake_script(&fake, 8, "[{}, {\"dim\": 16}]");
    EmbedConfig cfg = openai_cfg();
    Embedder *em = NULL;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    float *v = NULL;
    int dim = 0;
    CHECK_INT(idx_embedder_embed(em, texts, 2, &v, &dim, NULL), CR_OK);
    CHECK_INT(dim, 8);
    free(v);
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_embed(em, texts, 2, &v, &dim, &e), CR_EHTTP);
    CHECK(v == NULL);
    CHECK(strstr(e.msg, "dimension changed from 8 to 16") != NULL);
    CHECK_INT(idx_embedder_dim(em), 8);

    /* within one call: the second batch changes dimension */
    fake_script(&fake, 8, "[{}, {\"dim\": 4}]");
    idx_embedder_free(em);
    cfg.batch = 1;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    CHECK_INT(idx_embedder_embed(em, texts, 2, &v, &dim, &e), CR_EHTTP);
    CHECK(v == NULL);
    CHECK(strstr(e.msg, "dimension changed from 8 to 4") != NULL);
    idx_embedder_free(em);
}

static void test_unreachable(void)
{
    static const char *const texts[] = {"x"};
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
    char dead[64], want[128];
    snprintf(dead, sizeof dead, "http://127.0.0.1:%d", ntohs(a.sin_port));
    snprintf(want, sizeof want, "embeddings endpoint %s/v1/embeddings unreachable: ", dead);
    EmbedConfig cfg = openai_cfg();
    cfg.url = dead;
    cfg.max_retries = -1;
    Embedder *em = NULL;
    CHECK_INT(idx_embedder_new(&cfg, &em, NULL), CR_OK);
    float *v = NULL;
    int dim = 0;
    ErrInfo e = {0};
    CHECK_INT(idx_embedder_embed(em, texts, 1, &v, &dim, &e), CR_EHTTP);
    CHECK(strncmp(e.msg, want, strlen(want)) == 0);
    CHECK(strstr(e.msg, KEY) == NULL);
    idx_embedder_free(em);
    close(s);
}

int main(void)
{
    setenv(KEY_ENV, KEY, 1);
    unsetenv("CODERAG_TEST_UNSET_KEY");
    RUN(test_config);
    if (fake_start(&fake) != 0) {
        fprintf(stderr, "could not start %s\n", FAKE_SCRIPT);
        fake_stop(&fake);
        return 1;
    }
    RUN(test_identity);
    RUN(test_batching);
    RUN(test_no_key);
    RUN(test_order);
    RUN(test_failures);
    RUN(test_dimension_fixed);
    RUN(test_unreachable);
    fake_stop(&fake);
    return test_summary();
}
