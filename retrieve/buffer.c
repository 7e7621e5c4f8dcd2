#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* Unsaved buffers (RtvRequest.buffer): what the editor shows for a file is
 * read instead of the disk's, and the index's line ranges (the disk's, as
 * it was indexed) are carried onto it through a line diff. The index
 * itself never sees a buffer. */

/* Most edits a diff follows line by line; past them, the lines between the
 * first and the last change follow the nearest unchanged line. */
#define DIFF_MAX_EDITS 512

static uint64_t line_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Hashes of the lines of text[0..len) (without their '\n'). Returns n. */
static size_t hash_lines(const char *text, size_t len, uint64_t **out)
{
    size_t *off;
    size_t n = line_offsets(text, len, &off);
    *out = xmalloc((n + 1) * sizeof **out);
    for (size_t i = 0; i < n; i++) {
        size_t b = off[i + 1];
        if (b > off[i] && text[b - 1] == '\n') b--;
        (*out)[i] = line_hash(text + off[i], b - off[i]);
    }
    free(off);
    return n;
}

/* Myers' diff of a[0..n) and b[0..m): map[i] = j + 1 for each line a[i]
 * kept as b[j]. 0 when it takes more than DIFF_MAX_EDITS edits (map as
 * it was). */
static int myers(const uint64_t *a, size_t n, const uint64_t *b, size_t m, uint32_t *map)
{
    long max = (long)(n + m) < DIFF_MAX_EDITS ? (long)(n + m) : DIFF_MAX_EDITS;
    long w = 2 * max + 3, off = max + 1;
    long *v = xcalloc((size_t)w, sizeof *v);
    long *trace = xmalloc((size_t)(max + 1) * (size_t)w * sizeof *trace);
    long found = -1;
    for (long d = 0; d <= max && found < 0; d++) {
        memcpy(trace + d * w, v, (size_t)w * sizeof *v);
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                              : v[off + k - 1] + 1;
            long y = x - k;
            while (x < (long)n && y < (long)m && a[x] == b[y])
                x++, y++;
            v[off + k] = x;
            if (x >= (long)n && y >= (long)m) {
                found = d;
                break;
            }
        }
    }
    if (found >= 0) {
        long x = (long)n, y = (long)m;
        for (long d = found; d >= 0; d--) {
            const long *t = trace + d * w;
            long k = x - y;
            long pk = (k == -d || (k != d && t[off + k - 1] < t[off + k + 1])) ? k + 1 : k - 1;
            long px = d ? t[off + pk] : 0, py = d ? px - pk : 0;
            while (x > px && y > py) {
                x--, y--;
                map[x] = (uint32_t)y + 1;
            }
            x = px, y = py;
        }
    }
    free(v);
    free(trace);
    return found >= 0;
}

/* map[i] (disk line i + 1) = its buffer line, or 0 when it changed. */
static uint32_t *line_map(const char *disk, size_t dlen, const char *buf, size_t blen,
                          size_t *n_disk, size_t *n_buf)
{
    uint64_t *a, *b;
    size_t n = hash_lines(disk, dlen, &a), m = hash_lines(buf, blen, &b);
    uint32_t *map = xcalloc(n + 1, sizeof *map);
    size_t p = 0, s = 0;
    while (p < n && p < m && a[p] == b[p]) {
        map[p] = (uint32_t)p + 1;
        p++;
    }
    while (s < n - p && s < m - p && a[n - 1 - s] == b[m - 1 - s]) {
        map[n - 1 - s] = (uint32_t)(m - s);
        s++;
    }
    uint32_t *mid = xcalloc(n - p - s + 1, sizeof *mid);
    if (myers(a + p, n - p - s, b + p, m - p - s, mid))
        for (size_t i = 0; i < n - p - s; i++)
            map[p + i] = mid[i] ? mid[i] + (uint32_t)p : 0;
    free(mid);
    free(a);
    free(b);
    *n_disk = n;
    *n_buf = m;
    return map;
}

struct RtvLineMap {
    uint32_t *map; /* map[i]: the buffer line of disk line i + 1, 0 when it changed */
    size_t n, m;   /* lines on disk, in the buffer */
};

RtvLineMap *rtv_line_map_new(IdxStore *st, const char *path, const char *buf, size_t len)
{
    StrBuf disk;
    sb_init(&disk);
    uint32_t total = 0;
    CrErr rc = idx_read_lines(st, path, 1, 1, &disk, &total, NULL);
    if (!rc && total > 1) rc = idx_read_lines(st, path, 2, total, &disk, NULL, NULL);
    RtvLineMap *lm = NULL;
    if (!rc) {
        lm = xcalloc(1, sizeof *lm);
        lm->map = line_map(disk.buf ? disk.buf : "", disk.len, buf, len, &lm->n, &lm->m);
    }
    sb_release(&disk);
    return lm;
}

void rtv_line_map_free(RtvLineMap *lm)
{
    if (!lm) return;
    free(lm->map);
    free(lm);
}

/* The buffer line of disk line i (1-based): its own, else the nearest kept
 * line's before it, moved as that one moved (the first kept one after it,
 * when none is before). */
static long to_buffer(const RtvLineMap *lm, uint32_t i)
{
    for (long k = (long)i - 1; k >= 0; k--)
        if ((size_t)k < lm->n && lm->map[k]) return (long)lm->map[k] + ((long)i - 1 - k);
    for (size_t k = i; k < lm->n; k++)
        if (lm->map[k]) return (long)lm->map[k] - ((long)k - ((long)i - 1));
    return (long)i;
}

uint32_t rtv_line_map_to_buffer(const RtvLineMap *lm, uint32_t disk_line)
{
    long l = to_buffer(lm, disk_line);
    return l < 1 ? 1 : l > (long)lm->m ? (uint32_t)(lm->m ? lm->m : 1) : (uint32_t)l;
}

uint32_t rtv_line_map_to_disk(const RtvLineMap *lm, uint32_t buf_line)
{
    long best = -1; /* the last kept line at or before buf_line */
    for (size_t k = 0; k < lm->n; k++)
        if (lm->map[k] && lm->map[k] <= buf_line) best = (long)k;
    long l = best < 0 ? (long)buf_line : best + 1 + ((long)buf_line - (long)lm->map[best]);
    return l < 1 ? 1 : l > (long)lm->n ? (uint32_t)(lm->n ? lm->n : 1) : (uint32_t)l;
}

CrErr rtv_buffer_lines(IdxStore *st, const RtvRequest *req, const char *path, uint32_t *start,
                       uint32_t *end, ErrInfo *e)
{
    size_t blen = 0;
    const char *buf = req && req->buffer ? req->buffer(req->buffer_ud, path, &blen) : NULL;
    if (!buf) return CR_OK;
    RtvLineMap *lm = rtv_line_map_new(st, path, buf, blen);
    if (!lm) return CR_OK; /* no disk text to map from: the lines as they are */
    long s = -1, t = -1;
    for (uint32_t i = *start; i <= *end && i <= lm->n; i++) /* the first and last kept lines */
        if (lm->map[i - 1]) {
            if (s < 0) s = (long)lm->map[i - 1] - (long)(i - *start);
            t = (long)lm->map[i - 1] + (long)(*end - i);
        }
    if (s < 0) { /* every line of the span changed: it moved as the lines before it did */
        s = to_buffer(lm, *start);
        t = s + (long)(*end - *start);
    }
    size_t m = lm->m;
    rtv_line_map_free(lm);
    if (s < 1) s = 1;
    if (t > (long)m) t = (long)m;
    if (s > (long)m || t < s) return err_set(e, CR_ENOENT, "%s: lines gone from the buffer", path);
    *start = (uint32_t)s;
    *end = (uint32_t)t;
    return CR_OK;
}

CrErr rtv_read_lines(IdxStore *st, const RtvRequest *req, const char *path, uint32_t start,
                     uint32_t end, StrBuf *out, uint32_t *out_total, ErrInfo *e)
{
    size_t len = 0;
    const char *buf = req && req->buffer ? req->buffer(req->buffer_ud, path, &len) : NULL;
    if (!buf) return idx_read_lines(st, path, start, end, out, out_total, e);
    size_t *off;
    size_t n = line_offsets(buf, len, &off);
    if (out_total) *out_total = (uint32_t)n;
    CrErr rc = CR_OK;
    if (start < 1 || end < start || end > n)
        rc = err_set(e, CR_EINVAL, "%s: lines %u-%u outside 1-%zu (unsaved buffer)", path, start,
                     end, n);
    else
        sb_add(out, buf + off[start - 1], off[end] - off[start - 1]);
    free(off);
    return rc;
}

static int src_is_indexed(void *ud, const char *path)
{
    const RtvSourceCtx *c = ud;
    return c->store.is_indexed(c->store.ud, path);
}

static CrErr src_read_lines(void *ud, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                            uint32_t *out_total, ErrInfo *e)
{
    const RtvSourceCtx *c = ud;
    return rtv_read_lines(c->st, c->req, path, start, end, out, out_total, e);
}

void rtv_vfy_source(VfySource *src, RtvSourceCtx *ctx, IdxStore *st, const RtvRequest *req)
{
    vfy_source_for_store(&ctx->store, st);
    ctx->st = st;
    ctx->req = req;
    *src = ctx->store;
    src->is_indexed = src_is_indexed;
    src->read_lines = src_read_lines;
    src->ud = ctx;
}
