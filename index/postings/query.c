#include "../store/store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Words that carry no meaning in a question about code. */
static const char *const stopwords[] = {
    "a",     "about", "after",   "all",     "also",  "an",    "and",   "any",   "are",    "as",
    "at",    "be",    "been",    "being",   "but",   "by",    "can",   "could", "did",    "do",
    "does",  "doing", "done",    "each",    "for",   "from",  "had",   "has",   "have",   "how",
    "i",     "if",    "in",      "into",    "is",    "it",    "its",   "just",  "like",   "may",
    "me",    "might", "must",    "my",      "no",    "not",   "of",    "on",    "one",    "only",
    "or",    "other", "our",     "out",     "own",   "s",     "same",  "shall", "should", "so",
    "some",  "such",  "than",    "that",    "the",   "their", "them",  "then",  "there",  "these",
    "they",  "this",  "those",   "through", "to",    "too",   "up",    "us",    "used",   "using",
    "very",  "was",   "we",      "were",    "what",  "when",  "where", "which", "while",  "who",
    "whose", "why",   "will",    "with",    "would", "you",   "your",  "e",     "g",      "eg",
    "ie",    "way",   "happens", "get",     "gets",  "work",  "works", "make",  "makes",  "code",
};

static int is_stopword(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof stopwords / sizeof stopwords[0]; i++)
        if (strlen(stopwords[i]) == n && !memcmp(stopwords[i], w, n)) return 1;
    return 0;
}

/* The next space-separated word at *p: moves *p to its start, sets *n to
 * its length (0 at the end) and returns where it ends. */
static const char *next_word(const char **p, size_t *n)
{
    while (**p == ' ')
        (*p)++;
    const char *q = *p;
    while (*q && *q != ' ')
        q++;
    *n = (size_t)(q - *p);
    return q;
}

void idx_query_words(const char *query, StrBuf *out)
{
    StrBuf toks;
    sb_init(&toks);
    idx_tok_code(query, strlen(query), &toks);
    for (const char *p = toks.buf; *p;) {
        size_t n;
        const char *q = next_word(&p, &n);
        if (n && !is_stopword(p, n)) {
            if (out->len) sb_addc(out, ' ');
            sb_add(out, p, n);
        }
        p = q;
    }
    sb_release(&toks);
}

/* Field weights and normalisation: a match in a definition's name says far
 * more than one in its body. */
static const Bm25Params bm25_params = {
    1.2,
    {0.5, 0.5, 0.75, 0.75},
    {4.0, 1.5, 1.5, 1.0},
};

#define MAX_QUERY_TERMS 64

/* A damaged list was met in the snapshot: it is not used again (nor kept,
 * where this store may write), and the postings come from the search text
 * until a new snapshot is written. */
static void postings_distrust(IdxStore *st)
{
    char path[PATH_MAX + 16];
    log_msg(LOG_WARN, "%s/postings.bin is damaged; rebuilding the search postings", st->index_real);
    st->post_distrust = 1;
    snprintf(path, sizeof path, "%s/postings.bin", st->index_dir);
    if (!st->readonly) unlink(path);
    idx_store_postings_invalidate(st);
}

CrErr idx_warm(IdxStore *st, ErrInfo *e)
{
    int64_t version = idx_store_data_version(st);
    if (st->post && (idx_postings_needs_rebuild(st->post) || version != st->post_version)) {
        /* Rows another process wrote: what is in memory is out of date. */
        idx_store_postings_invalidate(st);
        idx_dense_forget(st);
    }
    if (st->post) return CR_OK;
    st->post_version = version;
    CrErr rc = idx_postings_load(st, !st->post_distrust, &st->post, e);
    /* A stale snapshot met on opening is refreshed once. A reload after
     * another connection's commits is not: that writer (a build) is still
     * going, and writes its own snapshot when it ends. */
    if (!rc && !st->post_loaded) idx_store_postings_checkpoint(st);
    if (!rc) st->post_loaded = 1;
    /* and the vectors, so that the first ask does not pay for reading them */
    if (!rc) idx_dense_preload(st);
    return rc;
}

void idx_store_postings_checkpoint(IdxStore *st)
{
    PostingsGen g;
    ErrInfo e = {0};
    if (!st->post || st->readonly || !sqlite3_get_autocommit(st->db) ||
        !idx_postings_stale(st->post))
        return;
    if (idx_postings_current_gen(st, st->post_version, &g, &e) || g.gen < 0) return;
    if (idx_postings_save(st, st->post, &g, &e)) {
        if (idx_postings_damaged(st->post)) {
            postings_distrust(st);
            idx_warm(st, NULL);
        } else {
            /* A cache: a read-only index folder only makes opening slower. */
            log_msg(LOG_INFO, "search postings not saved: %s", e.msg);
        }
        return;
    }
    st->post_distrust = 0;
    /* Reopen from the new snapshot: the same postings, mapped, compact. */
    int64_t version = st->post_version;
    idx_store_postings_invalidate(st);
    st->post_version = version;
    if (idx_postings_load(st, 1, &st->post, &e)) log_msg(LOG_WARN, "search postings: %s", e.msg);
}

/* Adjacent question words often name one identifier ("allowed hosts" is
 * ALLOWED_HOSTS, "append slash" append_slash): appends each adjacent pair
 * of plain words joined by '_', space-separated. Only joins the code holds
 * become query terms. */
static void join_adjacent(const char *words, StrBuf *out)
{
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *p = words; *p;) {
        size_t n;
        const char *q = next_word(&p, &n);
        int plain = n && !memchr(p, '_', n);
        if (plain && prev) {
            if (out->len) sb_addc(out, ' ');
            sb_add(out, prev, prev_len);
            sb_addc(out, '_');
            sb_add(out, p, n);
        }
        prev = plain ? p : NULL;
        prev_len = n;
        p = q;
    }
}

CrErr idx_search_bm25(IdxStore *st, const char *query, size_t limit, IdxHit **out, size_t *n_out,
                      ErrInfo *e)
{
    StrBuf words;
    sb_init(&words);
    idx_query_words(query, &words);
    CrErr rc = idx_search_bm25_words(st, words.buf, limit, out, n_out, e);
    sb_release(&words);
    return rc;
}

CrErr idx_search_units(IdxStore *st, size_t *out, ErrInfo *e)
{
    *out = 0;
    CrErr rc = idx_warm(st, e);
    if (!rc) *out = idx_postings_live(st->post);
    return rc;
}

CrErr idx_search_bm25_words(IdxStore *st, const char *words, size_t limit, IdxHit **out,
                            size_t *n_out, ErrInfo *e)
{
    CrErr rc;
    StrBuf joined;
    uint32_t terms[MAX_QUERY_TERMS];
    *out = NULL;
    *n_out = 0;
    sb_init(&joined);
    join_adjacent(words, &joined);
    IdxHit *v = xcalloc(limit + 1, sizeof *v);
    /* A second round only when the first met a damaged snapshot list. */
    for (int round = 0; round < 2; round++) {
        if ((rc = idx_warm(st, e))) break;
        size_t n_unknown = 0;
        size_t n_terms =
            idx_postings_query_terms(st->post, words, terms, 0, MAX_QUERY_TERMS, &n_unknown);
        n_terms =
            idx_postings_query_terms(st->post, joined.buf, terms, n_terms, MAX_QUERY_TERMS, NULL);
        *n_out = n_terms && limit ? idx_postings_search(st->post, terms, n_terms, n_unknown,
                                                        &bm25_params, limit, v)
                                  : 0;
        if (!idx_postings_damaged(st->post)) break;
        postings_distrust(st);
        *n_out = 0;
    }
    sb_release(&joined);
    if (rc || !*n_out) {
        free(v);
        return rc;
    }
    *out = v;
    return CR_OK;
}
