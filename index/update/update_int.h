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
    int crashed; /* skipped "parser-crashed" (parse_marks.c) */
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

/* The files a full update was preparing when its process died (a parser
 * that aborts: tree-sitter 0.20 asserts on some inputs), from the marks in
 * <index dir>/parsing (parse_marks.c). A file prepared beside others
 * (PARSE_MARK_POOL) is a suspect: the next update prepares it alone first;
 * one that was being prepared alone is convicted: skipped "parser-crashed"
 * until its size or mtime moves. fd -1: no marks (a read-only folder). */
#define IDX_SKIP_PARSER_CRASHED "parser-crashed"

typedef struct ParseMarks {
    int fd;
    char **suspects, **convicted;
    size_t n_suspects, n_convicted;
} ParseMarks;

/* Reads the marks a dead update left into m and clears them (the caller
 * holds update.lock). Release with idx_marks_close. */
void idx_marks_open(const IdxStore *st, ParseMarks *m);
/* Whether path is one of paths[0..n). */
int idx_marks_has(char *const *paths, size_t n, const char *path);
/* Marks slot (a preparing thread's) as preparing path, alone or beside
 * others; path NULL: done. No-op when m is NULL or has no file. */
void idx_marks_set(const ParseMarks *m, int slot, int alone, const char *path);
void idx_marks_close(ParseMarks *m);

/* Makes pp_named and the kept #define rows those of the tree when a write
 * moved some file's preprocessor digest (pp_settle.c; ../pp/pp_int.h says
 * which definitions the pp table keeps). */
CrErr idx_pp_settle(IdxStore *st, ErrInfo *e);

/* What a rewritten file keeps of its old resolution (keep.c): its chunks
 * the same in every stored column, the edges into them, and the references
 * in them written as before. Used by idx_store_write_file in this order:
 * load (before the old rows go; *out NULL: nothing to keep; owner[i]: new
 * chunk i names its symbol), remove_in (in place of deleting every edge
 * into the file and marking their references), chunk_id for each new chunk
 * written, in_edges (the kept edges given the new ids), refs (once the
 * file's refs and imports are written, ref_lo the first; its imports moved:
 * as moved), moved (the preprocessor facts moved: the references of the
 * kept edges into it resolved again, none of its own kept), free. */
typedef struct FileKeep FileKeep;
CrErr idx_keep_load(IdxStore *st, const FileWork *fw, int64_t file_id, const char *owner,
                    FileKeep **out, ErrInfo *e);
CrErr idx_keep_remove_in(IdxStore *st, FileKeep *k, ErrInfo *e);
void idx_keep_chunk_id(FileKeep *k, size_t i, int64_t id);
CrErr idx_keep_in_edges(IdxStore *st, FileKeep *k, ErrInfo *e);
CrErr idx_keep_refs(IdxStore *st, FileKeep *k, int64_t ref_lo, ErrInfo *e);
CrErr idx_keep_moved(IdxStore *st, FileKeep *k, ErrInfo *e);
void idx_keep_log(const FileKeep *k, const char *path);
void idx_keep_free(FileKeep *k);

#endif
