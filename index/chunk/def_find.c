/* def_find.c - a definition re-found in a file's current text by its
 * symbol, the text chunked as the index chunks its language: every row's
 * own definition shape, with no second per-language pattern. */
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>

/* The last component of a dotted symbol, and the one before it (or NULL). */
static const char *find__last(const char *sym, const char **parent, size_t *pn)
{
    const char *dot = strrchr(sym, '.');
    *parent = NULL;
    *pn = 0;
    if (!dot) return sym;
    const char *p = dot;
    while (p > sym && p[-1] != '.')
        p--;
    *parent = p;
    *pn = (size_t)(dot - p);
    return dot + 1;
}

/* How well a chunk's symbol names the wanted one: 2 the same symbol, 1 the
 * same name in a parent of the same name, 0 the same name, -1 another. */
static int find__score(const char *have, const char *want)
{
    if (!strcmp(have, want)) return 2;
    const char *hp, *wp;
    size_t hn, wn;
    const char *h = find__last(have, &hp, &hn), *w = find__last(want, &wp, &wn);
    if (strcmp(h, w) != 0) return -1;
    return hp && wp && hn == wn && !memcmp(hp, wp, hn);
}

/* Whether sym is unit or one of its members ("A", "A.f" for unit "A"). */
static int find__in_unit(const char *sym, const char *unit)
{
    size_t n = strlen(unit);
    return !strncmp(sym, unit, n) && (sym[n] == '\0' || sym[n] == '.');
}

int idx_find_definition(const char *path, const char *text, size_t len, const char *symbol,
                        uint32_t near, uint32_t *start, uint32_t *end)
{
    return idx_find_definition_queries(NULL, path, text, len, symbol, near, start, end);
}

int idx_find_definition_queries(IdxQueries *qs, const char *path, const char *text, size_t len,
                                const char *symbol, uint32_t near, uint32_t *start, uint32_t *end)
{
    if (!path || !symbol || !symbol[0]) return 0;
    const IdxLang *lang = idx_lang_for_path(path);
    if (!lang) lang = idx_lang_for_shebang(text, len);
    if (!lang) return 0;
    /* module-level code is named after its module: no definition to find */
    char *mod = lang->module_name ? lang->module_name(path) : idx_lang_module_keep_ext(path);
    int is_mod = mod && !strcmp(mod, symbol);
    free(mod);
    if (is_mod) return 0;

    Chunker *c = idx_chunker_new_queries(qs);
    ChunkSet cs = {0};
    int found = 0, best_score = -1;
    uint32_t best_dist = 0;
    if (idx_chunker_run_lang(c, lang, text, len, 0, &cs, NULL) == CR_OK) {
        for (size_t i = 0; i < cs.n_chunks; i++) {
            const ChunkDef *d = &cs.chunks[i];
            if (!d->symbol || !d->symbol[0] || d->window > 1) continue;
            if (i > 0 && !strcmp(cs.chunks[i - 1].symbol, d->symbol)) continue; /* a later run */
            int score = find__score(d->symbol, symbol);
            if (score < 0) continue;
            uint32_t s = d->start_line, e = d->end_line;
            for (size_t j = i + 1; j < cs.n_chunks && find__in_unit(cs.chunks[j].symbol, d->symbol);
                 j++)
                if (cs.chunks[j].end_line > e) e = cs.chunks[j].end_line;
            uint32_t dist = s > near ? s - near : near - s;
            if (!found || score > best_score || (score == best_score && dist < best_dist)) {
                found = 1;
                best_score = score;
                best_dist = dist;
                *start = s;
                *end = e;
            }
        }
    }
    idx_chunk_set_release(&cs);
    idx_chunker_free(c);
    return found;
}
