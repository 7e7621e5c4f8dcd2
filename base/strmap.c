#include "base.h"

#include <stdlib.h>
#include <string.h>

void strmap_init(StrMap *m)
{
    memset(m, 0, sizeof *m);
}

void strmap_release(StrMap *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t slot(const StrMap *m, const char *key, size_t len)
{
    size_t mask = m->cap - 1, i = (size_t)hash64(key, len) & mask;
    while (m->keys[i] && !(strncmp(m->keys[i], key, len) == 0 && m->keys[i][len] == '\0'))
        i = (i + 1) & mask;
    return i;
}

static void rehash(StrMap *m, size_t cap)
{
    StrMap n = {xcalloc(cap, sizeof(char *)), xcalloc(cap, sizeof(int64_t)), cap, m->len};
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = slot(&n, m->keys[i], strlen(m->keys[i]));
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    *m = n;
}

void strmap_put(StrMap *m, const char *key, int64_t val)
{
    if ((m->len + 1) * 4 >= m->cap * 3) rehash(m, m->cap ? m->cap * 2 : 64);
    size_t len = strlen(key), i = slot(m, key, len);
    if (!m->keys[i]) {
        m->keys[i] = xstrndup(key, len);
        m->len++;
    }
    m->vals[i] = val;
}

int strmap_getn(const StrMap *m, const char *key, size_t len, int64_t *out)
{
    if (!m->cap) return 0;
    size_t i = slot(m, key, len);
    if (!m->keys[i]) return 0;
    if (out) *out = m->vals[i];
    return 1;
}

int strmap_get(const StrMap *m, const char *key, int64_t *out)
{
    return strmap_getn(m, key, strlen(key), out);
}
