#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

static int same_unit(const RtvItem *a, const RtvItem *b)
{
    const IdxChunk *x = &a->chunk, *y = &b->chunk;
    return x->window > 0 && y->window > 0 && x->kind == y->kind && x->symbol && x->symbol[0] &&
           !strcmp(x->symbol, y->symbol) && !strcmp(x->path, y->path);
}

/* Makes a span b too when the lines between fit; *joined says whether it did. */
static CrErr join_two(IdxStore *st, const RtvRequest *req, RtvItem *a, RtvItem *b, size_t *left,
                      StrBuf *sb, int *joined, ErrInfo *e)
{
    uint32_t lo = a->start_line < b->start_line ? a->start_line : b->start_line;
    uint32_t hi = a->end_line > b->end_line ? a->end_line : b->end_line;
    *joined = 0;
    sb_reset(sb);
    CrErr rc = rtv_read_lines(st, req, a->chunk.path, lo, hi, sb, NULL, e);
    if (rc == CR_EDB) return rc;
    if (rc) return CR_OK; /* changed on disk since: leave both as they are */
    size_t had = rtv_chars(a->text, strlen(a->text)) + rtv_chars(b->text, strlen(b->text));
    size_t cost = rtv_chars(sb->buf, sb->len);
    if (cost > had && cost - had > *left) return CR_OK;
    *left -= cost > had ? cost - had : 0;
    free(a->text);
    a->text = xstrndup(sb->buf, sb->len);
    if (b->chunk.start_line < a->chunk.start_line) { /* the earlier piece names the item */
        IdxChunk t = a->chunk;
        a->chunk = b->chunk;
        b->chunk = t;
    }
    a->start_line = lo;
    a->end_line = hi;
    if (b->score > a->score) a->score = b->score;
    a->via |= b->via;
    *joined = 1;
    return CR_OK;
}

CrErr rtv_join_pieces(IdxStore *st, const RtvRequest *req, RtvItem *items, size_t *n, size_t *left,
                      ErrInfo *e)
{
    StrBuf sb;
    CrErr rc = CR_OK;
    sb_init(&sb);
    for (size_t i = 0; i < *n && !rc; i++) {
        for (size_t k = i + 1; k < *n && !rc; k++) {
            int joined = 0;
            if (!same_unit(&items[i], &items[k])) continue;
            if ((rc = join_two(st, req, &items[i], &items[k], left, &sb, &joined, e)) || !joined)
                continue;
            rtv_item_release(&items[k]);
            memmove(&items[k], &items[k + 1], (*n - k - 1) * sizeof *items);
            (*n)--;
            k = i; /* the wider item may now reach another piece */
        }
    }
    sb_release(&sb);
    return rc;
}
