/*
 * lang.h - the language table: what index/ knows about each language it
 * reads, as data (a row per language) plus a few small hooks where a query
 * cannot say it (how an import spec names a file). Internal to index/.
 *
 * A tree-sitter language row has a query (index/chunk/lang/queries/<name>.scm, embedded
 * at build time) whose captures drive the generic chunker (chunk_ts.c):
 *   @def.function @def.method            a definition that holds code
 *   @def.class @def.impl @def.namespace  a container: its functions are methods
 *   @def.type @def.macro @def.constant   a definition that is neither
 *   @name      the definition's name (required with every @def.*)
 *   @receiver  Go: the receiver type a method belongs to
 *   @body      where the signature ends (else: the first line)
 *   @ref.call @ref.type @ref.inherit     a callee / type / base expression
 *   @ref.args  a call's argument list (with @ref.call): its arity, which
 *              tells overloads apart (IdxLang.overloads)
 *   @ref.value a name used as a value (a function passed, stored in a table)
 *   @store.field @store.value  a designated initializer's field and the
 *              function stored in it (`.open = f`): REF_STORE "open.f"
 *   @local     a variable declared: a @ref.value of its name in the same
 *              definition is the variable
 *   @ref.expand the unparsed body of a macro: each `name(` in it is a call
 *              the macro's users make (REF_EXPAND); the definition holding
 *              it is a macro, followed through where it is called
 *   @import    an import/include node, parsed by the row's import hook
 *   @package   the file's package/namespace declaration (Java)
 *   @interface in a class's header: types implement it by defining its
 *              methods, without naming it (Go; IDX_REF_INTERFACE_NAME)
 * Query predicates are not used: libtree-sitter 0.20 does not apply them.
 */
#ifndef CODERAG_LANG_H
#define CODERAG_LANG_H

#include "../../idx_int.h"

#include <tree_sitter/api.h>

typedef struct LangImportCtx LangImportCtx;

/* Hooks get the parse through this: text of a node, and a way to add an
 * import reference (raw spec as written; resolved later by resolve_import). */
typedef struct LangParse {
    const char *src;
    uint32_t len;
    void *run; /* chunker state */
} LangParse;

/* Where an import is resolved: the workspace root (absolute), the importing
 * file (relative), its module, and its package declaration (or ""). */
struct LangImportCtx {
    const char *root;
    const char *path;
    const char *module;
    const char *package;
};

/* A parser's last text and tree, kept for its next parse (below). */
typedef struct TsKeep TsKeep;

/* resolve_import's answer for a library's module kept as written. */
#define IDX_IMPORT_LIBRARY 2
/* An import hook's module spec for the file's own module: the file binds
 * the alias to one of its own names (the update writes the file's module). */
#define IDX_LANG_OWN_MODULE "="
/* The alias a module binds its own value to (JavaScript's `module.exports
 * = f`): a call of the module, imported whole (`const f = require('./f')`),
 * reaches what it names (graph_lookup.c); followed by a name, the alias of
 * a name it exports under another (`exports.x = y`: "=x" binds y), found
 * where a lookup in the module finds neither a definition nor an import. */
#define IDX_LANG_MODULE_VALUE "="

typedef struct IdxLang {
    const char *name;           /* "c", "python", "markdown" */
    const char *const *exts;    /* suffixes with the dot, NULL-terminated */
    const char *const *interps; /* shebang interpreters ("node", "python3"), NULL-terminated */
    const TSLanguage *(*grammar)(void); /* NULL: a text format (docs, config) */
    const char *query;                  /* capture conventions above; NULL for Python and text */
    const char *const *comments;        /* comment node kinds */
    const char *const *wrappers;        /* parents that belong to a definition (template, export) */
    const char *const *prefixes;        /* preceding siblings that belong to it (Rust attributes) */
    /* Module name of a workspace file of this language. Caller frees. */
    char *(*module_name)(const char *relpath);
    /* File names that stand for their folder as a package ("__init__.py"):
     * a relative import there starts one level lower. NULL-terminated, or NULL. */
    const char *const *pkg_files;
    /* Parses one @import node into raw import refs (idx_lang_add_import). */
    void (*import)(LangParse *p, TSNode node);
    /* Rewrites r->module (raw spec) into the absolute module it names,
     * using the filesystem under ctx->root where needed; 0 drops the import
     * (outside the workspace, a library, undecidable); IDX_IMPORT_LIBRARY
     * keeps it bound to a library's module as written (no workspace file
     * yet: the file is read again when a module of that name appears). */
    int (*resolve_import)(const LangImportCtx *ctx, ChunkRef *r);
    /* A copy of src to parse instead, with what the grammar cannot read
     * blanked byte for byte (so every offset and line stays the source's),
     * or NULL when nothing needs it. Caller frees. C++: export macros
     * between `class` and the name ("class LEVELDB_EXPORT DB {"). */
    char *(*mask)(const char *src, size_t len);
    /* A walk of its own instead of the query-driven one, or NULL: Python's
     * (python*.c, which types receivers from annotations, assignments and
     * returns as it walks). *state is the row's slot in the thread's
     * Chunker: NULL at first (the hook makes what it reuses), released
     * with chunk_free when the Chunker is. keep: the slot's kept
     * tree for the file's first parse (idx_ts_parse_keep), or NULL. */
    CrErr (*chunk)(void **state, TsKeep *keep, const char *src, size_t len, uint32_t max_lines,
                   ChunkSet *out, ErrInfo *e);
    void (*chunk_free)(void *state);
    /* Suffixes the rows sharing this row's import hook use as well (C's
     * ".h": a C++ project's headers too): a file of one follows the
     * project, read as the row of that hook with the most other files in
     * it (idx_lang_pick_decide; a tie keeps this row). NULL-terminated, or NULL. */
    const char *const *follow_exts;
    /* Another row for a file of a followed suffix by its content (a C
     * header holding C++), or NULL; asked only in a project that holds
     * files of a row sharing this row's import hook (IdxLangPick.by_content). */
    const IdxLang *(*refine)(const char *src, size_t len);
    /* Test files by convention: "dir/" (a path component), "*suffix" (end of
     * the file name, which must be longer), "prefix*" (start of the file
     * name), ".infix." (inside the name). Ranked below the code they test. */
    const char *const *tests;
    /* Modules that hold tests inside a source file by convention (Rust's
     * `#[cfg(test)] mod tests`): a definition in one (any part of its
     * symbol) ranks as a test file's do. NULL-terminated, or NULL. */
    const char *const *test_modules;
    /* A bare call inside a method may name a member of its class (Java,
     * C++: no `this.` needed), so one that names a member defined in the
     * same file is resolved in the class, as `this.name` is. */
    int implicit_this;
    /* A member call the class does not define may name one it inherits:
     * `this.name` (and, with implicit_this, a bare name) left unresolved is
     * looked up in the bases, through the class's inheritance references. */
    int inherited_members;
    /* A method call on a receiver the indexer cannot type (a field or a
     * value of a generic type) whose name an interface declares (a Rust
     * trait) and types implementing it define reaches the declaration and
     * those implementations: implementations name their interface as a base
     * (`impl Trait for X`), so the graph can tell them from same-named
     * methods of unrelated types. */
    int interface_dispatch;
    /* A call of a method a class inherits may run an override (the language's
     * own tool lists `this.onSubscribe()` in a base's method among the
     * callers of every subclass's onSubscribe, and a subclass's among the
     * base's): a method's callers include those of the same-named methods
     * of its class's bases and subclasses (idx_base_callers). */
    int base_callers;
    /* Methods of the language's built-in types (Python: `append`, `items`):
     * a call on a receiver the indexer cannot type (`x.append()`) names one
     * of these far more often than the workspace method that shares the
     * name, so it is not resolved by the name alone. NULL-terminated, or NULL. */
    const char *const *builtin_methods;
    /* A call through a member (`s->fn()`, `s.fn()`) calls a function held in
     * a field (C has no methods): it is never resolved by the member's name
     * alone, which would pick an unrelated function of that name. */
    int field_calls;
    /* Code outside every definition holds no calls: what the grammar reads
     * as one there is a declaration (`int (f) (int);`, a prototype wrapped
     * in export macros) or a macro that declares; only its types are kept. */
    int no_module_calls;
    /* Functions of the language's standard library and built-in scope
     * (Python: `range`, `compile`, `open`): a bare call of one that the
     * module neither defines nor imports is not resolved to a workspace
     * method or function that shares the name. NULL-terminated, or NULL. */
    const char *const *builtins;
    /* Objects of the language's built-in scope whose members a call names
     * (JavaScript's `JSON`, `Math`, Node's `process`): a member call on one
     * the module does not define (`JSON.stringify(v)`) is not resolved to a
     * workspace method by its name alone. NULL-terminated, or NULL. */
    const char *const *builtin_objects;
    /* Well-known proxy objects, as pairs: the name a module imports
     * (`current_app`) and the qualified class it stands for
     * ("flask.Flask"): a call on it is a call of that class's method.
     * NULL-terminated, or NULL. */
    const char *const *receiver_proxies;
    /* The tag of a Markdown code fence around its code ("go", "cpp"), for
     * prompts and hovers; NULL: none (plain fence). */
    const char *fence;
    /* Files whose presence marks a project's root folder ("go.mod",
     * "Cargo.toml"), for the root rule; NULL-terminated, or NULL. */
    const char *const *markers;
    /* The built-in embedder's model covers it (trained on it: its vectors
     * help); other rows' code is not embedded by it (docs/benchmarks.md). */
    int builtin_embed;
    /* Words of the language's syntax that most of its files hold (`else`,
     * `return`, `self`), lower case, NULL-terminated, or NULL: a question
     * made of such words alone ("what else?") matches every file, so they
     * never make a match by themselves (idx_is_syntax_word). */
    const char *const *keywords;
    /* Words that name the object a method runs on (`this`; Python's `self`
     * and `cls`), NULL-terminated, or NULL (none: C, Go's named receivers).
     * The index writes a reference on one as on `self` (`this.run()` is
     * stored as `self.run`), its own word for it whatever the language
     * (idx_lang_self_word). */
    const char *const *self_words;
    /* The word between a constructor function's name and its methods'
     * (JavaScript's `F.prototype.m`), or NULL: a self word is then bound by
     * the call, not by where the function is written. In a function F that
     * is no method (its symbol has no dot), `this.m()` is F.prototype.m
     * (F a constructor) or left unresolved, never the one m anywhere. */
    const char *prototype_word;
    /* The word that names, in a class or an impl, the type itself (Rust's
     * `Self`), or NULL: a function's result written so is the enclosing
     * type (`fn new() -> Self` returns the impl's type). */
    const char *self_type;
    /* The name of a class's constructor method (`constructor`), or NULL:
     * a callback passed to `new C(…)` takes the parameters C's
     * constructor declares (graph_types.c). */
    const char *constructor_name;
    /* Methods of the language's arrays that pass a callback each element
     * as its first parameter (`forEach`, `map`), NULL-terminated, or NULL:
     * `xs.forEach((x) => x.m())` with xs declared as an array of T calls
     * T's m (graph_types.c). */
    const char *const *element_methods;
    /* The word that names, in a method, what the enclosing class inherits
     * (`super`), or NULL: `super.m()` is stored as IDX_REF_SUPER "m". */
    const char *parent_word;
    /* Macros the compiler defines ("NAME" or "NAME=VALUE"): the platform a
     * build configuration builds for, and without one this machine's (pp.c).
     * NULL-terminated, or NULL. */
    const char *const *predefined;
    /* What the code graph cannot see in this language, a phrase for the
     * references' note ("getattr/setattr, decorators' wrappers, eval/exec"),
     * or NULL (rtv_graph_limits says what every language shares). */
    const char *graph_limits;
    /* A class's methods may be defined apart from it (C++'s `void
     * Foo::bar() {…}` in a .cc, the class in a header): a typed call's
     * method is looked up by "Class.name" in any file when the class's
     * module does not define it; and a class may be declared apart from
     * its definition (`struct Status;` in the header that uses it): a type
     * nothing in scope defines is the one class of that name anywhere. */
    int out_of_line_members;
    /* A function is declared in a header and defined in a source file no
     * one includes, the one a build links (C): a bare call the walk through
     * the includes leaves unresolved, of a name several files define, is
     * linked to the definition whose file shares the most of the caller's
     * own includes (the headers that declare it), when one shares more
     * than every other. */
    int links_by_includes;
    /* Functions may be overloaded: definitions of one name in one file
     * told apart by how many parameters they take (their signatures'), a
     * call whose arguments the query counts (@ref.args) reaching the one
     * that takes that many. */
    int overloads;
    /* A call of a class (`Foo(x)`, `new Foo(x)`, a declaration `Foo f(x);`
     * that the query captures as a call) reaches its constructor: the
     * member named as the class, the overload taking as many arguments
     * (C++); the class where it defines none. */
    int constructor_calls;
    /* A macro's body may declare functions and classes (C++'s test
     * macros write a class, its methods and a registrar): a name after a
     * type word (`virtual void Run();`, `void y::Run()`) or before a body
     * (`Create() {…}`) is declared there, not called (REF_EXPAND). */
    int macro_declares;
    /* Types of a parameter that receives what a variadic function got
     * (C++'s `va_list`): an overload taking one (`Error(msg, va_list)`) is
     * the one a call reaches only from a variadic function (`Error(msg,
     * …)` forwarding its arguments), where another overload takes as many.
     * NULL-terminated, or NULL. */
    const char *const *forwarded_types;
    /* With `overloads`, argument types tell overloads of one arity apart
     * (argtypes.c): the scalar types (a number converts to any of them),
     * the words of a parameter's type that are no type (`const`), pairs
     * of a string class and the literal type it takes ("string", "char*"),
     * pairs of an argument's node kind and its type ("string_literal",
     * "char*"; "*" a null pointer, "@" the enclosing class's pointer, "="
     * a variable's declared type, "&" its address), and pairs of a
     * string literal's prefix and its character type ("L", "wchar_t").
     * NULL-terminated, or NULL. */
    const char *const *scalar_types;
    const char *const *type_qualifiers;
    const char *const *string_classes;
    const char *const *literal_types;
    const char *const *string_prefixes;
    /* A call inside a receiver chain is kept (`a.f().m()` is written
     * "a.f().m", the method m of what f gives, graph_types.c) where it
     * would otherwise make the receiver unknown ("?.m"). */
    int call_chains;
    /* A variable of the file's scope given a type (`var Query =
     * queryBinding{}`, `var X T`) is a fact of its module (the fact
     * "=Query:queryBinding" on the file's module chunk): a member call on
     * that name in any file of the module (a Go package: its folder) is a
     * call on a value of that type (graph_types.c). */
    int package_vars;
    /* Docs (no grammar): where sections start, else windows (chunk_text.c). */
    enum {
        IDX_HEADINGS_NONE,       /* none: the text in windows */
        IDX_HEADINGS_MARKDOWN,   /* ATX `# Title` and setext underlines, not in code fences */
        IDX_HEADINGS_UNDERLINED, /* a title over a line of one punctuation mark (reST) */
    } headings;
    int is_doc; /* docs and config: ranked below code */
    /* Definitions of at most this many lines are the language's helpers
     * (accessors, wrappers, inline one-liners), not where behaviour lives:
     * ranked below the rest in a large index (RtvTuning.short_prior); 0:
     * none (a language whose behaviour is written in short definitions). */
    uint32_t helper_lines;
    size_t max_bytes; /* text rows: larger files are not indexed (0: no cap) */
    /* A file no row claims (by its suffix or its shebang) is read as this
     * row's (idx_lang_fallback): one row of the table says so. */
    int fallback;
} IdxLang;

/* Whether the n bytes at w are the index's `self` or one of l's
 * self_words (l NULL: `self` only). */
int idx_lang_self_word(const IdxLang *l, const char *w, size_t n);
/* The rows (rows.c: that file holds the array alone, so that a test binary
 * can link its own table, a toy row added, in its place). */
extern const IdxLang *const idx_lang_rows[];
extern const size_t idx_lang_n_rows;

/* The table (table.c). */
/* The row of a path by its suffix alone (a followed suffix: its own row). */
const IdxLang *idx_lang_for_path(const char *relpath);
/* The row of a path in a project: a followed suffix's file as pick reads
 * it (pick NULL: as idx_lang_for_path). */
const IdxLang *idx_lang_for_file(const IdxLangPick *pick, const char *relpath);
/* The row of a file in a project by its content as well: a followed
 * suffix's file that pick reads by content, as the row's refine says. */
const IdxLang *idx_lang_for_content(const IdxLangPick *pick, const char *relpath,
                                    const IdxLang *lang, const char *src, size_t len);
/* Counts relpath into others[row] (IDX_LANG_MAX_ROWS entries) unless it
 * has its row's followed suffix: the files a pick weighs. */
void idx_lang_pick_count(int64_t *others, const char *relpath);
/* The pick those counts make: each row with follow_exts reads them as the
 * row sharing its import hook with the most counted files, when that row
 * has more than it; else by their content when such a row has any. */
void idx_lang_pick_decide(IdxLangPick *pick, const int64_t *others);
/* The pick as text for the store's meta ("c=cpp;", "c+;" for by content,
 * "" for none) and back (unknown names ignored). */
void idx_lang_pick_text(const IdxLangPick *pick, char *out, size_t cap);
void idx_lang_pick_parse(IdxLangPick *pick, const char *text);
/* Whether a path has its row's followed suffix (its row may differ by
 * project). */
int idx_lang_path_follows(const char *relpath);
const IdxLang *idx_lang_by_name(const char *name);
/* The row a file no row claims is read as (the row with `fallback`), or
 * NULL when no row says so. */
const IdxLang *idx_lang_fallback(void);
/* Language by the interpreter of a "#!" first line, or NULL. */
const IdxLang *idx_lang_for_shebang(const char *first_line, size_t len);
size_t idx_lang_count(void);
/* Whether relpath is a test file by its language's conventions. */
int idx_lang_is_test_path(const char *relpath);
/* Whether a definition (its dotted symbol) in relpath sits in one of its
 * language's test modules. */
int idx_lang_is_test_symbol(const char *relpath, const char *symbol);
/* Whether relpath's language has test modules at all. */
int idx_lang_has_test_modules(const char *relpath);
const IdxLang *idx_lang_at(size_t i);
/* A digest of every row's name and query: an index made with other queries
 * holds other chunks, and is rebuilt (store.c). */
uint64_t idx_lang_digest(void);

/* Helpers for hooks (chunk_ts.c). */
char *idx_lang_node_text(const LangParse *p, TSNode n);
/* The text of a string literal node without its quotes. Caller frees. */
char *idx_lang_string_text(const LangParse *p, TSNode n);
void idx_lang_add_import(LangParse *p, TSNode at, const char *module, const char *member,
                         const char *alias);

/* Module-name helpers for rows (lang_names.c). */
/* "a/b.ts" -> "a.b"; a file named one of dir_files ("index") names its
 * directory ("a/index.ts" -> "a"). */
char *idx_lang_module_strip_ext(const char *relpath, const char *const *dir_files);
char *idx_lang_module_keep_ext(const char *relpath); /* "a/b.h" -> "a.b.h" */
char *idx_lang_module_dir(const char *relpath);      /* "a/b/c.go" -> "a.b" */
/* Whether root/rel is a regular file. */
int idx_lang_file_exists(const char *root, const char *rel);
/* Joins dir and a relative spec ("./x", "../y/z"), normalising; NULL when it
 * climbs above the root. Caller frees. */
char *idx_lang_join(const char *dir, const char *spec);
/* Directory of a relative path ("a/b.c" -> "a", "b.c" -> ""). Caller frees. */
char *idx_lang_dirname(const char *relpath);

/* The generic tree-sitter chunker (chunk_ts.c). query is compiled for lang. */
/* lang's query (IdxLang.query) compiled for its grammar, or NULL (the
 * failure logged). Caller frees with ts_query_delete. (chunk_query.c) */
TSQuery *idx_chunk_query_compile(const IdxLang *lang);
/* lang's compiled query kept by qs (compiled on first use, once; shared by
 * every thread: a query is read-only, each run has its own cursor), or
 * NULL when it does not compile. Borrowed for qs's life. (chunk_query.c) */
const TSQuery *idx_queries_get(IdxQueries *qs, const IdxLang *lang);
/* Starts compiling lang's query on a thread of its own, when qs has not
 * yet (nothing when it cannot start one): the idx_queries_get that follows
 * waits for it. A chunker starts it before a parse that does not need it,
 * so that a one-file update pays the compile (the kernel's C query: 35 ms
 * of CPU) beside the parse rather than after it. (chunk_query.c) */
void idx_queries_start(IdxQueries *qs, const IdxLang *lang);

/* query: lang's compiled query; or NULL with qs: lang's from qs, asked once
 * the text is parsed (idx_queries_start compiles it meanwhile). */
CrErr idx_chunk_ts(TSParser *parser, TsKeep *keep, const TSQuery *query, IdxQueries *qs,
                   const IdxLang *lang, const char *src, size_t len, uint32_t max_lines,
                   ChunkSet *out, ErrInfo *e);
/* One step of a depth-first walk over a tree without recursion (inputs nest
 * arbitrarily deep): into the current node's first child when descend, else
 * to the next node after its subtree; *depth follows. 0: the walk is over. */
int idx_ts_walk_next(TSTreeCursor *cur, size_t *depth, int descend);
/* A file's work, counted, never timed (ts_parse.c; docs/hardening.md, "work
 * per file"): every tree-sitter row adds what its chunker does, each thing
 * weighted by what it costs (IDX_TS_WORK_*: instructions, measured), and a
 * file may do at most a base plus so much per byte of it. Past that
 * idx_ts_work_add (and the parse, which counts as it goes) return
 * CR_ETIMEOUT, the file skipped "too-costly": valid files made of nothing
 * but long lists or one-line definitions cost two to five times what real
 * sources do per byte, and would cost more than a second per MiB. */
typedef struct IdxTsWork {
    uint64_t done, cap;
    uint64_t ahead; /* counted from the text before the parse, not yet met in the tree */
} IdxTsWork;
enum {
    IDX_TS_WORK_ALLOC = 3400,  /* a block tree-sitter's parse allocates */
    IDX_TS_WORK_NODE = 3500,   /* a node a query walks, with the chunker's walks */
    IDX_TS_WORK_WALK = 1600,   /* a node a chunker without a query walks */
    IDX_TS_WORK_LEVEL = 170,   /* a hidden level above a node a query walks */
    IDX_TS_WORK_REF = 2000,    /* a reference found (repeats within a chunk too) */
    IDX_TS_WORK_DEF = 25000,   /* a definition found, to its unit */
    IDX_TS_WORK_CHUNK = 60000, /* a chunk kept: its terms, vector and rows */
    IDX_TS_WORK_ROW = 12000,   /* a reference kept: its row, its resolution */
};
void idx_ts_work_init(IdxTsWork *w, size_t len);
/* Adds n things of weight each to w (NULL: nothing); CR_ETIMEOUT past its
 * cap, e naming what (e may be NULL). */
CrErr idx_ts_work_add(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e);
/* idx_ts_work_add for work known before the parse, from the text: counted
 * at once (so the parse stops as soon as what it does passes what is left)
 * and kept in w->ahead, which the tree's own count then pays back. */
CrErr idx_ts_work_ahead(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e);
/* idx_ts_work_add for what a walk of the tree counts: what w->ahead holds
 * is not counted twice. The file's count is thus the same as without the
 * work ahead whenever the text foretold no more than its tree holds. */
CrErr idx_ts_work_tree(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e);
/* tree-sitter allocates through base's allocator (idx_process_init). */
void idx_ts_process_init(void);
/* The bounds on how deep a file nests (chunk_ts.c), CR_ETOOBIG (e says
 * where) past one: the file is skipped "too-nested" rather than read in
 * time and memory that grow with the square of its size. Before the parse,
 * brackets open at once in the len bytes of src; after it, the tree under
 * root parsed from len bytes.
 * The scan before the parse also counts into work (may be NULL) the work
 * ahead the text foretells (idx_ts_work_ahead): its tokens as the tree's
 * nodes (weighted for a query's walk when queried, else a walk's), and
 * when queried the hidden levels of its bracketed lists of commas.
 * CR_ETIMEOUT when that alone passes the file's budget. */
CrErr idx_ts_text_check(const char *src, size_t len, IdxTsWork *work, int queried, ErrInfo *e);
/* After the parse, the tree under root parsed from len bytes; adding to
 * work (may be NULL) each node of the tree, and when a query will walk it
 * (queried) the hidden levels above each. */
CrErr idx_ts_nesting_work(TSNode root, size_t len, IdxTsWork *work, int queried, ErrInfo *e);
/* Adds to work what keeping out's chunks and references will cost. */
CrErr idx_ts_work_kept(IdxTsWork *work, const ChunkSet *out, ErrInfo *e);
/* The same bound kept by a walk of one's own that visits every node in
 * idx_ts_walk_next's order, root first (depth 0): each node's depth passed
 * to idx_ts_nest_step, CR_ETOOBIG where idx_ts_nesting_work would stop, and
 * the tree is walked once rather than twice. */
typedef struct IdxTsNest {
    uint64_t sum, cap;
    uint64_t nodes; /* the nodes stepped over */
} IdxTsNest;
void idx_ts_nest_init(IdxTsNest *n, size_t len);
CrErr idx_ts_nest_step(IdxTsNest *n, size_t depth, ErrInfo *e);
/* Parses len bytes of src into *out under the bounds every row shares
 * (ts_parse.c): CR_ETIMEOUT past a time budget that grows with len (the
 * file is skipped "too-costly"), CR_ETOOBIG when the tree does not span
 * the file (tree-sitter 0.20 counts a node's children in 16 bits; skipped
 * "too-nested"), CR_EPARSE past 4 GiB. The parser's included ranges hold. */
CrErr idx_ts_parse(TSParser *parser, const char *src, size_t len, TSTree **out, ErrInfo *e);
/* The last text a parser read and its tree, kept by a Chunker made to keep
 * them (idx_chunker_keep_trees: the saves of one store), so that the next
 * parse reads again only what changed: the text between the two texts'
 * common start and common end is the edit (ts_tree_edit), and tree-sitter
 * reuses the rest of the old tree. The tree is the one a fresh parse makes
 * whatever the old text was (another file's too: then little is reused). */
struct TsKeep {
    char *src;
    size_t len;
    TSTree *tree;
};
/* idx_ts_parse starting from keep's tree when keep holds one, and keeping
 * src and the new tree in keep after (emptied on a failure, and for a text
 * over 1 MiB). keep NULL: idx_ts_parse. */
CrErr idx_ts_parse_keep(TSParser *parser, TsKeep *keep, const char *src, size_t len, TSTree **out,
                        ErrInfo *e);
/* idx_ts_parse_keep counting the parse's work in work (a fresh budget for
 * len when NULL): past what is left of it the parse stops, CR_ETIMEOUT. */
CrErr idx_ts_parse_counted(TSParser *parser, TsKeep *keep, const char *src, size_t len,
                           IdxTsWork *work, TSTree **out, ErrInfo *e);
void idx_ts_keep_release(TsKeep *keep);
/* Docs and config (chunk_text.c): Markdown/reST sections, other text in windows. */
CrErr idx_chunk_text(const IdxLang *lang, const char *src, size_t len, uint32_t max_lines,
                     ChunkSet *out, ErrInfo *e);

#endif
