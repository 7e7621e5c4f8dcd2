#include "rtv_int.h"

#include <stdlib.h>
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

void rtv_packer_init(RtvPacker *p, size_t budget, size_t max_items)
{
    p->left = budget;
    p->min_left = budget / 100;
    p->max_items = max_items;
    p->taken = max_items ? xcalloc(max_items, sizeof *p->taken) : NULL;
    p->n_taken = 0;
}

void rtv_packer_release(RtvPacker *p)
{
    free(p->taken);
    p->taken = NULL;
}

int rtv_packer_open(const RtvPacker *p)
{
    return p->n_taken < p->max_items && p->left > 0 && p->left >= p->min_left;
}

int rtv_packer_offer(RtvPacker *p, const RtvItem *it)
{
    if (!rtv_packer_open(p)) return 0;
    const char *t = it->text ? it->text : "";
    size_t cost = rtv_chars(t, strlen(t));
    if (cost > p->left) return 0;
    for (size_t k = 0; k < p->n_taken; k++)
        if (overlaps(p->taken[k], it)) return 0;
    p->taken[p->n_taken++] = it;
    p->left -= cost;
    return 1;
}

int rtv_packer_has_def(const RtvPacker *p, const RtvItem *it)
{
    const char *sym = it->chunk.symbol ? it->chunk.symbol : "";
    for (size_t k = 0; k < p->n_taken; k++) {
        const RtvItem *o = p->taken[k];
        if (o->chunk.kind == it->chunk.kind &&
            !strcmp(o->chunk.symbol ? o->chunk.symbol : "", sym) &&
            !strcmp(o->chunk.path, it->chunk.path))
            return 1;
    }
    return 0;
}

void rtv_packer_force(RtvPacker *p, const RtvItem *it)
{
    if (p->n_taken < p->max_items) p->taken[p->n_taken++] = it;
}

size_t rtv_pack_select(const RtvItem *cands, size_t n, size_t budget, size_t max_items,
                       size_t *out_idx)
{
    RtvPacker p;
    size_t picked = 0;
    rtv_packer_init(&p, budget, max_items);
    for (size_t i = 0; i < n && rtv_packer_open(&p); i++)
        if (rtv_packer_offer(&p, &cands[i])) out_idx[picked++] = i;
    rtv_packer_release(&p);
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

int rtv_line_mentions(const char *s, size_t n, const char *const *words, const size_t *wl,
                      size_t n_words)
{
    uint64_t seen = 0, first[4] = {0, 0, 0, 0}; /* the bytes a word starts with */
    for (size_t w = 0; w < n_words; w++) {
        unsigned char f = (unsigned char)words[w][0];
        first[f >> 6] |= (uint64_t)1 << (f & 63);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i > 0) {
            unsigned char p = (unsigned char)s[i - 1];
            int inside = (p >= 'a' && p <= 'z') || (p >= '0' && p <= '9') || (p >= 'A' && p <= 'Z');
            if (inside && !(c >= 'A' && c <= 'Z' && !(p >= 'A' && p <= 'Z'))) continue;
        }
        char lc = (char)(c | 0x20);
        unsigned char ul = (unsigned char)lc;
        if (!(first[ul >> 6] >> (ul & 63) & 1)) continue;
        for (size_t w = 0; w < n_words; w++) {
            if (words[w][0] != lc || wl[w] > n - i || (seen >> w & 1)) continue;
            size_t k = 1;
            while (k < wl[w] && (char)(s[i + k] | 0x20) == words[w][k])
                k++;
            if (k == wl[w]) seen |= (uint64_t)1 << w;
        }
    }
    return __builtin_popcountll(seen);
}

void rtv_trim_item(RtvItem *it, const char *const *words, size_t n_words, uint32_t max_lines)
{
    uint32_t n = it->end_line - it->start_line + 1;
    if (n <= max_lines || !it->text) return;
    /* Line starts of the packed text. */
    size_t *lo, *off = xmalloc(((size_t)n + 1) * sizeof *off);
    size_t k = line_offsets(it->text, strlen(it->text), &lo);
    for (uint32_t j = 0; j <= n; j++)
        off[j] = lo[j < k ? j : k];
    free(lo);
    /* Per line, how many distinct question words it mentions. */
    double *hit = xcalloc(n, sizeof *hit);
    size_t wl[64];
    if (n_words > 64) n_words = 64;
    for (size_t w = 0; w < n_words; w++)
        wl[w] = strlen(words[w]);
    for (uint32_t l = 0; l < n; l++)
        hit[l] = rtv_line_mentions(it->text + off[l], off[l + 1] - off[l], words, wl, n_words);
    /* The window with the most mentions; the unit's head (signature and
     * docstring) wins ties, and earns a little for being the head. A window
     * starting in the first quarter-window after the head is no candidate:
     * "def f at 1825 cited as 1826-1845" reads as a wrong citation, not as a
     * part of f, so a citation of a definition starts at its first line
     * (decorators included, as the chunk does) or clearly inside it. */
    double best = -1, cur = 0;
    uint32_t best_at = 0, snap = max_lines / 4;
    for (uint32_t l = 0; l < max_lines; l++)
        cur += hit[l];
    for (uint32_t at = 0; at + max_lines <= n; at++) {
        if (at) cur += hit[at + max_lines - 1] - hit[at - 1];
        if (at && at < snap) continue;
        double s = cur + (at == 0 ? 0.5 : 0);
        if (s > best) {
            best = s;
            best_at = at;
        }
    }
    char *text = xstrndup(it->text + off[best_at], off[best_at + max_lines] - off[best_at]);
    free(it->text);
    it->text = text;
    it->start_line += best_at;
    it->end_line = it->start_line + max_lines - 1;
    free(hit);
    free(off);
}

int rtv_calls_name(const char *s, size_t n, const char *name, size_t nl)
{
    if (!nl) return 0;
    for (size_t i = 0; i + nl <= n; i++) {
        if (memcmp(s + i, name, nl)) continue;
        if (i > 0) {
            unsigned char p = (unsigned char)s[i - 1];
            if ((p >= 'a' && p <= 'z') || (p >= 'A' && p <= 'Z') || (p >= '0' && p <= '9') ||
                p == '_')
                continue;
        }
        size_t k = i + nl;
        while (k < n && (s[k] == ' ' || s[k] == '\t'))
            k++;
        if (k < n && (s[k] == '(' || s[k] == '!')) return 1;
    }
    return 0;
}

int rtv_trim_item_to_call(RtvItem *it, const char *name, uint32_t max_lines)
{
    uint32_t n = it->end_line - it->start_line + 1;
    if (n <= max_lines || !it->text) return 1;
    size_t nl = strlen(name), *off;
    size_t k = line_offsets(it->text, strlen(it->text), &off);
    uint32_t call = n;
    for (uint32_t l = 0; l < n && l < k; l++)
        if (rtv_calls_name(it->text + off[l], off[l + 1] - off[l], name, nl)) {
            call = l;
            break;
        }
    int found = call < n;
    if (found) {
        /* from the head when the call is in its window; else the call
         * in the middle of the window */
        uint32_t at = call < max_lines ? 0 : call - max_lines / 2;
        if (at + max_lines > n) at = n - max_lines;
        uint32_t end = at + max_lines < k ? at + max_lines : (uint32_t)k;
        char *text = xstrndup(it->text + off[at], off[end] - off[at]);
        free(it->text);
        it->text = text;
        it->start_line += at;
        it->end_line = it->start_line + (end - at) - 1;
    }
    free(off);
    return found;
}

void rtv_scores_by_rank(RtvItem *items, size_t n)
{
    double factor = 1.0, prev = 1.0;
    for (size_t i = 0; i < n; i++) {
        double s = items[i].score * factor;
        if (s > prev && items[i].score > 0) {
            factor = prev / items[i].score;
            s = prev;
        }
        items[i].score = s;
        prev = s;
    }
}
