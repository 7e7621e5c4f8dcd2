/* postings_codec.c - one posting list's bytes in postings.bin: per posting
 * a varint of the slot's delta from the last one shifted left by four, the
 * low four bits a mask of the fields with a nonzero frequency, then those
 * frequencies, a byte each. Used by the writer (postings_file.c) and the
 * reader (postings.c), below both; with the check of a list or block. */
#include "postings_int.h"

#include <string.h>

size_t idx_postings_encode(const Posting *l, size_t n, StrBuf *out)
{
    size_t bytes = 0;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b[16];
        size_t k = 0;
        unsigned mask = 0;
        for (int f = 0; f < N_FIELDS; f++)
            mask |= (l[i].tf[f] != 0) << f;
        uint64_t v = ((uint64_t)(l[i].slot - prev) << 4) | mask;
        prev = l[i].slot;
        do {
            b[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
            v >>= 7;
        } while (v);
        for (int f = 0; f < N_FIELDS; f++)
            if (l[i].tf[f]) b[k++] = l[i].tf[f];
        if (out) sb_add(out, b, k);
        bytes += k;
    }
    return bytes;
}

int idx_postings_decode(const unsigned char *b, size_t len, Posting *out, size_t n)
{
    size_t at = 0;
    uint64_t slot = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (at >= len || shift > 35) return 0;
            v |= (uint64_t)(b[at] & 0x7f) << shift;
            if (!(b[at++] & 0x80)) break;
        }
        slot += v >> 4;
        if (slot > UINT32_MAX || (i && !(v >> 4))) return 0;
        out[i].slot = (uint32_t)slot;
        for (int f = 0; f < N_FIELDS; f++) {
            out[i].tf[f] = 0;
            if (!(v & (1u << f))) continue;
            if (at >= len || !b[at]) return 0;
            out[i].tf[f] = b[at++];
        }
    }
    return at == len;
}

int idx_postings_varint(const unsigned char *b, size_t len, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int shift = 0;; shift += 7) {
        if (*at >= len || shift > 63) return 0;
        *v |= (uint64_t)(b[*at] & 0x7f) << shift;
        if (!(b[(*at)++] & 0x80)) return 1;
    }
}

size_t idx_postings_put_varint(unsigned char *b, uint64_t v)
{
    size_t k = 0;
    do {
        b[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return k;
}

uint32_t idx_postings_list_check(const void *bytes, size_t n)
{
    return (uint32_t)hash64(bytes, n);
}

void idx_postterm_pack(const PostTerm *t, size_t k, StrBuf *out)
{
    unsigned char b[64];
    size_t m = 0;
    if (!k) return;
    m += idx_postings_put_varint(b + m, t[0].str_off);
    m += idx_postings_put_varint(b + m, t[0].post_off);
    sb_add(out, b, m);
    for (size_t i = 0; i < k; i++) {
        memcpy(b, &t[i].str_hash, 8);
        memcpy(b + 8, &t[i].check, 4);
        m = 12;
        m += idx_postings_put_varint(b + m, t[i].str_len);
        m += idx_postings_put_varint(b + m, t[i].n);
        m += idx_postings_put_varint(b + m, t[i].bytes);
        sb_add(out, b, m);
    }
}

int idx_postterm_unpack(const unsigned char *b, size_t len, PostTerm *t, size_t k)
{
    size_t at = 0;
    uint64_t so, po, v[3];
    if (!idx_postings_varint(b, len, &at, &so) || !idx_postings_varint(b, len, &at, &po)) return 0;
    for (size_t i = 0; i < k; i++) {
        if (len - at < 12) return 0;
        memcpy(&t[i].str_hash, b + at, 8);
        memcpy(&t[i].check, b + at + 8, 4);
        at += 12;
        for (int f = 0; f < 3; f++)
            if (!idx_postings_varint(b, len, &at, &v[f]) || v[f] > UINT32_MAX) return 0;
        t[i].str_off = so;
        t[i].post_off = po;
        t[i].str_len = (uint32_t)v[0];
        t[i].n = (uint32_t)v[1];
        t[i].bytes = (uint32_t)v[2];
        so += v[0];
        po += v[2];
    }
    return at == len;
}

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

void idx_postslots_pack(int64_t chunk, int64_t file, const uint32_t len[], int64_t *prev_chunk,
                        int64_t *prev_file, StrBuf *out)
{
    unsigned char b[6 * 10];
    size_t m =
        idx_postings_put_varint(b, zigzag((int64_t)((uint64_t)chunk - (uint64_t)*prev_chunk)));
    m += idx_postings_put_varint(b + m, zigzag((int64_t)((uint64_t)file - (uint64_t)*prev_file)));
    for (int f = 0; f < N_FIELDS; f++)
        m += idx_postings_put_varint(b + m, len[f]);
    sb_add(out, b, m);
    *prev_chunk = chunk;
    *prev_file = file;
}

int idx_postslots_unpack(const unsigned char *b, size_t len, size_t n, int64_t *chunk,
                         int64_t *file, uint32_t (*lens)[N_FIELDS])
{
    size_t at = 0;
    uint64_t c = 0, fl = 0, v;
    for (size_t i = 0; i < n; i++) {
        if (!idx_postings_varint(b, len, &at, &v)) return 0;
        c += (v >> 1) ^ (0 - (v & 1));
        if (!idx_postings_varint(b, len, &at, &v)) return 0;
        fl += (v >> 1) ^ (0 - (v & 1));
        chunk[i] = (int64_t)c;
        file[i] = (int64_t)fl;
        for (int f = 0; f < N_FIELDS; f++) {
            if (!idx_postings_varint(b, len, &at, &v) || v > UINT32_MAX) return 0;
            lens[i][f] = (uint32_t)v;
        }
    }
    return at == len;
}
