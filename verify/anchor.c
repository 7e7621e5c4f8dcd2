#include "vfy_int.h"

#include <stdlib.h>
#include <string.h>

const char *vfy_anchor_status_name(VfyAnchorStatus s)
{
    static const char *const names[] = {"unchanged", "shifted", "moved", "lost"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "lost";
}

void vfy_citation_anchor(const VfyCitation *c, VfyAnchor *a)
{
    a->path = c->path;
    a->start_line = c->start_line;
    a->end_line = c->end_line;
    a->symbol = c->symbol;
    memcpy(a->hash, c->anchor, sizeof a->hash);
    a->hash[16] = '\0';
}

/* ---------------------------------------------------------------- lines */

/* A text cut into lines as count_lines counts them: line i starts at
 * start[i]; start[n] is the end of the text. */
typedef struct Lines {
    const char *t;
    size_t n;
    size_t *start;
    int has_cr;
} Lines;

static void lines_init(Lines *l, const char *t, size_t len)
{
    l->t = t;
    l->n = count_lines(t, len);
    l->start = xmalloc((l->n + 1) * sizeof *l->start);
    l->has_cr = len && memchr(t, '\r', len) != NULL;
    size_t i = 0;
    for (size_t k = 0; k < l->n; k++) {
        l->start[k] = i;
        const char *nl = memchr(t + i, '\n', len - i);
        i = nl ? (size_t)(nl - t) + 1 : len;
    }
    l->start[l->n] = len;
}

/* Line k without its "\n" or "\r\n". */
static void line_span(const Lines *l, size_t k, size_t *b, size_t *e)
{
    *b = l->start[k];
    *e = l->start[k + 1];
    if (*e > *b && l->t[*e - 1] == '\n') (*e)--;
    if (*e > *b && l->t[*e - 1] == '\r') (*e)--;
}

/* Hash of lines [s, s+n) as vfy_anchor_hash takes it; buf is scratch. */
static uint64_t block_hash(const Lines *l, size_t s, size_t n, StrBuf *buf)
{
    size_t b = l->start[s], e = l->start[s + n];
    if (!l->has_cr && e > b && l->t[e - 1] == '\n') return hash64(l->t + b, e - b);
    sb_reset(buf);
    for (size_t k = s; k < s + n; k++) {
        size_t lb, le;
        line_span(l, k, &lb, &le);
        sb_add(buf, l->t + lb, le - lb);
        sb_addc(buf, '\n');
    }
    return hash64(buf->buf, buf->len);
}

void vfy_anchor_hash(const char *text, size_t len, char out[17])
{
    Lines l;
    StrBuf buf;
    sb_init(&buf);
    lines_init(&l, text, len);
    hash64_hex(l.n ? block_hash(&l, 0, l.n, &buf) : hash64("", 0), out);
    free(l.start);
    sb_release(&buf);
}

/* ---------------------------------------------------------------- resolving */

static int parse_hash(const char *hex, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return hex[16] == '\0';
}

VfyAnchorStatus vfy_anchor_resolve(const VfyAnchor *a, const char *text, size_t len,
                                   VfyAnchorMatch *out)
{
    return vfy_anchor_resolve_shared(NULL, a, text, len, out);
}

VfyAnchorStatus vfy_anchor_resolve_shared(IdxShared *sh, const VfyAnchor *a, const char *text,
                                          size_t len, VfyAnchorMatch *out)
{
    Lines l;
    StrBuf buf;
    uint64_t want;
    sb_init(&buf);
    lines_init(&l, text, len);
    VfyAnchorMatch r = {VFY_ANCHOR_LOST, 0, 0};
    size_t near = a->start_line ? a->start_line - 1 : 0;

    if (a->start_line >= 1 && a->end_line >= a->start_line && parse_hash(a->hash, &want) &&
        (size_t)(a->end_line - a->start_line) < l.n) {
        /* nearest first, below before above at the same distance */
        size_t n = (size_t)(a->end_line - a->start_line) + 1, last = l.n - n;
        size_t s0 = near < last ? near : last;
        size_t max_d = s0 > last - s0 ? s0 : last - s0;
        for (size_t d = 0; d <= max_d; d++) {
            size_t s = SIZE_MAX;
            if (s0 + d <= last && block_hash(&l, s0 + d, n, &buf) == want)
                s = s0 + d;
            else if (d && d <= s0 && block_hash(&l, s0 - d, n, &buf) == want)
                s = s0 - d;
            if (s == SIZE_MAX) continue;
            r.status = s == near ? VFY_ANCHOR_UNCHANGED : VFY_ANCHOR_SHIFTED;
            r.start_line = (uint32_t)(s + 1);
            r.end_line = (uint32_t)(s + n);
            goto out;
        }
    }
    /* the definition, found as the index finds definitions in the file's language */
    uint32_t ds, de;
    if (idx_find_definition_shared(sh, a->path, text, len, a->symbol, (uint32_t)near + 1, &ds,
                                   &de)) {
        r.status = VFY_ANCHOR_MOVED;
        r.start_line = ds;
        r.end_line = de;
    }

out:
    free(l.start);
    sb_release(&buf);
    *out = r;
    return r.status;
}
