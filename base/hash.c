#include "base.h"

#include <stdlib.h>
#include <string.h>

/* A 64-bit multiply-mix hash over 8-byte words (in the spirit of wyhash's
 * mum step); quality is ample for change detection, speed matters more. */
static uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* hash64 in steps: the start (the length is mixed in first), whole words,
 * the tail (fewer than 8 bytes) and the end. */
static uint64_t hash64_start(size_t len)
{
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    return k0 ^ mix(len, k1);
}

static uint64_t hash64_words(uint64_t h, const unsigned char *p, size_t len)
{
    const uint64_t k1 = 0xe7037ed1a0b428dbull;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix(h ^ w, k1);
    }
    return h;
}

static uint64_t hash64_end(uint64_t h, const unsigned char *tail, size_t len)
{
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t w = 0;
    memcpy(&w, tail, len);
    h = mix(h ^ w ^ ((uint64_t)len << 56), k0);
    return mix(h, k1 ^ 0x8ebc6af09c88c6e3ull);
}

uint64_t hash64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = hash64_words(hash64_start(len), p, len);
    return hash64_end(h, p + (len & ~(size_t)7), len & 7);
}

int hash64_fd(int fd, uint64_t len, uint64_t *out)
{
    enum { STEP = 64 * 1024 }; /* a multiple of 8: words never straddle */
    unsigned char *buf = xmalloc(STEP);
    uint64_t h = hash64_start((size_t)len), off = 0;
    int ok = 1;
    while (ok && len - off >= 8) {
        size_t n = len - off < STEP ? (size_t)((len - off) & ~(uint64_t)7) : STEP;
        ok = file_pread_all(fd, buf, n, off);
        if (ok) h = hash64_words(h, buf, n);
        off += n;
    }
    size_t tail = (size_t)(len - off);
    if (ok) ok = file_pread_all(fd, buf, tail, off);
    if (ok) *out = hash64_end(h, buf, tail);
    free(buf);
    return ok;
}

void hash64_hex(uint64_t h, char out[17])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        out[i] = hex[h & 15];
        h >>= 4;
    }
    out[16] = '\0';
}
