#include "idx_int.h"

#include <string.h>

const char *idx_kind_name(IdxKind k)
{
    static const char *const names[] = {"module", "class", "function", "method", "section"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

const char *idx_edge_kind_name(IdxEdgeKind k)
{
    static const char *const names[] = {"import", "call", "inherit",   "contain",
                                        "raise",  "type", "reference", "expand"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

void idx_hash_text(const char *text, size_t len, char out[17])
{
    hash64_hex(hash64(text, len), out);
}

static const char *const vcs_dirs[] = {".git", ".hg", ".svn", ".jj", NULL};

const char *idx_vcs_dir(size_t i)
{
    return i < sizeof vcs_dirs / sizeof vcs_dirs[0] ? vcs_dirs[i] : NULL;
}

int idx_is_vcs_dir(const char *name, size_t len)
{
    for (size_t i = 0; vcs_dirs[i]; i++)
        if (strlen(vcs_dirs[i]) == len && !memcmp(name, vcs_dirs[i], len)) return 1;
    return 0;
}
