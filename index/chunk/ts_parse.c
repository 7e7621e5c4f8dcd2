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

#include <stdint.h>
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
    return ts_alloc__tag(xmalloc(n + TS_ALLOC_HEAD));
}

static void *ts_alloc__calloc(size_t n, size_t size)
{
    size_t all =
        size && n > (SIZE_MAX - TS_ALLOC_HEAD) / size ? SIZE_MAX - TS_ALLOC_HEAD : n * size;
    return ts_alloc__tag(xcalloc(1, all + TS_ALLOC_HEAD));
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
    free(b);
}

static void *ts_alloc__realloc(void *p, size_t n)
{
    if (!p) return ts_alloc__malloc(n);
    if (!ts_alloc__ours(p)) return ts_alloc__calloc(1, n); /* never seen: as the free */
    if (n > SIZE_MAX - TS_ALLOC_HEAD) n = SIZE_MAX - TS_ALLOC_HEAD;
    unsigned char *b = (unsigned char *)p - TS_ALLOC_HEAD;
    return ts_alloc__tag(xrealloc(b, n + TS_ALLOC_HEAD));
}

void idx_ts_process_init(void)
{
    /* through base's allocator, out of memory is "coderag: out of memory"
     * and exit 2, as everywhere else (tree-sitter's own prints its words and
     * exits 1, the usage code) */
    ts_set_allocator(ts_alloc__malloc, ts_alloc__calloc, ts_alloc__realloc, ts_alloc__free);
}

CrErr idx_ts_parse(TSParser *parser, const char *src, size_t len, TSTree **out, ErrInfo *e)
{
    *out = NULL;
    if (len >= UINT32_MAX)
        return err_set(e, CR_EPARSE, "source of %zu bytes is too large for tree-sitter", len);
    uint64_t budget = TS_PARSE_BASE_US + TS_PARSE_PER_MIB_US * (uint64_t)len / (1u << 20);
    ts_parser_set_timeout_micros(parser, budget);
    TSTree *tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
    if (!tree) {
        ts_parser_reset(parser);
        return err_set(e, CR_ETIMEOUT,
                       "tree-sitter did not finish in %llu s, the budget for %zu bytes",
                       (unsigned long long)(budget / 1000000), len);
    }
    /* a whole tree spans the file (its last token's padding holds the
     * trailing blanks); one that lost children to the 16-bit count does not */
    uint32_t end = ts_node_end_byte(ts_tree_root_node(tree));
    if (end != (uint32_t)len) {
        ts_tree_delete(tree);
        return err_set(e, CR_ETOOBIG,
                       "tree-sitter lost bytes %u to %zu (a node of 65,536 or more children)", end,
                       len);
    }
    *out = tree;
    return CR_OK;
}
