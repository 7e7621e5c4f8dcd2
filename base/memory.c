#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Out of memory (a `ulimit -v`, a full machine): said with the prefix and
 * exit 2, the code of every other failure (docs/hardening.md, limits);
 * _exit: nothing half-written is flushed, SQLite's journal keeps the index
 * whole. */
static void die_oom(size_t n)
{
    fprintf(stderr, "coderag: out of memory allocating %zu bytes\n", n);
    fflush(stderr);
    _exit(2);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die_oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) die_oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) die_oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
