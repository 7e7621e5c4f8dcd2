/*
 * graph_int.h - what graph.c's resolver lends graph_types.c (the typed
 * receivers a language row's chunker writes). Internal to index/.
 */
#ifndef CODERAG_GRAPH_INT_H
#define CODERAG_GRAPH_INT_H

#include "store_int.h"
#include "lang/lang.h"

typedef struct Resolver Resolver;

/* A reference's place: its file, module, enclosing symbol and language. */
typedef struct IdxRefAt {
    int64_t file_id;
    const char *module, *symbol;
    const IdxLang *lang;
} IdxRefAt;

/* What graph.c's resolver lends graph_types.c, through pointers (graph.c
 * calls graph_types.c, never the other way round). */
typedef struct IdxGraphOps {
    /* a dotted expression resolved as a call written at `at` is */
    int64_t (*expr)(Resolver *r, const IdxRefAt *at, const char *expr);
    /* a qualified name ("pkg.mod.Cls"), through re-exports */
    int64_t (*qualified)(Resolver *r, const char *q);
    /* member `name` of class chunk cls: its own, else one it inherits */
    int64_t (*member)(Resolver *r, int64_t cls, const char *name);
    /* member `name` that class `cls` (a symbol of at's module) inherits */
    int64_t (*inherited)(Resolver *r, const IdxRefAt *at, const char *cls, const char *name);
    /* the only definition anywhere named name, or 0 */
    int64_t (*unique)(Resolver *r, const char *name);
    /* whether file_id binds the local name alias[0..len) by an import */
    int (*imported)(Resolver *r, int64_t file_id, const char *alias, size_t len);
    /* a chunk's kind (IdxKind), or -1 */
    int (*chunk_kind)(Resolver *r, int64_t id);
} IdxGraphOps;

/* graph_types.c */
/* Whether a name is one of lang's builtins (IdxLang.builtins). */
int idx_graph_is_builtin(const IdxLang *lang, const char *name);
/* Resolves the typed forms of a call name: "super().m" (m in the bases of
 * the enclosing class) and "T().m" (T read in the file's scope; "=T": a
 * qualified name). 1 when name is one (*out: its target, or 0), else 0. */
int idx_graph_typed(const IdxGraphOps *ops, Resolver *r, const IdxRefAt *at, const char *name,
                    int64_t *out);
/* Marks the references that a class's base moving from class `was` to
 * class `now` (either 0) can resolve differently through typed receivers:
 * those named like a method of either or of their ancestors. */
CrErr idx_graph_types_mark(IdxStore *st, int64_t was, int64_t now, ErrInfo *e);
/* Whether any call reference is resolved (*out): none in a fresh build's
 * first pass, when there is nothing idx_graph_types_mark could mark. */
CrErr idx_graph_types_any_resolved(IdxStore *st, int *out, ErrInfo *e);

#endif
