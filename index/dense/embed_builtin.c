#include "embed_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The builtin embedder: a weighted bag of token embeddings trained by
 * scripts/train-embedder.sh. A text's vector is sum_t w_side[t] * E[t] over
 * its idx_tok_code tokens (the first max_tokens of them), L2-normalised; tokens
 * outside the vocabulary are skipped. One table lookup per token.
 *
 * File format (little-endian), version 1:
 *   header (104 bytes):
 *     char     magic[8]      "CRNBOW\0\0"
 *     u32      version       1
 *     u32      dim           1..4096
 *     u32      vocab         1..2^22
 *     u32      max_tokens    tokens of a text used (0: all)
 *     u64      payload_bytes
 *     u64      checksum      FNV-1a over the payload as little-endian u64 words
 *     u8       digest[32]    sha256 of the training pairs (provenance)
 *     char     name[32]      NUL-padded model name
 *   payload:
 *     f32 w_query[vocab], f32 w_code[vocab], f32 scale[vocab],
 *     i8  emb[vocab * dim]   (row t times scale[t] is token t's vector)
 *     vocab tokens: u8 length, bytes (in id order), then zero padding to 8.
 */

#define NB_MAGIC "CRNBOW\0\0"
#define NB_VERSION 1
#define NB_HEADER 104
#define NB_MAX_DIM 4096
#define NB_MAX_VOCAB (1u << 22)
#define NB_MAX_FILE (256u << 20)

typedef struct NbowEmbedder {
    char *data; /* the whole file, mapped read-only */
    size_t size;
    int dim;
    uint32_t vocab, max_tokens;
    const float *w_query, *w_code, *scale;
    const int8_t *emb;
    const uint8_t **tok; /* tok[i]: length byte then bytes, inside data */
    uint32_t *slots;     /* open addressing: token id + 1, 0 empty */
    uint32_t mask;
    char id[96];
} NbowEmbedder;

static uint32_t rd32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static uint64_t rd64(const char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint64_t nb_checksum(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        h ^= rd64(p + i);
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint32_t nb_hash(const void *s, size_t n)
{
    const unsigned char *p = s;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static const char *nb_id(const void *state)
{
    return ((const NbowEmbedder *)state)->id;
}

static int nb_dim(const void *state)
{
    return ((const NbowEmbedder *)state)->dim;
}

static void nb_free(void *state)
{
    NbowEmbedder *m = state;
    if (m->data) munmap(m->data, m->size);
    free(m->tok);
    free(m->slots);
    free(m);
}

static long nb_lookup(const NbowEmbedder *m, const char *s, size_t n)
{
    for (uint32_t at = nb_hash(s, n) & m->mask;; at = (at + 1) & m->mask) {
        uint32_t v = m->slots[at];
        if (!v) return -1;
        const uint8_t *t = m->tok[v - 1];
        if (t[0] == n && !memcmp(t + 1, s, n)) return (long)(v - 1);
    }
}

/* Tokens of text, at most max (0: all) of them. idx_tok_code starts afresh
 * after every byte that cannot be in an identifier, so tokenizing the text
 * piece by piece, each piece ending at such a byte, gives the same tokens:
 * long texts stop being read once max tokens are in. */
static void nb_tokens(const char *text, uint32_t max, StrBuf *toks)
{
    size_t len = strlen(text), at = 0;
    uint32_t count = 0;
    sb_reset(toks);
    while (at < len && (!max || count < max)) {
        size_t end = at + 512 < len ? at + 512 : len;
        while (end < len && (isalnum((unsigned char)text[end - 1]) || text[end - 1] == '_' ||
                             (unsigned char)text[end - 1] >= 0x80))
            end++;
        size_t before = toks->len;
        idx_tok_code(text + at, end - at, toks);
        /* every token after the first is preceded by one space */
        for (size_t i = before; i < toks->len; i++)
            count += toks->buf[i] == ' ';
        if (before == 0 && toks->len > 0) count++;
        at = end;
    }
}

/* Embeds one text into v[0..dim). */
static void nb_embed_one(const NbowEmbedder *m, const char *text, int query, StrBuf *toks, float *v)
{
    const float *w = query ? m->w_query : m->w_code;
    memset(v, 0, sizeof *v * (size_t)m->dim);
    nb_tokens(text, m->max_tokens, toks);
    uint32_t used = 0;
    for (char *p = toks->buf; p && *p && (!m->max_tokens || used < m->max_tokens);) {
        char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        used++;
        long id = n <= 255 ? nb_lookup(m, p, n) : -1;
        if (id >= 0) {
            float f = w[id] * m->scale[id];
            const int8_t *row = m->emb + (size_t)id * (size_t)m->dim;
            for (int k = 0; k < m->dim; k++)
                v[k] += f * (float)row[k];
        }
        p = end ? end + 1 : NULL;
    }
    idx_embed_normalize(v, m->dim);
}

static CrErr nb_embed_side(void *state, const char *const *texts, size_t n, int query, float **out,
                           int *out_dim, ErrInfo *e)
{
    const NbowEmbedder *m = state;
    StrBuf toks;
    float *v = xcalloc(n * (size_t)m->dim, sizeof *v);
    sb_init(&toks);
    for (size_t i = 0; i < n; i++)
        nb_embed_one(m, texts[i], query, &toks, v + i * (size_t)m->dim);
    sb_release(&toks);
    *out = v;
    *out_dim = m->dim;
    return CR_OK;
}

static CrErr nb_embed(void *state, const char *const *texts, size_t n, float **out, int *out_dim,
                      ErrInfo *e)
{
    return nb_embed_side(state, texts, n, 0, out, out_dim, e);
}

static CrErr nb_embed_query(void *state, const char *const *texts, size_t n, float **out,
                            int *out_dim, ErrInfo *e)
{
    return nb_embed_side(state, texts, n, 1, out, out_dim, e);
}

/* Trained on Python alone: measured on the other languages' dev sets, its
 * vectors lowered recall (docs/benchmarks.md), so only the rows flagged
 * builtin_embed (Python's) are embedded. */
/* A table lookup per token over a read-only model: the parse workers embed. */
static const EmbedderOps nb_ops = {nb_id, nb_dim, nb_embed, nb_free, nb_embed_query, 1, 1};

/* The model's identity from its header h (NB_HEADER bytes): its name and
 * the checksum its header states. */
static void nb_header_id(const char *h, char *out, size_t cap)
{
    char name[33];
    memcpy(name, h + 72, 32);
    name[32] = '\0';
    for (char *c = name; *c; c++)
        if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) *c = '?';
    char hex[17];
    hash64_hex(rd64(h + 32), hex);
    snprintf(out, cap, "builtin:%s:%.8s", name[0] ? name : "unnamed", hex);
}

int idx_embedder_builtin_peek_id(const char *path, char *out, size_t cap)
{
    char h[NB_HEADER];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= NB_HEADER &&
             file_pread_all(fd, h, sizeof h, 0) && !memcmp(h, NB_MAGIC, 8) &&
             rd32(h + 8) == NB_VERSION;
    close(fd);
    if (ok) nb_header_id(h, out, cap);
    return ok;
}

/* Checks the header and payload of the file in m->data and points the
 * tables into it. */
static CrErr nb_parse(NbowEmbedder *m, const char *path, ErrInfo *e)
{
    const char *d = m->data;
    if (m->size < NB_HEADER || memcmp(d, NB_MAGIC, 8) != 0)
        return err_set(e, CR_EPARSE, "%s is not a coderag embedding model", path);
    uint32_t version = rd32(d + 8), dim = rd32(d + 12), vocab = rd32(d + 16);
    uint64_t payload = rd64(d + 24), sum = rd64(d + 32);
    if (version != NB_VERSION)
        return err_set(e, CR_EPARSE, "%s: model format version %u, this build reads %d", path,
                       version, NB_VERSION);
    if (!dim || dim > NB_MAX_DIM || !vocab || vocab > NB_MAX_VOCAB)
        return err_set(e, CR_EPARSE, "%s: bad dimension %u or vocabulary %u", path, dim, vocab);
    if (payload != m->size - NB_HEADER || payload % 8)
        return err_set(e, CR_EPARSE, "%s: truncated or padded model (%zu bytes, header says %llu)",
                       path, m->size, (unsigned long long)payload + NB_HEADER);
    uint64_t fixed = (uint64_t)vocab * (12 + dim);
    if (fixed + vocab > payload)
        return err_set(e, CR_EPARSE, "%s: payload too short for its tables", path);
    if (nb_checksum(d + NB_HEADER, payload) != sum)
        return err_set(e, CR_EPARSE, "%s: checksum mismatch (corrupt model)", path);
    m->dim = (int)dim;
    m->vocab = vocab;
    m->max_tokens = rd32(d + 20);
    m->w_query = (const float *)(d + NB_HEADER);
    m->w_code = m->w_query + vocab;
    m->scale = m->w_code + vocab;
    m->emb = (const int8_t *)(m->scale + vocab);
    const char *p = d + NB_HEADER + fixed, *end = d + m->size;
    uint32_t cap = 16;
    while (cap < 2 * vocab)
        cap <<= 1;
    m->mask = cap - 1;
    m->slots = xcalloc(cap, sizeof *m->slots);
    m->tok = xcalloc(vocab, sizeof *m->tok);
    for (uint32_t i = 0; i < vocab; i++) {
        size_t n = (unsigned char)*p;
        if (!n || p + 1 + n > end)
            return err_set(e, CR_EPARSE, "%s: bad vocabulary entry %u", path, i);
        m->tok[i] = (const uint8_t *)p;
        uint32_t at = nb_hash(p + 1, n) & m->mask;
        while (m->slots[at]) {
            const uint8_t *t = m->tok[m->slots[at] - 1];
            if (t[0] == n && !memcmp(t + 1, p + 1, n))
                return err_set(e, CR_EPARSE, "%s: duplicate vocabulary entry %u", path, i);
            at = (at + 1) & m->mask;
        }
        m->slots[at] = i + 1;
        p += 1 + n;
    }
    for (uint32_t i = 0; i < 3 * vocab; i++)
        if (!isfinite(m->w_query[i])) return err_set(e, CR_EPARSE, "%s: non-finite weight", path);
    nb_header_id(d, m->id, sizeof m->id);
    return CR_OK;
}

/* Reads the model file into page-aligned memory of its own (the float
 * tables stay aligned), in one go. Not a mapping of the file: one cut short
 * under a running server would kill it with SIGBUS. */
static CrErr nb_map(const char *path, char **out, size_t *size, ErrInfo *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO never blocks */
    if (fd < 0)
        return err_set(e, errno == ENOENT ? CR_ENOENT : CR_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    CrErr rc = CR_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = err_set(e, CR_EIO, "%s: not a readable file", path);
    else if ((uint64_t)st.st_size > NB_MAX_FILE)
        rc = err_set(e, CR_ETOOBIG, "%s: larger than %u bytes", path, NB_MAX_FILE);
    else if (st.st_size == 0)
        rc = err_set(e, CR_EPARSE, "%s is not a coderag embedding model (empty)", path);
    if (!rc) {
        /* read into pages of its own, never mapped from the file: a model
         * file cut short under a running server would kill it (SIGBUS) */
        void *map = file_read_pages(fd, (size_t)st.st_size);
        if (!map)
            rc = err_set(e, CR_EIO, "%s: cannot read it whole (cut short?)", path);
        else {
            *out = map;
            *size = (size_t)st.st_size;
        }
    }
    close(fd);
    return rc;
}

CrErr idx_embedder_builtin_new(const char *path, Embedder **out, ErrInfo *e)
{
    *out = NULL;
    if (!path || !*path) return err_set(e, CR_EINVAL, "no builtin model path");
    NbowEmbedder *m = xcalloc(1, sizeof *m);
    /* the page alignment of the mapping keeps the float tables aligned */
    CrErr rc = nb_map(path, &m->data, &m->size, e);
    if (rc || (rc = nb_parse(m, path, e))) {
        nb_free(m);
        return rc;
    }
    *out = idx_embedder_wrap(&nb_ops, m);
    return CR_OK;
}
