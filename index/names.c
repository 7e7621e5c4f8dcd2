#include "idx_int.h"

#include <string.h>

const char *idx_kind_name(IdxKind k)
{
    static const char *const names[] = {"module", "class", "function", "method", "section"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

const char *idx_edge_kind_name(IdxEdgeKind k)
{
    static const char *const names[] = {"import", "call", "inherit", "contain", "raise"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

char *idx_path_to_module(const char *relpath)
{
    size_t n = strlen(relpath);
    if (n >= 3 && !strcmp(relpath + n - 3, ".py")) n -= 3;
    if (n >= 9 && !strncmp(relpath + n - 9, "/__init__", 9))
        n -= 9;
    else if (n == 8 && !strncmp(relpath, "__init__", 8))
        n = 0;
    char *m = xstrndup(relpath, n);
    for (char *p = m; *p; p++)
        if (*p == '/') *p = '.';
    return m;
}

void idx_hash_text(const char *text, size_t len, char out[17])
{
    hash64_hex(hash64(text, len), out);
}
