/*
 * python_int.h - the parts of Python's chunker (python.c: the walk and units;
 * python_refs.c: names, docstrings and references; python_recover.c:
 * re-parsing after syntax errors). Internal to index/chunk/lang.
 */
#ifndef CODERAG_PYTHON_INT_H
#define CODERAG_PYTHON_INT_H

#include "../chunk_emit.h"
#include "lang.h"

#include <string.h>
#include <tree_sitter/api.h>

#define CHUNK__SYM_ERROR ((TSSymbol)-1)

/* The prefix of a call reference that is an attribute read through a typed
 * receiver (IDX_REF_READ, for graph_types.c). */
#define IDX_PY_READ IDX_REF_READ

typedef struct ChunkSyms {
    TSSymbol module, block, comment, function_definition, class_definition, decorated_definition,
        decorator, import_statement, import_from_statement, future_import_statement, aliased_import,
        dotted_name, relative_import, import_prefix, wildcard_import, call, attribute, identifier,
        subscript, raise_statement, except_clause, except_group_clause, expression_statement,
        string, concatenated_string, tuple, parenthesized_expression, as_pattern, colon, assignment,
        typed_parameter, typed_default_parameter, for_statement, for_in_clause,
        augmented_assignment, return_statement, if_statement, not_operator;
    /* expression kinds whose subtree holds no statement (python_types.c) */
    TSSymbol bare[20];
    size_t n_bare;
    TSFieldId f_name, f_body, f_definition, f_superclasses, f_module_name, f_alias, f_function,
        f_object, f_attribute, f_value, f_cause, f_left, f_right, f_type, f_parameters,
        f_return_type, f_condition, f_consequence, f_alternative, f_argument, f_arguments;
} ChunkSyms;

/* Python's chunker (python.c), which predates the table: its own walk
 * (docstrings in bodies, decorators, error-recovery re-parses), the
 * row's chunk hook. */
typedef struct PyChunker PyChunker;
struct PyChunker {
    TSParser *parser;
    ChunkSyms sy;
};

enum { CHUNK__BLANK = EMIT_BLANK, CHUNK__COMMENT = EMIT_COMMENT, CHUNK__CODE = EMIT_CODE };
enum { CHUNK__CTX_MODULE, CHUNK__CTX_CLASS, CHUNK__CTX_FUNC };

/* A definition that gets chunks of its own. */
typedef struct ChunkUnit {
    IdxKind kind;
    int parent;          /* unit of the enclosing class, or -1 */
    uint32_t start, end; /* lines, decorators included */
    char *symbol;
    const char *name; /* last component, inside symbol */
    char *signature;
    char *docstring;
    TSNode def;       /* function_definition or class_definition */
    TSNode outer;     /* its decorated_definition, or def */
    uint32_t sig_end; /* byte after the header's ':' */
} ChunkUnit;

/* Context a node gives its children. */
typedef struct ChunkFrame {
    TSSymbol sym;
    uint8_t ctx;
    int unit;    /* innermost unit (class for CTX_CLASS), or -1 */
    int pending; /* decorated_definition: unit of its definition */
    /* inside the decorator of a module's or a class's definition: where its
     * calls are made, the class's unit or IDX_EMIT_MODULE (the decorator runs
     * where the definition is written, not in it); -1 elsewhere */
    int deco;
    /* inside a module-level `if` branch the platform read for (Linux, as C's
     * rows' predefined macros) never runs (`if sys.platform.startswith("win")`):
     * its imports bind nothing */
    int dead;
} ChunkFrame;

typedef struct ChunkRun {
    ChunkEmit em; /* the line table and chunk emission shared with other languages */
    const ChunkSyms *sy;
    const char *src;
    uint32_t len;
    uint32_t max_lines;
    uint32_t n_lines;
    uint32_t *line_start; /* em.line_start: [1..n_lines+1]; [n_lines+1] = len */
    uint8_t *line_kind;   /* em.line_kind: [1..n_lines] */
    uint8_t *cut;         /* em.cut: a statement of the line's owner starts here */
    ChunkUnit *units;
    size_t n_units, cap_units;
    ChunkRef *refs; /* .chunk holds a unit to attribute to, or -1 (by line) */
    size_t n_refs, cap_refs;
    uint32_t *comments; /* start/end byte pairs in document order */
    size_t n_comments, cap_comments;
    ChunkFrame *frames;
    size_t cap_frames;
    TSNode *chain;
    size_t cap_chain;
    TSTreeCursor aux, aux2;
    StrBuf sb, sb2;
    char *mod_doc;
    uint32_t mod_doc_line;
    uint32_t seg_end_byte;   /* nodes starting here or later belong to the next segment */
    const TSTreeCursor *cur; /* the walk's, on the visited node (its field in its parent) */
} ChunkRun;

static inline int py_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static inline uint32_t py_node_line(TSNode n)
{
    return ts_node_start_point(n).row + 1;
}

/* python_refs.c */
void idx_py_add_text(ChunkRun *r, StrBuf *sb, TSNode n);
/* Docstring of a body (block or module). Caller frees. */
char *idx_py_docstring(ChunkRun *r, TSNode body, uint32_t *out_line);
ChunkRef *idx_py_ref_push(ChunkRun *r, RefKind kind, int unit, TSNode at);
/* An attribute read or written, not called: `self.name` is
 * "__class__().name", a member of the enclosing class or one it inherits, a
 * method only (graph_types.c; a property's setter, for a write); another chain `x.a.name` (read or
 * written) is IDX_PY_READ "x.a.name", kept when python_types.c types its receiver: a property's
 * getter or setter runs. */
void idx_py_ref_attr_read(ChunkRun *r, TSNode attr, int written, int unit);
void idx_py_ref_chain(ChunkRun *r, RefKind kind, int unit, TSNode n);
void idx_py_ref_import(ChunkRun *r, TSNode n);
void idx_py_ref_bases(ChunkRun *r, TSNode cls, int unit);
void idx_py_ref_caught(ChunkRun *r, TSNode v);
void idx_py_ref_raise(ChunkRun *r, TSNode n);

/* python_annot.c: annotations. Whether s[0..n) is a dotted name chain. */
int idx_py_is_chain(const char *s, size_t n);
/* The class an annotation (whitespace removed) names an instance of, into
 * out: `X`, `"X"`, `Optional[X]`, `X | None`, `Union[X, None]`, `Final[X]`,
 * `ClassVar[X]`; "@X" for `Type[X]` (the class itself); 0 for anything
 * else (containers, callables). */
int idx_py_annotation_type(const char *s, size_t n, StrBuf *out);
/* The item class of a container annotation (`t.Iterable[X]`; a generator's
 * first argument), or 0. */
int idx_py_annotation_item(const char *s, size_t n, StrBuf *out);
/* The value class of a mapping annotation (`t.Dict[str, X]`,
 * `Mapping[str, "X"]`), into out; 0 for none. */
int idx_py_annotation_value(const char *s, size_t n, StrBuf *out);
/* The first named child of n that is no comment (a null node: none). */
TSNode idx_py_first_named(const ChunkRun *r, TSNode n);
/* Whether node v's text is want. */
int idx_py_text_is(ChunkRun *r, TSNode v, const char *want);
/* The text of a node with whitespace and line continuations dropped. */
void idx_py_squeezed(ChunkRun *r, TSNode n, StrBuf *out);
/* What a call of function unit u returns, into out: its return annotation's
 * class, its own class for a method annotated `-> Self` or one that returns
 * `self`, `cls(...)`, `self.__class__(...)` or `type(self)(...)`
 * unannotated. 0 for none. */
int idx_py_return_type(ChunkRun *r, const ChunkUnit *u, StrBuf *out);
/* The item class of what a call of function unit u returns, from its
 * return annotation (`-> Iterator[X]`, `-> list[X]`, `-> Generator[X, None,
 * None]`), into out; 0 for none. */
int idx_py_return_items(ChunkRun *r, const ChunkUnit *u, StrBuf *out);
/* Whether unit u's definition has a decorator whose name ends in "property"
 * (`property`, `cached_property`, `functools.cached_property`). */
int idx_py_is_property(ChunkRun *r, const ChunkUnit *u);

/* python_vars.c: a variable a type is inferred for. */
enum { IDX_PY_BLOCKS = 4 };
typedef struct PyVar {
    int scope; /* unit index; -1: the module */
    int attr;  /* 1: an attribute of the class unit `scope` (self.name) */
    char *name;
    char *type;   /* NULL: unknown (assigned something else too) */
    int declared; /* by an annotation: what else it is assigned does not count */
    /* declared naming no one class (`h: Union[Headers, list]`): 1 while every
     * assignment agrees on one (`h = Headers(h)`, its type), 2 once not */
    int narrow;
    /* the type of its textually last assignment when that is a statement of
     * its function's body (no branch, no loop), the line it ends on: what
     * the variable holds below that line though `type` is unknown */
    char *tail;
    uint32_t tail_line;
    /* its class in the lines [from, to] of an `if isinstance(x, C):` block
     * (the first IDX_PY_BLOCKS ones; NULL: assigned there) */
    struct {
        char *type;
        uint32_t from, to;
    } in[IDX_PY_BLOCKS];
    int n_in;
} PyVar;

typedef struct PyTypes {
    PyVar *v;
    size_t n, cap;
    StrBuf t;
} PyTypes;

/* Notes an assignment (declared: by an annotation) of name[0..len) in scope
 * (a unit; -1 the module; attr 1: an attribute of class unit scope) of a
 * type (NULL: unknown): a second different one makes it unknown. */
void idx_py_var_put(PyTypes *t, int scope, int attr, const char *name, size_t len, const char *type,
                    int declared);
/* Another assignment of a function's variable (after idx_py_var_put),
 * ending on line: type when a statement of the function's body gives it
 * one, else NULL (a branch's, a loop's, an untyped one): its tail. An
 * assignment inside its `if isinstance` block ends that narrowing. */
void idx_py_var_tail(PyTypes *t, int scope, const char *name, size_t len, const char *type,
                     uint32_t line);
/* The variable's entry (its type may be NULL: unknown), NULL for none. */
const PyVar *idx_py_var_get(const PyTypes *t, int scope, int attr, const char *name, size_t len);
void idx_py_vars_release(PyTypes *t);
/* The class of the values of mapping obj (a variable or `self.name`
 * annotated `Dict[str, X]`, or given one so typed) into t->t: 1, else 0. */
int idx_py_values_of(ChunkRun *r, PyTypes *t, TSNode obj, int scope);
/* `d[k]`, `d.get(k)`, `self.d.get(k)` (also pop, setdefault) with d a
 * mapping annotated `Dict[K, V]`: a V, into t->t (1), or 0. */
int idx_py_mapping_value(ChunkRun *r, PyTypes *t, TSNode rhs, int scope);
/* `if not isinstance(x, C): return ...` (or raise), a statement of x's
 * function's body with no else: x is a C below it (its tail). */
void idx_py_note_guard(ChunkRun *r, PyTypes *t, TSNode st, int scope, int top);

/* python_types.c: rewrites the calls whose receiver has a type known in
 * the file ("self.h.get" -> "Headers().get"); roots: the trees' roots;
 * proxies: the row's receiver_proxies (name, qualified class pairs). */
void idx_py_type_refs(ChunkRun *r, TSNode *roots, size_t n_roots, const char *const *proxies);

/* python_recover.c: the first line after a syntax error that opens a
 * definition the tree lost, to re-parse from; 0 for none. */
uint32_t idx_py_find_cut(ChunkRun *r, TSNode root, uint32_t seg_line);

#endif
