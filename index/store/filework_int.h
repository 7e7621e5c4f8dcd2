/*
 * filework_int.h - one file's journey (write.c, stem.c): prepared off the
 * writer thread (read, check, hash, chunk, tokenize, stem), then written by
 * the writer in a transaction. Internal to index/; included by store_int.h.
 */
#ifndef CODERAG_FILEWORK_INT_H
#define CODERAG_FILEWORK_INT_H

/* A file's search terms as a parse worker stemmed them (stem.c): each
 * distinct term once (its text NUL-terminated at off[k], len[k] bytes,
 * hash64 hash[k]), and every token of every field, in order, as its local
 * id k in tok; field i's tokens end at field_end[i] (4 fields a chunk). */
typedef struct FileWords FileWords;
/* Distinct strings, each with an id (0, 1, ... in the order added): its
 * text (NUL-terminated in text), length and hash, found through an
 * open-addressing table of id + 1 (stem.c). */
typedef struct StrIds {
    StrBuf text;
    uint32_t *off, *len;
    uint64_t *hash;
    uint32_t n;
    size_t cap, cap_slot;
    uint32_t *slot;
} StrIds;
typedef struct FileTerms {
    StrIds ids; /* the file's distinct terms: a token is a local id */
    uint32_t *tok;
    size_t n_tok, cap_tok;
    size_t *field_end;
    size_t n_fields, cap_fields;
    FileWords *words; /* the words met, each tokenized once (stem.c) */
} FileTerms;

/* What the last save computed per chunk from the chunk's own inputs
 * (update/save_memo.c), found by those inputs for the next save. */
typedef struct SaveMemo SaveMemo;

typedef struct FileWork {
    /* in */
    char *path; /* relative */
    int64_t size, mtime_ns;
    int64_t old_id; /* 0: not in the index yet */
    char old_hash[17];
    /* how the project reads shared suffixes (the store's; NULL: by suffix
     * alone); borrowed */
    const IdxLangPick *pick;
    int reread;     /* read and written again even with old_hash's content (the pick changed) */
    SaveMemo *memo; /* a save's (idx_update_file): chunks found there are not tokenized or
                     * embedded again, and this file's are kept in it; borrowed, or NULL */
    /* out of prepare */
    const char
        *skip; /* non-NULL: skip reason ("binary", "not-utf8", "too-large", "unreadable", "gone") */
    int same_content; /* content hash equals old_hash: only size/mtime change */
    char hash[17];
    uint32_t lines;
    char *module;
    int is_pkg;
    const IdxLang *lang; /* the table row it was read as */
    ChunkSet set;
    char **text;     /* 4 strings per chunk: name, path, doc, body tokens */
    FileTerms terms; /* the same through the Stemmer when prepared with one (terms.n_fields
                      * = 4 per chunk), else empty */
    char (*chunk_hash)[17];
    char *cont;  /* per chunk: a continuation piece (later window, later class run) */
    float *vecs; /* per chunk: its vector (dim floats) when prepared with an embedder
                  * that covers the file, or NULL */
    int dim;
} FileWork;

/* Reads and chunks a file; never fails (problems become fw->skip).
 * root is the canonical root. With stem, the search text is also stemmed;
 * with em (idx_dense_parse_embedder), the chunks are also embedded. */
void idx_filework_prepare(FileWork *fw, const char *root, size_t max_bytes, Chunker *ch,
                          Stemmer *stem, Embedder *em);
void idx_filework_release(FileWork *fw);

/* Writes a prepared file in the current transaction: replaces the file's
 * rows (or removes them for a skipped file and records the skip). When
 * mark_dependents is set, refs elsewhere that may resolve differently are
 * marked for re-resolution. */
CrErr idx_store_write_file(IdxStore *st, FileWork *fw, int mark_dependents, ErrInfo *e);
/* The search text of a chunk (postings_rebuild.c), defined once for the
 * write and for the postings rebuilt from the source: IDX_SEARCH_FIELDS
 * strings of idx_tok_code text (name, path, doc, body). The index stores
 * no copy of it. */
#define IDX_SEARCH_FIELDS 4
/* The path's tokens as its chunks' path field has them (no extension). */
void idx_search_path_tokens(const char *path, StrBuf *out);
/* The bytes [*out_a, *out_b) of src (src_len bytes, n_lines lines starting at
 * line_off) that the chunk's lines start_line..end_line span. */
void idx_chunk_span(uint32_t start_line, uint32_t end_line, const size_t *line_off,
                    uint32_t n_lines, size_t src_len, size_t *out_a, size_t *out_b);
/* A chunk's fields from its rows (docstring, signature may be NULL) and its
 * source lines; path_tok from idx_search_path_tokens. Caller frees out[i]. */
void idx_search_fields(const char *symbol, const char *path_tok, const char *docstring, int cont,
                       const char *signature, const char *lines, size_t len,
                       char *out[IDX_SEARCH_FIELDS]);

/* ---------------------------------------------------------------- a save's memo (save_memo.c) */

SaveMemo *idx_save_memo_new(void);
void idx_save_memo_free(SaveMemo *m);
/* Whether a file of src_len bytes has its chunks kept for the next save. */
int idx_save_memo_keeps(size_t src_len);
/* The key of idx_search_fields's inputs (into key, reset first). */
void idx_save_memo_fields_key(const char *symbol, const char *path_tok, const char *docstring,
                              int cont, const char *signature, const char *lines, size_t len,
                              StrBuf *key);
/* 1 and copies of the fields the last save made from the same inputs, else 0. */
int idx_save_memo_fields_get(const SaveMemo *m, const StrBuf *key, char *out[IDX_SEARCH_FIELDS]);
/* Keeps a copy of fields, made from key's inputs, for the next save. */
void idx_save_memo_fields_put(SaveMemo *m, const StrBuf *key,
                              char *const fields[IDX_SEARCH_FIELDS]);
/* The vector em gave the same embedding text at the last save (dim floats,
 * dim as idx_save_memo_dim says), or NULL. */
const float *idx_save_memo_vec_get(const SaveMemo *m, const Embedder *em, const char *text);
/* The dimension of the last save's vectors by em (0: none). */
int idx_save_memo_dim(const SaveMemo *m, const Embedder *em);
/* Keeps a copy of v, em's vector of text, for the next save. */
void idx_save_memo_vec_put(SaveMemo *m, const Embedder *em, const char *text, const float *v,
                           int dim);
/* Ends a save's prepare: what it kept becomes what the next save finds
 * (keep), or nothing is kept (the file was not chunked, or too large). */
void idx_save_memo_turn(SaveMemo *m, int keep);

#endif
