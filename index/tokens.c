#include "idx_int.h"

#include <string.h>

/* The C locale's classes (nothing sets another), one load per byte: bit 1
 * starts an identifier (a letter, '_', any byte of a multi-byte character),
 * 2 a digit, 4 an upper-case letter, 8 a lower-case letter or a byte of a
 * multi-byte character. */
#define TOK_START 1
#define TOK_DIGIT 2
#define TOK_UPPER 4
#define TOK_LOWER 8
static const unsigned char tok_class[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0,
    0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 0, 0, 0, 0, 1,
    0, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 0,
    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
    9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
};

static int isdigit_c(unsigned char c)
{
    return tok_class[c] & TOK_DIGIT;
}

static int isupper_c(unsigned char c)
{
    return tok_class[c] & TOK_UPPER;
}

static int islower_c(unsigned char c)
{
    return c >= 'a' && c <= 'z';
}

static int isalpha_c(unsigned char c)
{
    return isupper_c(c) || islower_c(c);
}

/* islower_c, or a byte of a multi-byte character */
static int islower_or_high(unsigned char c)
{
    return tok_class[c] & TOK_LOWER;
}

static int is_ident_start(unsigned char c)
{
    return tok_class[c] & TOK_START;
}

static int is_ident_char(unsigned char c)
{
    return tok_class[c] & (TOK_START | TOK_DIGIT);
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
                while (j < n && islower_or_high((unsigned char)s[j]))
                    j++;
            }
        } else {
            while (j < n && islower_or_high((unsigned char)s[j]))
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
        int lower = tok_class[c] & TOK_LOWER;
        while (j < len && is_ident_char((unsigned char)text[j]))
            lower &= tok_class[(unsigned char)text[j++]];
        if (lower) { /* lower-case letters alone: one part, the word itself */
            add_lower(out, text + i, j - i);
            i = j;
            continue;
        }
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
