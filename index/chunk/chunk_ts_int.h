/*
 * chunk_ts_int.h - the generic tree-sitter chunker's state, shared by its
 * files: chunk_ts.c (query pass, units, lines), chunk_ts_doc.c (doc
 * comments and signatures), chunk_ts_refs.c (references after the units
 * are known). Internal to index/.
 */
#ifndef CODERAG_CHUNK_TS_INT_H
#define CODERAG_CHUNK_TS_INT_H

#include "chunk_emit.h"
#include "lang/lang.h"

typedef enum {
    CAP_NONE,
    CAP_DEF_FUNCTION,
    CAP_DEF_METHOD,
    CAP_DEF_CLASS,
    CAP_DEF_IMPL,
    CAP_DEF_NAMESPACE,
    CAP_DEF_TYPE,
    CAP_DEF_MACRO,
    CAP_DEF_CONSTANT,
    CAP_NAME,
    CAP_RECEIVER,
    CAP_BODY,
    CAP_REF_CALL,
    CAP_REF_TYPE,
    CAP_REF_INHERIT,
    CAP_IMPORT,
    CAP_PACKAGE,
    CAP_REF_FROM,
    CAP_REF_VALUE,
    CAP_REF_EXPAND,
    CAP_LOCAL,
    CAP_PP_IF,     /* a conditional's first branch (chunk_ts_pp.c) */
    CAP_PP_DEFINE, /* a macro definition */
    CAP_VAR_NAME,  /* a variable of a known type (chunk_ts_types.c) */
    CAP_VAR_TOP,   /* the same, declared at the top of the file (a fact of its module) */
    CAP_VAR_ADDR,  /* the same, holding an address (`T *p`): its operators are built in */
    CAP_VAR_TYPE,
    CAP_FIELD_NAME, /* a field of a known type */
    CAP_FIELD_TYPE,
    CAP_RESULT_TYPE, /* a function's result type */
    CAP_VAR_ELEM,    /* a variable declared as an array: its element type */
    CAP_FIELD_ELEM,  /* a field declared as an array: its element type */
    CAP_ARG_FN,      /* a function passed as an argument, or a parameter typed as one */
    CAP_ARG_PARAM,   /* a parameter of it */
    CAP_ARG_TYPE,    /* in a declaration: that parameter's declared type */
    CAP_ARG_CALLEE,  /* at a call: the function called */
    CAP_ARG_NAME,    /* at a call: the parameter's name (untyped) */
    CAP_INTERFACE,   /* a class types implement by defining its methods (IDX_REF_INTERFACE) */
    CAP_STORE_FIELD, /* a designated initializer's field (REF_STORE) */
    CAP_STORE_VALUE, /* the function it stores */
    CAP_REF_ARGS,    /* a call's arguments: its arity (ChunkRef.argc) */
    CAP_REF_WRITER,  /* the macro a definition is written by (IDX_REF_WRITER) */
    CAP_RECV_TYPE,   /* a call's receiver written as a value of a type (`(T{…}).m()`) */
    CAP_RECV_CALL,   /* the method called on it */
    CAP_REF_OPERAND, /* an operator's operand, a name: a call of its type's operator */
    CAP_REF_OP,      /* that operator (its symbol; a subscript's brackets) */
    CAP_REF_NEW,     /* a type whose object is built: a call of its constructor only */
} CapKind;

/* A name declared with a type (@var.*, @field.*; @result.type: name NULL),
 * at the line of its name. */
typedef struct TsTyped {
    uint32_t line;
    int field;
    int arg; /* a callback's parameter type in a declaration: the fact "=#k#j:T" (name "#k#j");
              * TS_TYPED_RECV: a call's receiver written as a value of type T (name: the method) */
    int top; /* declared at the top of the file (@var.top: a fact of the module with
              * package_vars; not a parameter of a function type in a top-level value) */
    /* holds an address (@var.address): no operator of T applies to it */
    int address;
    char *name, *type;
} TsTyped;

enum { TS_TYPED_RECV = 3 };

typedef struct TsDef {
    CapKind cap;
    TSNode node, name, body, receiver;
} TsDef;

typedef struct TsRun {
    ChunkEmit em; /* lines, units, emission (chunk_emit.c) */
    const IdxLang *lang;
    const TSLanguage *tl;
    TsDef *defs;
    size_t n_defs, cap_defs;
    ChunkRef *types; /* type references, emitted after the calls */
    size_t n_types, cap_types;
    size_t first_type; /* em.refs from here on are type references */
    ChunkRef *locals;  /* names declared (@local): .name and .line only */
    size_t n_locals, cap_locals;
    TsTyped *typed; /* variables, fields and results of a known type */
    size_t n_typed, cap_typed;
    int sig_unit;        /* the last unit made from a declaration without a body, or -1 */
    const ChunkSet *out; /* what the query pass collected (its preprocessor branches) */
    TSSymbol comment_syms[4];
    size_t n_comment_syms;
    StrBuf sb;
} TsRun;

static inline int chunk_ts__is_comment(const TsRun *r, TSSymbol s)
{
    for (size_t i = 0; i < r->n_comment_syms; i++)
        if (r->comment_syms[i] == s) return 1;
    return 0;
}

/* The comments right above n as its doc comment (caller frees), or NULL;
 * *out_line: the first line of the comment. */
char *idx_chunk_ts_doc(TsRun *r, TSNode n, uint32_t *out_line);
/* The one-line header of d (caller frees). */
char *idx_chunk_ts_signature(TsRun *r, const TsDef *d);
/* Bare names of class members become the members' symbols (rows with
 * implicit_this); after idx_emit_build, before idx_emit_refs_out. */
void idx_chunk_ts_member_refs(TsRun *r);
/* The calls written in a macro's unparsed body (node: an @ref.expand
 * capture) as REF_EXPAND refs, and the mark that makes its definition a
 * macro (an empty name). */
void idx_chunk_ts_expand_refs(TsRun *r, TSNode body);
/* Drops the calls written outside every unit (rows with no_module_calls),
 * the macro marks not at the start of their unit, and the values that name
 * a variable their unit declares (r->locals, freed); after idx_emit_build. */
void idx_chunk_ts_fix_refs(TsRun *r);
/* (chunk_ts_pp.c) The branches of the conditional that starts at top, each
 * with its whole condition, and a macro definition, into out->pp. */
void idx_chunk_ts_pp_if(TsRun *r, TSNode top, ChunkSet *out);
void idx_chunk_ts_pp_define(TsRun *r, TSNode def, ChunkSet *out);
/* The calls a definition makes under a branch of its body (after
 * idx_emit_build): each call of such a name in it, as a PP_SITE fact. */
void idx_chunk_ts_pp_sites(TsRun *r, ChunkSet *out);
/* Whether lines a and b are in different preprocessor branches. */
int idx_chunk_ts_pp_apart(const TsRun *r, uint32_t a, uint32_t b);
/* A definition's or a type's name as a symbol part: "Foo::bar" ->
 * "Foo.bar", generic arguments and reference marks dropped ("*Foo",
 * "&'a Foo<T>" -> "Foo"); a word after a blank starts it again. Caller
 * frees. (chunk_ts_types.c) */
char *idx_chunk_ts_name_text(TsRun *r, TSNode n);
/* (chunk_ts_types.c) The types of a call's first arguments (the named
 * children of args but skip: an operator's other operand) as the row's
 * literal_types say, into ref->argt; the names among them are typed by
 * idx_chunk_ts_typed_refs. */
void idx_chunk_ts_arg_types(TsRun *r, ChunkRef *ref, TSNode args, TSNode skip);
/* (chunk_ts_types.c) One match's @var.*, @field.* or @result.type
 * captures, kept in r->typed. */
void idx_chunk_ts_typed_capture(TsRun *r, const TSQueryMatch *m, const CapKind *kinds);
/* Calls on a variable of a known type become calls on its type
 * ("x.m" -> "T().m"; `self.a.m` in a method -> "Class().a.m"), fields and
 * results become type facts ("=a:T", "=():T") on their unit; r->typed
 * freed. After idx_chunk_ts_fix_refs. */
void idx_chunk_ts_typed_refs(TsRun *r);
/* Calls of the file's own functions first among em.refs[0, first_type). */
void idx_chunk_ts_local_calls_first(TsRun *r);

#endif
