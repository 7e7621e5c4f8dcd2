/*
 * postings_int.h - the BM25F postings object, shared by postings.c (building,
 * updating and searching it in memory), postings_base.c (reading a snapshot
 * in place), postings_runs.c (lists spilled during a build) and
 * postings_file.c (writing and opening the snapshot). Not for use outside
 * index/.
 *
 * A Postings is a snapshot file (the "base": terms, their posting lists and
 * the per-chunk slots as of one database generation) plus what changed
 * since: slots appended for chunks written later, tombstones for slots
 * whose file changed or went, and postings appended to the lists of old and
 * new terms, in memory up to a budget and past it in sorted runs of a
 * temporary file. Without a snapshot the base is empty.
 */
#ifndef CODERAG_POSTINGS_INT_H
#define CODERAG_POSTINGS_INT_H

#include "../store/store_int.h"

enum { N_FIELDS = 4 };

typedef struct Posting {
    uint32_t slot;
    uint8_t tf[N_FIELDS]; /* capped at 255 */
} Posting;

/* One term of a snapshot: its text in the string section and its
 * postings, compressed (idx_postings_encode): bytes of them at byte
 * post_off of the postings section. Terms are read by blocks of
 * POST_TERM_BLOCK, each block checked; the text by its own hash. On disk
 * a block is packed (idx_postterm_pack: ~15 bytes a term, the offsets
 * summed from the lengths), found through the block offsets read at open. */
typedef struct PostTerm {
    uint64_t str_off;
    uint64_t str_hash; /* hash64 of its text: its place in the hash table */
    uint64_t post_off;
    uint32_t str_len;
    uint32_t n;
    uint32_t check; /* idx_postings_list_check of its encoded bytes */
    uint32_t bytes;
} PostTerm;

enum { POST_TERM_BLOCK = 64, POST_HASH_BLOCK = 1024 };
/* the most bytes a packed block of POST_TERM_BLOCK terms takes */
enum { POST_TBLOCK_MAX = 20 + POST_TERM_BLOCK * 27 };

/* k terms (k >= 1, consecutive: each one's text and postings follow the
 * last's) packed into out: the first's str_off and post_off (varints), then
 * per term str_hash (8 bytes), check (4) and str_len, n, bytes (varints). */
void idx_postterm_pack(const PostTerm *t, size_t k, StrBuf *out);
/* The k terms of a packed block of len bytes; 0 when it is no such block. */
int idx_postterm_unpack(const unsigned char *b, size_t len, PostTerm *t, size_t k);
/* One slot's columns after the slot before's (*chunk, *file: updated). */
void idx_postslots_pack(int64_t chunk, int64_t file, const uint32_t len[], int64_t *prev_chunk,
                        int64_t *prev_file, StrBuf *out);
/* n slots' columns from len packed bytes into chunk, file and lens; 0 when
 * they are not exactly that. */
int idx_postslots_unpack(const unsigned char *b, size_t len, size_t n, int64_t *chunk,
                         int64_t *file, uint32_t (*lens)[N_FIELDS]);

typedef struct TermList {
    Posting *p;
    uint32_t n, cap;
} TermList;

/* The terms added since the base: their text in one arena (each
 * NUL-terminated), found through an open-addressing table of term index +
 * 1 (0 empty). About 40 bytes a term where a StrMap takes 80. */
typedef struct TermDict {
    StrBuf text;
    uint64_t *off; /* per added term: its text in text */
    size_t n, cap_off;
    uint32_t *slot;
    size_t cap; /* a power of two, or 0 */
} TermDict;

/* The snapshot, read in place: at open only its header, the per-slot
 * arrays (into the Postings' own) and the checks of the term and hash
 * blocks; a question's terms are then found by reading hash and term
 * blocks (each checked) and the terms' text (checked by its hash), and
 * their postings read on first use and checked then. Nothing of it is
 * mapped: a snapshot truncated or damaged under a running server is a
 * damaged read (bad), never a SIGBUS. */
typedef struct PostBase {
    int have;         /* a snapshot is open */
    int fd;           /* the file, open while have */
    uint64_t post_at; /* file offset of the postings */
    uint64_t n_post;  /* bytes of the postings section */
    uint64_t term_at, str_at, hash_at;
    uint32_t n_terms;
    uint64_t n_hash; /* a power of two */
    uint64_t str_len;
    uint64_t term_len; /* bytes of the term section */
    uint64_t *toff;    /* per block of terms: its offset in the term section */
    uint32_t *tcheck;  /* per block of terms: its check (in toff's allocation) */
    uint32_t *hcheck;  /* per block of the hash table */
    uint64_t n_files;  /* files rows up to gen when it was written */
    int64_t gen;       /* the database generation it reflects */
    /* the term block and hash block read last, and a window of text */
    PostTerm tblock[POST_TERM_BLOCK];
    int64_t tblock_at;
    uint32_t hblock[POST_HASH_BLOCK];
    int64_t hblock_at;
    char *win;
    uint64_t win_off;
    size_t win_len, win_cap;
    StrMap seen;      /* terms found so far -> term index */
    Posting **lists;  /* per term: its postings once read and found sound */
    uint32_t *cached; /* the terms lists holds */
    size_t n_cached, cap_cached;
    /* Posting lists are checked when first read: per term 0 not yet, 1
     * sound, 2 damaged. */
    unsigned char *checked;
    int bad; /* a damaged read was met: the snapshot is not to be trusted */
} PostBase;

/* A run: the lists held in memory when the budget was passed, written in
 * term order (per term: varint term, varint n, varint bytes, the encoded
 * list) at off of the run file; every POST_RUN_MARK-th entry marked for
 * reading one term back. Slots ascend across runs. */
typedef struct PostRun {
    uint64_t off, len;
    uint32_t *mark_term;
    uint64_t *mark_off;
    size_t n_mark, cap_mark;
} PostRun;

enum { POST_RUN_MARK = 128 };

struct Postings {
    Stemmer *stem; /* for query texts and unstemmed fields */
    PostBase base;
    TermDict terms;  /* terms the base lacks -> term id - base.n_terms */
    TermList *lists; /* per term id: postings added since the base (and the runs) */
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
    size_t cap_acc;
    /* Spilling: lists past budget bytes go to runs of an unlinked file in
     * dir (run_fd, -1 until the first). */
    char *dir;
    size_t budget, list_bytes;
    int run_fd;
    uint64_t run_end;
    PostRun *runs;
    size_t n_runs, cap_runs;
    int run_bad; /* a run could not be read back */
};

/* The snapshot's term t, its block read and checked: 0 (b->bad set) when
 * damaged. */
int idx_postbase_term(PostBase *b, uint32_t t, PostTerm *out);
/* Its text (valid until the next call), checked by its hash; NULL (bad)
 * when damaged. */
const char *idx_postbase_text(PostBase *b, const PostTerm *pt);
/* The snapshot's index of a term, or -1 (none, or damaged: bad set). */
int64_t idx_postbase_lookup(PostBase *b, const char *t, size_t n);
/* Reads and checks the n postings of pt into out (room for pt->n + 1);
 * 0 when damaged (bad not set). */
int idx_postbase_read_list(PostBase *b, const PostTerm *pt, Posting *out);
void idx_postbase_close(PostBase *b);

uint32_t idx_postings_list_check(const void *bytes, size_t n);
/* A list in slot order as the snapshot stores it: per posting a varint of
 * (slot - previous slot) << 4 | the mask of fields with a frequency, then
 * those frequencies, one byte each (2-3 bytes where a Posting takes 8).
 * Appends to out when not NULL; returns the bytes. */
size_t idx_postings_encode(const Posting *l, size_t n, StrBuf *out);
/* Decodes exactly n postings from exactly len bytes into out; 0 when the
 * bytes are not such a list. */
int idx_postings_decode(const unsigned char *b, size_t len, Posting *out, size_t n);
/* A varint at b[*at..len) into *v; 0 when cut short or too long. */
int idx_postings_varint(const unsigned char *b, size_t len, size_t *at, uint64_t *v);
size_t idx_postings_put_varint(unsigned char *b, uint64_t v);

/* An empty Postings with the porter tokenizer. Caller frees. */
CrErr idx_postings_new(IdxStore *st, Postings **out, ErrInfo *e);
/* Room for n slots; returns the first new one. */
size_t idx_postings_add_slots(Postings *p, size_t n);
/* Sets p's term table to hold n_terms (base) terms with empty lists. */
void idx_postings_reserve_terms(Postings *p, size_t n_terms);

/* The text of term t (not NUL-terminated; a base term's valid until the
 * next read of the base), or NULL when the base is damaged. */
const char *idx_postings_term_text(Postings *p, uint32_t t, uint32_t *out_len);

/* Writes every list held in memory as a new run and frees them; on a
 * failure to write they stay in memory and spilling stops. */
void idx_postings_spill(Postings *p);
/* Appends run r's postings of term t to *buf (n of them already there);
 * returns the new count. Sets run_bad when the run cannot be read. */
size_t idx_postings_run_find(Postings *p, size_t r, uint32_t t, Posting **buf, size_t *cap,
                             size_t n);
void idx_postings_runs_close(Postings *p);

/* A reader of one run in term order. */
typedef struct RunCur {
    int fd;
    uint64_t pos, end; /* file offsets: the next entry, the run's end */
    unsigned char *buf;
    size_t cap, len; /* the window buf holds: len bytes from file offset at */
    uint64_t at;
    uint32_t term, n, bytes; /* the current entry (valid while live) */
    const unsigned char *body;
    int live, bad;
} RunCur;
void idx_runcur_open(RunCur *c, int fd, uint64_t off, uint64_t len);
/* Moves to the next entry: 1, or 0 at the end (bad set when unreadable). */
int idx_runcur_next(RunCur *c);
/* Decodes the current entry's postings after the n already in *buf. */
size_t idx_runcur_take(RunCur *c, Posting **buf, size_t *cap, size_t n);
void idx_runcur_close(RunCur *c);

/* The snapshot file's header (postings_file.c says the layout). */
#define POSTFILE_MAGIC "CRPOST\0\1"
#define POSTFILE_VERSION 5
#define POSTFILE_ENDIAN 0x01020304u

/* SEC_SLOTS: per live slot its chunk id and file id (zigzag varints of
 * the difference from the slot before) and its four field lengths
 * (varints), idx_postslots_pack; SEC_KIND: a byte per slot. */
enum { SEC_SLOTS, SEC_KIND, SEC_TCHECK, SEC_HCHECK, N_READ };

typedef struct PostFileHeader {
    char magic[8];
    uint32_t version;
    uint32_t endian;
    char db_id[40];
    int64_t gen;
    uint64_t n_files; /* files rows of generation <= gen when written */
    uint64_t n_slots, n_terms, n_post, n_hash, str_len, term_len, slot_bytes;
    double len_sum[N_FIELDS];
    uint64_t off_post, off_term, off_str, off_hash;
    uint64_t off[N_READ]; /* the sections read whole at open */
    uint64_t file_len;
    uint64_t sec_check[N_READ]; /* sec_check of each */
    uint64_t checksum;          /* hash64 of this header, this field 0 */
} PostFileHeader;

uint64_t idx_postfile_fold(uint64_t sum, const void *piece, size_t n);
/* The check of a section read whole at open: over its pieces of 1 MiB,
 * then its length. */
uint64_t idx_postfile_sec_check(const void *data, uint64_t len);
/* hash64 of the header with its checksum 0. */
uint64_t idx_postfile_header_check(const PostFileHeader *h);
/* Bytes of section i (SEC_*) of a snapshot with header h. */
uint64_t idx_postfile_sec_len(const PostFileHeader *h, int i);
void idx_postfile_path(const IdxStore *st, char *out, size_t cap);

#endif
