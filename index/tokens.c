#include "idx_int.h"

#include <string.h>

/* The C locale's classes (nothing sets another), without a call per byte. */
static int isdigit_c(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int isupper_c(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static int islower_c(unsigned char c)
{
    return c >= 'a' && c <= 'z';
}

static int isalpha_c(unsigned char c)
{
    return isupper_c(c) || islower_c(c);
}

static int is_ident_start(unsigned char c)
{
    return isalpha_c(c) || c == '_' || c >= 0x80;
}

static int is_ident_char(unsigned char c)
{
    return is_ident_start(c) || isdigit_c(c);
}

static void add_lower(StrBuf *out, const char *s, size_t n)
{
    if (out->len) sb_addc(out, ' ');
    sb_grow(out, n);
    for (size_t i = 0; i < n; i++)
        out->buf[out->len + i] = (char)(isupper_c((unsigned char)s[i]) ? s[i] + ('a' - 'A') : s[i]);
    out->len += n;
    out->buf[out->len] = '\0';
}

/* Emits the camelCase / snake_case / digit parts of an identifier. Returns
 * how many parts were emitted. */
static int tok__parts(const char *s, size_t n, StrBuf *out)
{
    int parts = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && s[i] == '_')
            i++;
        if (i >= n) break;
        size_t j = i + 1;
        unsigned char c0 = (unsigned char)s[i];
        if (isdigit_c(c0)) {
            while (j < n && isdigit_c((unsigned char)s[j]))
                j++;
            i = j; /* numbers are not searchable parts */
            continue;
        }
        if (isupper_c(c0)) {
            if (j < n && isupper_c((unsigned char)s[j])) {
                /* an acronym run: HTTPServer -> HTTP + Server */
                while (j < n && isupper_c((unsigned char)s[j]))
                    j++;
                if (j < n && islower_c((unsigned char)s[j])) j--;
            } else {
                while (j < n && (islower_c((unsigned char)s[j]) || (unsigned char)s[j] >= 0x80))
                    j++;
            }
        } else {
            while (j < n && (islower_c((unsigned char)s[j]) || (unsigned char)s[j] >= 0x80))
                j++;
        }
        if (j - i >= 2 || isalpha_c(c0)) {
            add_lower(out, s + i, j - i);
            parts++;
        }
        i = j;
    }
    return parts;
}

void idx_tok_code(const char *text, size_t len, StrBuf *out)
{
    StrBuf parts;
    sb_init(&parts);
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        if (!is_ident_start(c)) {
            if (isdigit_c(c))
                while (i < len && is_ident_char((unsigned char)text[i]))
                    i++;
            else
                i++;
            continue;
        }
        size_t j = i + 1;
        while (j < len && is_ident_char((unsigned char)text[j]))
            j++;
        sb_reset(&parts);
        int n = tok__parts(text + i, j - i, &parts);
        if (n != 1 || parts.len != j - i) add_lower(out, text + i, j - i);
        if (parts.len) {
            if (out->len) sb_addc(out, ' ');
            sb_add(out, parts.buf, parts.len);
        }
        i = j;
    }
    sb_release(&parts);
}
