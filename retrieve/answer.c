#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

/* Longest signature or docstring line shown, in characters. */
#define RTV_SHOW_CHARS 160

/* Appends s[0..len) cut to at most max characters on a UTF-8 boundary. */
static void add_capped(StrBuf *sb, const char *s, size_t len, size_t max, int escape)
{
    size_t chars = 0, i = 0;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80 && chars++ == max) break;
        if (escape && (c == '[' || c == ']' || c == '\\')) sb_addc(sb, '\\');
        sb_addc(sb, (char)c);
    }
    if (i < len) sb_adds(sb, "\xE2\x80\xA6"); /* U+2026 ellipsis */
}

void rtv_add_escaped(StrBuf *sb, const char *s, size_t max_chars)
{
    size_t len = strlen(s);
    /* one line: a reason may quote a server's multi-line body */
    char *tmp = xstrndup(s, len);
    for (size_t i = 0; i < len; i++)
        if (tmp[i] == '\n' || tmp[i] == '\r') tmp[i] = ' ';
    add_capped(sb, tmp, len, max_chars, 1);
    free(tmp);
}

/* Appends s as a markdown code span, fenced with more backticks than it holds. */
static void add_code(StrBuf *sb, const char *s, size_t len, size_t max)
{
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < len; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    int pad = longest > 0;
    for (size_t i = 0; i <= longest; i++)
        sb_addc(sb, '`');
    if (pad) sb_addc(sb, ' ');
    add_capped(sb, s, len, max, 0);
    if (pad) sb_addc(sb, ' ');
    for (size_t i = 0; i <= longest; i++)
        sb_addc(sb, '`');
}

/* For a piece of a split definition: the packed piece of the same
 * definition that ends nearest before it, or NULL. */
static const RtvItem *piece_before(const RtvItem *items, size_t n, const RtvItem *it)
{
    const RtvItem *best = NULL;
    const IdxChunk *c = &it->chunk;
    for (size_t i = 0; c->window > 0 && i < n; i++) {
        const IdxChunk *o = &items[i].chunk;
        if (&items[i] == it || o->window == 0 || o->kind != c->kind ||
            strcmp(o->symbol, c->symbol) || strcmp(o->path, c->path) ||
            items[i].end_line >= it->start_line)
            continue;
        if (!best || items[i].end_line > best->end_line) best = &items[i];
    }
    return best;
}

static void add_item(StrBuf *sb, const RtvItem *items, size_t n, const RtvItem *it)
{
    const IdxChunk *c = &it->chunk;
    sb_adds(sb, "- ");
    if (c->symbol && c->symbol[0])
        add_code(sb, c->symbol, strlen(c->symbol), RTV_SHOW_CHARS);
    else
        sb_adds(sb, "module code");
    if (c->window > 0) sb_addf(sb, " (part %u)", c->window);
    if (it->start_line == it->end_line)
        sb_addf(sb, " [%s:%u]", c->path, it->start_line);
    else
        sb_addf(sb, " [%s:%u-%u]", c->path, it->start_line, it->end_line);
    const RtvItem *prev = piece_before(items, n, it);
    if (prev && prev->end_line + 1 < it->start_line)
        sb_addf(sb, " (lines %u-%u of it, between the parts shown, are not in the context)",
                prev->end_line + 1, it->start_line - 1);
    if (c->signature && c->signature[0]) {
        sb_adds(sb, " \xE2\x80\x94 "); /* em dash */
        add_code(sb, c->signature, strlen(c->signature), RTV_SHOW_CHARS);
    }
    const char *d = c->docstring ? c->docstring : "";
    while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r')
        d++;
    size_t dl = strcspn(d, "\n");
    while (dl && (d[dl - 1] == ' ' || d[dl - 1] == '\t' || d[dl - 1] == '\r'))
        dl--;
    if (dl) {
        sb_adds(sb, " \xE2\x80\x94 ");
        add_capped(sb, d, dl, RTV_SHOW_CHARS, 1);
    }
    sb_addc(sb, '\n');
}

char *rtv_extractive_answer(const RtvItem *items, size_t n, const char *why_empty, int weak,
                            const char *notice)
{
    StrBuf sb;
    size_t *file_of = NULL, n_files = 0;
    sb_init(&sb);
    if (n == 0) {
        sb_adds(&sb, "No indexed code matched the question.");
        if (why_empty && why_empty[0]) sb_addf(&sb, " %s", why_empty);
        sb_addc(&sb, '\n');
        goto out;
    }

    /* Files in order of their best item: first appearance in rank order. */
    file_of = xcalloc(n, sizeof *file_of);
    for (size_t i = 0; i < n; i++) {
        size_t f = i;
        for (size_t k = 0; k < i; k++) {
            if (strcmp(items[k].chunk.path, items[i].chunk.path) == 0) {
                f = file_of[k];
                break;
            }
        }
        if (f == i) n_files++;
        file_of[i] = f;
    }

    const RtvItem *top = &items[0];
    if (weak)
        sb_adds(&sb, "No indexed code matches this question well: the closest code shares only "
                     "a few of its words, so it may not answer it.\n\n");
    sb_addf(&sb,
            "Found %zu code location%s in %zu file%s matching the question; the best match is ", n,
            n == 1 ? "" : "s", n_files, n_files == 1 ? "" : "s");
    if (top->chunk.symbol && top->chunk.symbol[0]) {
        add_code(&sb, top->chunk.symbol, strlen(top->chunk.symbol), RTV_SHOW_CHARS);
        sb_adds(&sb, " in ");
    } else {
        sb_adds(&sb, "module code of ");
    }
    add_code(&sb, top->chunk.path, strlen(top->chunk.path), RTV_SHOW_CHARS * 2);
    sb_adds(&sb, ".\n");

    for (size_t i = 0; i < n; i++) {
        if (file_of[i] != i) continue;
        sb_adds(&sb, "\n**");
        add_code(&sb, items[i].chunk.path, strlen(items[i].chunk.path), RTV_SHOW_CHARS * 2);
        sb_adds(&sb, "**\n");
        for (size_t k = i; k < n; k++)
            if (file_of[k] == i) add_item(&sb, items, n, &items[k]);
    }
out:
    if (notice && notice[0]) {
        sb_adds(&sb, "\n_Note: ");
        add_capped(&sb, notice, strlen(notice), 400, 1);
        sb_adds(&sb, "._\n");
    }
    free(file_of);
    char *s = sb_detach(&sb, NULL);
    sb_release(&sb);
    return s;
}
