#include "base.h"

#include <stdlib.h>
#include <string.h>

/* Keys are stored +1 so that 0 marks an empty slot. */

void i64map_init(I64Map *m)
{
    memset(m, 0, sizeof *m);
}

void i64map_release(I64Map *m)
{
    if (!m) return;
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t i64map__slot(const I64Map *m, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    size_t mask = m->cap - 1, i = (size_t)(h >> 17) & mask;
    while (m->keys[i] && m->keys[i] != key + 1) i = (i + 1) & mask;
    return i;
}

static void i64map__grow(I64Map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    I64Map n = {xcalloc(cap, sizeof(int64_t)), xcalloc(cap, sizeof(int64_t)), cap, 0};
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = i64map__slot(&n, m->keys[i] - 1);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
        n.len++;
    }
    free(m->keys);
    free(m->vals);
    *m = n;
}

void i64map_put(I64Map *m, int64_t key, int64_t val)
{
    if ((m->len + 1) * 4 >= m->cap * 3) i64map__grow(m);
    size_t i = i64map__slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key + 1;
        m->len++;
    }
    m->vals[i] = val;
}

int i64map_get(const I64Map *m, int64_t key, int64_t *out)
{
    if (!m->cap) return 0;
    size_t i = i64map__slot(m, key);
    if (!m->keys[i]) return 0;
    if (out) *out = m->vals[i];
    return 1;
}
