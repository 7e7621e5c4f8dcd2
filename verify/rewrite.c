#include "vfy_int.h"

#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void add_canonical(StrBuf *sb, const char *path, uint32_t a, uint32_t b)
{
    if (a == b)
        sb_addf(sb, "%s:%u", path, a);
    else
        sb_addf(sb, "%s:%u-%u", path, a, b);
}

static int ends_word(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || (c && strchr(".,;:!?)]", c));
}

static void chop(StrBuf *sb, size_t n)
{
    sb_truncate(sb, sb->len - n);
}

/* The opening run at the end of sb that text[next..] would close right away:
 * "(" ")", "[" "]", a quote or backtick, or an emphasis run ("**", "_",
 * "~~"); its length, or 0. Only runs that stand alone count, so that
 * "f([x])" keeps its "()" and code around is left as it was. */
static size_t empty_pair(const StrBuf *sb, const char *text, size_t len, size_t next)
{
    if (sb->len == 0 || next >= len) return 0;
    char open = sb->buf[sb->len - 1], close;
    size_t r = 1;
    if (open == '(')
        close = ')';
    else if (open == '[')
        close = ']';
    else if (open == '`' || open == '"' || open == '\'')
        close = open;
    else if (open == '*' || open == '_' || open == '~') {
        close = open;
        while (r < sb->len && r < 3 && sb->buf[sb->len - 1 - r] == open)
            r++;
    } else
        return 0;
    for (size_t k = 0; k < r; k++)
        if (next + k >= len || text[next + k] != close) return 0;
    size_t at = sb->len - r;
    char before = at ? sb->buf[at - 1] : ' ';
    int alone_before = is_blank(before) || (before && strchr("\n([", before));
    int alone_after = next + r >= len || ends_word(text[next + r]);
    return alone_before && alone_after ? r : 0;
}

/* After a citation is dropped, keeps the prose tidy: "see [x]." -> "see.",
 * "a [x] b" -> "a b", "f ([x])" -> "f", "**[x]**" -> "", "([x], [y])" ->
 * "([y])". Returns where to go on in text. */
static size_t tidy_drop(StrBuf *sb, const char *text, size_t len, size_t next)
{
    for (;;) {
        size_t r = empty_pair(sb, text, len, next);
        if (r) {
            chop(sb, r);
            next += r;
            continue;
        }
        char p = sb->len ? sb->buf[sb->len - 1] : '\0';
        if ((sb->len == 0 || p == '\n' || p == '(' || p == '[') && next < len &&
            (text[next] == ',' || text[next] == ';')) {
            for (next++; next < len && is_blank(text[next]); next++)
                ;
            continue;
        }
        break;
    }
    int at_end = next >= len;
    char c = at_end ? '\0' : text[next];
    if (sb->len && is_blank(sb->buf[sb->len - 1]) && (at_end || ends_word(c))) {
        while (sb->len && is_blank(sb->buf[sb->len - 1]))
            chop(sb, 1);
        /* "as shown, [x]." -> "as shown." */
        if (sb->len && (sb->buf[sb->len - 1] == ',' || sb->buf[sb->len - 1] == ';') &&
            (at_end || (c && strchr(".!?)]\n\r", c))))
            chop(sb, 1);
        return next;
    }
    if ((sb->len == 0 || sb->buf[sb->len - 1] == '\n') && !at_end && is_blank(c))
        while (next < len && is_blank(text[next]))
            next++;
    return next;
}

/* The link text to keep in place of a link citation; 0 when there is none
 * worth keeping (empty, or a path or citation itself). */
static int keep_label(const char *text, const VfyMention *m)
{
    if (m->form != VFY_FORM_LINK) return 0;
    size_t b = m->label_off, e = m->label_off + m->label_len;
    while (b < e && is_blank(text[b]))
        b++;
    while (e > b && is_blank(text[e - 1]))
        e--;
    return e > b && !vfy_label_is_ref(text + m->label_off, m->label_len);
}

void vfy_rewrite(const char *text, size_t len, const VfyMention *m, size_t n_m, const int *kept,
                 char *const *canon, StrBuf *out)
{
    size_t pos = 0;
    for (size_t i = 0; i < n_m;) {
        size_t g = i, g_off = m[i].group_off, g_end = g_off + m[i].group_len;
        int n_kept = 0;
        while (i < n_m && m[i].group_off == g_off)
            n_kept += kept[i++];
        sb_add(out, text + pos, g_off - pos);
        pos = g_end;
        int label = keep_label(text, &m[g]);
        if (label) sb_add(out, text + m[g].label_off, m[g].label_len);
        if (n_kept == 0) {
            if (!label) pos = tidy_drop(out, text, len, pos);
            if (i < n_m && pos > m[i].group_off) pos = m[i].group_off; /* never into the next */
            continue;
        }
        if (label) sb_addc(out, ' ');
        sb_addc(out, '[');
        for (size_t k = g, first = 1; k < i; k++) {
            if (!kept[k]) continue;
            if (!first) sb_adds(out, "; ");
            add_canonical(out, canon[k], m[k].start_line, m[k].end_line);
            first = 0;
        }
        sb_addc(out, ']');
    }
    sb_add(out, text + pos, len - pos);
}
