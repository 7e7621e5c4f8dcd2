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
/* A match that would be weak is strong when the best items read hold this
 * share of the question's words: a long question's generic words ("page
 * cache write back dirty pages") spread over the few definitions that
 * answer it, none of them holding enough of the weight alone. */
#define MATCH_CONTEXT_STRONG 0.75

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
    if (matched >= MATCH_NONE_TERMS && sig->context_share >= MATCH_CONTEXT_STRONG)
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

/* A word as the code may write it: a plural or tense ending dropped
 * ("pages" -> "page", "invoked" -> "invok", "running" -> "runn"), at
 * least 3 letters kept. Returns the length kept. */
static size_t stem_len(const char *w, size_t n)
{
    static const char *const ends[] = {"ing", "ed", "es", "s"};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        size_t e = strlen(ends[i]);
        if (n >= e + 3 && !memcmp(w + n - e, ends[i], e)) return n - e;
    }
    return n;
}

void rtv_match_context(const RtvQuery *q, const RtvItem *items, size_t n_items,
                       RtvMatchSignals *sig)
{
    const char *words[64];
    size_t wl[64], n = 0;
    char *buf = xstrdup(q->search_words ? q->search_words : "");
    for (char *w = strtok(buf, " "); w && n < 64; w = strtok(NULL, " ")) {
        size_t len = strlen(w);
        if (len < 3 || !content_word(w, len)) continue;
        int dup = 0;
        for (size_t k = 0; k < n && !dup; k++)
            dup = wl[k] == stem_len(w, len) && !memcmp(words[k], w, wl[k]);
        if (dup) continue;
        words[n] = w;
        wl[n++] = stem_len(w, len);
    }
    sig->context_share = -1;
    if (n && n_items) {
        uint64_t seen = 0;
        for (size_t i = 0; i < n_items && i < RTV_MATCH_TOP; i++) {
            const char *t = items[i].text ? items[i].text : "";
            for (size_t k = 0; k < n; k++)
                if (!(seen >> k & 1) && rtv_line_mentions(t, strlen(t), &words[k], &wl[k], 1))
                    seen |= (uint64_t)1 << k;
        }
        sig->context_share = (double)__builtin_popcountll(seen) / (double)n;
    }
    free(buf);
}

void rtv_match_signals(const RtvQuery *q, const RtvRankInfo *info, size_t n_items,
                       RtvMatchSignals *sig)
{
    memset(sig, 0, sizeof *sig);
    sig->context_share = -1;
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
