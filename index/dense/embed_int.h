/*
 * embed_int.h - how embedding providers plug into idx_embedder_new (embed.c).
 * Not for use outside index/ and its unit tests; everyone else goes through
 * the embedder_* functions of vec_int.h.
 *
 * A provider fills an EmbedderOps table (a const, static vtable) and hands
 * its private state to idx_embedder_wrap. embed.c owns the dispatch and the
 * argument checks common to all providers.
 */
#ifndef CODERAG_EMBED_INT_H
#define CODERAG_EMBED_INT_H

#include "vec_int.h"

#include <math.h>
#include <stdatomic.h>

typedef struct EmbedderOps {
    /* Stable identity, e.g. "openai:nomic-embed-text"; borrowed from state. */
    const char *(*id)(const void *state);
    /* Dimension, 0 while unknown. */
    int (*dim)(const void *state);
    /* Same contract as idx_embedder_embed; called only with n > 0 and non-NULL
     * texts, out and out_dim. On failure *out is left NULL. */
    CrErr (*embed)(void *state, const char *const *texts, size_t n, float **out, int *out_dim,
                   ErrInfo *e);
    /* Frees state (never NULL when called). */
    void (*free)(void *state);
    /* Optional: embeds questions when a provider encodes them differently
     * from code (same contract as embed); NULL means embed. */
    CrErr (*embed_query)(void *state, const char *const *texts, size_t n, float **out, int *out_dim,
                         ErrInfo *e);
    /* 1: the model knows only the rows that say so (IdxLang.builtin_embed);
     * 0: every one. */
    int rows_flagged;
    /* Whether embed computes in process, cheaply, and may run on several
     * threads at once: then the index's parse workers embed as they go. */
    int parallel;
} EmbedderOps;

struct Embedder {
    const EmbedderOps *ops;
    void *state;
    atomic_int refs; /* idx_embedder_ref; the last idx_embedder_free frees */
};

/* Heap Embedder around a provider's state, one reference; the last
 * idx_embedder_free calls ops->free. */
static inline Embedder *idx_embedder_wrap(const EmbedderOps *ops, void *state)
{
    Embedder *em = xmalloc(sizeof *em);
    em->ops = ops;
    em->state = state;
    atomic_init(&em->refs, 1);
    return em;
}

/* Scales v[0..dim) to unit L2 length (an all-zero vector stays zero). */
static inline void idx_embed_normalize(float *v, int dim)
{
    double ss = 0;
    for (int i = 0; i < dim; i++)
        ss += (double)v[i] * v[i];
    if (ss <= 0) return;
    double inv = 1.0 / sqrt(ss);
    for (int i = 0; i < dim; i++)
        v[i] = (float)(v[i] * inv);
}

/* Providers take the caller's cfg (already non-NULL) and copy what they
 * keep. */

/* OpenAI-compatible /v1/embeddings client (embed_openai.c): CR_EINVAL
 * without cfg->url. Reads the key from the environment variable named by
 * cfg->api_key_env once, here; sends it only as "Authorization: Bearer". */
CrErr idx_embedder_openai_new(const EmbedConfig *cfg, Embedder **out, ErrInfo *e);

/* The trained bag-of-tokens model (embed_builtin.c) read from the model file
 * at path. CR_EPARSE for a file that is not a model, of another format
 * version, truncated or failing its checksum; errors of sb_read_file. */
CrErr idx_embedder_builtin_new(const char *path, Embedder **out, ErrInfo *e);

#endif
