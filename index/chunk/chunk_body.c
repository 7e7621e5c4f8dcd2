/*
 * What text a chunk stands for, defined once for the search text
 * (write.c) and the embedder's input (dense.c).
 */
#include "../idx_int.h"

#include <string.h>

int idx_chunk_continues(const ChunkDef *c, int symbol_seen)
{
    return c->window > 1 || (c->kind == IDX_KIND_CLASS && c->window == 0 && symbol_seen);
}

void idx_chunk_body(int cont, const char *signature, const char *lines, size_t len, StrBuf *out)
{
    if (cont && signature && signature[0]) {
        sb_adds(out, signature);
        sb_addc(out, '\n');
    }
    sb_add(out, lines, len);
}
