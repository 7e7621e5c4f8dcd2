/* json_text.c - the one way C text becomes a JSON string (LSP and MCP). */
#include "base.h"

#include <jansson.h>
#include <string.h>

json_t *json_text(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    if (utf8_valid(s, n)) return json_stringn(s, n);
    StrBuf sb;
    sb_init(&sb);
    utf8_repair(s, n, &sb);
    json_t *j = json_stringn(sb.buf, sb.len);
    sb_release(&sb);
    return j;
}
