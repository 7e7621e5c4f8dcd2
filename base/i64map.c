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

static size_t i64map__home(int64_t key, size_t mask)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & mask;
}

static size_t i64map__slot(const I64Map *m, int64_t key)
{
    size_t mask = m->cap - 1, i = i64map__home(key, mask);
    while (m->keys[i] && m->keys[i] != key + 1)
        i = (i + 1) & mask;
    return i;
}

static void i64map__resize(I64Map *m, size_t cap)
{
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

/* Load stays under 3/4. */
void i64map_reserve(I64Map *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while ((n + 1) * 4 >= cap * 3)
        cap *= 2;
    if (cap > m->cap) i64map__resize(m, cap);
}

void i64map_put(I64Map *m, int64_t key, int64_t val)
{
    i64map_reserve(m, m->len + 1);
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

/* Backward-shift deletion keeps probe chains intact without tombstones. */
int i64map_del(I64Map *m, int64_t key)
{
    if (!m->cap) return 0;
    size_t i = i64map__slot(m, key), mask = m->cap - 1;
    if (!m->keys[i]) return 0;
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (!m->keys[j]) break;
        size_t h = i64map__home(m->keys[j] - 1, mask);
        int stays = i < j ? (i < h && h <= j) : (i < h || h <= j);
        if (stays) continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        i = j;
    }
    m->keys[i] = 0;
    m->len--;
    return 1;
}

int i64map_next(const I64Map *m, size_t *pos, int64_t *key, int64_t *val)
{
    for (; *pos < m->cap; (*pos)++) {
        if (!m->keys[*pos]) continue;
        if (key) *key = m->keys[*pos] - 1;
        if (val) *val = m->vals[*pos];
        (*pos)++;
        return 1;
    }
    return 0;
}
