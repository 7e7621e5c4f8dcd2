#include "rtv_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How well the index answers a question: from the lexical coverage of the
 * best hits and from whether the identifiers the question names exist.
 * Thresholds chosen on the dev sets and an off-topic set
 * (docs/benchmarks.md, "Relevance"). */

/* The evidence is the weight of the question's terms the best hit holds:
 * its idf-weighted share of them (coverage) times how many distinct terms
 * the question has, i.e. about how many of them it matches. A share alone
 * punishes long questions (a good hit for a 30-word question holds a
 * smaller share of it than one for 8 words); a count alone rewards them.
 * Below NONE_TERMS with no named identifier found, nothing is relevant;
 * below WEAK_TERMS the match is weak. */
#define MATCH_NONE_TERMS 1.5
#define MATCH_WEAK_TERMS 2.5
/* A hit holding this share of a (short) question's weight is strong
 * whatever the count. */
#define MATCH_FULL_COVERAGE 0.6

const char *rtv_match_name(RtvMatch m)
{
    switch (m) {
    case RTV_MATCH_STRONG:
        return "strong";
    case RTV_MATCH_WEAK:
        return "weak";
    default:
        return "none";
    }
}

RtvMatch rtv_match(const RtvMatchSignals *sig, char *why, size_t why_size)
{
    char tmp[1];
    if (!why) {
        why = tmp;
        why_size = sizeof tmp;
    }
    why[0] = '\0';
    int pct = (int)(sig->coverage * 100 + 0.5);
    if (sig->n_items == 0) {
        snprintf(why, why_size, "no indexed code shares a word with the question");
        return RTV_MATCH_NONE;
    }
    if (sig->idents_hit > 0) return RTV_MATCH_STRONG; /* it names code that exists */
    if (sig->terms && sig->empty_terms >= sig->terms) {
        /* "what else?": `else` is in every file; a hit holding it says nothing */
        snprintf(why, why_size,
                 "the question's words are syntax or question words that most files hold, "
                 "naming nothing in particular");
        return RTV_MATCH_NONE;
    }
    double matched = sig->coverage * (double)sig->terms;
    if (matched >= MATCH_WEAK_TERMS || sig->coverage >= MATCH_FULL_COVERAGE)
        return RTV_MATCH_STRONG;
    const char *names = sig->idents > 1 ? ", and no indexed definition has the names it uses"
                        : sig->idents   ? ", and no indexed definition has the name it uses"
                                        : "";
    snprintf(why, why_size,
             "the best match holds about %.0f of the question's %zu terms (%d%% "
             "of their weight)%s",
             matched, sig->terms, pct, names);
    return matched < MATCH_NONE_TERMS ? RTV_MATCH_NONE : RTV_MATCH_WEAK;
}

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

/* Words a question about anything may hold that the search keeps (they
 * can name code: `show`, `more`) but that never make a match by themselves,
 * beside idx_query_words' stop words and the languages' syntax words. */
static const char *const question_words[] = {
    "else",    "anything", "something", "everything", "thing",  "things",   "stuff", "more", "tell",
    "explain", "show",     "see",       "mean",       "means",  "meaning",  "know",  "find", "give",
    "here",    "ok",       "okay",      "please",     "thanks", "thank",    "hello", "hi",   "hey",
    "yes",     "again",    "now",       "really",     "answer", "question", "help",  NULL,
};

static int content_word(const char *w, size_t n)
{
    if (idx_is_syntax_word(w, n)) return 0;
    for (const char *const *q = question_words; *q; q++)
        if (strlen(*q) == n && !memcmp(*q, w, n)) return 0;
    return 1;
}

CrErr rtv_match_signals(IdxStore *st, const char *question, const RtvRankInfo *info, size_t n_items,
                        RtvMatchSignals *sig, ErrInfo *e)
{
    memset(sig, 0, sizeof *sig);
    sig->coverage = info->coverage;
    sig->n_items = n_items;
    StrBuf qw;
    sb_init(&qw);
    idx_query_words(question, &qw);
    for (char *p = qw.buf, *save = NULL, *w; (w = strtok_r(p, " ", &save)); p = NULL) {
        sig->terms++;
        sig->empty_terms += !content_word(w, strlen(w));
    }
    sb_release(&qw);
    return rtv_named_identifiers(st, question, &sig->idents, &sig->idents_hit, e);
}

CrErr rtv_named_identifiers(IdxStore *st, const char *question, size_t *n_idents, size_t *hit,
                            ErrInfo *e)
{
    size_t idents = 0;
    CrErr rc = CR_OK;
    *hit = 0;
    /* identifiers named in the question, looked up whole (last dotted part) */
    const char *p = question;
    while (*p && idents < 16 && !rc) {
        while (*p && !ident_byte((unsigned char)*p))
            p++;
        const char *a = p;
        while (*p && ident_byte((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - a);
        while (n && a[n - 1] == '.')
            n--;
        if (!n || n > 200 || !looks_like_identifier(a, n)) continue;
        char name[201];
        memcpy(name, a, n);
        name[n] = '\0';
        idents++;
        const char *last = strrchr(name, '.');
        int64_t *ids = NULL;
        size_t k = 0;
        rc = idx_lookup_symbol(st, name, &ids, &k, e);
        if (!rc && k == 0 && last) {
            free(ids);
            ids = NULL;
            rc = idx_lookup_symbol(st, last + 1, &ids, &k, e);
        }
        if (!rc && k) (*hit)++;
        free(ids);
    }
    *n_idents = idents;
    return rc;
}
