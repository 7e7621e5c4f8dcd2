#include "rtv_int.h"

#include <string.h>

size_t rtv_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) n++;
    return n;
}

static int overlaps(const RtvItem *a, const RtvItem *b)
{
    return a->start_line <= b->end_line && b->start_line <= a->end_line &&
           strcmp(a->chunk.path, b->chunk.path) == 0;
}

size_t rtv_pack_select(const RtvItem *cands, size_t n, size_t budget, size_t max_items,
                       size_t *out_idx)
{
    size_t picked = 0, left = budget;
    for (size_t i = 0; i < n && picked < max_items; i++) {
        const char *t = cands[i].text ? cands[i].text : "";
        size_t cost = rtv_chars(t, strlen(t));
        if (cost > left) continue;
        int dup = 0;
        for (size_t k = 0; k < picked && !dup; k++)
            dup = overlaps(&cands[out_idx[k]], &cands[i]);
        if (dup) continue;
        out_idx[picked++] = i;
        left -= cost;
    }
    return picked;
}

VfyContextItem *rtv_vfy_context(const RtvItem *items, size_t n)
{
    if (n == 0) return NULL;
    VfyContextItem *v = xcalloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        v[i].path = items[i].chunk.path;
        v[i].start_line = items[i].start_line;
        v[i].end_line = items[i].end_line;
        v[i].symbol = rtv_item_symbol(&items[i]);
        v[i].text = items[i].text ? items[i].text : "";
        v[i].text_len = strlen(v[i].text);
    }
    return v;
}
