/*
 * postings_int.h - the BM25F postings object, shared by postings.c (building,
 * updating and searching it in memory) and postings_file.c (its snapshot on
 * disk). Not for use outside index/.
 *
 * A Postings is a snapshot file mapped read-only (the "base": terms, their
 * posting lists and the per-chunk slots as of one database generation) plus
 * what changed since, in memory: slots appended for chunks written later,
 * tombstones for slots whose file changed or went, and postings appended to
 * the lists of old and new terms. Without a snapshot the base is empty.
 */
#ifndef CODERAG_POSTINGS_INT_H
#define CODERAG_POSTINGS_INT_H

#include "store_int.h"

enum { N_FIELDS = 4 };

typedef struct Posting {
    uint32_t slot;
    uint8_t tf[N_FIELDS]; /* capped at 255 */
} Posting;

/* One term of a snapshot: its text in the string blob and its postings,
 * compressed (idx_postings_encode): bytes of them at byte post_off of the
 * postings section. */
typedef struct PostTerm {
    uint64_t str_off;
    uint32_t str_len;
    uint32_t n;
    uint64_t post_off;
    uint32_t check; /* idx_postings_list_check of its encoded bytes */
    uint32_t bytes;
} PostTerm;

typedef struct TermList {
    Posting *p;
    uint32_t n, cap;
} TermList;

/* The snapshot: its head (everything before the postings) read into map
 * and validated when opened, term, hash and str pointing into it; the
 * postings of a term read from the file (kept open) on first use and
 * checked then. Nothing of it is mapped: a snapshot truncated or damaged
 * under a running server is a damaged list (bad), never a SIGBUS. */
typedef struct PostBase {
    void *map;        /* the head on the heap; NULL when there is no snapshot */
    int fd;           /* the file, open while map is set */
    uint64_t post_at; /* file offset of the postings */
    const PostTerm *term;
    uint32_t n_terms;
    const uint32_t *hash; /* open addressing: term index + 1, 0 = empty */
    uint64_t n_hash;      /* a power of two */
    const char *str;
    uint64_t str_len;
    uint64_t n_files; /* files rows up to gen when it was written */
    Posting **lists;  /* per term: its postings once read and found sound */
    uint64_t n_post;  /* bytes of the postings section */
    int64_t gen;      /* the database generation it reflects */
    /* Posting lists are checked when first read (the rest of the file when
     * mapped): per term 0 not yet, 1 sound, 2 damaged. */
    unsigned char *checked;
    int bad; /* a damaged list was met: the snapshot is not to be trusted */
} PostBase;

struct Postings {
    Stemmer *stem; /* for query texts and unstemmed fields */
    PostBase base;
    StrMap terms;    /* terms the base lacks -> term id (>= base.n_terms) */
    TermList *lists; /* per term id: postings added since the base */
    size_t n_terms, cap_terms;
    int64_t *chunk; /* per slot */
    int64_t *file;
    unsigned char *kind;
    uint32_t (*len)[N_FIELDS];
    unsigned char *dead;
    size_t n_slots, cap_slots, n_dead;
    size_t n_base_slots;
    double len_sum[N_FIELDS];
    float *acc; /* query scratch, per slot: score */
    float *cov; /* query scratch, per slot: idf of the query terms it holds */
};

/* The snapshot's postings of term t, checked on first use: none for a
 * term added since, and none (with base.bad set) for a damaged list. */
const Posting *idx_postings_base_list(Postings *p, uint32_t t, uint32_t *out_n);
uint32_t idx_postings_list_check(const void *bytes, size_t n);
/* A list in slot order as the snapshot stores it: per posting a varint of
 * (slot - previous slot) << 4 | the mask of fields with a frequency, then
 * those frequencies, one byte each (2-3 bytes where a Posting takes 8).
 * Appends to out when not NULL; returns the bytes. */
size_t idx_postings_encode(const Posting *l, size_t n, StrBuf *out);
/* Decodes exactly n postings from exactly len bytes into out; 0 when the
 * bytes are not such a list. */
int idx_postings_decode(const unsigned char *b, size_t len, Posting *out, size_t n);

/* An empty Postings with the porter tokenizer. Caller frees. */
CrErr idx_postings_new(IdxStore *st, Postings **out, ErrInfo *e);
/* Room for n slots; returns the first new one. */
size_t idx_postings_add_slots(Postings *p, size_t n);
/* Sets p's term table to hold n_terms (base) terms with empty lists. */
void idx_postings_reserve_terms(Postings *p, size_t n_terms);

/* The text of the terms added since the base, by term id - base.n_terms
 * (borrowed from p). Caller frees the array. */
char **idx_postings_added_terms(const Postings *p);
/* The text of term t (not NUL-terminated), given idx_postings_added_terms. */
const char *idx_postings_term_text(const Postings *p, char **added, uint32_t t, uint32_t *out_len);

/* Maps <index_dir>/postings.bin into p (empty, fresh from idx_postings_new)
 * when it is whole, of this database (db_id) and of this format; returns 0
 * (p untouched) otherwise. */
int idx_postings_map(IdxStore *st, Postings *p, const char *db_id);
void idx_postings_unmap(PostBase *b);

#endif
