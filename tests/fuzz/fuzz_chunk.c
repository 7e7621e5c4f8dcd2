/*
 * fuzz_chunk.c - the chunker on arbitrary bytes, as the contents of a .py
 * file, plus the search tokenizer and the module-name helper on the same
 * bytes. Properties (idx_int.h's contract): no failure other than
 * CR_EPARSE; chunks in line order, start <= end, inside the file (windows of
 * the small max_lines used here included); parents are class chunks before
 * the child; refs point at a chunk; no sanitizer report or leak.
 */
#include "index/chunk/lang/lang.h"
#include "index/idx_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t line_bound(const uint8_t *data, size_t size)
{
    /* Upper bound on what any line counter may see: every \n, \r and the
     * other separators tree-sitter or Python may treat as line breaks. */
    uint32_t n = 1;
    for (size_t i = 0; i < size; i++)
        if (data[i] == '\n' || data[i] == '\r' || data[i] == '\f' || data[i] == '\v') n++;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Chunker *c;
    if (!c) c = idx_chunker_new();
    if (size > 1 << 16) return 0;

    /* The first byte picks max_lines (small values exercise windowing). */
    uint32_t max_lines = size ? (uint32_t)(data[0] % 8) * 3 : 0;
    ChunkSet set;
    memset(&set, 0, sizeof set);
    ErrInfo e = {0};
    CrErr rc = idx_chunker_run_lang(c, idx_lang_by_name("python"), (const char *)data, size,
                                    max_lines, &set, &e);
    if (rc != CR_OK && rc != CR_EPARSE) abort();
    uint32_t lines = line_bound(data, size);
    for (size_t i = 0; i < set.n_chunks; i++) {
        const ChunkDef *d = &set.chunks[i];
        if (d->start_line < 1 || d->start_line > d->end_line || d->end_line > lines) abort();
        if (!d->symbol || !d->name || !d->signature) abort();
        if (i && (set.chunks[i - 1].start_line > d->start_line)) abort();
        if (d->parent >= 0 && ((size_t)d->parent >= set.n_chunks || d->parent == (int)i ||
                               set.chunks[d->parent].kind != IDX_KIND_CLASS))
            abort();
    }
    for (size_t i = 0; i < set.n_refs; i++) {
        const ChunkRef *r = &set.refs[i];
        if (r->chunk < 0 || (size_t)r->chunk >= set.n_chunks) abort();
    }
    idx_chunk_set_release(&set);

    StrBuf sb;
    sb_init(&sb);
    idx_tok_code((const char *)data, size, &sb);
    sb_release(&sb);

    char *path = malloc(size + 1);
    memcpy(path, data, size);
    path[size] = '\0';
    free(idx_path_to_module(path));
    free(path);
    return 0;
}
