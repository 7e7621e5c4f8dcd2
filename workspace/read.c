#include "ws.h"

#include <stdlib.h>

/* What the doors read of a store besides retrieval: a file's lines as the
 * index reads them, and a definition's content key. */

CrErr ws_read_lines(IdxStore *st, const char *rel, uint32_t start, uint32_t end, StrBuf *out,
                    uint32_t *out_total, ErrInfo *e)
{
    return idx_read_lines(st, rel, start, end, out, out_total, e);
}

CrErr ws_read_file(IdxStore *st, const char *rel, StrBuf *out, ErrInfo *e)
{
    uint32_t total = 0;
    CrErr rc = idx_read_lines(st, rel, 1, 1, out, &total, e);
    if (!rc && total > 1) rc = idx_read_lines(st, rel, 2, total, out, NULL, e);
    return rc;
}

void ws_def_key(IdxStore *st, const RtvDef *d, char key[17])
{
    StrBuf k;
    sb_init(&k);
    sb_addf(&k, "%s\n%s\n%s", d->head.path, d->head.symbol, d->head.hash);
    for (size_t i = 1; i < d->n_pieces; i++) {
        IdxChunk c;
        if (idx_chunk_get(st, d->pieces[i], &c, NULL) != CR_OK) continue;
        sb_addf(&k, "\n%s", c.hash);
        idx_chunk_release(&c);
    }
    idx_hash_text(k.buf, k.len, key);
    sb_release(&k);
}
