/*
 * chunk_query.c - compiling a language row's tree-sitter query, for a
 * Chunker of its own (chunk.c) or for every store sharing one (shared.c).
 */
#include "lang/lang.h"

#include <string.h>

TSQuery *idx_chunk_query_compile(const IdxLang *lang)
{
    uint32_t off = 0;
    TSQueryError qe = TSQueryErrorNone;
    TSQuery *q =
        ts_query_new(lang->grammar(), lang->query, (uint32_t)strlen(lang->query), &off, &qe);
    if (!q)
        log_msg(LOG_ERROR, "chunk: query for '%s' fails at byte %u (error %d)", lang->name, off,
                (int)qe);
    return q;
}
