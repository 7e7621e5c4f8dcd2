/*
 * idx.h - the on-disk index of a workspace (the languages of index/chunk/lang):
 * scan, chunk (tree-sitter), store (SQLite, BM25F postings), code graph,
 * and the queries retrieval needs.
 *
 * One IdxStore is one workspace root with one database. A store handle is
 * used by one thread at a time; open a second handle for concurrent readers
 * (SQLite WAL lets readers proceed while a writer commits).
 *
 * Strings returned inside structs are owned by the struct and released by its
 * _release function; pointers returned by accessors are borrowed and valid
 * until the store is closed.
 */
#ifndef CODERAG_IDX_H
#define CODERAG_IDX_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

typedef struct IdxStore IdxStore;

/* Read-only data every store of a process can share instead of each holding
 * a copy: the builtin embedding model (9 MB), loaded by the first store that
 * needs it and lent to the others (a model file changed on disk since is
 * loaded anew for the stores opened after). A server with many workspace
 * roots opens one and passes it to every store through IdxConfig.shared.
 * Thread-safe. Refcounted, and what a store took from it (the model) is
 * the store's reference: the handle may be dropped while stores are open. */
typedef struct IdxShared IdxShared;

/* A new handle holding one reference. */
IdxShared *idx_shared_new(void);
/* One more reference. Returns sh. */
IdxShared *idx_shared_ref(IdxShared *sh);
/* Drops one reference; the last frees the handle and its references to
 * what it holds (a store still using the model keeps it). NULL-safe. */
void idx_shared_unref(IdxShared *sh);

typedef struct IdxConfig {
    const char *root;           /* workspace root; required */
    const char *index_dir;      /* NULL: <root>/.coderag */
    const char *const *exclude; /* extra gitignore-style globs, on top of .gitignore */
    size_t n_exclude;
    size_t max_file_bytes; /* 0: 1 MiB; larger files are skipped and reported */
    int threads;           /* parse threads; 0: one per online core */
    /* bytes of posting lists a build holds in memory before it spills them
     * to a temporary file beside the index; 0: 64 MiB */
    size_t postings_budget;
    /* Dense vectors: provider "openai" (an OpenAI-compatible /v1/embeddings
     * endpoint) embeds every chunk into <index_dir>/vectors.faiss; NULL or
     * "builtin" means no dense leg. */
    const char *embed_provider;
    const char *embed_url;
    const char *embed_model;
    const char *embed_api_key_env;
    IdxShared *shared; /* NULL: the store loads what it needs for itself */
} IdxConfig;

enum {
    IDX_OPEN_READONLY = 1 << 0, /* fail instead of creating or rebuilding; write nothing */
    IDX_OPEN_EXISTING = 1 << 1, /* fail with CR_ENOINDEX instead of creating or rebuilding */
};

/* Opens (creating when needed) the index of cfg->root. A database with an
 * older or foreign schema, or a damaged one, is rebuilt from scratch; with
 * READONLY or EXISTING nothing is ever deleted: another schema fails with
 * CR_ESCHEMA (READONLY) or CR_ENOINDEX (EXISTING), a damaged database with
 * CR_ECORRUPT naming `coderag index`. Errors: CR_ENOENT (no such root),
 * CR_ENOINDEX (READONLY or EXISTING, and no indexing run has finished its
 * first step there), CR_ECORRUPT, CR_EDB, CR_EIO. Caller closes with
 * idx_close. */
CrErr idx_open(const IdxConfig *cfg, unsigned flags, IdxStore **out, ErrInfo *e);
void idx_close(IdxStore *st);
/* Process-wide set-up, once, before any thread starts (main): tree-sitter
 * allocates through base's allocator (out of memory: "coderag: ..." and
 * exit 2, never tree-sitter's message and exit 1); SQLite keeps no
 * allocation statistics (a process-wide mutex per malloc). */
void idx_process_init(void);
/* One writer at a time (docs/hardening.md, "Writers that meet"): a store
 * whose write meets another writer (another process's `coderag index`, a
 * language server, or another store of this process) waits its turn,
 * logging once that it waits. wait_ms > 0 bounds that wait: past it the
 * write fails with CR_EDB and idx_busy() says so, for a caller that hands
 * the work to a writer that may wait (the language server's saves go to
 * its builder). 0 (the default): wait however long it takes. */
void idx_set_write_wait(IdxStore *st, int wait_ms);
/* Whether the last failure of st was another writer holding the index. */
int idx_busy(const IdxStore *st);

/* Canonical absolute root (no trailing slash). Borrowed. */
const char *idx_root(const IdxStore *st);
/* The version of the database schema this build reads and writes (an index
 * of another is rebuilt, idx_open). */
int idx_schema_version(void);

/* ---------------------------------------------------------------- updating */

typedef struct IdxUpdateStats {
    size_t files_seen;      /* candidate source files found by the scan */
    size_t files_changed;   /* re-chunked (new or content changed) */
    size_t files_unchanged; /* same size+mtime, or same content hash */
    size_t files_removed;   /* rows dropped for files that are gone */
    size_t files_skipped;   /* binary, not UTF-8, too large, unreadable */
    double ms;
} IdxUpdateStats;

/* done/total count files; called from the updating thread after each
 * file is written. A non-zero return stops the update (CR_ECANCELED): what
 * was committed stays, and the next update finishes the work. */
typedef int (*IdxProgressFn)(void *ud, size_t done, size_t total);

/* Scans the workspace and brings the index up to date: unchanged files cost
 * a stat, changed files are re-chunked and their rows and edges replaced in
 * one transaction, vanished files' rows go; then, with an embedder, the
 * vectors are brought in line with the chunks. Safe to interrupt at any
 * point: the next run finishes the work. progress may be NULL.
 * CR_EHTTP/CR_ETIMEOUT when the embeddings endpoint fails: the text index
 * is up to date all the same, and the next update retries the vectors. */
CrErr idx_update(IdxStore *st, IdxProgressFn progress, void *ud, IdxUpdateStats *out, ErrInfo *e);

/* Re-indexes one file (path relative to the root, absolute inside it, or a
 * file:// URI; read as path_relative does); a file that no longer exists
 * (or is now ignored) is removed from the index. For the LSP's didSave /
 * didChangeWatchedFiles.
 * Errors: CR_EOUTSIDE for a path outside the root (".." above it too),
 * CR_EINVAL for one naming no file. */
CrErr idx_update_file(IdxStore *st, const char *path, ErrInfo *e);

/* ---------------------------------------------------------------- status */

#define IDX_STATUS_LANGS 24

typedef struct IdxLangCount {
    char name[16]; /* "python", "c", "markdown", ...; "script" for a file known by its shebang */
    int64_t files;
} IdxLangCount;

typedef struct IdxStatus {
    int64_t files; /* indexed files */
    int64_t chunks;
    int64_t edges;
    int64_t symbols;
    int64_t vectors;
    int64_t skipped;     /* files seen but not indexed (see idx_skipped) */
    int64_t db_bytes;    /* size of the database files on disk */
    int64_t last_update; /* unix seconds of the last completed update; 0: never */
    char embedder[128];  /* the embedder in use ("openai:<model>", "builtin:<model>:<sum> (embeds
                          * python files only)"), or why none is */
    IdxLangCount langs[IDX_STATUS_LANGS]; /* indexed files per language, most first */
    size_t n_langs;
    /* An update pass that has committed files but not finished (a first
     * index under way, or one stopped half way): the files it had written
     * out of those it found, and the process writing it (0: none now, the
     * pass stopped; the next update finishes it). pass_total 0: none, the
     * index is whole. */
    int64_t pass_done, pass_total;
    int pass_pid;
} IdxStatus;

CrErr idx_status(IdxStore *st, IdxStatus *out, ErrInfo *e);
/* Whether the index holds no indexed file (0 when it holds one, or the
 * store cannot say), with *skipped the files it saw and did not index: what
 * an ask says about an empty index, without counting every row (a fifth of
 * a one-shot ask on the kernel). */
int idx_status_empty(IdxStore *st, int64_t *skipped);
/* The pass fields of idx_status alone (pass_done, pass_total, pass_pid;
 * what idx_status also fills), the rest of *out left as it is: what
 * marks an answer from a partial index. */
CrErr idx_status_pass(IdxStore *st, IdxStatus *out, ErrInfo *e);
/* The chunk and edge counts alone: what `coderag index` prints (a count
 * is a walk of a table's smallest b-tree: the three others cost ~11 ms at
 * the Linux kernel's size, pages cached). */
CrErr idx_status_sizes(IdxStore *st, int64_t *chunks, int64_t *edges, ErrInfo *e);

/* Checks the database's own consistency (SQLite's quick_check) and that no
 * row is orphaned or duplicated: every chunk's file, every search text's
 * chunk, both ends of every edge, every symbol, import and ref's chunk or
 * file exist, and no file has overlapping chunks; and that the search
 * postings in use (snapshot and what changed since) equal a build from the
 * search text. CR_ECORRUPT with the first problem found in e. Damage
 * SQLite proves (quick_check fails, a read meets a damaged page) is recorded
 * even through a read-only store (index.db.damaged, beside the file, which
 * stays as it is): later opens refuse it and the next `coderag index`
 * rebuilds; e then says so. */
CrErr idx_verify(IdxStore *st, ErrInfo *e);

typedef struct IdxSkipped {
    char *path;   /* relative to the root */
    char *reason; /* "binary", "not-utf8", "too-large", "unreadable" */
} IdxSkipped;

/* Files seen but not indexed. Caller frees with idx_skipped_free. */
CrErr idx_skipped(IdxStore *st, IdxSkipped **out, size_t *n_out, ErrInfo *e);
void idx_skipped_free(IdxSkipped *v, size_t n);

/* ---------------------------------------------------------------- chunks */

typedef enum {
    IDX_KIND_MODULE,   /* module-level code: imports, constants, statements */
    IDX_KIND_CLASS,    /* class header, docstring and class-level statements */
    IDX_KIND_FUNCTION, /* top-level (or nested-in-block) function */
    IDX_KIND_METHOD,   /* function defined directly in a class body */
    IDX_KIND_SECTION,  /* docs and config: a Markdown/reST section or a window of text */
} IdxKind;

/* The i-th file extension the index reads (".py", ".go", ...; static), or
 * NULL past the last. For editors' file watchers. */
const char *idx_source_ext(size_t i);
/* Whether a path is a test file by its language's conventions (Go's
 * _test.go, Java's *Test.java, a JS spec, a Rust tests/ folder...); Python
 * has none, so its ranking is as before. */
int idx_is_test_path(const char *path);
/* Whether the indexed file with this id is a test file (idx_is_test_path:
 * IDX_TEST_PATH), and whether its language has test modules
 * (IDX_TEST_MODULES: idx_chunk_in_test_module can say yes for its chunks). */
enum { IDX_TEST_PATH = 1, IDX_TEST_MODULES = 2 };
int idx_file_test_marks(IdxStore *st, int64_t file_id);
/* How central a file is: the distinct folders, but its own, whose code
 * calls a definition of it (calls, functions named as values, macro uses),
 * at most IDX_FANIN_CAP; 0 when nothing outside its folder does. */
#define IDX_FANIN_CAP 256
int idx_file_fanin(IdxStore *st, int64_t file_id);
/* Appends the symbol of the chunk with this id ("" for module code) to
 * *out and, when helper is not NULL, sets *helper to whether it is a whole
 * unit no longer than its language's helper definitions (a row's
 * helper_lines); 0 when it is not indexed (nothing appended). One row
 * read, where idx_chunk_get reads every column. */
int idx_chunk_symbol(IdxStore *st, int64_t chunk_id, StrBuf *out, int *helper);
/* Appends the path (relative to the root) of the indexed file with this id
 * to *out; 0 when there is none (nothing appended). */
int idx_file_path(IdxStore *st, int64_t file_id, StrBuf *out);
/* Whether the chunk with this id is in a test module of its language
 * (idx_lang_is_test_symbol; Rust's `mod tests`); its file is not asked. */
int idx_chunk_in_test_module(IdxStore *st, int64_t chunk_id);

/* Whether a path has an extension the index reads. */
int idx_is_source_path(const char *path);
/* Whether the index may read a file at this path: an extension it reads,
 * or none (a script, indexed when its "#!" line names a known interpreter;
 * idx_update_file decides). For the LSP's saved and watched files. */
int idx_may_index_path(const char *path);

/* The tag of a Markdown code fence around the code of a path's language
 * ("python", "go", "cpp", "typescript"), or "" for a language without one or
 * a path the index does not read by name. Static. */
const char *idx_fence_tag(const char *path);

/* What the code graph cannot see in a path's language (its row's
 * graph_limits: "getattr/setattr, decorators' wrappers, eval/exec"), or
 * NULL for a language that says nothing or a path the index does not
 * read. Static. */
const char *idx_graph_limits(const char *path);

/* Whether a method's callers in path's language include those of the
 * same-named methods of its class's bases and subclasses (its row's
 * base_callers: a call through the base may run the override). Static. */
int idx_base_callers(const char *path);

/* Whether definitions of one name next to each other in path's language
 * are told apart by a call's arity (its row's overloads: C++'s `Error(msg,
 * …)` and `Error(msg, va_list)` are two definitions, each with its own
 * callers and callees), not pieces of one: with signatures sig_a and
 * sig_b of symbol, whether their parameter counts differ (a definition per
 * `#if` branch takes as many: one function); NULL sig_a: whether the
 * row tells any apart. Static. */
int idx_overloads_apart(const char *path, const char *symbol, const char *sig_a, const char *sig_b);

/* Whether chain (a receiver chain as written in path's source: `this.a.b`)
 * is written on the object a method runs on: its first word is one its
 * language's row names so (`this`, `self`, `cls`), or `self`. */
int idx_chain_on_self(const char *path, const char *chain);

/* Whether the n bytes at w (lower case) are a syntax word of a language the
 * index reads (its row's keywords: `else`, `return`, `self`, `func`): words
 * most files hold, which never make a question's match by themselves. */
int idx_is_syntax_word(const char *w, size_t n);

/* The index folder's name under the root when no index folder is set
 * (<root>/.coderag): never a source of the index, nor a root marker. */
#define IDX_DIR_NAME ".coderag"
/* The database's file name in an index folder. */
#define IDX_DB_NAME "index.db"

/* The i-th VCS metadata folder name (".git", ".hg", ".svn", ".jj"; static),
 * or NULL past the last: never scanned nor watched, and a folder holding
 * one (a folder, or a file: worktrees, submodules) is a repository root
 * (the root rule). */
const char *idx_vcs_dir(size_t i);
/* Whether the len bytes at name are one of idx_vcs_dir's names. */
int idx_is_vcs_dir(const char *name, size_t len);

/* The i-th project marker of the languages the index reads ("pyproject.toml",
 * "go.mod", "Cargo.toml", "package.json"...; each once, static), or NULL past
 * the last: a folder holding one is a project root (the root rule). */
const char *idx_project_marker(size_t i);

/* Stable names for kinds: "module", "class", "function", "method", "section". */
const char *idx_kind_name(IdxKind k);

typedef struct IdxChunk {
    int64_t id;
    int64_t file_id;
    char *path;      /* relative to the root, '/'-separated */
    char *module;    /* dotted module name of the file: "pkg.sub.mod" */
    char *symbol;    /* dotted name inside the module: "Class.method"; "" for module code */
    char *signature; /* one-line header ("def f(a, b):"); "" for module code */
    char *docstring; /* first docstring line(s); "" when none */
    uint32_t start_line, end_line; /* 1-based, inclusive */
    uint32_t window; /* 0: whole unit; k >= 1: k-th window of a unit split at 100 lines */
    IdxKind kind;
    int64_t parent_id; /* enclosing class chunk for methods and nested classes; 0: none */
    char hash[17];     /* content hash of lines start..end */
    int cont; /* continues a unit (a later window or class run): its text repeats the signature */
} IdxChunk;

void idx_chunk_release(IdxChunk *c);

/* Loads one chunk. CR_ENOENT when the id is not (or no longer) indexed. */
CrErr idx_chunk_get(IdxStore *st, int64_t id, IdxChunk *out, ErrInfo *e);

/* All chunks of a file (by relative path), in line order.
 * Caller frees with idx_chunks_free. */
CrErr idx_file_chunks(IdxStore *st, const char *path, IdxChunk **out, size_t *n_out, ErrInfo *e);
/* Whether the file (by relative path) has a chunk; 0 when the store
 * cannot say. */
int idx_file_has_chunks(IdxStore *st, const char *path);
/* The same by file id, each chunk's outline alone: id, file_id, symbol,
 * lines, window, kind, cont and signature (no text, path or module: NULL). */
CrErr idx_file_outline(IdxStore *st, int64_t file_id, IdxChunk **out, size_t *n_out, ErrInfo *e);
void idx_chunks_free(IdxChunk *v, size_t n);

/* ---------------------------------------------------------------- search */

typedef struct IdxHit {
    int64_t chunk_id;
    int64_t file_id;
    IdxKind kind;
    double score;    /* larger is better */
    double coverage; /* BM25: share of the question's term weight (idf) the chunk holds, 0-1 */
} IdxHit;

/* BM25F over code-aware tokens (identifiers whole and split into subwords,
 * stemmed by FTS5's porter tokenizer; name, path, docstring and body
 * weighted separately), best first, from postings mapped from their
 * snapshot (or built from the search text) on first use and kept current
 * by updates. Adjacent question
 * words also count joined as one snake_case identifier when the code has
 * it. Any text is accepted as a query. Caller frees *out with free(). */
CrErr idx_search_bm25(IdxStore *st, const char *query, size_t limit, IdxHit **out, size_t *n_out,
                      ErrInfo *e);

/* The same over words idx_query_words made (a question read once). */
CrErr idx_search_bm25_words(IdxStore *st, const char *words, size_t limit, IdxHit **out,
                            size_t *n_out, ErrInfo *e);

/* How many units (chunks) search ranks: the index's size as ranking sees
 * it, read from the loaded postings (no table walk). */
CrErr idx_search_units(IdxStore *st, size_t *out, ErrInfo *e);

/* Appends the words of a question that search uses: identifiers whole and
 * split into subwords, lowercased, without stopwords, space-separated. */
void idx_query_words(const char *query, StrBuf *out);

/* Loads the in-memory search structures now (the first search does it
 * otherwise), so that a one-shot caller can keep it out of query timing. */
CrErr idx_warm(IdxStore *st, ErrInfo *e);

/* A read transaction over the reads until idx_read_end: they see one
 * state of the index and take the database's lock once, where each read
 * alone takes and drops it (a question makes a few hundred). Returns 1
 * when it began one (pass it to idx_read_end), 0 when a transaction was
 * already open or none could begin (the reads then go one at a time).
 * Nothing may be written between the two. */
int idx_read_begin(IdxStore *st);
void idx_read_end(IdxStore *st, int began);

/* Dense search: the question embedded by the configured embedder, nearest
 * chunks by cosine, best first. CR_OK with no hits when there is no dense
 * leg (builtin) or no vectors yet. Caller frees *out with free(). */
CrErr idx_search_dense(IdxStore *st, const char *query, size_t limit, IdxHit **out, size_t *n_out,
                       ErrInfo *e);

/* Whether a dense leg is configured. */
int idx_has_dense(const IdxStore *st);

/* ---------------------------------------------------------------- graph */

typedef enum {
    IDX_EDGE_IMPORT,  /* chunk imports a module or name: dst is the module's code or the definition
                       */
    IDX_EDGE_CALL,    /* chunk calls (or instantiates) a definition */
    IDX_EDGE_INHERIT, /* class chunk subclasses a class */
    IDX_EDGE_CONTAIN, /* class chunk contains a method or nested class */
    IDX_EDGE_RAISE,   /* chunk raises or catches an exception class */
    IDX_EDGE_TYPE,    /* chunk names a type (declarations, casts): a use, not a call */
    IDX_EDGE_REFERENCE, /* chunk names a function as a value (a callback, a Python decorator
                         * without arguments): not a call */
    /* a macro's body calls a definition: a call of the macro is a call of the
     * definition (rtv_refs follows these); src == dst marks src as a macro */
    IDX_EDGE_EXPAND,
} IdxEdgeKind;

const char *idx_edge_kind_name(IdxEdgeKind k);

/* ---------------------------------------------------------------- preprocessor conditions (pp.c)
 */

/* Whether code under a preprocessor condition is compiled: decided by the
 * workspace's build configuration (compile_commands.json at the root or in
 * build/: each file's -D and -U, and the row's predefined macros) and the
 * macros the workspace defines; a macro nothing defines is not defined. */
typedef enum {
    IDX_BUILT_UNKNOWN, /* it depends on what neither says */
    IDX_BUILT_YES,
    IDX_BUILT_NO,
} IdxBuilt;

/* "built", "not built", "unknown". */
const char *idx_built_name(IdxBuilt b);
/* Both a and b: no when either is no, yes when both are yes. */
IdxBuilt idx_built_and(IdxBuilt a, IdxBuilt b);

/* The condition lines line..to of file_id are compiled under: the
 * innermost branch holding them all (a window of a long function that
 * starts inside a branch of its body is not under it); *cond as written,
 * the branches around it joined by &&, NULL when none (caller frees);
 * *built whether it holds (IDX_BUILT_YES when there is none). */
CrErr idx_pp_cond(IdxStore *st, int64_t file_id, uint32_t line, uint32_t to, char **cond,
                  IdxBuilt *built, ErrInfo *e);

/* The condition a call of `name` (its last component) written in the
 * chunk of lines from..to of file_id is compiled under: where its
 * definition calls name under a branch of its body, the least conditional
 * of the calls in those lines; else the chunk's (idx_pp_cond). */
CrErr idx_pp_site_cond(IdxStore *st, int64_t file_id, uint32_t from, uint32_t to, const char *name,
                       char **cond, IdxBuilt *built, ErrInfo *e);

/* The other definitions of chunk_id's symbol in its file (a function
 * defined once per #if branch, interleaved with others: the symbol table
 * names the first only), by line; none in a file without #if. Caller frees. */
CrErr idx_variant_chunks(IdxStore *st, int64_t chunk_id, int64_t **out, size_t *n_out, ErrInfo *e);

/* Whether the workspace has a build configuration (read again when it
 * changes on disk). */
int idx_pp_configured(IdxStore *st);

typedef struct IdxEdge {
    int64_t src; /* chunk id */
    int64_t dst; /* chunk id */
    IdxEdgeKind kind;
    IdxKind other_kind;   /* kind of the chunk at the far end (dst when outgoing) */
    int64_t other_file;   /* its file */
    uint32_t other_lines; /* its length in lines */
    int builds;           /* a construction or an operator (`Foo f;`, `a == b`), no call written */
} IdxEdge;

/* Edges leaving (outgoing != 0) or entering a chunk. Caller frees with free(). */
CrErr idx_edges(IdxStore *st, int64_t chunk_id, int outgoing, IdxEdge **out, size_t *n_out,
                ErrInfo *e);

/* Chunks defining a name: exact qualified name ("pkg.mod.Class.meth"), or,
 * when none is, every definition whose qualified name ends with `name` at a
 * component boundary: "meth" finds every meth, "Class.meth" finds
 * pkg.mod.Class.meth but not Other.meth. "::" reads as "." (Class::meth).
 * Caller frees with free(). */
CrErr idx_lookup_symbol(IdxStore *st, const char *name, int64_t **out, size_t *n_out, ErrInfo *e);

/* A call written from the global scope (`::f()`), as the index writes it
 * and a chain names it: "::.f", a top-level f (never a member of the class
 * around the call); its last part is f. */
#define IDX_REF_GLOBAL "::."
#define IDX_REF_GLOBAL_LEN 3

/* The definition (chunk id, 0: none) that the call of word written at
 * path:line reaches in the call graph: the graph's resolution of that
 * call, its receiver's type and the class's bases included. chain: the
 * dotted expression written up to word ("self.headers.get", "::.f"), or NULL;
 * when several calls of word share the line's chunk, the one written so
 * (else, for a chain with a receiver, the one on a typed receiver, else
 * the target all share); a bare name only as written, or as the class
 * around it qualifies it (a bare call of a member: "Class.word"). */
CrErr idx_call_target(IdxStore *st, const char *path, uint32_t line, const char *word,
                      const char *chain, int64_t *out, ErrInfo *e);

/* ---------------------------------------------------------------- source */

/* Appends lines start..end (1-based, inclusive; '\n'-separated as Python's ast
 * counts them) of a file (relative path) as they are on disk now.
 * CR_ENOENT when the file is gone, CR_EINVAL when the range is outside it.
 * *out_total (may be NULL) receives the file's line count. */
CrErr idx_read_lines(IdxStore *st, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                     uint32_t *out_total, ErrInfo *e);

/* The definition of symbol ("Class.method", as IdxChunk.symbol names it) in
 * text[0..len), the current content of the file at path (an unsaved buffer
 * too), chunked as the index chunks path's language (by extension, else by
 * "#!" line): the same symbol first, then the same last name inside a
 * parent of the same name, then the same last name; the nearest to line
 * near (1-based) among equals. 1 with *start..*end (1-based, inclusive: the
 * whole unit, every window and member), 0 when none is found, the language
 * is unknown, or symbol names path's module (module-level code). */
int idx_find_definition(const char *path, const char *text, size_t len, const char *symbol,
                        uint32_t near, uint32_t *start, uint32_t *end);
/* The same with the language's compiled query from sh (NULL: compiled for
 * this call alone, which takes ~200 ms for C++). */
int idx_find_definition_shared(IdxShared *sh, const char *path, const char *text, size_t len,
                               const char *symbol, uint32_t near, uint32_t *start, uint32_t *end);

/* Content hash of a span of text, as stored in IdxChunk.hash. */
void idx_hash_text(const char *text, size_t len, char out[17]);

#endif
