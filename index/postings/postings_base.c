/* postings_base.c - the snapshot read in place (postings_int.h PostBase):
 * a term found by reading the hash block and term block it lies in (each
 * checked against the checks read at open) and its text (checked by its
 * hash), so that an open reads what a question names, not the dictionary.
 * The block read last of each kind is kept: a build or a save that walks
 * the terms in order reads each block once. */
#include "postings_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int idx_postbase_term(PostBase *b, uint32_t t, PostTerm *out)
{
    if (!b->have || t >= b->n_terms) {
        b->bad = 1;
        return 0;
    }
    int64_t blk = t / POST_TERM_BLOCK;
    if (b->tblock_at != blk) {
        uint32_t first = (uint32_t)blk * POST_TERM_BLOCK;
        uint32_t n = b->n_terms - first < POST_TERM_BLOCK ? b->n_terms - first : POST_TERM_BLOCK;
        uint64_t n_blocks = ((uint64_t)b->n_terms + POST_TERM_BLOCK - 1) / POST_TERM_BLOCK;
        uint64_t at = b->toff[blk],
                 end = (uint64_t)blk + 1 < n_blocks ? b->toff[blk + 1] : b->term_len;
        unsigned char raw[POST_TBLOCK_MAX];
        b->tblock_at = -1;
        if (at > end || end > b->term_len || end - at > sizeof raw ||
            !file_pread_all(b->fd, raw, (size_t)(end - at), b->term_at + at) ||
            idx_postings_list_check(raw, (size_t)(end - at)) != b->tcheck[blk] ||
            !idx_postterm_unpack(raw, (size_t)(end - at), b->tblock, n)) {
            b->bad = 1;
            return 0;
        }
        b->tblock_at = blk;
    }
    *out = b->tblock[t % POST_TERM_BLOCK];
    return 1;
}

const char *idx_postbase_text(PostBase *b, const PostTerm *pt)
{
    if (pt->str_off > b->str_len || pt->str_len > b->str_len - pt->str_off) {
        b->bad = 1;
        return NULL;
    }
    if (pt->str_off < b->win_off || pt->str_off + pt->str_len > b->win_off + b->win_len) {
        /* Just past the window (a walk in term order): a window from here,
         * the terms that follow are read with it; else (a lookup) the text
         * alone. */
        int walk = b->win_len && pt->str_off >= b->win_off + b->win_len &&
                   pt->str_off - (b->win_off + b->win_len) < 4096;
        size_t want = (size_t)(b->str_len - pt->str_off);
        if (want > (1u << 16)) want = 1u << 16;
        if (!walk || want < pt->str_len) want = pt->str_len;
        if (want > b->win_cap) {
            b->win = xrealloc(b->win, want + 1);
            b->win_cap = want;
        }
        b->win_len = 0;
        if (!file_pread_all(b->fd, b->win, want, b->str_at + pt->str_off)) {
            b->bad = 1;
            return NULL;
        }
        b->win_off = pt->str_off;
        b->win_len = want;
    }
    const char *s = b->win + (pt->str_off - b->win_off);
    if (hash64(s, pt->str_len) != pt->str_hash) {
        b->bad = 1;
        return NULL;
    }
    return s;
}

static const uint32_t *hash_block(PostBase *b, uint64_t blk)
{
    if ((int64_t)blk != b->hblock_at) {
        uint64_t first = blk * POST_HASH_BLOCK;
        uint64_t n = b->n_hash - first < POST_HASH_BLOCK ? b->n_hash - first : POST_HASH_BLOCK;
        b->hblock_at = -1;
        if (!file_pread_all(b->fd, b->hblock, (size_t)n * 4, b->hash_at + first * 4) ||
            idx_postings_list_check(b->hblock, (size_t)n * 4) != b->hcheck[blk]) {
            b->bad = 1;
            return NULL;
        }
        b->hblock_at = (int64_t)blk;
    }
    return b->hblock;
}

int64_t idx_postbase_lookup(PostBase *b, const char *t, size_t n)
{
    if (!b->have || !b->n_hash) return -1;
    int64_t found;
    if (strmap_getn(&b->seen, t, n, &found)) return found;
    uint64_t h = hash64(t, n), mask = b->n_hash - 1;
    for (uint64_t i = h & mask, probes = 0; probes < b->n_hash; i = (i + 1) & mask, probes++) {
        const uint32_t *blk = hash_block(b, i / POST_HASH_BLOCK);
        if (!blk) return -1;
        uint32_t v = blk[i % POST_HASH_BLOCK];
        if (!v) return -1;
        PostTerm pt;
        if (!idx_postbase_term(b, v - 1, &pt)) return -1;
        if (pt.str_hash != h || pt.str_len != n) continue;
        const char *s = idx_postbase_text(b, &pt);
        if (!s) return -1;
        if (memcmp(s, t, n)) continue;
        char *key = xstrndup(t, n);
        strmap_put(&b->seen, key, (int64_t)(v - 1));
        free(key);
        return (int64_t)(v - 1);
    }
    return -1;
}

int idx_postbase_read_list(PostBase *b, const PostTerm *pt, Posting *out)
{
    /* every posting takes 1 byte at least */
    if (pt->post_off > b->n_post || pt->bytes > b->n_post - pt->post_off || pt->n > pt->bytes)
        return 0;
    unsigned char *raw = xmalloc(pt->bytes ? pt->bytes : 1);
    int ok = file_pread_all(b->fd, raw, pt->bytes, b->post_at + pt->post_off) &&
             idx_postings_list_check(raw, pt->bytes) == pt->check &&
             idx_postings_decode(raw, pt->bytes, out, pt->n);
    free(raw);
    return ok;
}

void idx_postbase_close(PostBase *b)
{
    if (b->have) {
        close(b->fd);
        for (size_t i = 0; i < b->n_cached; i++)
            free(b->lists[b->cached[i]]);
    }
    free(b->lists);
    free(b->cached);
    free(b->checked);
    free(b->toff); /* tcheck lies in it */
    free(b->hcheck);
    free(b->win);
    strmap_release(&b->seen);
    memset(b, 0, sizeof *b);
    b->tblock_at = b->hblock_at = -1;
}
