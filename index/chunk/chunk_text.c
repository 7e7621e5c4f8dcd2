/*
 * chunk_text.c - docs and config as text, split where the row's headings
 * say (lang.h: Markdown's ATX and setext headings, not inside code fences;
 * underlined titles), anything else in windows. A section is a unit named
 * by its heading.
 */
#include "chunk_emit.h"
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>

#define TEXT__WINDOW 60u

static int text__punct_line(const char *s, size_t n, char *out_c)
{
    static const char marks[] = "=-~^*#+`:'\"._";
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        n--;
    if (n < 3 || !strchr(marks, s[0])) return 0;
    for (size_t i = 1; i < n; i++)
        if (s[i] != s[0]) return 0;
    if (out_c) *out_c = s[0];
    return (int)n;
}

/* Heading text of line l (without marks), or NULL. */
static char *text__heading(const ChunkEmit *em, const IdxLang *lang, uint32_t l, int *in_fence)
{
    const char *s = em->src + em->line_start[l];
    size_t n = em->line_start[l + 1] - em->line_start[l];
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    const char *nx = l < em->n_lines ? em->src + em->line_start[l + 1] : NULL;
    size_t nn = nx ? em->line_start[l + 2] - em->line_start[l + 1] : 0;
    if (lang->headings == IDX_HEADINGS_MARKDOWN) {
        if (n >= 3 && (!memcmp(s, "```", 3) || !memcmp(s, "~~~", 3))) {
            *in_fence = !*in_fence;
            return NULL;
        }
        if (*in_fence) return NULL;
        if (n >= 2 && s[0] == '#') {
            size_t k = 0;
            while (k < n && s[k] == '#')
                k++;
            if (k > 6 || k >= n || s[k] != ' ') return NULL;
            while (k < n && s[k] == ' ')
                k++;
            size_t e = n;
            while (e > k && (s[e - 1] == '#' || s[e - 1] == ' '))
                e--;
            return e > k ? xstrndup(s + k, e - k) : NULL;
        }
        char c;
        if (n && s[0] != ' ' && nx && text__punct_line(nx, nn, &c) && (c == '=' || c == '-'))
            return xstrndup(s, n);
        return NULL;
    }
    /* IDX_HEADINGS_UNDERLINED: a title line over an underline at least as long */
    int u = nx ? text__punct_line(nx, nn, NULL) : 0;
    if (n && s[0] != ' ' && u && (size_t)u >= n && !text__punct_line(s, n, NULL))
        return xstrndup(s, n);
    return NULL;
}

CrErr idx_chunk_text(const IdxLang *lang, const char *src, size_t len, uint32_t max_lines,
                     ChunkSet *out, ErrInfo *e)
{
    ChunkEmit em;
    if (!src) len = 0;
    if (!src) src = "";
    if (len >= UINT32_MAX) return err_set(e, CR_EPARSE, "text of %zu bytes is too large", len);
    int sections = lang->headings != IDX_HEADINGS_NONE;
    idx_emit_init(&em, src, (uint32_t)len, sections ? max_lines : TEXT__WINDOW);
    /* paragraph starts are where long sections and windows are cut */
    for (uint32_t l = 1; l <= em.n_lines; l++)
        if (em.line_kind[l] == EMIT_CODE && (l == 1 || em.line_kind[l - 1] == EMIT_BLANK))
            em.cut[l] = 1;
    int fence = 0, open = -1;
    for (uint32_t l = 1; sections && l <= em.n_lines; l++) {
        char *h = text__heading(&em, lang, l, &fence);
        if (!h) continue;
        if (open >= 0) em.units[open].end = l > 1 ? l - 1 : 1;
        open = idx_emit_unit_add(&em, IDX_KIND_SECTION, -1, l, em.n_lines, h, xstrdup(h), NULL);
        em.cut[l] = 1;
    }
    if (!sections && em.n_lines)
        idx_emit_unit_add(&em, IDX_KIND_SECTION, -1, 1, em.n_lines, NULL, NULL, NULL);
    idx_emit_build(&em, out);
    idx_emit_release(&em);
    return CR_OK;
}
