/* json_text.c - the one way C text becomes a JSON string (LSP and MCP). */
#include "base.h"

#include <jansson.h>
#include <string.h>

/* Text that is not UTF-8 is almost always a path (a folder named in
 * Latin-1): each byte outside a well-formed sequence becomes "%XX", and
 * '%' itself "%25", so the client gets back a name it can give again (the
 * MCP tools decode it: mcp_path_arg), where U+FFFD lost the byte. */
static void json__escape(const char *s, size_t n, StrBuf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80             ? 1
                   : (c & 0xE0) == 0xC0 ? 2
                   : (c & 0xF0) == 0xE0 ? 3
                   : (c & 0xF8) == 0xF0 ? 4
                                        : 0;
        if (k && c != '%' && i + k <= n && utf8_valid(s + i, k)) {
            sb_add(out, s + i, k);
            i += k;
        } else {
            sb_addc(out, '%');
            sb_addc(out, hex[c >> 4]);
            sb_addc(out, hex[c & 15]);
            i++;
        }
    }
}

json_t *json_text(const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    if (utf8_valid(s, n)) return json_stringn(s, n);
    StrBuf sb;
    sb_init(&sb);
    json__escape(s, n, &sb);
    json_t *j = json_stringn(sb.buf, sb.len);
    sb_release(&sb);
    return j;
}
