/* save_memo.c - what the last save computed per chunk from the chunk's own
 * text, kept for the next save of the store (idx_update_file): a chunk whose
 * inputs are the same bytes again gets the same search fields and vector
 * back without tokenizing or embedding it again, so a save that changes one
 * function tokenizes and embeds that function. Both are functions of their
 * inputs alone (idx_search_fields; the parse embedder embeds each text on
 * its own), so the rows written are those a fresh build writes. An entry is
 * found by its inputs in full (a key of their bytes, never a hash of them),
 * and a save keeps only its own file's entries, for a file of at most
 * SAVE_MEMO_MAX_BYTES (the bound of a save's kept tree). */
#include "../store/store_int.h"
#include "../dense/vec_int.h"

#include <stdlib.h>
#include <string.h>

#define SAVE_MEMO_MAX_BYTES ((size_t)1 << 20)

/* One save's entries: the search fields by their inputs' key, and the
 * vectors by their embedding text. */
typedef struct MemoGen {
    StrMap fields; /* key -> entry k: text[k * IDX_SEARCH_FIELDS ..] */
    char **text;
    size_t n_text, cap_text;
    StrMap vecs; /* embedding text -> entry k: vec[k * dim ..] */
    float *vec;
    size_t n_vec, cap_vec;
    int dim;
    char *em_id; /* idx_embedder_id of what made them */
} MemoGen;

struct SaveMemo {
    MemoGen last, next; /* the last save's, and the one being prepared */
};

static void gen_release(MemoGen *g)
{
    strmap_release(&g->fields);
    for (size_t i = 0; i < g->n_text * IDX_SEARCH_FIELDS; i++)
        free(g->text[i]);
    free(g->text);
    strmap_release(&g->vecs);
    free(g->vec);
    free(g->em_id);
    memset(g, 0, sizeof *g);
    strmap_init(&g->fields);
    strmap_init(&g->vecs);
}

SaveMemo *idx_save_memo_new(void)
{
    SaveMemo *m = xcalloc(1, sizeof *m);
    gen_release(&m->last);
    gen_release(&m->next);
    return m;
}

void idx_save_memo_free(SaveMemo *m)
{
    if (!m) return;
    gen_release(&m->last);
    gen_release(&m->next);
    free(m);
}

int idx_save_memo_keeps(size_t src_len)
{
    return src_len <= SAVE_MEMO_MAX_BYTES;
}

static void key_part(StrBuf *key, const char *s, size_t len)
{
    sb_addf(key, "%zu:", len);
    sb_add(key, s, len);
}

void idx_save_memo_fields_key(const char *symbol, const char *path_tok, const char *docstring,
                              int cont, const char *signature, const char *lines, size_t len,
                              StrBuf *key)
{
    sb_reset(key);
    /* each part after its length: no two inputs make one key */
    key_part(key, symbol, strlen(symbol));
    key_part(key, path_tok, strlen(path_tok));
    key_part(key, docstring ? docstring : "", docstring ? strlen(docstring) : 0);
    sb_addf(key, "%c%d", docstring ? 'd' : '-', cont);
    key_part(key, signature ? signature : "", signature ? strlen(signature) : 0);
    sb_addc(key, signature ? 's' : '-');
    key_part(key, lines, len);
}

/* A key holding a NUL would be cut short by the map: never kept. */
static int key_ok(const StrBuf *key)
{
    return key->len && memchr(key->buf, '\0', key->len) == NULL;
}

int idx_save_memo_fields_get(const SaveMemo *m, const StrBuf *key, char *out[IDX_SEARCH_FIELDS])
{
    int64_t k;
    if (!m || !key_ok(key) || !strmap_getn(&m->last.fields, key->buf, key->len, &k)) return 0;
    for (int f = 0; f < IDX_SEARCH_FIELDS; f++)
        out[f] = xstrdup(m->last.text[(size_t)k * IDX_SEARCH_FIELDS + (size_t)f]);
    return 1;
}

void idx_save_memo_fields_put(SaveMemo *m, const StrBuf *key, char *const fields[IDX_SEARCH_FIELDS])
{
    MemoGen *g = &m->next;
    if (!key_ok(key) || strmap_getn(&g->fields, key->buf, key->len, NULL)) return;
    ARRAY_GROW(g->text, (g->n_text + 1) * IDX_SEARCH_FIELDS, g->cap_text);
    for (int f = 0; f < IDX_SEARCH_FIELDS; f++)
        g->text[g->n_text * IDX_SEARCH_FIELDS + (size_t)f] = xstrdup(fields[f]);
    strmap_put(&g->fields, key->buf, (int64_t)g->n_text++);
}

/* Whether the last save's vectors are em's. */
static int last_by(const SaveMemo *m, const Embedder *em)
{
    return m && m->last.vec && m->last.em_id && !strcmp(m->last.em_id, idx_embedder_id(em));
}

const float *idx_save_memo_vec_get(const SaveMemo *m, const Embedder *em, const char *text)
{
    int64_t k;
    if (!last_by(m, em) || !strmap_get(&m->last.vecs, text, &k)) return NULL;
    return m->last.vec + (size_t)k * (size_t)m->last.dim;
}

int idx_save_memo_dim(const SaveMemo *m, const Embedder *em)
{
    return last_by(m, em) ? m->last.dim : 0;
}

void idx_save_memo_vec_put(SaveMemo *m, const Embedder *em, const char *text, const float *v,
                           int dim)
{
    MemoGen *g = &m->next;
    if (dim <= 0 || (g->n_vec && (strcmp(g->em_id, idx_embedder_id(em)) || g->dim != dim))) return;
    if (strmap_get(&g->vecs, text, NULL)) return;
    if (!g->em_id) g->em_id = xstrdup(idx_embedder_id(em));
    g->dim = dim;
    ARRAY_GROW(g->vec, (g->n_vec + 1) * (size_t)dim, g->cap_vec);
    memcpy(g->vec + g->n_vec * (size_t)dim, v, (size_t)dim * sizeof *v);
    strmap_put(&g->vecs, text, (int64_t)g->n_vec++);
}

void idx_save_memo_turn(SaveMemo *m, int keep)
{
    gen_release(&m->last);
    if (keep) {
        m->last = m->next;
        memset(&m->next, 0, sizeof m->next);
    }
    gen_release(&m->next);
}
