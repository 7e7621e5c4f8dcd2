/*
 * vecstore_int.h - the vector store's insides, shared by vectors.c (open,
 * load and replay, add, remove and their journal records, search) and
 * vec_file.c (saving: the file whole or the records appended to its
 * journal). Not for use elsewhere: everyone goes through vec_int.h.
 *
 * On disk a store is two files:
 *
 *   <path>      the FAISS serialisation of the IndexIDMap, then a 48-byte
 *               trailer (little-endian):
 *               "CRVECS01" | u32 version | u32 dim | u64 count
 *               | u64 payload bytes | u64 hash64(payload) | u64 hash64(trailer so far)
 *   <path>.log  the journal: the changes since that file was written, so an
 *               update of a few chunks appends a few kilobytes instead of
 *               rewriting every vector. A 32-byte header
 *               "CRVLOG01" | u32 version | u32 dim | u64 hash64 of the base
 *               file's payload | u64 hash64(header so far)
 *               then records: u32 op (1 add, 2 remove) | u32 n | n x i64 id
 *               | (add) n x dim float32 | u64 hash64(record so far).
 *
 * The file still reads as a FAISS index (FAISS ignores what follows), and
 * FAISS's parser never sees bytes that fail the checksum: its reader
 * allocates what a corrupt header claims, which is not a failure mode we
 * want on open. A journal is replayed only onto the file whose payload hash
 * its header names, and up to its first record that fails its checksum.
 * Chunk ids are never reused (AUTOINCREMENT), so every record states a fact
 * that stays true: a lost or stale record leaves a vector missing or
 * orphaned, which the next dense sync repairs, never a wrong vector.
 */
#ifndef CODERAG_VECSTORE_INT_H
#define CODERAG_VECSTORE_INT_H

#include "vec_int.h"

enum {
    TRAILER_BYTES = 48,
    FORMAT_VERSION = 1,
    MAX_DIM = 65536,
    LOG_HEADER_BYTES = 32,
    LOG_VERSION = 1,
    LOG_OP_ADD = 1,
    LOG_OP_REMOVE = 2,
};

static const char trailer_magic[8] = {'C', 'R', 'V', 'E', 'C', 'S', '0', '1'};
static const char log_magic[8] = {'C', 'R', 'V', 'L', 'O', 'G', '0', '1'};

struct VecStore {
    const FaissApi *fa;
    char *path;
    int dim;                /* 0: unknown until opened with a dimension */
    FaissIndexIDMap *index; /* NULL while dim is 0 */
    I64Map ids;
    int dirty;
    /* the file on disk this store was read from or last wrote: */
    uint64_t base_hash;  /* its payload's hash64; 0: none (the next save writes one) */
    uint64_t base_bytes; /* its size */
    uint64_t log_bytes;  /* valid journal bytes read or written after it */
    int log_broken;      /* the journal ends in bytes that are not a record */
    StrBuf pending;      /* records of the changes not yet saved */
    int pending_lost;    /* too many to journal: the next save rewrites the file */
};

static inline void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Must run right after the failing FAISS call: the message lives only
 * until the next one. */
CrErr vecstore_faiss_err(const FaissApi *fa, ErrInfo *e, const char *what, int rc);

/* Checks the trailer of the file read into map[0..size) and the header it
 * describes (against want_dim unless 0); fills *out_dim, *out_count and
 * *out_plen (the FAISS payload's length). CR_ECORRUPT (message in e) for a
 * file to discard. vectors.c. */
CrErr vecstore_check_trailer(int want_dim, const void *map, size_t size, uint32_t *out_dim,
                             uint64_t *out_count, uint64_t *out_plen, ErrInfo *e);

/* The journal's path: <path>.log (caller frees). */
static inline char *vecstore_log_path(const char *path)
{
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s.log", path);
    return sb_detach(&p, NULL);
}

#endif
