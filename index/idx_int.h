/*
 * idx_int.h - interfaces between the parts of index/ (scan, chunk, tokens,
 * store, graph). Not for use outside index/ and its unit tests.
 */
#ifndef CODERAG_IDX_INT_H
#define CODERAG_IDX_INT_H

#include "idx.h"

#include <stdint.h>

/* ---------------------------------------------------------------- scan (scan*.c, ignore.c) */

typedef struct ScanFile {
    char *path; /* relative to the root, '/'-separated, no leading "./" */
    int64_t size;
    int64_t mtime_ns;
} ScanFile;

typedef struct ScanSkip {
    char *path;   /* relative to the root */
    char *reason; /* "too-large", "unreadable", "symlink-loop", "outside-root" */
} ScanSkip;

typedef struct ScanResult {
    ScanFile *files; /* sorted by path (bytewise) */
    size_t n_files, cap_files;
    ScanSkip *skipped;
    size_t n_skipped, cap_skipped;
} ScanResult;

typedef struct ScanOptions {
    const char *root;           /* absolute, canonical */
    const char *index_dir;      /* absolute; never descended into (may be NULL) */
    const char *const *exclude; /* gitignore-style patterns relative to the root */
    size_t n_exclude;
    size_t max_file_bytes; /* files larger are skipped as "too-large" */
} ScanOptions;

/* Walks the root and lists the files of the language table (by extension,
 * or an extensionless script by its shebang), honouring nested .gitignore files
 * (negation, directory-only, anchored and ** patterns) and the exclude
 * patterns; never enters .git or the index directory; follows symlinks only
 * when their target lies inside the root, and never twice into the same
 * directory (loops). A file or directory that vanishes mid-scan is skipped
 * silently. Fails only when the root itself cannot be read. */
CrErr idx_scan_workspace(const ScanOptions *opt, ScanResult *out, ErrInfo *e);
void idx_scan_result_release(ScanResult *r);

/* Whether a single relative path would be indexed by a scan with these
 * options (checks the .gitignore files on its way down, the excludes, the
 * index dir, the .py suffix). For single-file updates. */
int idx_scan_path_included(const ScanOptions *opt, const char *relpath);

/* gitignore matching (ignore.c). A list of patterns from one .gitignore
 * (or the exclude list), all relative to base ("" for the root). */
typedef struct IgnoreList IgnoreList;
/* Parses gitignore text. base is the directory of the .gitignore, relative to
 * the root ("" or "a/b"). Caller frees with idx_ignore_free. */
IgnoreList *idx_ignore_parse(const char *base, const char *text, size_t len);
void idx_ignore_free(IgnoreList *l);
/* Result of matching one path against one list: the last matching pattern
 * decides. relpath is relative to the root. */
typedef enum {
    IGNORE_NONE,
    IGNORE_EXCLUDE,
    IGNORE_INCLUDE,
    IGNORE_COSTLY /* a pattern past its step budget: excluded (fail closed), and listed */
} IgnoreVerdict;
IgnoreVerdict idx_ignore_match(const IgnoreList *l, const char *relpath, int is_dir);

/* The rules every listing decision uses (scan_rules.c), shared by the walk
 * (scan.c) and the single-path check (scan_path.c). */
typedef struct ScanCtx {
    const ScanOptions *opt;
    char *root; /* canonical, no trailing '/'; "" for "/" */
    IgnoreList *exclude;
    char *index_real; /* canonical index dir, or NULL */
} ScanCtx;
/* Fills c from opt (the root without trailing '/', the exclude list parsed,
 * the index dir canonical when it exists); release with idx_scan_ctx_release. */
void idx_scan_ctx_init(ScanCtx *c, const ScanOptions *opt);
void idx_scan_ctx_release(ScanCtx *c);
/* errno of a path that vanished (ENOENT, ENOTDIR): skipped silently. */
int idx_scan_vanished(int err);
/* A source file by its extension (any row of the language table), or a
 * name without one, which a shebang may still make a script. */
int idx_scan_is_candidate(const char *name, size_t len);
/* Whether a file found by name is indexed: an extensionless file only with
 * a known interpreter on its "#!" line; text formats only under their cap. */
int idx_scan_wanted(int dirfd, const char *name, int64_t size);
/* Inside the index dir or a .git directory (canonical path inside root). */
int idx_scan_forbidden(const ScanCtx *c, const char *real);
/* Reads one .gitignore (relative to dirfd, or absolute with AT_FDCWD);
 * NULL when absent or not a regular file; NULL with *refused set when it is
 * there but cannot be read whole (over 1 MiB, a read error): the caller
 * fails closed (nothing under its folder is indexed). */
IgnoreList *idx_scan_read_gitignore(int dirfd, const char *path, const char *base, int *refused);
/* Whether rel is excluded by the lists stack[0..n) (innermost last), the
 * exclude list having the last word when it excludes: 1, or 2 when a
 * pattern ran past its step budget (excluded, fail closed; the walk lists
 * it as skipped "ignore-too-costly"); 0 when not excluded. */
int idx_scan_ignored(const ScanCtx *c, IgnoreList *const *stack, size_t n, const char *rel,
                     int is_dir);

/* ---------------------------------------------------------------- chunk (chunk.c) */

typedef struct ChunkDef {
    IdxKind kind;
    uint32_t start_line, end_line; /* 1-based inclusive; decorators included */
    uint32_t window;               /* 0: whole; k >= 1: k-th window of a split unit */
    char *symbol;                  /* dotted inside the module ("Class.meth"); "" for module code */
    char *name;                    /* last component of symbol; "" for module code */
    char *signature; /* header on one line ("def f(a, b=1) -> int:"); "" for module code */
    char *docstring; /* docstring text without quotes, or NULL */
    int parent;      /* index of the enclosing class chunk (window 0 or 1), or -1 */
} ChunkDef;

typedef enum {
    REF_IMPORT,  /* import statement */
    REF_CALL,    /* call, instantiation or decorator: name is the callee expression */
    REF_INHERIT, /* base class of a class chunk: name is the base expression */
    REF_RAISE,   /* raise X / except X without a call: name is X */
    REF_TYPE,    /* a type named (a declaration, a cast): name is the type expression */
    REF_VALUE,   /* a function named as a value (a callback, a table entry): name is the name */
    /* a call written in a macro's body (what a use of the macro expands to);
     * the name IDX_REF_MACRO_MARK marks the definition as expanded where used */
    REF_EXPAND,
    /* a function stored in a struct field by a designated initializer
     * (`.open = f`): name is "FIELD.FUNCTION" (the row's last part, the one
     * a change of FUNCTION marks, is the function). No edge of its own: a
     * call through the field (`x->open()`) reaches what it stores
     * (graph_store.c), in rows with field_calls. The last kind:
     * IDX_REF_STORE_SQL is its value as SQL text. */
    REF_STORE,
} RefKind;

#define IDX_REF_STORE_SQL "7"
/* The stores' partial index's condition, which its readers repeat. `>=`,
 * not `=`: a partial index on `kind = 7` makes SQLite prepare again every
 * statement comparing kind to a parameter each time the value bound changes
 * (Django's cold build +10% CPU). */
#define IDX_REF_STORE_WHERE "kind >= " IDX_REF_STORE_SQL

/* The name of the REF_EXPAND that marks its chunk as a macro (no identifier). */
#define IDX_REF_MACRO_MARK "()"

/* A REF_TYPE whose name starts with this states a type fact for calls on
 * typed receivers (graph_types.c), not a type use (no edge):
 * "=NAME:TYPE" on a class chunk: its attribute NAME holds what calling TYPE
 * gives; "=():TYPE" on a function chunk: a call of it returns what calling
 * TYPE gives (TYPE a class: an instance); "=@:" on a method: it is read as
 * an attribute (a property). TYPE is read in the chunk's file,
 * as a typed receiver's type is ("Headers", "make", "Cls().copy"). */
#define IDX_REF_TYPE_FACT "="
/* What iterating a value gives: a receiver typed "f()[]" is an item of
 * what calling f gives, the type fact "=[]:TYPE" on a function (or on a
 * class: its instances) says the items are what calling TYPE gives. */
#define IDX_REF_ITEMS "[]"
/* The type fact "=*:*" on a class: an interface that a type implements by
 * defining its methods, without naming it (Go's): a call of its method
 * reaches the methods of the types that define all of its own (rows'
 * @interface capture, graph_types.c). */
#define IDX_REF_INTERFACE_NAME "*"
/* A callback's parameter: the type fact "=#K#J:TYPE" on a function chunk
 * says parameter J of the function passed as its argument K (both from 0)
 * is what calling TYPE gives (`init: (src: Observable<T>, sub: Subscriber<R>)
 * => void` as its first parameter: "=#0#1:Subscriber"); a receiver typed
 * "f#K#J" is that parameter of a function passed to f (graph_types.c). */
#define IDX_REF_ARG "#"
/* A type written as this suffix after its element's ("Observer[]"): an
 * array of it, whose row's element_methods (`forEach`, `map`) pass a
 * callback the element as its first parameter ("x.forEach#0#0"). */
#define IDX_REF_ELEM "[]"
/* A REF_CALL whose name starts with this is an attribute read or written
 * through a typed receiver ("!T().name"): it reaches a method only, one a
 * type fact "=@:" marks as read like an attribute (a Python property),
 * never a definition found by the name alone. */
#define IDX_REF_READ "!"
/* A REF_CALL whose name starts with this names the macro that writes the
 * definition holding it (`TEST_F(Suite, Name) {…}`, which the grammar reads
 * as a function named TEST_F): it reaches a macro of that name only, never
 * a function (a constructor is written alike), so the calls the macro's
 * body makes are the definition's (rows' @ref.writer, graph_row.c). The
 * name's last part is the macro's, so a change of the macro marks it. */
#define IDX_REF_WRITER "#."
/* A REF_CALL whose name starts with this builds an object of the type
 * named after it (`Foo f;`, `Foo{a}`, `std::make_unique<Foo>(a)`: rows'
 * @ref.construct): it reaches that class's constructor only, never a
 * function or a method found by the name (`std::string s;` is no call of
 * a workspace's `string()`), nor the class itself (graph_row.c). */
#define IDX_REF_CONSTRUCT "+."

/* How many arguments the parameter list after name in signature sig
 * takes: *lo without defaults, *hi at most (INT32_MAX: variadic); 0 when
 * sig holds no list after name (names.c). */
int idx_sig_params(const char *sig, const char *name, int *lo, int *hi);
/* The parameter list after name in a signature: a pointer to its `(`, NULL
 * when name is not followed by one. */
const char *idx_sig_paren(const char *sig, const char *name);
/* The end of the parameter starting at p: the `,` or `)` that closes it at
 * its own depth (brackets of any kind nest), or the string's end. */
const char *idx_sig_param_end(const char *p);

typedef struct ChunkRef {
    RefKind kind;
    int chunk;     /* index into ChunkSet.chunks of the chunk it occurs in */
    uint32_t line; /* 1-based line where it occurs */
    /* REF_IMPORT: `import a.b as c` -> level 0, module "a.b", member NULL, alias "c";
     * `import a.b` -> alias "a"; `from ..x import y as z` -> level 2, module "x",
     * member "y", alias "z"; `from . import y` -> level 1, module "", member "y";
     * `from m import *` -> member "*", alias "*". */
    int level;
    char *module;
    char *member;
    char *alias;
    /* Other languages: level 0, module the raw spec as written ("./util",
     * "crate::a::b", "foo.h"), rewritten by the row's resolve_import.
     * REF_CALL/REF_INHERIT/REF_RAISE: dotted expression as written ("foo",
     * "self.bar", "os.path.join", "models.Model"); a receiver that is not a
     * plain name chain is written as "?" ("?.method"), the object a method
     * runs on (whatever word its language has for it: the row's self_words)
     * as IDX_RECEIVER. */
    char *name;
    /* REF_CALL: 1 + how many arguments the call passes, where the query's
     * call node says (`f(a, b)`: 3), else 0: an overload is told apart by
     * its arity (graph_row.c). */
    int argc;
    /* REF_CALL in rows with `overloads`: its first IDX_ARGT_MAX arguments'
     * types where the call site says (idx_argt_get; 0: not known), told
     * apart from argc in the refs table's argc column (idx_argt_pack);
     * arg_at/arg_len: an argument that is a name (arg_addr bit k: its
     * address, `&x`), typed by its declaration after the query pass. */
    uint64_t argt;
    uint32_t arg_at[4];
    uint8_t arg_len[4];
    uint8_t arg_addr;
} ChunkRef;

/* A reference chain's first word for the object a method runs on, in every
 * language (`this.x`, `self.x` and `s.x` in a Go method on s are all
 * "self.x"): the index's own word, not a language's. */
#define IDX_RECEIVER "self"
#define IDX_RECEIVER_LEN 4
/* The receiver forms a chunker writes and the resolver reads
 * (graph/graph_types.c), the index's own words in every language:
 * "super().m" is m as the enclosing class inherits it (`super().m()`,
 * `super.m()`), "__class__().m" a member of the enclosing class read
 * through the receiver. */
#define IDX_REF_SUPER "super()."
#define IDX_REF_SUPER_LEN 8
#define IDX_REF_CLASS "__class__()."
#define IDX_REF_CLASS_LEN 12

/* A preprocessor fact of a file (rows whose queries capture @pp.if and
 * @pp.define, index/pp/pp.c). */
typedef enum {
    PP_BRANCH, /* lines start..end are compiled when text (a condition) holds */
    PP_DEFINE, /* macro name is defined at start_line as text (its value; "(": function-like) */
    /* a call of name (its last component) at start_line, in a definition
     * (starting at end_line) that calls name under a branch of its body:
     * every such call */
    PP_SITE,
} PpKind;

typedef struct ChunkPp {
    PpKind kind;
    uint32_t start_line, end_line;
    char *name; /* "" for a branch */
    char *text;
} ChunkPp;

typedef struct ChunkSet {
    ChunkDef *chunks; /* in line order (by start_line, then window) */
    size_t n_chunks, cap_chunks;
    ChunkRef *refs;
    size_t n_refs, cap_refs;
    ChunkPp *pp; /* preprocessor facts, in no particular order */
    size_t n_pp, cap_pp;
    int had_errors; /* the tree had ERROR or MISSING nodes */
    char *package;  /* the file's package declaration (Java), or NULL */
} ChunkSet;

/* A row of the language table (lang/lang.h). */
typedef struct IdxLang IdxLang;

/* Argument types (rows with `overloads`, chunk/lang/argtypes.c): a code
 * of IDX_ARGT_BITS per argument, the first IDX_ARGT_MAX, packed above a
 * call's arity in the refs table's argc column. A code is a type's last
 * word hashed, its pointer levels (at most 3) and whether the row names
 * it a scalar; IDX_ARGT_NULL any pointer's null; 0 not known. */
#define IDX_ARGT_BITS 14
#define IDX_ARGT_MAX 4
#define IDX_ARGT_PTR_SHIFT 12
#define IDX_ARGT_SCALAR (1u << 11)
#define IDX_ARGT_HASH 2048u
#define IDX_ARGT_FIRST 16u
#define IDX_ARGT_NULL 1u
#define IDX_ARGC_BITS 6
static inline uint32_t idx_argt_get(uint64_t argt, int k)
{
    return (uint32_t)(argt >> (IDX_ARGT_BITS * k)) & ((1u << IDX_ARGT_BITS) - 1);
}
/* The refs table's argc column: arity - 1 (at most 62) and the types. */
static inline int64_t idx_argt_pack(int argc, uint64_t argt)
{
    int a = argc - 1 > 62 ? 62 : argc - 1;
    return (int64_t)((uint64_t)a | (argt << IDX_ARGC_BITS));
}
/* The code of a type whose last word is base[0..n), with ptr pointer levels. */
uint32_t idx_argt_code(const IdxLang *lang, const char *base, size_t n, int ptr);
/* How well signature sig's parameters after name take arguments of types
 * argt: the sum of each known one's score (3 its type, 2 a standard
 * conversion, 0 maybe), or -1 when one cannot take its argument. */
int idx_sig_arg_score(const IdxLang *lang, const char *sig, const char *name, uint64_t argt);
/* Whether two signatures of name have parameters of different types at
 * one place, or one is a const method and the other not (the row's
 * scalar_types known: else 0). */
int idx_sig_types_differ(const IdxLang *lang, const char *a, const char *b, const char *name);
/* The codes of signature sig's first IDX_ARGT_MAX parameter types after
 * name (0: none or not read) into codes; 0 when sig holds no list. */
int idx_sig_param_codes(const IdxLang *lang, const char *sig, const char *name, uint32_t *codes);
/* Whether two such code lists differ at one place (two scalars by value
 * do not). */
int idx_codes_differ(const uint32_t *a, const uint32_t *b);
/* Whether signature sig of name is a const method's (`f() const`). */
int idx_sig_const(const char *sig, const char *name);

/* The most rows a language table holds. */
#define IDX_LANG_MAX_ROWS 32
/* One project's reading of the suffixes rows share (IdxLang.follow_exts,
 * C's ".h"): per row (by its place in the table), the row its files of
 * those suffixes are read as; NULL for the row itself. by_content: the
 * row keeps them, but the project holds files of a row sharing its import
 * hook (a C project with C++ sources), so each is read as its content
 * says (IdxLang.refine). Made by an update from what it scans
 * (idx_lang_pick_decide), kept by the store in meta. */
typedef struct IdxLangPick {
    const IdxLang *to[IDX_LANG_MAX_ROWS];
    unsigned char by_content[IDX_LANG_MAX_ROWS];
} IdxLangPick;

/* Reusable tree-sitter parsers and queries, one per language, created on
 * first use; one Chunker per thread. */
typedef struct Chunker Chunker;
Chunker *idx_chunker_new(void);
/* The builtin embedding models a process has loaded, lent to every store
 * (dense/models.c). Thread-safe. Freeing drops its references: a store
 * keeps what it took. */
typedef struct IdxModels IdxModels;
IdxModels *idx_models_new(void);
void idx_models_free(IdxModels *ms); /* NULL-safe */

/* The language rows' compiled queries, compiled on first use and kept for
 * every thread and store that borrows them (chunk_query.c). Thread-safe. */
typedef struct IdxQueries IdxQueries;
IdxQueries *idx_queries_new(void);
void idx_queries_free(IdxQueries *qs); /* NULL-safe */
/* A Chunker whose queries are borrowed from qs (NULL: its own); qs must
 * outlive it. */
Chunker *idx_chunker_new_queries(IdxQueries *qs);
/* The same, with the queries that sh holds (shared.c). NULL: idx_chunker_new. */
Chunker *idx_chunker_new_shared(IdxShared *sh);
/* idx_find_definition with the queries borrowed from qs (def_find.c). */
int idx_find_definition_queries(IdxQueries *qs, const char *path, const char *text, size_t len,
                                const char *symbol, uint32_t near, uint32_t *start, uint32_t *end);
/* What sh lends (shared.c): borrowed for sh's life. */
IdxQueries *idx_shared_queries(IdxShared *sh);
IdxModels *idx_shared_models(IdxShared *sh);
void idx_chunker_free(Chunker *c);
/* Makes c keep each language's last parse for its next one (lang.h's
 * TsKeep): for a Chunker that reads one file again and again (a store's
 * saves); a tree and a copy of the text per language held meanwhile. */
void idx_chunker_keep_trees(Chunker *c);

/* Chunks source (UTF-8) of lang, a row of the language table, into out
 * (which must be zeroed or released): one chunk per definition (function,
 * method, class/struct/enum/interface/trait/impl, type, macro), module code
 * in the gaps, Markdown/reST sections and text windows for docs. Doc
 * comments above a definition become its docstring; imports are raw specs
 * (resolved with the row's hook). Units longer than max_lines (0: 100) are
 * split into windows. Syntax errors do not fail: what parses is chunked;
 * every line of the file belongs to at most one chunk, and every non-blank,
 * non-comment line to exactly one. Fails with CR_EPARSE when tree-sitter
 * gives up (timeout, cancel), CR_EINVAL without a row. */
CrErr idx_chunker_run_lang(Chunker *c, const IdxLang *lang, const char *src, size_t len,
                           uint32_t max_lines, ChunkSet *out, ErrInfo *e);
void idx_chunk_set_release(ChunkSet *s);

/* ---------------------------------------------------------------- chunk body (chunk_body.c) */

/* Whether a chunk continues a unit begun by an earlier chunk of its file: a
 * later window of a split unit, or a later run of a class's body (a class
 * whose symbol an earlier chunk already had). */
int idx_chunk_continues(const ChunkDef *c, int symbol_seen);

/* Appends the text a chunk stands for, as search and embedding both see it:
 * its unit's signature first when it continues a unit (so a later piece stays
 * findable by it), then its source lines. */
void idx_chunk_body(int cont, const char *signature, const char *lines, size_t len, StrBuf *out);

/* ---------------------------------------------------------------- tokens (tokens.c) */

/* Appends code-aware search tokens of text to out, separated by spaces:
 * every identifier whole (lowercased) and, when it has several parts, its
 * subwords (getUserName -> getusername get user name; append_slash_redirect
 * -> append_slash_redirect append slash redirect; HTTPServer -> httpserver
 * http server). Numbers and punctuation are dropped. */
void idx_tok_code(const char *text, size_t len, StrBuf *out);

/* Python's module name of a relative path (lang/python.c): "a/b/c.py" -> "a.b.c",
 * "a/b/__init__.py" -> "a.b". */
char *idx_path_to_module(const char *relpath);

#endif
