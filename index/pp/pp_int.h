/*
 * pp_int.h - preprocessor conditions: the evaluator of a condition
 * (pp_eval.c), the build configuration read from compile_commands.json
 * (pp_config.c) and the facts of the index both feed it (pp.c). Internal
 * to index/.
 */
#ifndef CODERAG_PP_INT_H
#define CODERAG_PP_INT_H

#include "../idx_int.h"

/* What is known of one macro a condition names: defined() (for a name
 * after `defined`), else its value. */
typedef struct PpName {
    char *name;
    int in_defined; /* named as defined(name) */
    IdxBuilt defined;
    int known; /* its value is known */
    int64_t value;
} PpName;

/* The names of expr, each once, with in_defined set (values left for the
 * caller to fill). Caller frees with idx_pp_names_free. */
PpName *idx_pp_names(const char *expr, size_t *n_out);
void idx_pp_names_free(PpName *v, size_t n);

typedef struct PpFacts {
    const PpName *names;
    size_t n;
} PpFacts;

/* The value of a #if expression: 1 when known (*v), 0 when it depends on
 * something f does not know (or is no expression this reads). */
int idx_pp_eval(const char *expr, const PpFacts *f, int64_t *v);

/* A build configuration: each compiled file's -D and -U flags. */
typedef struct PpConfig PpConfig;

/* The configuration of the workspace at root: old when its file did not
 * change (same path, size and mtime), else a new one (old is freed), or
 * NULL when there is none or it cannot be read (old is freed). */
PpConfig *idx_pp_config_load(PpConfig *old, const char *root);
/* What the configuration says of macro name for the file at relpath (a
 * file it does not compile: the flags every compiled file has): 1 defined
 * (*value: its value, "1" for a bare -D), -1 undefined, 0 nothing. */
int idx_pp_config_flag(const PpConfig *c, const char *relpath, const char *name,
                       const char **value);
void idx_pp_config_free(PpConfig *c);

/* Which definitions the pp table keeps (pp_rows.c, and update/pp_settle.c
 * once an update has written). An update calls idx_pp_begin once (cold: a build from nothing), each
 * write of a file's facts goes through idx_pp_insert (the digest it leaves in *sig, 0 for a file
 * without conditions or definitions, against idx_pp_file_sig's before the file's rows go: a digest
 * that moved sets st->pp_dirty), and idx_pp_settle makes pp_named and the kept definitions those of
 * the tree when some digest moved. */
CrErr idx_pp_begin(IdxStore *st, int cold, ErrInfo *e);
CrErr idx_pp_file_sig(IdxStore *st, int64_t file_id, uint64_t *sig, ErrInfo *e);
CrErr idx_pp_insert(IdxStore *st, const ChunkSet *set, int64_t file_id, uint64_t *sig, ErrInfo *e);
/* A write moved a file's digest: pp_named must be settled (recorded, so
 * that an update stopped before idx_pp_settle leaves it to the next). */
CrErr idx_pp_moved(IdxStore *st, ErrInfo *e);
/* pp_rows.c's helpers for update/pp_settle.c: one row written; the 32-bit hash of
 * a macro name (pp_defs); qsort's order of uint32_t. */
CrErr idx_pp_insert_row(IdxStore *st, int64_t file_id, const ChunkPp *p, ErrInfo *e);
uint32_t idx_pp_name_hash(const char *name);
int idx_pp_cmp_u32(const void *a, const void *b);

#endif
