/* chunk_ts_doc.c - a definition's doc comment and one-line signature. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

#define TS__SIG_MAX 300u
#define TS__DOC_MAX 2000u

/* Comment text without its markers, one line per line. */
static void ts__strip_comment(const char *s, size_t n, StrBuf *out)
{
    size_t i = 0;
    int fence = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != '\n')
            j++;
        size_t a = i, b = j;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
            b--;
        if (b - a >= 2 && s[b - 2] == '*' && s[b - 1] == '/') b -= 2;
        if (b - a >= 3 && (!memcmp(s + a, "///", 3) || !memcmp(s + a, "//!", 3) ||
                           !memcmp(s + a, "/**", 3) || !memcmp(s + a, "/*!", 3)))
            a += 3;
        else if (b - a >= 2 && (!memcmp(s + a, "//", 2) || !memcmp(s + a, "/*", 2)))
            a += 2;
        else if (b - a >= 1 && (s[a] == '*' || s[a] == '#'))
            a += 1;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == '*' || s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        /* a fenced example (``` ... ```) is code using the definition, not
         * words describing it */
        int marker = b - a >= 3 && !memcmp(s + a, "```", 3);
        if (marker) fence = !fence;
        if (a < b && !marker && !fence) {
            if (out->len) sb_addc(out, '\n');
            sb_add(out, s + a, b - a);
        }
        i = j + 1;
    }
}

/* The last row a node covers (a line comment may end with its newline,
 * at column 0 of the next row). */
static uint32_t ts__end_row(TSNode n)
{
    TSPoint end = ts_node_end_point(n);
    return end.column == 0 && end.row > ts_node_start_point(n).row ? end.row - 1 : end.row;
}

static int ts__doc_block(const TsRun *r, TSNode n)
{
    uint32_t a = ts_node_start_byte(n);
    return a + 3 <= r->em.len && !memcmp(r->em.src + a, "/**", 3);
}

/* The comments right above n (no blank line between), as text. */
char *idx_chunk_ts_doc(TsRun *r, TSNode n, uint32_t *out_line)
{
    uint32_t row = ts_node_start_point(n).row;
    TSNode first = {0};
    for (TSNode p = ts_node_prev_sibling(n); !ts_node_is_null(p); p = ts_node_prev_sibling(p)) {
        if (!chunk_ts__is_comment(r, ts_node_symbol(p))) break;
        /* a doc block (slash-star-star) keeps its definition across one
         * blank line, as JSDoc reads it (the style of express and its
         * kin); other comments must touch it */
        uint32_t gap = ts_node_is_null(first) && ts__doc_block(r, p) ? 2 : 1;
        if (ts__end_row(p) + gap < row) break;
        /* a trailing comment of the previous statement is not a doc comment */
        TSNode pp = ts_node_prev_sibling(p);
        if (!ts_node_is_null(pp) && ts__end_row(pp) == ts_node_start_point(p).row) break;
        first = p;
        row = ts_node_start_point(p).row;
    }
    if (ts_node_is_null(first)) return NULL;
    *out_line = ts_node_start_point(first).row + 1;
    StrBuf out;
    sb_init(&out);
    uint32_t a = ts_node_start_byte(first), b = ts_node_start_byte(n);
    if (b > a + TS__DOC_MAX) b = a + TS__DOC_MAX;
    ts__strip_comment(r->em.src + a, b - a, &out);
    if (!out.len) {
        sb_release(&out);
        return NULL;
    }
    return sb_detach(&out, NULL);
}

/* One-line header: from the definition to its body (or the end of its
 * first line), whitespace collapsed. */
char *idx_chunk_ts_signature(TsRun *r, const TsDef *d)
{
    const char *src = r->em.src;
    uint32_t a = ts_node_start_byte(d->node), b;
    if (!ts_node_is_null(d->body) && ts_node_start_byte(d->body) > a) {
        b = ts_node_start_byte(d->body);
    } else {
        uint32_t l = ts_node_start_point(d->node).row + 1;
        b = l <= r->em.n_lines ? r->em.line_start[l + 1] : r->em.len;
        if (ts_node_end_byte(d->node) < b) b = ts_node_end_byte(d->node);
    }
    StrBuf *sb = &r->sb;
    sb_reset(sb);
    int space = 0;
    for (uint32_t i = a; i < b && sb->len < TS__SIG_MAX; i++) {
        char c = src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = 1;
            continue;
        }
        if (space && sb->len) sb_addc(sb, ' ');
        space = 0;
        sb_addc(sb, c);
    }
    while (sb->len && (sb->buf[sb->len - 1] == '{' || sb->buf[sb->len - 1] == ' '))
        sb->len--;
    return xstrndup(sb->buf, sb->len);
}
