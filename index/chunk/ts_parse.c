/*
 * ts_parse.c - one tree-sitter parse under the bounds every row shares
 * (docs/hardening.md, "per-file bounds"): a time budget that grows with the
 * file's size, and a tree that holds the whole file. Also the allocator
 * tree-sitter runs on, which turns a free of a pointer it never allocated
 * into a leak instead of a corrupt heap.
 *
 * Why: libtree-sitter 0.20 keeps a node's number of children in 16 bits. A
 * node that gets 65,536 or more (a run of 70,000 comments inside one
 * declaration, or error recovery over a parse stack that deep:
 * `x = (a)(a)…(a` with 25,000 casts, `a<b,a<b,…` in C++, `a ? b : a ? …`
 * in JavaScript) keeps only the last count mod 65,536 of them, and freeing
 * it frees a pointer inside its children's block: glibc aborts the process
 * ("free(): invalid size"), or worse. Each allocation made here starts with
 * a tag that names its own address; a free whose tag is not there frees the
 * block that pointer lies in, found by stepping back 65,536 children at a
 * time, or is refused (a leak, the heap stays whole); the tree, which no
 * longer spans the file, is refused by idx_ts_parse.
 */
#include "lang/lang.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The parse budget: tree-sitter's clock is wall time, so the budget is far
 * above what any real file needs on a loaded machine, in a sanitized build
 * or under valgrind (real sources parse in about 0.3 s of CPU per MiB;
 * callgrind runs 50 times slower: a 120 KB C++ test file of ninja took over
 * 7 s there). What it stops is error recovery whose cost grows with the
 * square of the input (166,000 Rust lifetimes `'a 'a …` in a body, 500 KB:
 * over 300 s; 87 s now). A guard against a hang, not a bound on cost. */
#define TS_PARSE_BASE_US (30ull * 1000 * 1000)
#define TS_PARSE_PER_MIB_US (120ull * 1000 * 1000)

/* The budgets of one parse, counted, never timed (docs/hardening.md, "parse
 * budgets, counted"): what tree-sitter holds for it at once, and what it
 * allocates in all (its work: error recovery copies its stacks again and
 * again), each at most a base plus so many bytes per byte parsed. Real
 * sources stay far below: on the kernel's 3,438 files over 48 KB at most 110
 * bytes held and 576 allocated per byte (kernel/bpf/core.c, 77 KB: 44 MB, half
 * its budget), on the dev corpora at most 135 allocated; a valid call of
 * 250,000 arguments holds 157 per byte. Error recovery goes far beyond: 500
 * KB of `a<b,` in C++ held 1.27 GB; 10,000 Rust lifetimes `'a 'a …` (30 KB)
 * allocate 812 MB in all, 2 s of CPU. Past either the parser is cancelled
 * and the file listed "too-costly". */
#define TS_MEM_BASE ((int64_t)64 << 20)
#define TS_MEM_PER_BYTE 256
#define TS_WORK_BASE ((int64_t)64 << 20)
#define TS_WORK_PER_BYTE 256

/* A file's work, counted (docs/hardening.md, "work per file"): each thing
 * the chunker does weighted by what it costs, in instructions (callgrind,
 * release build, on files made of nothing else: IDX_TS_WORK_*); a file may
 * do at most TS_FILE_WORK_BASE plus TS_FILE_WORK_PER_BYTE per byte of it,
 * the rest skipped "too-costly". Real sources stay below 0.74 of it
 * (sympy's generated rubi rules; the kernel's bpf/core.c, 77 KB, 0.53: the
 * base is for such small files), valid token-dense files pass it. */
#define TS_FILE_WORK_BASE ((uint64_t)1500 << 20)
#define TS_FILE_WORK_PER_BYTE 4000u

/* A kept tree (TsKeep) stays in memory between saves, one per language a
 * store saved: kept only for a text of at most this many bytes, so that a
 * store holds tens of MB at most whatever it saved last. */
#define TS_KEEP_MAX_BYTES ((size_t)1 << 20)

/* What the allocator counts for the parse running on its thread: bytes
 * allocated less bytes freed since it began (tree-sitter allocates on the
 * thread that calls it), the limit, and the flag tree-sitter polls every 100
 * parse actions (ts_parser_set_cancellation_flag). */
typedef struct {
    int64_t live, peak, limit;
    int64_t total, total_limit;
    uint64_t allocs, allocs_limit; /* blocks allocated: the file's work (IdxTsWork) */
    size_t cancel;
} TsBudget;

/* The thread's TsBudget while it parses: a key made once under
 * pthread_once and read-only after (none when the system has no key left:
 * no memory budget then); each thread's value is its own. */
static pthread_once_t ts_budget__once = PTHREAD_ONCE_INIT;
static struct {
    pthread_key_t key;
    int ok;
} ts_budget__key;

static void ts_budget__make_key(void)
{
    ts_budget__key.ok = !pthread_key_create(&ts_budget__key.key, NULL);
}

static void ts_budget__count(int64_t delta)
{
    TsBudget *b = ts_budget__key.ok ? pthread_getspecific(ts_budget__key.key) : NULL;
    if (!b) return;
    b->live += delta;
    if (delta > 0) b->total += delta;
    if (b->live > b->peak) b->peak = b->live;
    if (b->live > b->limit || b->total > b->total_limit) b->cancel = 1;
}

/* One block allocated (not a realloc: tree-sitter grows its arrays by
 * doubling, a few reallocs each). */
static void ts_budget__block(void)
{
    TsBudget *b = ts_budget__key.ok ? pthread_getspecific(ts_budget__key.key) : NULL;
    if (b && ++b->allocs > b->allocs_limit) b->cancel = 1;
}

/* The tag before each block: 8 bytes keep the alignment tree-sitter needs
 * (its largest members are pointers and 64-bit integers). */
#define TS_ALLOC_HEAD 8u
#define TS_ALLOC_TAG 0x5c0de7a6f1e5b00dull
/* 65,536 children of 8 bytes (a Subtree), and how many times a count may
 * have wrapped in a file tree-sitter can parse (2^32 bytes at most; 1 MiB
 * files by default, 16 wraps at most) */
#define TS_ALLOC_WRAP_BYTES (65536u * 8u)
#define TS_ALLOC_WRAPS 64u

static void *ts_alloc__tag(unsigned char *b)
{
    unsigned char *p = b + TS_ALLOC_HEAD;
    uint64_t tag = TS_ALLOC_TAG ^ (uint64_t)(uintptr_t)p;
    memcpy(b, &tag, sizeof tag);
    return p;
}

/* Whether p is a block ts_alloc__tag made (and not freed since). A pointer
 * tree-sitter computes wrongly lies inside one of its own blocks, past its
 * first 65,536 children, so the bytes before it can be read. */
static int ts_alloc__ours(const void *p)
{
    uint64_t tag;
    memcpy(&tag, (const unsigned char *)p - TS_ALLOC_HEAD, sizeof tag);
    return tag == (TS_ALLOC_TAG ^ (uint64_t)(uintptr_t)p);
}

static void *ts_alloc__malloc(size_t n)
{
    if (n > SIZE_MAX - TS_ALLOC_HEAD) n = SIZE_MAX - TS_ALLOC_HEAD; /* xmalloc says it */
    unsigned char *b = xmalloc(n + TS_ALLOC_HEAD);
    ts_budget__count((int64_t)malloc_usable_size(b));
    ts_budget__block();
    return ts_alloc__tag(b);
}

static void *ts_alloc__calloc(size_t n, size_t size)
{
    size_t all =
        size && n > (SIZE_MAX - TS_ALLOC_HEAD) / size ? SIZE_MAX - TS_ALLOC_HEAD : n * size;
    unsigned char *b = xcalloc(1, all + TS_ALLOC_HEAD);
    ts_budget__count((int64_t)malloc_usable_size(b));
    ts_budget__block();
    return ts_alloc__tag(b);
}

/* The block p lies in when p is a node's children as tree-sitter 0.20
 * computes them from a count kept mod 65,536: k times 65,536 children (8
 * bytes each) after the block's start, k >= 1. Each step back stays inside
 * that block until the start is found. NULL when none is (a leak then). */
static void *ts_alloc__block_of(void *p)
{
    for (size_t k = 1; k <= TS_ALLOC_WRAPS; k++) {
        unsigned char *q = (unsigned char *)p - k * TS_ALLOC_WRAP_BYTES;
        if (ts_alloc__ours(q)) return q;
    }
    return NULL;
}

static void ts_alloc__free(void *p)
{
    if (!p) return;
    if (!ts_alloc__ours(p) && !(p = ts_alloc__block_of(p))) return; /* refused: a leak */
    unsigned char *b = (unsigned char *)p - TS_ALLOC_HEAD;
    memset(b, 0, sizeof(uint64_t));
    ts_budget__count(-(int64_t)malloc_usable_size(b));
    free(b);
}

static void *ts_alloc__realloc(void *p, size_t n)
{
    if (!p) return ts_alloc__malloc(n);
    if (!ts_alloc__ours(p)) return ts_alloc__calloc(1, n); /* never seen: as the free */
    if (n > SIZE_MAX - TS_ALLOC_HEAD) n = SIZE_MAX - TS_ALLOC_HEAD;
    unsigned char *b = (unsigned char *)p - TS_ALLOC_HEAD;
    int64_t had = (int64_t)malloc_usable_size(b);
    b = xrealloc(b, n + TS_ALLOC_HEAD);
    ts_budget__count((int64_t)malloc_usable_size(b) - had);
    return ts_alloc__tag(b);
}

void idx_ts_process_init(void)
{
    /* through base's allocator, out of memory is "coderag: out of memory"
     * and exit 2, as everywhere else (tree-sitter's own prints its words and
     * exits 1, the usage code) */
    pthread_once(&ts_budget__once, ts_budget__make_key);
    ts_set_allocator(ts_alloc__malloc, ts_alloc__calloc, ts_alloc__realloc, ts_alloc__free);
}

/* Where bytes [from, to) of src end, as a point moved on from at (at the
 * byte from): rows by newline, columns in bytes, as tree-sitter counts. */
static TSPoint ts_keep__point(TSPoint at, const char *src, size_t from, size_t to)
{
    for (const char *p = src + from, *end = src + to; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            at.column += (uint32_t)(end - p);
            break;
        }
        at.row++;
        at.column = 0;
        p = nl + 1;
    }
    return at;
}

/* keep's tree edited into the tree of the text src (whose edit is the span
 * between the two texts' common start and common end); NULL when keep has
 * none. */
static TSTree *ts_keep__edited(TsKeep *keep, const char *src, size_t len)
{
    if (!keep || !keep->tree) return NULL;
    const char *old = keep->src;
    size_t n = keep->len, pre = 0, suf = 0;
    while (pre < n && pre < len && old[pre] == src[pre])
        pre++;
    while (suf < n - pre && suf < len - pre && old[n - 1 - suf] == src[len - 1 - suf])
        suf++;
    TSInputEdit ed;
    ed.start_byte = (uint32_t)pre;
    ed.old_end_byte = (uint32_t)(n - suf);
    ed.new_end_byte = (uint32_t)(len - suf);
    ed.start_point = ts_keep__point((TSPoint){0, 0}, src, 0, pre);
    ed.old_end_point = ts_keep__point(ed.start_point, old, pre, n - suf);
    ed.new_end_point = ts_keep__point(ed.start_point, src, pre, len - suf);
    ts_tree_edit(keep->tree, &ed);
    return keep->tree;
}

void idx_ts_keep_release(TsKeep *keep)
{
    if (!keep) return;
    if (keep->tree) ts_tree_delete(keep->tree);
    free(keep->src);
    memset(keep, 0, sizeof *keep);
}

void idx_ts_work_init(IdxTsWork *w, size_t len)
{
    w->done = w->ahead = 0;
    w->cap = TS_FILE_WORK_BASE + TS_FILE_WORK_PER_BYTE * (uint64_t)len;
}

CrErr idx_ts_work_add(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e)
{
    if (!w) return CR_OK;
    uint64_t room = w->cap > w->done ? w->cap - w->done : 0;
    if (n > room / each) {
        uint64_t want = n > (UINT64_MAX - w->done) / each ? UINT64_MAX : w->done + n * each;
        w->done = w->cap + 1;
        return err_set(e, CR_ETIMEOUT,
                       "more work than its size allows (%llu M counted at %s, %llu M allowed)",
                       (unsigned long long)(want >> 20), what, (unsigned long long)(w->cap >> 20));
    }
    w->done += n * each;
    return CR_OK;
}

CrErr idx_ts_work_ahead(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e)
{
    CrErr rc = idx_ts_work_add(w, n, each, what, e);
    if (!rc && w) w->ahead += n * each;
    return rc;
}

CrErr idx_ts_work_tree(IdxTsWork *w, uint64_t n, uint64_t each, const char *what, ErrInfo *e)
{
    if (!w || !n) return CR_OK;
    if (n > UINT64_MAX / each) return idx_ts_work_add(w, n, each, what, e);
    uint64_t all = n * each, paid = all < w->ahead ? all : w->ahead;
    w->ahead -= paid;
    return idx_ts_work_add(w, all - paid, 1, what, e);
}

CrErr idx_ts_work_kept(IdxTsWork *work, const ChunkSet *out, ErrInfo *e)
{
    CrErr rc = idx_ts_work_add(work, out->n_chunks, IDX_TS_WORK_CHUNK, "its chunks", e);
    return rc ? rc : idx_ts_work_add(work, out->n_refs, IDX_TS_WORK_ROW, "its references kept", e);
}

CrErr idx_ts_parse(TSParser *parser, const char *src, size_t len, TSTree **out, ErrInfo *e)
{
    return idx_ts_parse_counted(parser, NULL, src, len, NULL, out, e);
}

CrErr idx_ts_parse_keep(TSParser *parser, TsKeep *keep, const char *src, size_t len, TSTree **out,
                        ErrInfo *e)
{
    return idx_ts_parse_counted(parser, keep, src, len, NULL, out, e);
}

CrErr idx_ts_parse_counted(TSParser *parser, TsKeep *keep, const char *src, size_t len,
                           IdxTsWork *work, TSTree **out, ErrInfo *e)
{
    IdxTsWork own;
    if (!work) idx_ts_work_init(work = &own, len);
    *out = NULL;
    if (len >= UINT32_MAX) {
        idx_ts_keep_release(keep);
        return err_set(e, CR_EPARSE, "source of %zu bytes is too large for tree-sitter", len);
    }
    uint64_t budget = TS_PARSE_BASE_US + TS_PARSE_PER_MIB_US * (uint64_t)len / (1u << 20);
    ts_parser_set_timeout_micros(parser, budget);
    pthread_once(&ts_budget__once, ts_budget__make_key);
    TsBudget mem = {.limit = TS_MEM_BASE + TS_MEM_PER_BYTE * (int64_t)len,
                    .total_limit = TS_WORK_BASE + TS_WORK_PER_BYTE * (int64_t)len,
                    .allocs_limit =
                        work->cap > work->done ? (work->cap - work->done) / IDX_TS_WORK_ALLOC : 0};
    ts_parser_set_cancellation_flag(parser, &mem.cancel);
    if (ts_budget__key.ok) pthread_setspecific(ts_budget__key.key, &mem);
    TSTree *tree =
        ts_parser_parse_string(parser, ts_keep__edited(keep, src, len), src, (uint32_t)len);
    if (ts_budget__key.ok) pthread_setspecific(ts_budget__key.key, NULL);
    ts_parser_set_cancellation_flag(parser, NULL);
    idx_ts_keep_release(keep);
    if (!tree) {
        ts_parser_reset(parser);
        if (mem.cancel && mem.allocs > mem.allocs_limit)
            return idx_ts_work_add(work, mem.allocs, IDX_TS_WORK_ALLOC, "the parse", e);
        if (mem.cancel && mem.total > mem.total_limit)
            return err_set(e, CR_ETIMEOUT,
                           "tree-sitter allocated over %lld MB in all parsing %zu bytes, the "
                           "budget for its size",
                           (long long)(mem.total_limit >> 20), len);
        if (mem.cancel)
            return err_set(
                e, CR_ETIMEOUT,
                "tree-sitter held over %lld MB parsing %zu bytes, the budget for its size",
                (long long)(mem.limit >> 20), len);
        return err_set(e, CR_ETIMEOUT,
                       "tree-sitter did not finish in %llu s, the budget for %zu bytes",
                       (unsigned long long)(budget / 1000000), len);
    }
    /* a whole tree spans the file (its last token's padding holds the
     * trailing blanks); one that lost children to the 16-bit count does not */
    (void)idx_ts_work_add(work, mem.allocs, IDX_TS_WORK_ALLOC, "the parse", NULL);
    uint32_t end = ts_node_end_byte(ts_tree_root_node(tree));
    if (end != (uint32_t)len) {
        ts_tree_delete(tree);
        return err_set(e, CR_ETOOBIG,
                       "tree-sitter lost bytes %u to %zu (a node of 65,536 or more children)", end,
                       len);
    }
    if (keep && len <= TS_KEEP_MAX_BYTES) {
        keep->src = xmalloc(len + 1);
        memcpy(keep->src, src, len);
        keep->len = len;
        keep->tree = ts_tree_copy(tree);
    }
    *out = tree;
    return CR_OK;
}
