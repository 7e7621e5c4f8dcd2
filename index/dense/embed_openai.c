#include "embed_int.h"

#include <jansson.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OAI_MAX_DIM 65536

typedef struct OpenAiEmbedder {
    char *url;   /* the completed endpoint */
    char *shown; /* the same without credentials, for messages */
    char *model; /* NULL: not sent */
    char *id;
    char *auth; /* "Authorization: Bearer <key>" or NULL; wiped on free */
    long timeout_ms, connect_timeout_ms;
    int max_retries;
    size_t batch;
    int dim;
    uint64_t calls;
} OpenAiEmbedder;

static const char *oai_id(const void *state)
{
    return ((const OpenAiEmbedder *)state)->id;
}

static int oai_dim(const void *state)
{
    return ((const OpenAiEmbedder *)state)->dim;
}

static void oai_free(void *state)
{
    OpenAiEmbedder *o = state;
    if (o->auth) {
        explicit_bzero(o->auth, strlen(o->auth));
        free(o->auth);
    }
    free(o->url);
    free(o->shown);
    free(o->model);
    free(o->id);
    free(o);
}

static CrErr oai_bad(const OpenAiEmbedder *o, ErrInfo *e, const char *what)
{
    return err_set(e, CR_EHTTP, "embeddings endpoint %s: malformed response: %s", o->shown, what);
}

/* Checks one response for m inputs and stores its vectors, normalised, at
 * rows at..at+m of *vecs (n rows in all, allocated here once the dimension
 * is known). */
static CrErr oai_parse(OpenAiEmbedder *o, const StrBuf *body, size_t m, size_t at, size_t n,
                       float **vecs, ErrInfo *e)
{
    CrErr rc = CR_OK;
    json_error_t je;
    json_t *data = NULL;
    unsigned char *filled = NULL;
    json_t *root = json_loadb(body->buf, body->len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return oai_bad(o, e, je.text);
    if (json_unpack(root, "{s:o}", "data", &data) || !json_is_array(data)) {
        rc = oai_bad(o, e, "no \"data\" array");
        goto out;
    }
    if (json_array_size(data) != m) {
        rc = err_set(e, CR_EHTTP, "embeddings endpoint %s returned %zu vectors for %zu inputs",
                     o->shown, json_array_size(data), m);
        goto out;
    }
    json_t *first = NULL;
    if (json_unpack(json_array_get(data, 0), "{s:o}", "embedding", &first) ||
        !json_is_array(first)) {
        rc = oai_bad(o, e, "\"embedding\" is not an array of numbers");
        goto out;
    }
    size_t d0 = json_array_size(first);
    int dim = (int)(d0 <= OAI_MAX_DIM ? d0 : 0);
    if (dim == 0) {
        rc = oai_bad(o, e, "embedding dimension is 0 or over 65536");
        goto out;
    }
    if (o->dim && dim != o->dim) {
        rc = err_set(e, CR_EHTTP, "embeddings endpoint %s: dimension changed from %d to %d",
                     o->shown, o->dim, dim);
        goto out;
    }
    if (!*vecs) {
        if (n > SIZE_MAX / sizeof(float) / (size_t)dim) {
            rc = err_set(e, CR_ETOOBIG, "too many texts to embed");
            goto out;
        }
        *vecs = xmalloc(n * (size_t)dim * sizeof(float));
    }
    filled = xcalloc(m, 1);
    for (size_t i = 0; i < m; i++) {
        json_t *emb = NULL, *index = NULL;
        if (json_unpack(json_array_get(data, i), "{s:o, s?o}", "embedding", &emb, "index",
                        &index) ||
            !json_is_array(emb)) {
            rc = oai_bad(o, e, "\"embedding\" is not an array of numbers");
            goto out;
        }
        if (json_array_size(emb) != (size_t)dim) {
            rc = oai_bad(o, e, "vectors of different dimensions");
            goto out;
        }
        json_int_t slot = (json_int_t)i;
        if (index) {
            if (!json_is_integer(index) || (slot = json_integer_value(index)) < 0 ||
                (size_t)slot >= m) {
                rc = oai_bad(o, e, "\"index\" out of range");
                goto out;
            }
        }
        if (filled[slot]++) {
            rc = oai_bad(o, e, "duplicate \"index\"");
            goto out;
        }
        float *v = *vecs + (at + (size_t)slot) * (size_t)dim;
        for (int j = 0; j < dim; j++) {
            json_t *x = json_array_get(emb, (size_t)j);
            if (!json_is_number(x)) {
                rc = oai_bad(o, e, "non-number in an embedding");
                goto out;
            }
            double d = json_number_value(x);
            if (!isfinite(d) || fabs(d) > FLT_MAX) {
                rc = oai_bad(o, e, "non-finite number in an embedding");
                goto out;
            }
            v[j] = (float)d;
        }
        idx_embed_normalize(v, dim);
    }
    o->dim = dim;
out:
    free(filled);
    json_decref(root);
    return rc;
}

static CrErr oai_request(OpenAiEmbedder *o, const char *const *texts, size_t m, size_t at, size_t n,
                         float **vecs, ErrInfo *e)
{
    CrErr rc = CR_OK;
    HttpResponse resp;
    ErrInfo he = {0};
    StrBuf body;

    json_t *input = json_array();
    for (size_t i = 0; i < m; i++)
        json_array_append_new(input, json_string(texts[i]));
    json_t *req_json = json_pack("{s:o}", "input", input);
    if (o->model) json_object_set_new(req_json, "model", json_string(o->model));
    char *text = json_dumps(req_json, JSON_COMPACT);
    json_decref(req_json);
    sb_init(&body);
    if (text) sb_adds(&body, text);
    free(text);

    const char *headers[3] = {"Content-Type: application/json", "Accept: application/json",
                              o->auth};
    HttpRequest req = {
        .url = o->url,
        .headers = headers,
        .n_headers = o->auth ? 3 : 2,
        .body = body.buf,
        .body_len = body.len,
        .connect_timeout_ms = o->connect_timeout_ms,
        .timeout_ms = o->timeout_ms,
        .max_retries = o->max_retries,
        .seed = hash64(&o, sizeof o) ^ (++o->calls * 0x9e3779b97f4a7c15ull) ^ (uint64_t)now_ms(),
    };
    rc = http_post(&req, &resp, &he);
    if (rc == CR_ETIMEOUT || rc == CR_ECANCELED)
        err_set(e, rc, "embeddings endpoint %s", he.msg);
    else if (rc)
        rc = err_set(e, CR_EHTTP, "embeddings endpoint %s", he.msg);
    else
        rc = oai_parse(o, &resp.body, m, at, n, vecs, e);
    http_response_release(&resp);
    sb_release(&body);
    return rc;
}

static CrErr oai_embed(void *state, const char *const *texts, size_t n, float **out, int *out_dim,
                       ErrInfo *e)
{
    OpenAiEmbedder *o = state;
    float *vecs = NULL;
    CrErr rc = CR_OK;
    for (size_t at = 0; at < n; at += o->batch) {
        size_t m = n - at < o->batch ? n - at : o->batch;
        rc = oai_request(o, texts + at, m, at, n, &vecs, e);
        if (rc) goto out;
    }
    *out = vecs;
    vecs = NULL;
    *out_dim = o->dim;
out:
    free(vecs);
    return rc;
}

static const EmbedderOps oai_ops = {oai_id, oai_dim, oai_embed, oai_free, NULL, 0, 0};

CrErr idx_embedder_openai_new(const EmbedConfig *cfg, Embedder **out, ErrInfo *e)
{
    *out = NULL;
    if (!cfg->url || !*cfg->url)
        return err_set(e, CR_EINVAL, "embed.provider openai needs embed.url");
    if (strncmp(cfg->url, "http://", 7) && strncmp(cfg->url, "https://", 8))
        return err_set(e, CR_EINVAL, "embed.url must start with http:// or https://");
    OpenAiEmbedder *o = xcalloc(1, sizeof *o);
    o->url = http_endpoint_url(cfg->url, "embeddings");
    StrBuf sb;
    sb_init(&sb);
    http_redact_url(&sb, o->url);
    o->shown = sb_detach(&sb, NULL);
    if (cfg->model && *cfg->model) o->model = xstrdup(cfg->model);
    sb_init(&sb);
    sb_addf(&sb, "openai:%s", o->model ? o->model : "default");
    o->id = sb_detach(&sb, NULL);
    CrErr rc = http_bearer_from_env(cfg->api_key_env, "embed", &o->auth, NULL, e);
    if (rc) {
        oai_free(o);
        return rc;
    }
    o->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 60000;
    o->connect_timeout_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 5000;
    o->max_retries = cfg->max_retries > 0 ? cfg->max_retries : cfg->max_retries < 0 ? 0 : 3;
    o->batch = cfg->batch ? cfg->batch : 64;
    *out = idx_embedder_wrap(&oai_ops, o);
    return CR_OK;
}
