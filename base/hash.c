#include "base.h"

#include <string.h>

/* A 64-bit multiply-mix hash over 8-byte words (in the spirit of wyhash's
 * mum step); quality is ample for change detection, speed matters more. */
static uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t hash64(const void *data, size_t len)
{
    const unsigned char *p = data;
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = k0 ^ mix(len, k1);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix(h ^ w, k1);
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, len);
    h = mix(h ^ w ^ ((uint64_t)len << 56), k0);
    return mix(h, k1 ^ 0x8ebc6af09c88c6e3ull);
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
