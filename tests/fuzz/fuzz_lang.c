/*
 * fuzz_lang.c - the language table's chunkers on arbitrary bytes: the first
 * byte picks the row (C, C++, Go, Rust, Java, JS, TS, TSX, Markdown, reST,
 * text, Python) and max_lines, the rest is the file. Properties as in
 * fuzz_chunk.c: no failure but CR_EPARSE; chunks in line order inside the
 * file; parents are class chunks before the child; refs point at a chunk;
 * the row's import resolution on a missing workspace drops or rewrites
 * without crashing; no sanitizer report or leak.
 */
#include "index/idx_int.h"
#include "index/chunk/lang/lang.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Chunker *c;
    if (!c) c = idx_chunker_new();
    if (size < 1 || size > 1 << 16) return 0;
    const IdxLang *lang = idx_lang_at(data[0] % idx_lang_count());
    uint32_t max_lines = (uint32_t)(data[0] / 16) * 3;
    const char *src = (const char *)data + 1;
    size_t len = size - 1;
    ChunkSet set;
    memset(&set, 0, sizeof set);
    ErrInfo e = {0};
    CrErr rc = idx_chunker_run_lang(c, lang, src, len, max_lines, &set, &e);
    if (rc != CR_OK && rc != CR_EPARSE) abort();
    uint32_t lines = 1;
    for (size_t i = 0; i < len; i++)
        if (src[i] == '\n' || src[i] == '\r' || src[i] == '\f' || src[i] == '\v') lines++;
    for (size_t i = 0; i < set.n_chunks; i++) {
        const ChunkDef *d = &set.chunks[i];
        if (d->start_line < 1 || d->start_line > d->end_line || d->end_line > lines) abort();
        if (!d->symbol || !d->name || !d->signature) abort();
        if (i && set.chunks[i - 1].start_line > d->start_line) abort();
        if (d->parent >= 0 &&
            ((size_t)d->parent >= i || set.chunks[d->parent].kind != IDX_KIND_CLASS))
            abort();
    }
    LangImportCtx ctx = {"/nonexistent-coderag-fuzz", "a/b/c.x", "a.b.c",
                         set.package ? set.package : ""};
    for (size_t i = 0; i < set.n_refs; i++) {
        ChunkRef *r = &set.refs[i];
        if (r->chunk < 0 || (size_t)r->chunk >= set.n_chunks) abort();
        if (r->kind == REF_IMPORT && lang->resolve_import && r->module)
            lang->resolve_import(&ctx, r);
    }
    idx_chunk_set_release(&set);
    return 0;
}
