#include "rtv_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The question read once: its search words (for BM25, the window trim, the
 * match signals and the re-ranker's overlap features) and the identifiers
 * it names with whether the index defines them (for the dense leg's weight
 * and the match signals). */

static int ident_byte(unsigned char c)
{
    return c == '_' || c == '.' || isalnum(c);
}

/* Whether a word reads as a code identifier: snake_case, CamelCase (a
 * capital after a lower-case letter), dotted.name or a call name(). */
static int looks_like_identifier(const char *w, size_t n)
{
    int under = 0, camel = 0, dot = 0, alpha = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w[i];
        alpha |= isalpha(c) != 0;
        if (c == '_' && i > 0 && i + 1 < n) under = 1;
        if (c == '.' && i > 0 && i + 1 < n && isalpha((unsigned char)w[i + 1])) dot = 1;
        if (i > 0 && isupper(c) && islower((unsigned char)w[i - 1])) camel = 1;
    }
    return alpha && (under || camel || dot);
}

/* The identifiers text names (at most RTV_QUERY_MAX_IDENTS), each looked up
 * whole, then by its last dotted part. */
static CrErr find_identifiers(IdxStore *st, const char *text, RtvQuery *q, ErrInfo *e)
{
    CrErr rc = CR_OK;
    const char *p = text;
    while (*p && q->n_idents < RTV_QUERY_MAX_IDENTS && !rc) {
        while (*p && !ident_byte((unsigned char)*p))
            p++;
        const char *a = p;
        while (*p && ident_byte((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - a);
        while (n && a[n - 1] == '.')
            n--;
        if (!n || n > 200 || !looks_like_identifier(a, n)) continue;
        RtvQueryIdent *id = &q->idents[q->n_idents++];
        id->name = xstrndup(a, n);
        const char *last = strrchr(id->name, '.');
        int64_t *ids = NULL;
        size_t k = 0;
        rc = idx_lookup_symbol(st, id->name, &ids, &k, e);
        if (!rc && k == 0 && last) {
            free(ids);
            ids = NULL;
            rc = idx_lookup_symbol(st, last + 1, &ids, &k, e);
        }
        if (!rc && k) {
            id->defined = 1;
            q->idents_hit++;
        }
        free(ids);
    }
    return rc;
}

CrErr rtv_query_read(IdxStore *st, const char *text, RtvQuery *q, ErrInfo *e)
{
    memset(q, 0, sizeof *q);
    q->text = text;
    StrBuf sb;
    sb_init(&sb);
    idx_query_words(text, &sb);
    q->search_words = sb_detach(&sb, NULL);
    /* the same words, split in place of a copy, for the word list */
    q->word_buf = xstrdup(q->search_words);
    for (char *p = q->word_buf, *save = NULL, *w; (w = strtok_r(p, " ", &save)); p = NULL) {
        q->n_terms++;
        if (q->n_words < RTV_QUERY_MAX_WORDS) q->words[q->n_words++] = w;
    }
    CrErr rc = find_identifiers(st, text, q, e);
    if (rc) rtv_query_release(q);
    return rc;
}

void rtv_query_release(RtvQuery *q)
{
    if (!q) return;
    free(q->search_words);
    free(q->word_buf);
    for (size_t i = 0; i < q->n_idents; i++)
        free(q->idents[i].name);
    memset(q, 0, sizeof *q);
}

CrErr rtv_named_identifiers(IdxStore *st, const char *question, size_t *n_idents, size_t *hit,
                            ErrInfo *e)
{
    RtvQuery q;
    CrErr rc = rtv_query_read(st, question, &q, e);
    *n_idents = rc ? 0 : q.n_idents;
    *hit = rc ? 0 : q.idents_hit;
    rtv_query_release(&q);
    return rc;
}
