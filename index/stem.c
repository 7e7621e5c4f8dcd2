#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* The postings' tokenizer, and a file's terms stemmed by a parse worker
 * (FileTerms): each distinct term once, every token an index into them, so
 * that the writer looks each term of a file up once and sorts nothing. */

/* FTS5's porter tokenizer, made from one connection's FTS5 API; one per
 * thread (an instance is not shared). */
struct Stemmer {
    fts5_tokenizer api;
    Fts5Tokenizer *tok;
};

CrErr idx_stemmer_new(IdxStore *st, Stemmer **out, ErrInfo *e)
{
    fts5_api *api = NULL;
    sqlite3_stmt *s = NULL;
    void *ud = NULL;
    *out = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT fts5(?1)", -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "fts5 api");
    sqlite3_bind_pointer(s, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(s);
    sqlite3_finalize(s);
    if (!api) return err_set(e, CR_EDB, "this SQLite has no FTS5");
    Stemmer *m = xcalloc(1, sizeof *m);
    static const char *const args[] = {"unicode61", "tokenchars", "_"};
    if (api->xFindTokenizer(api, "porter", &ud, &m->api) != SQLITE_OK ||
        m->api.xCreate(ud, (const char **)args, 3, &m->tok) != SQLITE_OK) {
        free(m);
        return err_set(e, CR_EDB, "FTS5 porter tokenizer unavailable");
    }
    *out = m;
    return CR_OK;
}

void idx_stemmer_free(Stemmer *m)
{
    if (!m) return;
    if (m->tok) m->api.xDelete(m->tok);
    free(m);
}

void idx_stem_each(Stemmer *m, const char *text, int flags, void *ctx,
                   int (*fn)(void *, int, const char *, int, int, int))
{
    if (text && text[0]) m->api.xTokenize(m->tok, ctx, flags, text, (int)strlen(text), fn);
}

/* ---------------------------------------------------------------- a file's terms */

/* The local id of term t, added when new. */
static uint32_t fileterms__intern(FileTerms *ft, const char *t, size_t n)
{
    uint64_t h = hash64(t, n);
    if ((ft->n + 1) * 2 > ft->cap_slot) {
        size_t cap = ft->cap_slot ? ft->cap_slot * 2 : 256;
        free(ft->slot);
        ft->slot = xcalloc(cap, sizeof *ft->slot);
        ft->cap_slot = cap;
        for (uint32_t k = 0; k < ft->n; k++) {
            size_t i = ft->hash[k] & (cap - 1);
            while (ft->slot[i])
                i = (i + 1) & (cap - 1);
            ft->slot[i] = k + 1;
        }
    }
    size_t i = h & (ft->cap_slot - 1);
    for (uint32_t v; (v = ft->slot[i]) != 0; i = (i + 1) & (ft->cap_slot - 1)) {
        uint32_t k = v - 1;
        if (ft->hash[k] == h && ft->len[k] == n && !memcmp(ft->text.buf + ft->off[k], t, n))
            return k;
    }
    if (ft->n == ft->cap) {
        ft->cap = ft->cap ? ft->cap * 2 : 64;
        ft->off = xrealloc(ft->off, ft->cap * sizeof *ft->off);
        ft->len = xrealloc(ft->len, ft->cap * sizeof *ft->len);
        ft->hash = xrealloc(ft->hash, ft->cap * sizeof *ft->hash);
    }
    ft->off[ft->n] = ft->text.len;
    ft->len[ft->n] = (uint32_t)n;
    ft->hash[ft->n] = h;
    sb_add(&ft->text, t, n);
    sb_addc(&ft->text, '\0');
    ft->slot[i] = ft->n + 1;
    return ft->n++;
}

static int fileterms__token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
    FileTerms *ft = ctx;
    (void)start;
    (void)end;
    if (n <= 0 || (tflags & FTS5_TOKEN_COLOCATED)) return SQLITE_OK;
    uint32_t k = fileterms__intern(ft, tok, (size_t)n);
    ARRAY_GROW(ft->tok, ft->n_tok + 1, ft->cap_tok);
    ft->tok[ft->n_tok++] = k;
    return SQLITE_OK;
}

void idx_fileterms_add_field(FileTerms *ft, Stemmer *m, const char *text)
{
    ARRAY_GROW(ft->field_end, ft->n_fields + 1, ft->cap_fields);
    idx_stem_each(m, text, FTS5_TOKENIZE_DOCUMENT, ft, fileterms__token);
    ft->field_end[ft->n_fields++] = ft->n_tok;
}

void idx_fileterms_release(FileTerms *ft)
{
    sb_release(&ft->text);
    free(ft->off);
    free(ft->len);
    free(ft->hash);
    free(ft->slot);
    free(ft->tok);
    free(ft->field_end);
    memset(ft, 0, sizeof *ft);
}
