#include "rtv_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The learned re-ranker: features of (question, candidate) pairs the
 * engine already has, and a linear model over them (rerank_model.c,
 * written by scripts/train-ranker.sh from models/ranker-v1.json). */

const char *const rtv_feature_names[RTV_N_FEATURES] = {
    "score",      "rank",      "bm25",     "dense",      "via_bm25",  "via_dense", "via_graph",
    "graph_only", "graph_out", "graph_in", "agree",      "function",  "class",     "module",
    "section",    "test",      "name",     "name_cover", "path",      "ident",     "doc",
    "has_doc",    "lines",     "window",   "file_rank",  "file_hits",
};

/* Whether two lowercase words are the same word give or take an ending
 * ("redirect"/"redirects", "configure"/"configuration"): equal, or sharing
 * a prefix of at least four letters that leaves at most two of the
 * shorter. */
static int same_stem(const char *a, size_t la, const char *b, size_t lb)
{
    size_t p = 0;
    while (p < la && p < lb && a[p] == b[p])
        p++;
    if (p == la && p == lb) return 1;
    size_t m = la < lb ? la : lb;
    return p >= 4 && p + 2 >= m;
}

/* The subwords of s (runs of letters and digits, split at lower-to-upper
 * case changes), lowercased into buf (NUL-separated); returns how many, at
 * most max, with their starts and lengths in at/len. */
static size_t subwords(const char *s, char *buf, size_t cap, const char **at, size_t *len,
                       size_t max)
{
    size_t n = 0, k = 0;
    for (size_t i = 0; s[i] && n < max && k + 2 < cap;) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c)) {
            i++;
            continue;
        }
        size_t start = k;
        buf[k++] = (char)tolower(c);
        i++;
        while (s[i] && isalnum((unsigned char)s[i]) && k + 2 < cap) {
            unsigned char d = (unsigned char)s[i];
            if (isupper(d) && islower((unsigned char)s[i - 1])) break;
            buf[k++] = (char)tolower(d);
            i++;
        }
        buf[k++] = '\0';
        at[n] = buf + start;
        len[n] = k - 1 - start;
        n++;
    }
    return n;
}

typedef struct Overlap {
    double of_query; /* share of the question's words the text holds */
    double of_text;  /* share of the text's subwords the question holds */
} Overlap;

static Overlap overlap(const RtvQuery *q, const size_t *ql, const char *text)
{
    char buf[1024];
    const char *at[96];
    size_t len[96];
    Overlap o = {0, 0};
    size_t n = subwords(text, buf, sizeof buf, at, len, 96);
    if (!n || !q->n_words) return o;
    /* each pair compared once: the question's words met, and the text's */
    size_t hit_q = 0, hit_t = 0;
    unsigned char met[96] = {0};
    for (size_t w = 0; w < q->n_words; w++) {
        int any = 0;
        for (size_t k = 0; k < n; k++)
            if (same_stem(q->words[w], ql[w], at[k], len[k])) any = met[k] = 1;
        hit_q += (size_t)any;
    }
    for (size_t k = 0; k < n; k++)
        hit_t += met[k];
    o.of_query = (double)hit_q / (double)q->n_words;
    o.of_text = (double)hit_t / (double)n;
    return o;
}

/* Whether the question names this definition: one of its identifiers is
 * the symbol, or the symbol's last part, or ends it after a dot. */
static int named(const RtvQuery *q, const char *symbol)
{
    const char *last = rtv_last_part(symbol);
    size_t ls = strlen(symbol);
    for (size_t i = 0; i < q->n_idents; i++) {
        const char *id = q->idents[i].name;
        size_t li = strlen(id);
        if (!strcmp(id, symbol) || !strcmp(id, last)) return 1;
        if (ls > li && symbol[ls - li - 1] == '.' && !strcmp(symbol + ls - li, id)) return 1;
        const char *dot = strrchr(id, '.');
        if (dot && !strcmp(dot + 1, last)) return 1;
    }
    return 0;
}

CrErr rtv_features(IdxStore *st, const RtvQuery *q, const RtvCand *v, size_t n, double *out,
                   ErrInfo *e)
{
    size_t ql[RTV_QUERY_MAX_WORDS];
    for (size_t w = 0; w < q->n_words; w++)
        ql[w] = strlen(q->words[w]);
    double top = n ? v[0].score : 0;
    /* files in order of their first candidate, and their candidates */
    int64_t *files = xcalloc(n + 1, sizeof *files);
    size_t *hits = xcalloc(n + 1, sizeof *hits), n_files = 0;
    size_t *file_of = xcalloc(n + 1, sizeof *file_of);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < n_files && files[k] != v[i].file_id)
            k++;
        if (k == n_files) files[n_files++] = v[i].file_id;
        hits[k]++;
        file_of[i] = k;
    }
    CrErr rc = CR_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        double *f = out + i * RTV_N_FEATURES;
        memset(f, 0, RTV_N_FEATURES * sizeof *f);
        const RtvCand *c = &v[i];
        f[RTV_F_SCORE] = top > 0 ? c->score / top : 0;
        f[RTV_F_RANK] = 1.0 / (1.0 + (double)i);
        f[RTV_F_BM25] = c->bm25;
        f[RTV_F_DENSE] = c->dense;
        f[RTV_F_VIA_BM25] = (c->via & RTV_VIA_BM25) != 0;
        f[RTV_F_VIA_DENSE] = (c->via & RTV_VIA_DENSE) != 0;
        f[RTV_F_VIA_GRAPH] = (c->via & RTV_VIA_GRAPH) != 0;
        f[RTV_F_GRAPH_ONLY] = c->via == RTV_VIA_GRAPH;
        f[RTV_F_GRAPH_OUT] = (c->graph & 1) != 0;
        f[RTV_F_GRAPH_IN] = (c->graph & 2) != 0;
        f[RTV_F_AGREE] = (c->via & RTV_VIA_BM25) && (c->via & RTV_VIA_DENSE);
        f[RTV_F_FUNCTION] = c->kind == IDX_KIND_FUNCTION || c->kind == IDX_KIND_METHOD;
        f[RTV_F_CLASS] = c->kind == IDX_KIND_CLASS;
        f[RTV_F_MODULE] = c->kind == IDX_KIND_MODULE;
        f[RTV_F_SECTION] = c->kind == IDX_KIND_SECTION;
        f[RTV_F_TEST] = c->test != 0;
        f[RTV_F_FILE_RANK] = 1.0 / (1.0 + (double)file_of[i]);
        f[RTV_F_FILE_HITS] = hits[file_of[i]] >= 5 ? 1.0 : (double)hits[file_of[i]] / 5.0;
        IdxChunk ch;
        rc = idx_chunk_get(st, c->chunk_id, &ch, e);
        if (rc == CR_ENOENT) { /* gone since ranking: no text features */
            rc = CR_OK;
            continue;
        }
        if (rc) break;
        Overlap on = overlap(q, ql, rtv_last_part(ch.symbol));
        f[RTV_F_NAME] = on.of_query;
        f[RTV_F_NAME_COVER] = on.of_text;
        f[RTV_F_PATH] = overlap(q, ql, ch.path).of_query;
        f[RTV_F_IDENT] = ch.symbol[0] && named(q, ch.symbol);
        f[RTV_F_DOC] = overlap(q, ql, ch.docstring).of_query;
        f[RTV_F_HAS_DOC] = ch.docstring[0] != '\0';
        f[RTV_F_LINES] = log(1.0 + (double)(ch.end_line - ch.start_line + 1)) / 6.0;
        f[RTV_F_WINDOW] = ch.window > 1 || ch.cont;
        idx_chunk_release(&ch);
    }
    free(files);
    free(hits);
    free(file_of);
    return rc;
}

void rtv_name_prior(IdxStore *st, const RtvQuery *q, RtvCand *v, size_t n, const RtvTuning *t)
{
    double w = t->name_weight;
    if (!n || (w <= 0 && !t->short_helpers)) return;
    size_t ql[RTV_QUERY_MAX_WORDS];
    for (size_t k = 0; k < q->n_words; k++)
        ql[k] = strlen(q->words[k]);
    StrBuf sym;
    sb_init(&sym);
    for (size_t i = 0; i < n; i++) {
        sb_reset(&sym);
        int helper = 0;
        if (!idx_chunk_symbol(st, v[i].chunk_id, &sym, t->short_helpers ? &helper : NULL)) continue;
        Overlap o = overlap(q, ql, rtv_last_part(sym.buf));
        v[i].score *= 1.0 + w * (o.of_query + o.of_text);
        if (helper) v[i].score *= t->short_prior;
    }
    sb_release(&sym);
    rtv_cands_sort(v, n);
}

static double rtv_ranker_score(const RtvRanker *m, const double *f)
{
    double s = m->bias;
    for (size_t k = 0; k < RTV_N_FEATURES; k++)
        s += m->w[k] * f[k];
    return s;
}

typedef struct Scored {
    RtvCand c;
    double s;
    size_t at;
} Scored;

static int by_learned(const void *pa, const void *pb)
{
    const Scored *a = pa, *b = pb;
    if (a->s != b->s) return a->s < b->s ? 1 : -1;
    return (a->at > b->at) - (a->at < b->at);
}

CrErr rtv_rerank(IdxStore *st, const RtvQuery *q, const RtvRanker *m, RtvCand *v, size_t n,
                 size_t keep, ErrInfo *e)
{
    if (n > RTV_RERANK_DEPTH) n = RTV_RERANK_DEPTH;
    if (n < 2 || keep >= n - 1) return CR_OK;
    double *f = xcalloc(n * RTV_N_FEATURES, sizeof *f);
    CrErr rc = rtv_features(st, q, v, n, f, e);
    if (!rc) {
        /* the first `keep` stay where they are; the rest are reordered */
        size_t k = n - keep;
        Scored *s = xcalloc(k, sizeof *s);
        double lo = 0, hi = 0;
        for (size_t i = 0; i < k; i++) {
            size_t at = keep + i;
            s[i] = (Scored){v[at], rtv_ranker_score(m, f + at * RTV_N_FEATURES), at};
            if (!i || s[i].s < lo) lo = s[i].s;
            if (!i || s[i].s > hi) hi = s[i].s;
        }
        qsort(s, k, sizeof *s, by_learned);
        /* scores keep the first ranking's scale: the first reordered one
         * gets the old one's at its place, the rest in proportion to their
         * learned score */
        double top = v[keep].score, span = hi - lo;
        for (size_t i = 0; i < k; i++) {
            v[keep + i] = s[i].c;
            v[keep + i].score = span > 0 ? top * (0.5 + 0.5 * (s[i].s - lo) / span) : top;
        }
        free(s);
    }
    free(f);
    return rc;
}
