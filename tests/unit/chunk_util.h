/*
 * chunk_util.h - the chunker's tests (test_chunk*.c): expected chunks and
 * references, the invariants every chunk set must satisfy, and running a
 * table of cases.
 */
#ifndef CODERAG_CHUNK_UTIL_H
#define CODERAG_CHUNK_UTIL_H

#include "index/chunk/lang/lang.h"
#include "index/idx_int.h"
#include "test.h"

#include <stdlib.h>

typedef struct ExpChunk {
    IdxKind kind;
    uint32_t start, end, window;
    const char *symbol;
    const char *signature;
    const char *doc; /* prefix of the docstring; NULL: none */
    int parent;
} ExpChunk;

typedef struct ExpRef {
    RefKind kind;
    int chunk;
    uint32_t line; /* 0 ends a list */
    const char *name;
    int level;
    const char *module, *member, *alias;
} ExpRef;

typedef struct ChunkCase {
    const char *name;
    const char *src;
    uint32_t max_lines;
    int had_errors;
    const ExpChunk *chunks; /* ends with start == 0 */
    const ExpRef *refs;     /* ends with line == 0 */
} ChunkCase;

/* clang-format off */
#define M(s, e, doc) {IDX_KIND_MODULE, s, e, 0, "", "", doc, -1}
#define END_CHUNKS {IDX_KIND_MODULE, 0, 0, 0, NULL, NULL, NULL, -1}
#define CALL(c, l, n) {REF_CALL, c, l, n, 0, NULL, NULL, NULL}
#define INHERIT(c, l, n) {REF_INHERIT, c, l, n, 0, NULL, NULL, NULL}
#define RAISE(c, l, n) {REF_RAISE, c, l, n, 0, NULL, NULL, NULL}
#define VALUE(c, l, n) {REF_VALUE, c, l, n, 0, NULL, NULL, NULL}
#define TYPE(c, l, n) {REF_TYPE, c, l, n, 0, NULL, NULL, NULL}
#define IMPORT(c, l, lvl, mod, mem, al) {REF_IMPORT, c, l, NULL, lvl, mod, mem, al}
#define END_REFS {REF_CALL, 0, 0, NULL, 0, NULL, NULL, NULL}
/* clang-format on */

/* ---------------------------------------------------------------- invariants */

static inline int line_is_code(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v'))
        p++;
    return p < end && *p != '#';
}

static inline int streq0(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* What every chunk set must satisfy: ranges inside the file, line order,
 * windows no longer than max_lines and adjacent, valid parents, no line in
 * two chunks, every code line in exactly one, references inside their chunk. */
static inline void check_invariants(const char *what, const char *src, size_t len,
                                    uint32_t max_lines, const ChunkSet *s)
{
    int before = test_state_.failed_checks;
    uint32_t max = max_lines ? max_lines : 100;
    size_t n = count_lines(src, len);
    int *cov = calloc(n + 2, sizeof *cov);
    for (size_t i = 0; i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        CHECK(d->start_line >= 1 && d->start_line <= d->end_line && d->end_line <= n);
        if (!(d->start_line >= 1 && d->start_line <= d->end_line && d->end_line <= n)) continue;
        CHECK(d->end_line - d->start_line + 1 <= max);
        if (i > 0) CHECK(s->chunks[i - 1].end_line < d->start_line);
        if (d->window > 1) {
            CHECK(i > 0 && s->chunks[i - 1].window == d->window - 1 &&
                  s->chunks[i - 1].end_line + 1 == d->start_line &&
                  streq0(s->chunks[i - 1].symbol, d->symbol));
        }
        if (d->parent >= 0) {
            CHECK((size_t)d->parent < i && s->chunks[d->parent].kind == IDX_KIND_CLASS &&
                  s->chunks[d->parent].window <= 1);
        }
        CHECK(d->symbol && d->name && d->signature);
        if (d->kind == IDX_KIND_MODULE) {
            CHECK(d->symbol && !*d->symbol && d->name && !*d->name && d->signature &&
                  !*d->signature);
            CHECK_INT(d->parent, -1);
        } else if (d->symbol && d->name) {
            const char *dot = strrchr(d->symbol, '.');
            CHECK_STR(d->name, dot ? dot + 1 : d->symbol);
            CHECK(*d->name && *d->signature);
        }
        for (uint32_t l = d->start_line; l <= d->end_line; l++)
            cov[l]++;
    }
    const char *p = src, *end = src + len;
    for (size_t l = 1; l <= n; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (cov[l] > 1 || (line_is_code(p, le) && cov[l] != 1)) {
            CHECK(cov[l] <= 1);
            CHECK(!line_is_code(p, le) || cov[l] == 1);
            fprintf(stderr, "  line %zu covered %d times\n", l, cov[l]);
            break;
        }
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        const ChunkRef *r = &s->refs[i];
        CHECK(r->chunk >= 0 && (size_t)r->chunk < s->n_chunks);
        if (r->chunk < 0 || (size_t)r->chunk >= s->n_chunks) continue;
        const ChunkDef *d = &s->chunks[r->chunk];
        if (r->kind == REF_INHERIT)
            CHECK(d->kind == IDX_KIND_CLASS || d->kind == IDX_KIND_FUNCTION ||
                  d->kind == IDX_KIND_METHOD || d->kind == IDX_KIND_MODULE);
        else if (d->kind != IDX_KIND_MODULE && d->kind != IDX_KIND_CLASS)
            /* (a Python decorator's call runs in the module's or the class's code) */
            CHECK(r->line >= d->start_line && r->line <= d->end_line);
        if (r->kind == REF_IMPORT)
            CHECK(r->module && r->alias && *r->alias && !r->name);
        else
            CHECK(r->name && *r->name && !r->module && !r->member && !r->alias);
    }
    free(cov);
    if (test_state_.failed_checks != before) fprintf(stderr, "  invariants of %s\n", what);
}

/* ---------------------------------------------------------------- table */

static inline void dump_set(const ChunkSet *s)
{
    static const char *const rk[] = {"IMPORT", "CALL",  "INHERIT", "RAISE",
                                     "TYPE",   "VALUE", "EXPAND"};
    for (size_t i = 0; i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        fprintf(stderr, "  [%zu] %s %u-%u w%u \"%s\" \"%s\" doc=%s parent=%d\n", i,
                idx_kind_name(d->kind), d->start_line, d->end_line, d->window, d->symbol,
                d->signature, d->docstring ? d->docstring : "(null)", d->parent);
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        const ChunkRef *r = &s->refs[i];
        fprintf(stderr, "  ref %s chunk=%d line=%u name=%s level=%d module=%s member=%s alias=%s\n",
                rk[r->kind], r->chunk, r->line, r->name ? r->name : "-", r->level,
                r->module ? r->module : "-", r->member ? r->member : "-",
                r->alias ? r->alias : "-");
    }
}

static inline int ref_matches(const ChunkRef *a, const ExpRef *x)
{
    if ((int)a->kind != (int)x->kind || a->chunk != x->chunk || a->line != x->line) return 0;
    if (x->kind == REF_IMPORT)
        return a->level == x->level && streq0(a->module, x->module) &&
               streq0(a->member, x->member) && streq0(a->alias, x->alias);
    return streq0(a->name, x->name);
}

static inline void check_set(const char *name, const char *src, size_t len, uint32_t max_lines,
                             const ChunkSet *s, const ExpChunk *xc, const ExpRef *xr)
{
    int before = test_state_.failed_checks;
    size_t nx = 0, nr = 0;
    while (xc[nx].start)
        nx++;
    while (xr[nr].line)
        nr++;
    check_invariants(name, src, len, max_lines, s);
    CHECK_INT(s->n_chunks, nx);
    for (size_t i = 0; i < nx && i < s->n_chunks; i++) {
        const ChunkDef *d = &s->chunks[i];
        const ExpChunk *x = &xc[i];
        CHECK_INT(d->kind, x->kind);
        CHECK_INT(d->start_line, x->start);
        CHECK_INT(d->end_line, x->end);
        CHECK_INT(d->window, x->window);
        CHECK_STR(d->symbol, x->symbol);
        CHECK_STR(d->signature, x->signature);
        CHECK_INT(d->parent, x->parent);
        if (x->doc)
            CHECK(d->docstring && !strncmp(d->docstring, x->doc, strlen(x->doc)));
        else
            CHECK(d->docstring == NULL);
    }
    CHECK_INT(s->n_refs, nr);
    char *used = calloc(s->n_refs + 1, 1);
    for (size_t j = 0; j < nr; j++) {
        size_t i;
        for (i = 0; i < s->n_refs; i++)
            if (!used[i] && ref_matches(&s->refs[i], &xr[j])) break;
        CHECK(i < s->n_refs);
        if (i < s->n_refs)
            used[i] = 1;
        else
            fprintf(stderr, "  missing ref #%zu (line %u, %s)\n", j, xr[j].line,
                    xr[j].name ? xr[j].name : xr[j].module);
    }
    free(used);
    if (test_state_.failed_checks != before) {
        fprintf(stderr, "  in case %s; got:\n", name);
        dump_set(s);
    }
}

/* Chunks every case and compares with what it expects. */
static inline void run_cases(const ChunkCase *cases, size_t n)
{
    Chunker *ck = idx_chunker_new();
    for (size_t i = 0; i < n; i++) {
        const ChunkCase *tc = &cases[i];
        ChunkSet s = {0};
        ErrInfo e = {0};
        size_t len = strlen(tc->src);
        CHECK_INT(idx_chunker_run_lang(ck, idx_lang_by_name("python"), tc->src, len, tc->max_lines,
                                       &s, &e),
                  CR_OK);
        CHECK_INT(s.had_errors, tc->had_errors);
        check_set(tc->name, tc->src, len, tc->max_lines, &s, tc->chunks, tc->refs);
        idx_chunk_set_release(&s);
        CHECK(s.chunks == NULL && s.n_chunks == 0 && s.refs == NULL && s.n_refs == 0);
    }
    idx_chunker_free(ck);
    idx_chunker_free(NULL);
    idx_chunk_set_release(NULL);
}

/* The invariants over every case's source with windows of 3 lines. */
static inline void cases_invariants(const ChunkCase *cases, size_t n)
{
    Chunker *ck = idx_chunker_new();
    for (size_t i = 0; i < n; i++) {
        ChunkSet s = {0};
        size_t len = strlen(cases[i].src);
        CHECK_INT(
            idx_chunker_run_lang(ck, idx_lang_by_name("python"), cases[i].src, len, 3, &s, NULL),
            CR_OK);
        check_invariants(cases[i].name, cases[i].src, len, 3, &s);
        idx_chunk_set_release(&s);
    }
    idx_chunker_free(ck);
}

#endif
