/*
 * chunk.c - one Chunker per thread: a parser and a compiled query per
 * language, created on first use, and the dispatch to the language's walk
 * (the row's own, the generic query-driven one, or the text splitter).
 */
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK__MAX_LANGS 32

typedef struct ChunkLangState {
    TSParser *parser;
    const TSQuery *query;
    TSQuery *own_query; /* compiled here (no IdxQueries), or NULL */
    int failed;         /* the query did not compile: definitions unavailable */
    void *own;          /* the row's own walk's state (IdxLang.chunk) */
    TsKeep keep;        /* the last parse's text and tree (Chunker.keep) */
} ChunkLangState;

struct Chunker {
    ChunkLangState st[CHUNK__MAX_LANGS];
    IdxQueries *qs; /* borrowed; NULL: queries compiled here */
    int keep;       /* each row's last parse kept for its next (idx_chunker_keep_trees) */
};

Chunker *idx_chunker_new(void)
{
    return xcalloc(1, sizeof(Chunker));
}

Chunker *idx_chunker_new_queries(IdxQueries *qs)
{
    Chunker *c = idx_chunker_new();
    c->qs = qs;
    return c;
}

void idx_chunker_keep_trees(Chunker *c)
{
    c->keep = 1;
}

void idx_chunker_free(Chunker *c)
{
    if (!c) return;
    for (size_t i = 0; i < CHUNK__MAX_LANGS; i++) {
        idx_ts_keep_release(&c->st[i].keep);
        if (c->st[i].own && i < idx_lang_count()) idx_lang_at(i)->chunk_free(c->st[i].own);
        if (c->st[i].own_query) ts_query_delete(c->st[i].own_query);
        if (c->st[i].parser) ts_parser_delete(c->st[i].parser);
    }
    free(c);
}

void idx_chunk_set_release(ChunkSet *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_chunks; i++) {
        ChunkDef *d = &s->chunks[i];
        free(d->symbol);
        free(d->name);
        free(d->signature);
        free(d->docstring);
    }
    for (size_t i = 0; i < s->n_refs; i++) {
        ChunkRef *r = &s->refs[i];
        free(r->module);
        free(r->member);
        free(r->alias);
        free(r->name);
    }
    for (size_t i = 0; i < s->n_pp; i++) {
        free(s->pp[i].name);
        free(s->pp[i].text);
    }
    free(s->chunks);
    free(s->refs);
    free(s->pp);
    free(s->package);
    memset(s, 0, sizeof *s);
}

/* The row's slot in the Chunker, or NULL (e set). */
static ChunkLangState *chunk__slot(Chunker *c, const IdxLang *lang, ErrInfo *e)
{
    size_t i = 0, n = idx_lang_count();
    while (i < n && idx_lang_at(i) != lang)
        i++;
    if (i >= n || i >= CHUNK__MAX_LANGS) {
        err_set(e, CR_EINVAL, "language '%s' is not in the table", lang->name);
        return NULL;
    }
    return &c->st[i];
}

static ChunkLangState *chunk__state(Chunker *c, const IdxLang *lang, ErrInfo *e)
{
    ChunkLangState *s = chunk__slot(c, lang, e);
    if (!s) return NULL;
    if (!s->parser && !s->failed) {
        const TSLanguage *l = lang->grammar();
        s->parser = ts_parser_new();
        if (!ts_parser_set_language(s->parser, l)) {
            s->failed = 1;
            log_msg(LOG_ERROR, "chunk: grammar '%s' has an ABI this tree-sitter refuses",
                    lang->name);
        } else if (lang->query && c->qs) {
            idx_queries_start(c->qs, lang); /* asked for after the parse */
        } else if (lang->query) {
            s->query = s->own_query = idx_chunk_query_compile(lang);
            if (!s->query) s->failed = 1;
        }
    }
    if (s->failed) {
        err_set(e, CR_EPARSE, "no usable grammar or query for '%s'", lang->name);
        return NULL;
    }
    return s;
}

CrErr idx_chunker_run_lang(Chunker *c, const IdxLang *lang, const char *src, size_t len,
                           uint32_t max_lines, ChunkSet *out, ErrInfo *e)
{
    if (!lang) return err_set(e, CR_EINVAL, "no language row to chunk with");
    if (lang->chunk) {
        ChunkLangState *s = chunk__slot(c, lang, e);
        return s   ? lang->chunk(&s->own, c->keep ? &s->keep : NULL, src, len, max_lines, out, e)
               : e ? e->code
                   : CR_EINVAL;
    }
    if (!lang->grammar) return idx_chunk_text(lang, src, len, max_lines, out, e);
    ChunkLangState *s = chunk__state(c, lang, e);
    if (!s) return e ? e->code : CR_EPARSE;
    return idx_chunk_ts(s->parser, c->keep ? &s->keep : NULL, s->query, c->qs, lang, src, len,
                        max_lines, out, e);
}
