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

static void stem__run(Stemmer *m, const char *text, size_t n, int flags, void *ctx,
                      int (*fn)(void *, int, const char *, int, int, int))
{
    if (n) m->api.xTokenize(m->tok, ctx, flags, text, (int)n, fn);
}

void idx_stem_each(Stemmer *m, const char *text, int flags, void *ctx,
                   int (*fn)(void *, int, const char *, int, int, int))
{
    if (text) stem__run(m, text, strlen(text), flags, ctx, fn);
}

/* ---------------------------------------------------------------- a file's terms */

/* The words of a file's fields (space-separated) already tokenized: the
 * tokenizer (unicode61 then porter, token by token) never joins across a
 * space, so a word's terms are the same wherever it stands, and a word
 * that repeats (most of a file's identifiers) is tokenized once. */
struct FileWords {
    StrBuf text;
    uint32_t *off, *len, *first, *count; /* per word: its text, its terms in ids */
    uint64_t *hash;
    uint32_t n;
    size_t cap, cap_slot;
    uint32_t *slot; /* open addressing by hash: word index + 1 */
    uint32_t *ids;  /* the local term ids of every word, word after word */
    size_t n_ids, cap_ids;
};

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
    FileWords *w = ft->words;
    (void)start;
    (void)end;
    if (n <= 0 || (tflags & FTS5_TOKEN_COLOCATED)) return SQLITE_OK;
    uint32_t k = fileterms__intern(ft, tok, (size_t)n);
    ARRAY_GROW(w->ids, w->n_ids + 1, w->cap_ids);
    w->ids[w->n_ids++] = k;
    return SQLITE_OK;
}

/* The index of word s[0..n) in ft's words, tokenized when new. */
static uint32_t fileterms__word(FileTerms *ft, Stemmer *m, const char *s, size_t n)
{
    FileWords *w = ft->words;
    uint64_t h = hash64(s, n);
    if ((w->n + 1) * 2 > w->cap_slot) {
        size_t cap = w->cap_slot ? w->cap_slot * 2 : 256;
        free(w->slot);
        w->slot = xcalloc(cap, sizeof *w->slot);
        w->cap_slot = cap;
        for (uint32_t k = 0; k < w->n; k++) {
            size_t i = w->hash[k] & (cap - 1);
            while (w->slot[i])
                i = (i + 1) & (cap - 1);
            w->slot[i] = k + 1;
        }
    }
    size_t i = h & (w->cap_slot - 1);
    for (uint32_t v; (v = w->slot[i]) != 0; i = (i + 1) & (w->cap_slot - 1)) {
        uint32_t k = v - 1;
        if (w->hash[k] == h && w->len[k] == n && !memcmp(w->text.buf + w->off[k], s, n)) return k;
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 64;
        w->off = xrealloc(w->off, w->cap * sizeof *w->off);
        w->len = xrealloc(w->len, w->cap * sizeof *w->len);
        w->first = xrealloc(w->first, w->cap * sizeof *w->first);
        w->count = xrealloc(w->count, w->cap * sizeof *w->count);
        w->hash = xrealloc(w->hash, w->cap * sizeof *w->hash);
    }
    uint32_t k = w->n++;
    w->off[k] = (uint32_t)w->text.len;
    w->len[k] = (uint32_t)n;
    w->hash[k] = h;
    sb_add(&w->text, s, n);
    w->slot[i] = k + 1;
    w->first[k] = (uint32_t)w->n_ids;
    stem__run(m, s, n, FTS5_TOKENIZE_DOCUMENT, ft, fileterms__token);
    w->count[k] = (uint32_t)(w->n_ids - w->first[k]);
    return k;
}

void idx_fileterms_add_field(FileTerms *ft, Stemmer *m, const char *text)
{
    ARRAY_GROW(ft->field_end, ft->n_fields + 1, ft->cap_fields);
    if (!ft->words) ft->words = xcalloc(1, sizeof *ft->words);
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n) {
            const FileWords *w = ft->words;
            uint32_t k = fileterms__word(ft, m, p, n);
            ARRAY_GROW(ft->tok, ft->n_tok + w->count[k], ft->cap_tok);
            memcpy(ft->tok + ft->n_tok, w->ids + w->first[k], w->count[k] * sizeof *ft->tok);
            ft->n_tok += w->count[k];
        }
        p += n;
        if (*p) p++;
    }
    ft->field_end[ft->n_fields++] = ft->n_tok;
}

/* The words and the hash table serve only the adding. */
static void fileterms__words_release(FileTerms *ft)
{
    free(ft->slot);
    ft->slot = NULL;
    ft->cap_slot = 0;
    if (!ft->words) return;
    sb_release(&ft->words->text);
    free(ft->words->off);
    free(ft->words->len);
    free(ft->words->first);
    free(ft->words->count);
    free(ft->words->hash);
    free(ft->words->slot);
    free(ft->words->ids);
    free(ft->words);
    ft->words = NULL;
}

void idx_fileterms_done(FileTerms *ft)
{
    fileterms__words_release(ft);
}

void idx_fileterms_release(FileTerms *ft)
{
    sb_release(&ft->text);
    free(ft->off);
    free(ft->len);
    free(ft->hash);
    free(ft->tok);
    free(ft->field_end);
    fileterms__words_release(ft);
    memset(ft, 0, sizeof *ft);
}
