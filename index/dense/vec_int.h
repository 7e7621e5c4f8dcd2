/*
 * vec_int.h - embedders and the vector store (FAISS) inside index/.
 * Not for use outside index/ and its unit tests.
 */
#ifndef CODERAG_VEC_INT_H
#define CODERAG_VEC_INT_H

#include "../idx_int.h"

#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_io_c.h>
#include <stdint.h>

/* ---------------------------------------------------------------- embedders (embed*.c) */

typedef struct Embedder Embedder;

typedef struct EmbedConfig {
    const char *provider; /* "builtin" (default when NULL) or "openai" */
    const char
        *url; /* openai: base URL; "/v1/embeddings" or "/embeddings" appended as SPEC.md says */
    const char *model; /* openai: model name sent in the request; builtin: the model
                        * file (NULL: the default, idx_embedder_builtin_path) */
    const char
        *api_key_env; /* openai: name of the environment variable holding the key (may be NULL) */
    long timeout_ms;  /* total per request; 0: 60000 */
    long connect_timeout_ms; /* 0: 5000 */
    int max_retries;         /* on 429 / 5xx / transport errors; 0: 3 (negative: none) */
    size_t batch;            /* texts per request; 0: 64 */
} EmbedConfig;

/* Creates an embedder. For "openai" nothing is sent yet (the dimension is
 * learnt from the first response). "builtin" loads the trained model file
 * (CR_EPARSE when it is corrupt, truncated or of another version; CR_ENOENT
 * when absent). CR_EINVAL for an unknown provider or an openai config
 * without url. Caller frees with idx_embedder_free. */
CrErr idx_embedder_new(const EmbedConfig *cfg, Embedder **out, ErrInfo *e);
/* Drops one reference; the last frees. NULL-safe. */
void idx_embedder_free(Embedder *em);
/* One more reference to an embedder that may be used from several threads
 * at once (EmbedderOps.parallel: the builtin model), for sharing it between
 * stores (IdxModels). Returns em. */
Embedder *idx_embedder_ref(Embedder *em);

/* The builtin model's file for cfg: cfg->model, or the default one found
 * near the executable (embed.c says where), else CODERAG_MODEL_PATH. Static
 * or borrowed from cfg. */
const char *idx_embedder_builtin_path(const EmbedConfig *cfg);
/* The id the builtin model at path would have once loaded (idx_embedder_id),
 * from its header alone (embed_builtin.c): 1, or 0 when the file is not
 * such a model. Its payload unchecked: a model that then fails to load
 * leaves no dense leg, as ever. */
int idx_embedder_builtin_peek_id(const char *path, char *out, size_t cap);

/* The embedder for cfg as idx_embedder_new makes it, except that with ms the
 * builtin model is the one ms holds for that file (loaded once, shared; a
 * file changed on disk since is loaded anew). Caller frees with
 * idx_embedder_free. */
CrErr idx_models_embedder(IdxModels *ms, const EmbedConfig *cfg, Embedder **out, ErrInfo *e);

/* A stable identity of what produces the vectors, e.g. "openai:nomic-embed-text"
 * or "builtin:lsa-v1"; vectors from different identities are never mixed.
 * Borrowed. */
const char *idx_embedder_id(const Embedder *em);
/* Whether the model knows the language of the file at relpath (by its
 * name): chunks of other files get no vector. */
int idx_embedder_covers(const Embedder *em, const char *relpath);
/* Its identity and, when it embeds some languages only, which:
 * "builtin:...:6678d69b (embeds python files only)". */
void idx_embedder_describe(const Embedder *em, char *out, size_t size);

/* Whether it may embed on several threads at once (EmbedderOps.parallel). */
int idx_embedder_parallel(const Embedder *em);

/* Dimension, or 0 while unknown (openai before its first response). */
int idx_embedder_dim(const Embedder *em);

/* Embeds n texts into out (n * dim floats, L2-normalised), batching as
 * configured. *out is allocated (caller frees) because the dimension may
 * only be known after the first response; *out_dim receives it.
 * Errors: CR_EHTTP (endpoint refused, non-2xx after retries, malformed
 * JSON, wrong count, a dimension that differs from an earlier response),
 * CR_ETIMEOUT. Never logs the API key. */
CrErr idx_embedder_embed(Embedder *em, const char *const *texts, size_t n, float **out,
                         int *out_dim, ErrInfo *e);

/* Embeds one question (providers may encode questions and code
 * differently); otherwise as idx_embedder_embed with n = 1. */
CrErr idx_embedder_embed_query(Embedder *em, const char *question, float **out, int *out_dim,
                               ErrInfo *e);

/* ---------------------------------------------------------------- FAISS (faiss_load.c) */

/* The FAISS C API functions the vector store calls, each declared by
 * FAISS's own headers (so a signature can never drift from them). */
/* clang-format off */
#define FAISS_API_FNS(X)                                                                           \
    X(get_last_error) X(Index_free) X(Index_d) X(Index_ntotal) X(Index_metric_type)                \
    X(Index_add_with_ids) X(Index_search) X(Index_remove_ids) X(IndexFlatIP_new_with)              \
    X(IndexFlat_cast) X(IndexIDMap_new) X(IndexIDMap_set_own_fields) X(IndexIDMap_cast)            \
    X(IndexIDMap_sub_index) X(IndexIDMap_id_map) X(IDSelectorBatch_new) X(IDSelector_free)         \
    X(read_index) X(write_index) X(IndexFlat_xb)
/* clang-format on */

typedef struct FaissApi {
#define FAISS_FIELD(fn) __typeof__(faiss_##fn) *fn;
    FAISS_API_FNS(FAISS_FIELD)
#undef FAISS_FIELD
    int loaded;
    char error[300]; /* why it could not be loaded */
} FaissApi;

/* FAISS, loaded on the first call (a module of its own: faiss_load.c says
 * why). NULL with CR_EVECTOR in e when it cannot be loaded. */
const FaissApi *idx_faiss_api(ErrInfo *e);

/* ---------------------------------------------------------------- vector store (vectors.c) */

typedef struct VecStore VecStore;

/* Opens (or creates empty) the vector file at path ("<index_dir>/vectors.faiss").
 * dim 0 means "take it from the file"; a file whose dimension differs from
 * a non-zero dim is discarded (rebuild). Caller frees with idx_vecstore_close. */
CrErr idx_vecstore_open(const char *path, int dim, VecStore **out, ErrInfo *e);
void idx_vecstore_close(VecStore *vs);

int idx_vecstore_dim(const VecStore *vs);
int64_t idx_vecstore_count(const VecStore *vs);

/* Adds vectors (n * dim floats, L2-normalised) under ids (chunk ids).
 * An id already present is replaced. */
CrErr idx_vecstore_add(VecStore *vs, const int64_t *ids, const float *vecs, size_t n, ErrInfo *e);
/* Removes ids (absent ids are ignored). */
CrErr idx_vecstore_remove(VecStore *vs, const int64_t *ids, size_t n, ErrInfo *e);
/* All ids present, sorted ascending. Caller frees *out. */
CrErr idx_vecstore_ids(const VecStore *vs, int64_t **out, size_t *n_out, ErrInfo *e);

/* Top-k by inner product (cosine, for normalised vectors). out_ids and
 * out_scores have room for k; *n_out receives how many were found. */
CrErr idx_vecstore_search(const VecStore *vs, const float *query, size_t k, int64_t *out_ids,
                          float *out_scores, size_t *n_out, ErrInfo *e);

/* The k best of n_rows rows (dim floats each) by inner product with
 * query, best first (equal scores by row): their rows and scores. Returns
 * how many: min(k, n_rows). vec_scan.c. */
size_t idx_vec_scan(const float *rows, size_t n_rows, int dim, const float *query, size_t k,
                    size_t *out_rows, float *out_scores);

/* ---------------------------------------------------------------- read-only view (vec_view.c) */

/* A vector file read for searching only, without FAISS: what a one-shot
 * ask needs. The same hits as a VecStore of the same file. */
typedef struct VecView VecView;
/* 1 with *out (caller frees with idx_vecview_close) when the file at path
 * can be served so: it is whole (trailer and checksum), in the layout this
 * build writes, with no journal to replay. 0 otherwise (no file, damaged,
 * a journal): idx_vecstore_open then reads, repairs or reports it. */
int idx_vecview_open(const char *path, VecView **out);
void idx_vecview_close(VecView *v);
int idx_vecview_dim(const VecView *v);
int64_t idx_vecview_count(const VecView *v);
/* Whether the file at path, or its journal, is no longer what v read. */
int idx_vecview_changed_on_disk(const VecView *v, const char *path);
/* As idx_vecstore_search. */
CrErr idx_vecview_search(const VecView *v, const float *query, size_t k, int64_t *out_ids,
                         float *out_scores, size_t *n_out, ErrInfo *e);

/* The sizes of the store at path: its file and its journal (-1: none). */
void idx_vecstore_file_sizes(const char *path, long long *file, long long *journal);

/* Whether another store (process) wrote the file or its journal since
 * this one read or wrote them. */
int idx_vecstore_changed_on_disk(const VecStore *vs);

/* Writes the store to its path atomically (temporary file, fsync, rename)
 * when it changed since the last save. */
CrErr idx_vecstore_save(VecStore *vs, ErrInfo *e);

#endif
