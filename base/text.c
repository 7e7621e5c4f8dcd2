#include "base.h"

#include <stdint.h>
#include <string.h>

int utf8_valid(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data, *end = s + len;
    while (s < end) {
        /* ASCII (most of any source) 8 bytes at a time */
        uint64_t w;
        if (end - s >= 8 && (memcpy(&w, s, 8), !(w & 0x8080808080808080ull))) {
            s += 8;
            continue;
        }
        unsigned c = *s;
        if (c < 0x80) {
            s++;
            continue;
        }
        size_t n;
        unsigned min;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            min = 0x10000;
        } else {
            return 0;
        }
        if ((size_t)(end - s) <= n) return 0;
        unsigned cp = c & (0x3F >> n);
        for (size_t i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        s += n + 1;
    }
    return 1;
}

int looks_binary(const char *data, size_t len)
{
    return memchr(data, '\0', len < 8192 ? len : 8192) != NULL;
}

size_t count_lines(const char *data, size_t len)
{
    size_t n = 0;
    const char *p = data, *end = data + len;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    if (len && data[len - 1] != '\n') n++;
    return n;
}

void text_mask(char *s, size_t len, const char *secret, size_t n)
{
    if (!s || !secret || n < 4) return;
    for (char *p = s; (p = memmem(p, len - (size_t)(p - s), secret, n)) != NULL; p += n)
        memset(p, '*', n);
}

size_t line_offsets(const char *data, size_t len, size_t **off)
{
    size_t n = count_lines(data, len), l = 0;
    size_t *v = xmalloc((n + 1) * sizeof *v);
    v[0] = 0;
    for (const char *p = data, *end = data + len;
         l < n && (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
        v[++l] = (size_t)(p - data) + 1;
    v[n] = len;
    *off = v;
    return n;
}

void utf8_repair(const char *data, size_t len, StrBuf *out)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)data[i];
        size_t k = c < 0x80             ? 1
                   : (c & 0xE0) == 0xC0 ? 2
                   : (c & 0xF0) == 0xE0 ? 3
                   : (c & 0xF8) == 0xF0 ? 4
                                        : 0;
        if (k && i + k <= len && utf8_valid(data + i, k)) {
            sb_add(out, data + i, k);
            i += k;
        } else {
            sb_adds(out, "\xEF\xBF\xBD");
            i++;
        }
    }
}
