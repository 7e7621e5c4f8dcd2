#include "../store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* The postings' tokenizer, and a file's terms stemmed by a parse worker
 * (FileTerms): each distinct term once, every token an index into them, so
 * that the writer looks each term of a file up once and sorts nothing. */

/* FTS5's porter tokenizer, made from one connection's FTS5 API; one per
 * thread (an instance is not shared). It keeps the terms of the words it
 * tokenized for files' terms (stem__word_terms), up to STEM_CACHE_WORDS
 * words: a build's files share most of their words, and a word's terms are
 * the same in every file (FileWords), so each is tokenized once per thread
 * rather than once per file (Django: 150,000 tokenizer runs less). */
enum { STEM_CACHE_WORDS = 65536 };

struct Stemmer {
    fts5_tokenizer api;
    Fts5Tokenizer *tok;
    struct StrIds *cache;    /* words tokenized (NULL until the first) */
    struct StrIds *terms;    /* their distinct terms, hashed once */
    uint32_t *first, *count; /* per cached word: its terms in tids */
    size_t cap_first, cap_count;
    uint32_t *tids; /* the terms of every cached word, word after word */
    size_t n_tids, cap_tids;
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

static void strids_release(StrIds *ids);

void idx_stemmer_free(Stemmer *m)
{
    if (!m) return;
    if (m->tok) m->api.xDelete(m->tok);
    if (m->cache) strids_release(m->cache);
    if (m->terms) strids_release(m->terms);
    free(m->cache);
    free(m->terms);
    free(m->first);
    free(m->count);
    free(m->tids);
    free(m);
}

static void stem__run(Stemmer *m, const char *text, size_t n, int flags, void *ctx,
                      int (*fn)(void *, int, const char *, int, int, int))
{
    if (n) m->api.xTokenize(m->tok, ctx, flags, text, (int)n, fn);
}

static int stem__term(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
    StemTerms *t = ctx;
    (void)start;
    (void)end;
    if (n <= 0 || (tflags & FTS5_TOKEN_COLOCATED)) return SQLITE_OK;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 32;
        t->off = xrealloc(t->off, t->cap * sizeof *t->off);
        t->len = xrealloc(t->len, t->cap * sizeof *t->len);
    }
    t->off[t->n] = (uint32_t)t->text.len;
    t->len[t->n++] = (uint32_t)n;
    sb_add(&t->text, tok, (size_t)n);
    return SQLITE_OK;
}

void idx_stem_terms(Stemmer *m, const char *text, int flags, StemTerms *out)
{
    sb_reset(&out->text);
    out->n = 0;
    if (text) stem__run(m, text, strlen(text), flags, out, stem__term);
}

void idx_stem_terms_release(StemTerms *t)
{
    sb_release(&t->text);
    free(t->off);
    free(t->len);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- a file's terms */

/* The words of a file's fields (space-separated) already tokenized: the
 * tokenizer (unicode61 then porter, token by token) never joins across a
 * space, so a word's terms are the same wherever it stands, and a word
 * that repeats (most of a file's identifiers) is tokenized once. */
struct FileWords {
    StrIds words;
    uint32_t *first, *count; /* per word: its terms in ids */
    size_t cap_first, cap_count;
    uint32_t *ids; /* the local term ids of every word, word after word */
    size_t n_ids, cap_ids;
};

/* The slot of s[0..n) (hash h) in ids: its id + 1, or 0 (an empty slot,
 * at *at). */
static uint32_t strids_find(const StrIds *ids, const char *s, size_t n, uint64_t h, size_t *at)
{
    size_t i = h & (ids->cap_slot - 1);
    uint32_t v;
    for (; (v = ids->slot[i]) != 0; i = (i + 1) & (ids->cap_slot - 1)) {
        uint32_t k = v - 1;
        if (ids->hash[k] == h && ids->len[k] == n && !memcmp(ids->text.buf + ids->off[k], s, n))
            break;
    }
    *at = i;
    return v;
}

/* The id of s[0..n) (hash h) in ids; *added 1 when it is new. */
static uint32_t strids_put(StrIds *ids, const char *s, size_t n, uint64_t h, int *added)
{
    if ((ids->n + 1) * 2 > ids->cap_slot) {
        size_t cap = ids->cap_slot ? ids->cap_slot * 2 : 256;
        free(ids->slot);
        ids->slot = xcalloc(cap, sizeof *ids->slot);
        ids->cap_slot = cap;
        for (uint32_t k = 0; k < ids->n; k++) {
            size_t i = ids->hash[k] & (cap - 1);
            while (ids->slot[i])
                i = (i + 1) & (cap - 1);
            ids->slot[i] = k + 1;
        }
    }
    size_t i;
    uint32_t v = strids_find(ids, s, n, h, &i);
    *added = 0;
    if (v) return v - 1;
    if (ids->n == ids->cap) {
        ids->cap = ids->cap ? ids->cap * 2 : 64;
        ids->off = xrealloc(ids->off, ids->cap * sizeof *ids->off);
        ids->len = xrealloc(ids->len, ids->cap * sizeof *ids->len);
        ids->hash = xrealloc(ids->hash, ids->cap * sizeof *ids->hash);
    }
    ids->off[ids->n] = (uint32_t)ids->text.len;
    ids->len[ids->n] = (uint32_t)n;
    ids->hash[ids->n] = h;
    sb_add(&ids->text, s, n);
    sb_addc(&ids->text, '\0');
    ids->slot[i] = ids->n + 1;
    *added = 1;
    return ids->n++;
}

static void strids_release(StrIds *ids)
{
    sb_release(&ids->text);
    free(ids->off);
    free(ids->len);
    free(ids->hash);
    free(ids->slot);
    memset(ids, 0, sizeof *ids);
}

static int fileterms__token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
    FileTerms *ft = ctx;
    FileWords *w = ft->words;
    int added;
    (void)start;
    (void)end;
    if (n <= 0 || (tflags & FTS5_TOKEN_COLOCATED)) return SQLITE_OK;
    uint32_t k = strids_put(&ft->ids, tok, (size_t)n, hash64(tok, (size_t)n), &added);
    ARRAY_GROW(w->ids, w->n_ids + 1, w->cap_ids);
    w->ids[w->n_ids++] = k;
    return SQLITE_OK;
}

static int stem__cache_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
    Stemmer *m = ctx;
    int added;
    (void)start;
    (void)end;
    if (n <= 0 || (tflags & FTS5_TOKEN_COLOCATED)) return SQLITE_OK;
    uint32_t t = strids_put(m->terms, tok, (size_t)n, hash64(tok, (size_t)n), &added);
    ARRAY_GROW(m->tids, m->n_tids + 1, m->cap_tids);
    m->tids[m->n_tids++] = t;
    return SQLITE_OK;
}

/* Word s[0..n) (hash h) tokenized into ft, as fileterms__token takes each
 * term: from m's cache, tokenized into it when new (a full cache: directly). */
static void stem__word_terms(Stemmer *m, const char *s, size_t n, uint64_t h, FileTerms *ft)
{
    if (!m->cache) {
        m->cache = xcalloc(1, sizeof *m->cache);
        m->terms = xcalloc(1, sizeof *m->terms);
    }
    int added = 0;
    uint32_t c;
    if (m->cache->n >= STEM_CACHE_WORDS) {
        /* full: a word seen keeps its terms, a new one is tokenized here */
        size_t i;
        uint32_t v = strids_find(m->cache, s, n, h, &i);
        if (!v) {
            stem__run(m, s, n, FTS5_TOKENIZE_DOCUMENT, ft, fileterms__token);
            return;
        }
        c = v - 1;
    } else {
        c = strids_put(m->cache, s, n, h, &added);
    }
    if (added) {
        ARRAY_GROW(m->first, c + 1, m->cap_first);
        ARRAY_GROW(m->count, c + 1, m->cap_count);
        m->first[c] = (uint32_t)m->n_tids;
        stem__run(m, s, n, FTS5_TOKENIZE_DOCUMENT, m, stem__cache_token);
        m->count[c] = (uint32_t)(m->n_tids - m->first[c]);
    }
    const StrIds *t = m->terms;
    FileWords *w = ft->words;
    for (uint32_t i = 0; i < m->count[c]; i++) {
        uint32_t k = m->tids[m->first[c] + i];
        uint32_t id = strids_put(&ft->ids, t->text.buf + t->off[k], t->len[k], t->hash[k], &added);
        ARRAY_GROW(w->ids, w->n_ids + 1, w->cap_ids);
        w->ids[w->n_ids++] = id;
    }
}

/* The index of word s[0..n) in ft's words, tokenized when new. */
static uint32_t fileterms__word(FileTerms *ft, Stemmer *m, const char *s, size_t n)
{
    FileWords *w = ft->words;
    int added;
    uint64_t h = hash64(s, n);
    uint32_t k = strids_put(&w->words, s, n, h, &added);
    if (!added) return k;
    ARRAY_GROW(w->first, k + 1, w->cap_first);
    ARRAY_GROW(w->count, k + 1, w->cap_count);
    w->first[k] = (uint32_t)w->n_ids;
    stem__word_terms(m, s, n, h, ft);
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
    free(ft->ids.slot);
    ft->ids.slot = NULL;
    ft->ids.cap_slot = 0;
    if (!ft->words) return;
    strids_release(&ft->words->words);
    free(ft->words->first);
    free(ft->words->count);
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
    fileterms__words_release(ft);
    strids_release(&ft->ids);
    free(ft->tok);
    free(ft->field_end);
    memset(ft, 0, sizeof *ft);
}
