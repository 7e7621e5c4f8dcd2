/*
 * update_int.h - what idx_update (update.c) reads beside the scan
 * (update_pre.c), and the settling of macro names after a write
 * (pp_settle.c). Internal to index/.
 */
#ifndef CODERAG_UPDATE_INT_H
#define CODERAG_UPDATE_INT_H

#include "../store/store_int.h"

/* A files row as idx_update plans with it. */
typedef struct UpdOldFile {
    int64_t id, size, mtime_ns;
    char hash[17];
    int ok;
    int seen;
} UpdOldFile;

/* What idx_update reads of the store while the scan walks the tree, on a
 * thread of its own (the scan touches no store state): the files rows.
 * The postings are not read ahead: an update with nothing to write never
 * needs them, and one that writes loads them in its transaction while the
 * workers read its files (exactly the rows it sees). */
typedef struct UpdPrefetch {
    IdxStore *st;
    StrMap *by_path; /* path -> index in old */
    UpdOldFile *old;
    size_t n_old;
    CrErr rc;
    ErrInfo e;
} UpdPrefetch;

/* The thread's body (arg: UpdPrefetch): fills old, by_path, rc, e. */
void *idx_update_prefetch(void *arg);

/* Makes pp_named and the kept #define rows those of the tree when a write
 * moved some file's preprocessor digest (pp_settle.c; ../pp/pp_int.h says
 * which definitions the pp table keeps). */
CrErr idx_pp_settle(IdxStore *st, ErrInfo *e);

#endif
