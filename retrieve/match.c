#include "rtv_int.h"

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

void rtv_match_signals(const RtvQuery *q, const RtvRankInfo *info, size_t n_items,
                       RtvMatchSignals *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->coverage = info->coverage;
    sig->n_items = n_items;
    sig->terms = q->n_terms;
    sig->idents = q->n_idents;
    sig->idents_hit = q->idents_hit;
    /* every search word (not only the first RTV_QUERY_MAX_WORDS) */
    for (const char *w = q->search_words; w && *w;) {
        size_t n = strcspn(w, " ");
        if (n) sig->empty_terms += !content_word(w, n);
        w += n + (w[n] == ' ');
    }
}
