/*
 * graph_int.h - the resolver of references into edges, shared by its files:
 * graph_lookup.c (lookups, names), graph_member.c (members a class
 * inherits, calls dispatched through an interface), graph_store.c (calls
 * through a C field to the functions tables store there), graph_types.c (calls
 * on receivers of a known type, the implementations of an interface its
 * types need not name), graph_row.c (one reference looked up),
 * graph_par.c (lookups on threads) and graph.c (the passes), each using
 * only the ones before it. Internal to index/.
 */
#ifndef CODERAG_GRAPH_INT_H
#define CODERAG_GRAPH_INT_H

#include "../chunk/lang/lang.h"
#include "../store/store_int.h"

/* Resolution of raw references (imports, calls, bases, raises, types,
 * values, macro bodies) into edges between chunks, through each file's
 * import bindings and the symbol table. */
typedef struct GraphNames GraphNames;

/* What a walk through one file's star imports asks (graph_names.c), kept
 * for the last file asked about. */
typedef struct GraphReach {
    int64_t file;       /* the walk's start (0: none yet) */
    uint64_t module;    /* the hash of its module */
    int module_is_file; /* the module names the file itself (the walk starts at the file) */
    I64Map prefixes;    /* hash of a name put before ".name" -> the least depth */
    I64Map files;       /* files whose star imports it asks -> their imports' depth */
    int64_t *queue;
    size_t n_queue, cap_queue;
    int wild; /* a file on the way binds names: it may reach anything */
} GraphReach;

typedef struct Resolver {
    IdxStore *st;
    const GraphNames *names; /* what the tables hold (graph_names.c), or NULL: probe all */
    StrMap memo;             /* "qualified name" -> chunk id (0: unresolved), or MEMO_* */
    ErrInfo *e;
    CrErr rc;
    size_t cuts;          /* lookups cut short (an import cycle, the depth bound) so far */
    int deepest;          /* the deepest depth the lookups under way reached */
    char **volatile_keys; /* memo entries that hold for the current reference only */
    size_t n_volatile, cap_volatile;
    /* A top-level lookup (depth 0) that left volatile answers: "at:q" ->
     * index into tops, with the answer and the volatile answers it left,
     * replayed on the next such lookup instead of walking the (star-)import
     * graph again; at (top_at) is 0, or 1 + the index of the last such
     * lookup of the current reference (what volatile answers it holds).
     * Same state after, so the same edges. */
    StrMap top;
    struct TopMemo {
        int64_t v;
        size_t cuts, n;
        char **keys;
        int64_t *vals;
    } * tops;
    size_t n_tops, cap_tops, top_at;
    /* The names of a kind of reference per chunk (idx_graph_chunk_refs),
     * read a file at a time: file id -> the kinds read (bits); chunk id *
     * 8 + kind -> 1 + index into chunk_refs. */
    I64Map refs_files, refs_chunks;
    struct ChunkRefs {
        char **v;
        size_t n, cap;
    } * chunk_refs;
    size_t n_chunk_refs, cap_chunk_refs;
    /* The methods that interfaces their implementations need not name
     * declare (IDX_REF_INTERFACE_NAME), sorted, read on first use
     * (ifaces_read); the implementations found for each: "id" -> offset
     * into impl_v << 8 | their count (graph_types.c). */
    int64_t *iface_decls;
    size_t n_iface_decls;
    int ifaces_read;
    StrMap impl_of;
    int64_t *impl_v;
    size_t n_impl_v, cap_impl_v;
    /* Without name tables (an update's serial pass, where a walk through
     * C's includes asks the same headers again for every name): the file
     * each module names (0: none) and each file's imports, read once until
     * idx_graph_memo_forget; file id -> 1 + index into file_imps. */
    StrMap module_ids;
    I64Map imps_of;
    struct FileImports {
        char **bind_alias, **bind_target; /* the first row of each alias */
        char **star;                      /* star imports, in rowid order */
        size_t n_bind, n_star;
    } * file_imps;
    size_t n_file_imps, cap_file_imps;
    GraphReach reach; /* with names: what the last file's star imports reach */
} Resolver;

typedef struct RefRow {
    int64_t id, file_id, chunk_id;
    int kind;
    char *name, *module, *symbol;
    const IdxLang *lang; /* of the file the reference is written in; NULL: none known */
    int strict;          /* no match by the name alone (a receiver's type, graph_types.c) */
    int argc;            /* a call's arguments, or -1: not known */
    uint64_t argt;       /* their types where known (idx_argt_get) */
} RefRow;

/* Most targets a call dispatched through an interface reaches. */
enum { DISPATCH_MAX = 32 };

/* A prepared statement, or NULL with the pass stopped (r->rc). */
sqlite3_stmt *idx_graph_stmt(Resolver *r, StmtId id);
/* One step of a lookup: 1 for a row; a failure stops the pass (r->rc). */
int idx_graph_step(Resolver *r, sqlite3_stmt *s);
/* The first column of every row of a bound statement, which is reset.
 * Caller frees each and the array (idx_graph_free_strv). */
char **idx_graph_text_rows(Resolver *r, sqlite3_stmt *s, size_t *n_out);
void idx_graph_free_strv(char **v, size_t n);
/* The names of chunk_id's references of kind (REF_INHERIT: a class's
 * bases; REF_TYPE: only the type facts, IDX_REF_TYPE_FACT) in id order, as
 * a query of that chunk's rows gives them; *n_out gets how many. The rows
 * of the chunk's whole file are read at the first ask (one scan of its
 * references either way), the other chunks' kept for the asks that follow.
 * Borrowed: valid until idx_graph_memo_forget. */
char *const *idx_graph_chunk_refs(Resolver *r, int64_t chunk_id, int kind, size_t *n_out);
/* Forgets what idx_graph_chunk_refs read. */
void idx_graph_chunk_refs_forget(Resolver *r);
/* Forgets the modules' files and files' imports read without name tables. */
void idx_graph_imports_forget(Resolver *r);
/* The first symbol qualified q (SYMBOL_BY_QUAL), or 0. */
int64_t idx_graph_symbol_by_qual(Resolver *r, const char *q);
/* The chunk a qualified name ("mod.Class.meth") names, or 0. */
int64_t idx_graph_resolve_qualified(Resolver *r, const char *q, int depth);
/* The chunk the dotted expression of a reference names, or 0. */
int64_t idx_graph_resolve_expr(Resolver *r, const RefRow *ref);
/* Whether name is one of the row's builtin_methods. */
int idx_graph_builtin_method(const IdxLang *lang, const char *name);
/* Whether a name is one of lang's builtins (IdxLang.builtins). */
int idx_graph_is_builtin(const IdxLang *lang, const char *name);
/* The only definition anywhere named name, or 0. */
int64_t idx_graph_unique_by_name(Resolver *r, const char *name);
/* A function a header declares and the source file beside it defines
 * (rows with out_of_line_members): a bare call of a name several files
 * define (`CanonicalizePath`, also a test's own helper) that the calling
 * file's scope does not define is the definition in the file whose stem
 * is that of a header it includes (util.h: util.cc), when one file is;
 * else 0. */
int64_t idx_graph_declared_function(Resolver *r, const RefRow *ref);
/* A function defined in a source file no one includes, the one a build
 * links (rows with links_by_includes): a bare call of a name 2 to LINK_MAX
 * files define at top level, that the walk through the calling file's
 * includes leaves unresolved, is the definition in the file that shares
 * the most of the caller's own includes (the headers that declare it),
 * when one file shares more than every other; else 0. */
#define LINK_MAX 8
int64_t idx_graph_linked_function(Resolver *r, const RefRow *ref);
/* Whether file_id binds the local name alias[0..len) by an import. */
int idx_graph_imported(Resolver *r, int64_t file_id, const char *alias, size_t len);

/* An answer of a typed lookup asked again (graph_lookup.c): held, 1 with
 * *v set; or 0, and idx_graph_memo_keep(r, m, answer) once it is found. */
typedef struct GraphMemo {
    StrBuf key;
    size_t cuts, n_volatile;
} GraphMemo;
int idx_graph_memo_held(Resolver *r, GraphMemo *m, int64_t *v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int64_t idx_graph_memo_keep(Resolver *r, GraphMemo *m, int64_t v);

/* Forgets the memo's answers that held for one reference. */
void idx_graph_memo_end_ref(Resolver *r);
/* Forgets every top-level answer (the tables changed). */
void idx_graph_tops_clear(Resolver *r);

/* Member `name` that class `cls` (a symbol of module, in file file_id)
 * inherits from its bases, or 0. */
int64_t idx_graph_inherited_member(Resolver *r, int64_t file_id, const char *module,
                                   const char *cls, const char *name);
/* Member `name` of class chunk cls: its own, else one it inherits, or 0. */
int64_t idx_graph_member(Resolver *r, int64_t cls, const char *name);
/* Member `name` of class chunk cls as idx_graph_member finds it, else the
 * one definition anywhere of "Class.name" (C++ defines a class's methods
 * out of line, in another file than the class: rows with
 * out_of_line_members), or 0. */
int64_t idx_graph_member_out_of_line(Resolver *r, int64_t cls, const char *name);
/* The definition of chunk id's overloads (the definitions sharing its
 * symbol and kind in its file) that takes row's argc arguments by its
 * signature: id itself when it does, or when none or several others do
 * not tell (argc -1: not known); one taking a row's forwarded type only
 * from a variadic caller, where another takes as many. The call's argument
 * types (row->argt) rule out those that cannot take them and pick the one
 * taking them best; the others as good whose parameter types differ (the
 * call does not tell them apart) into also (at most max, *n_also). Rows
 * with `overloads`. */
int64_t idx_graph_overload(Resolver *r, int64_t id, const RefRow *row, int64_t *also, size_t max,
                           size_t *n_also);
/* The other definitions of method chunk id's symbol ("Class.name"), of its
 * kind, in other files: one member defined once per build variant
 * (`lexer.cc` and `lexer.in.cc`, `subprocess-posix.cc` and
 * `subprocess-win32.cc`), each the definition a call reaches (rows with
 * out_of_line_members). At most max into out, by id; returns the count. */
size_t idx_graph_twins(Resolver *r, int64_t id, int64_t *out, size_t max);
/* The classes class chunk class_id names as its bases, each resolved as
 * its inheritance reference is (at most max, into out); returns the count. */
size_t idx_graph_base_ids(Resolver *r, int64_t class_id, int64_t *out, size_t max);
/* A member call the class does not define, found in its bases, or 0. */
int64_t idx_graph_resolve_inherited(Resolver *r, const RefRow *ref);
/* The targets of a call dispatched through an interface (at most
 * DISPATCH_MAX, into out); returns the count. */
size_t idx_graph_dispatch(Resolver *r, const RefRow *ref, int64_t *out);

/* (graph_store.c) The targets of a call through a field (rows with
 * field_calls): the functions stored in a field of that name (REF_STORE),
 * none past a few (at most DISPATCH_MAX, into out); returns the count. */
size_t idx_graph_store_calls(Resolver *r, const RefRow *ref, int64_t *out);

/* (graph_types.c) Resolves the typed forms of a call reference's name, as
 * a row's chunker writes them: "super().m" (m in the bases of the
 * enclosing class), "__class__().m" (a method of the enclosing class read
 * as a property), "T().m" and "T().a.m" (T read in the file's scope, "=T":
 * a qualified name; attributes through type facts), "f().m" (m of f's
 * result), "!T().a" (an attribute read: a property only); a type fact
 * (REF_TYPE "=NAME:TYPE") makes no edge. 1 when the name is one (*out: its
 * target, or 0), else 0 (the name is resolved as written). */
int idx_graph_typed(Resolver *r, const RefRow *ref, int64_t *out);
/* A call `f.m` in a method of a row with implicit_this, f a field of the
 * method's class (or a base's) that a type fact types: m of f's class
 * (*out, 0 when that class has no such member), 1; through fields of
 * fields too (`f.g.m`); else 0 (the name is resolved as written). */
int idx_graph_field_call(Resolver *r, const RefRow *ref, int64_t *out);
/* A call of a class's member by its name alone (rows with
 * out_of_line_members, whose methods may be defined in any file): a bare
 * call in a method (`ReadEvalString()` in an inline method of lexer.h) as a
 * member of the method's class, `Class.f` (`Lexer::TokenName(t)`) as a
 * member of that class; found as a typed call's method is, or 0. */
int64_t idx_graph_class_call(Resolver *r, const RefRow *ref);
/* The class of the field named ref's name (a bare name) of the class whose
 * method holds ref (`result_()` in a constructor's initializer list), or 0. */
int64_t idx_graph_field_class(Resolver *r, const RefRow *ref);
/* (graph_lookup.c) Chunk id's kind (IdxKind), or -1. */
int idx_graph_chunk_kind(Resolver *r, int64_t id);
/* Chunk id's qualified symbol (caller frees), or NULL. */
char *idx_graph_chunk_symbol(Resolver *r, int64_t id);
/* The language row chunk id's file is read as (the project's pick), or
 * NULL: a name found anywhere may be another language's in a mixed
 * workspace. */
const IdxLang *idx_graph_chunk_lang(Resolver *r, int64_t id);
/* The chunks defining a symbol named name (at most max, into ids, in the
 * store's order: max found, which ones is not set); returns the count. */
size_t idx_graph_symbol_ids(Resolver *r, const char *name, int64_t *ids, size_t max);
/* Marks the references that a class's base moving from class `was` to
 * class `now` (either 0) can resolve differently through typed receivers:
 * those named like a method of either or of their ancestors. */
CrErr idx_graph_types_mark(IdxStore *st, int64_t was, int64_t now, ErrInfo *e);
/* The methods that a call resolved to decl (a method an interface declares,
 * one its implementations need not name: IDX_REF_INTERFACE_NAME) reaches
 * besides it: each named like it, of a type that defines every method the
 * interface declares (its own or one it inherits). At most max into out
 * (none when more, or when more than 64 methods share the name); returns
 * the count. */
size_t idx_graph_implementations(Resolver *r, int64_t decl, int64_t *out, size_t max);
/* Forgets what idx_graph_implementations read and found. */
void idx_graph_implementations_forget(Resolver *r);
/* Whether any call reference is resolved (*out): none in a fresh build's
 * first pass, when there is nothing idx_graph_types_mark could mark. */
CrErr idx_graph_types_any_resolved(IdxStore *st, int *out, ErrInfo *e);

/* (graph_names.c) What symbols, files and imports hold, read once (*out;
 * free with idx_graph_names_free), for lookups that skip the probes of
 * names the tables do not hold. */
CrErr idx_graph_names_load(IdxStore *st, GraphNames **out, ErrInfo *e);
void idx_graph_names_free(GraphNames *g);
/* 0 when no lookup of qualified name q can end at anything (its last part
 * is no symbol's, module's or import alias's). */
int idx_graph_names_may_end(const GraphNames *g, const char *q);
/* 0 when no symbol is qualified q (SYMBOL_BY_QUAL finds nothing). */
int idx_graph_names_may_qual(const GraphNames *g, const char *q);
/* The only symbol named name (SYMBOL_BY_NAME finds one row), or 0. */
int64_t idx_graph_names_unique(const GraphNames *g, const char *name);
/* 0 when file_id binds no alias[0..len) by an import (IMPORT_GET). */
int idx_graph_names_may_bind(const GraphNames *g, int64_t file_id, const char *alias, size_t len);
/* The file FILE_BY_MODULE finds for module, or 0. */
int64_t idx_graph_names_module(const GraphNames *g, const char *module);
/* The star imports of file_id, in rowid order (borrowed). */
char *const *idx_graph_names_stars(const GraphNames *g, int64_t file_id, size_t *n_out);
/* 0 when the walk of idx_graph_resolve_expr for the one-part name from
 * file_id's scope (module, then the star imports, transitively, at most
 * depth deep) can end at nothing: no module's last part is name, no file
 * on the way binds names by an import, and no symbol is qualified P.name
 * for a P the walk asks within depth (C's headers: a function only a .c
 * file defines, a macro of a header past the depth bound); else 1, with
 * *sure the chunk it ends at when that is known without it (one such
 * symbol, no other so qualified, the walk starting at the module's own
 * file), else 0. rc keeps what the walk asks for the next name from the
 * same file. */
int idx_graph_names_may_reach(const GraphNames *g, GraphReach *rc, int64_t file_id,
                              const char *module, const char *name, int depth, int64_t *sure);
void idx_graph_reach_release(GraphReach *rc);

/* (graph_row.c) A resolver over st's connection (its memo empty); released
 * with idx_graph_resolver_release. */
void idx_graph_resolver_init(Resolver *r, IdxStore *st, ErrInfo *e);
void idx_graph_resolver_release(Resolver *r);
/* Forgets every memo answer (memory: answers depend on the tables alone). */
void idx_graph_memo_forget(Resolver *r);
/* The targets of one reference (at most DISPATCH_MAX, into dst): reads
 * only, so that threads can look up rows over connections of their own.
 * Returns the count; 0 with r->rc set on a failed lookup. */
size_t idx_graph_lookup_row(Resolver *r, const RefRow *row, int64_t *dst);

/* (graph_par.c) Lookups of a page of references on threads of their own,
 * each over a read-only connection that sees the last commit: the tables
 * lookups read (files, chunks, symbols, imports, the names of refs) must
 * be committed and not change while it runs; the caller writes the edges
 * on its connection, in row order, as rows are done. */
typedef struct GraphPar GraphPar;
/* n threads, or NULL (nothing started: resolve serially). Free with
 * idx_graph_par_stop (NULL-safe). */
GraphPar *idx_graph_par_start(IdxStore *st, int n, const GraphNames *names);
void idx_graph_par_stop(GraphPar *p);
/* Hands the threads rows[0..n) (borrowed until idx_graph_par_finish). */
void idx_graph_par_post(GraphPar *p, const RefRow *rows, size_t n);
/* Waits for the targets of row i of the posted page (*dst borrowed until
 * the next post); the first failed lookup's error. */
CrErr idx_graph_par_take(GraphPar *p, size_t i, const int64_t **dst, size_t *nd, ErrInfo *e);
/* Stops handing out the posted page and waits until no thread reads it. */
void idx_graph_par_finish(GraphPar *p);

#endif
