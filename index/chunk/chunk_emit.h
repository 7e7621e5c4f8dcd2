/*
 * chunk_emit.h - what every chunker but Python's shares: the line table,
 * units (definitions or sections) and their line ownership, emission of
 * chunks split into windows, and references attributed to chunks.
 * Internal to index/.
 */
#ifndef CODERAG_CHUNK_EMIT_H
#define CODERAG_CHUNK_EMIT_H

#include "../idx_int.h"

enum { EMIT_BLANK, EMIT_COMMENT, EMIT_CODE };

/* A reference's unit meaning the module's code: the module run nearest above
 * its line, else the first below (by line when the module has none). */
enum { IDX_EMIT_MODULE = -2 };

typedef struct EmitUnit {
    IdxKind kind;
    int parent;          /* enclosing unit, or -1 */
    uint32_t start, end; /* lines */
    char *symbol;        /* "Outer.name" */
    const char *name;    /* last component, inside symbol */
    char *signature;
    char *doc;
    int first_chunk;
} EmitUnit;

typedef struct ChunkEmit {
    const char *src;
    uint32_t len, max_lines, n_lines;
    uint32_t *line_start; /* [1..n_lines+1] */
    uint8_t *line_kind;   /* [1..n_lines] */
    uint8_t *cut;         /* [1..n_lines]: a statement starts here (window cut point) */
    int *owner;           /* [1..n_lines] */
    int *line_chunk;      /* [1..n_lines] */
    EmitUnit *units;
    size_t n_units, cap_units;
    ChunkRef *refs; /* .chunk: a unit, IDX_EMIT_MODULE, or -1 (attributed by line) */
    size_t n_refs, cap_refs;
    const char *module_doc; /* borrowed: given to the module run holding module_doc_line */
    uint32_t module_doc_line;
} ChunkEmit;

/* Lines of src; every non-blank line starts as code. max_lines 0: 100. */
void idx_emit_init(ChunkEmit *em, const char *src, uint32_t len, uint32_t max_lines);
void idx_emit_release(ChunkEmit *em);
/* Byte of the first non-blank character of line l (or the line's end). */
uint32_t idx_emit_first_byte(const ChunkEmit *em, uint32_t l);
uint32_t idx_emit_line_of(const ChunkEmit *em, uint32_t byte);
/* Lines whose first character lies in the comment [a, b) become comment lines. */
void idx_emit_mark_comment(ChunkEmit *em, uint32_t a, uint32_t b);
/* Line of the last non-blank byte of [start, end). */
uint32_t idx_emit_end_line(const ChunkEmit *em, uint32_t start, uint32_t end);
/* Adds a unit (units must come in order of start line, outer before inner);
 * takes symbol, signature and doc (any may be NULL). Returns its id. */
int idx_emit_unit_add(ChunkEmit *em, IdxKind kind, int parent, uint32_t start, uint32_t end,
                      char *symbol, char *signature, char *doc);
/* The last class-like unit with this symbol (a Go receiver, Foo in Foo::bar), or -1. */
int idx_emit_unit_by_symbol(const ChunkEmit *em, const char *symbol);
ChunkRef *idx_emit_ref_push(ChunkEmit *em, RefKind kind, int unit, uint32_t line);
/* Chunks: every line to its innermost unit, runs of one owner emitted in
 * windows of at most max_lines; runs without code are dropped. */
void idx_emit_build(ChunkEmit *em, ChunkSet *out);
/* Moves the references to out, attributed to chunks, duplicates dropped. */
void idx_emit_refs_out(ChunkEmit *em, ChunkSet *out);

#endif
