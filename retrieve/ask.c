#include "rtv_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 0;
    return 1;
}

/* Loads a candidate's chunk and current text. CR_ENOENT (skip it) when the
 * chunk vanished or its file changed or became unreadable since indexing;
 * other errors are the store's. */
static CrErr load_item(IdxStore *st, const RtvRequest *req, const RtvCand *c, RtvItem *it,
                       StrBuf *sb, ErrInfo *e)
{
    memset(it, 0, sizeof *it);
    CrErr rc = idx_chunk_get(st, c->chunk_id, &it->chunk, e);
    if (rc) return rc;
    sb_reset(sb);
    /* an unsaved buffer's lines where the editor has one */
    uint32_t a = it->chunk.start_line, b = it->chunk.end_line;
    rc = rtv_buffer_lines(st, req, it->chunk.path, &a, &b, e);
    if (!rc) rc = rtv_read_lines(st, req, it->chunk.path, a, b, sb, NULL, e);
    if (rc) {
        idx_chunk_release(&it->chunk);
        return rc == CR_EDB ? rc : CR_ENOENT;
    }
    it->start_line = a;
    it->end_line = b;
    it->score = c->score;
    it->via = c->via;
    it->text = xstrndup(sb->buf, sb->len);
    return CR_OK;
}

static const char *llm_failure(CrErr rc)
{
    switch (rc) {
    case CR_ETIMEOUT:
        return "the LLM timed out";
    case CR_ETOOBIG:
        return "the LLM's response was over the size cap";
    case CR_EPARSE:
        return "the LLM's response was unreadable";
    default:
        return "the LLM failed";
    }
}

/* The request as searched: with history, the last turn's question joins
 * this one, so that a follow-up finds what the conversation is about
 * (beside what the question alone finds: with_own). */
static const char *search_text(const RtvRequest *req, StrBuf *sb)
{
    if (!req->n_history || !req->history) return req->question;
    const RtvTurn *last = &req->history[req->n_history - 1];
    if (!last->question || !last->question[0]) return req->question;
    sb_adds(sb, req->question);
    sb_addc(sb, '\n');
    size_t n = strlen(last->question);
    sb_add(sb, last->question, n < RTV_TURN_QUESTION_MAX ? n : RTV_TURN_QUESTION_MAX);
    return sb->buf;
}

struct RtvDraft {
    int want_llm;      /* set by prepare: call rtv_ask_llm before finish */
    int llm_wanted;    /* the mode wanted an LLM (whether or not it is due) */
    char *llm_text;    /* the LLM's answer; owned */
    CrErr llm_rc;      /* the LLM's failure; CR_OK when none */
    char llm_msg[512]; /* its message */
    size_t n_fused;
    char *words; /* the question's own search words (not a follow-up's history); owned */
    char notice[512];
    double t0, llm_ms;
};

RtvDraft *rtv_draft_new(void)
{
    return xcalloc(1, sizeof(RtvDraft));
}

static void draft_release(RtvDraft *d)
{
    free(d->llm_text);
    d->llm_text = NULL;
    free(d->words);
    d->words = NULL;
}

void rtv_draft_free(RtvDraft *d)
{
    if (!d) return;
    draft_release(d);
    free(d);
}

int rtv_draft_wants_llm(const RtvDraft *d)
{
    return d->want_llm;
}

void rtv_draft_skip_llm(RtvDraft *d, CrErr rc, const char *msg)
{
    d->want_llm = 0;
    d->llm_rc = rc;
    snprintf(d->llm_msg, sizeof d->llm_msg, "%s", msg ? msg : "");
}

const char *rtv_draft_llm_text(const RtvDraft *d)
{
    return d->llm_text;
}

const char *rtv_draft_llm_msg(const RtvDraft *d)
{
    return d->llm_msg;
}

/* A follow-up: the history is a prior, not a replacement. The question
 * alone is ranked too, and its candidates and the joined text's take turns
 * (the question's first, each once), so that what the question alone finds
 * stays near the top: its k-th candidate is at most 2k-1st. */
static CrErr with_own(IdxStore *st, const RtvRequest *req, const RtvQuery *asked, RtvCand **fused,
                      size_t *n_fused, RtvRankInfo *info, RtvTimings *tm, ErrInfo *e)
{
    RtvCand *own = NULL;
    size_t n_own = 0;
    RtvTimings t2 = {0};
    RtvRankInfo own_info;
    CrErr rc = rtv_rank(st, req, asked, &rtv_tuning, &own, &n_own, &t2, &own_info, e);
    if (!rc && rtv_tuning.rerank)
        rc = rtv_rerank(st, asked, &rtv_ranker, own, n_own, rtv_tuning.lexical_head, e);
    if (rc) {
        free(own);
        return rc;
    }
    tm->bm25_ms += t2.bm25_ms;
    tm->dense_ms += t2.dense_ms;
    tm->graph_ms += t2.graph_ms;
    RtvCand *v = xcalloc(n_own + *n_fused + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n_own || i < *n_fused; i++) {
        const RtvCand *pair[2] = {i < n_own ? &own[i] : NULL, i < *n_fused ? &(*fused)[i] : NULL};
        for (size_t p = 0; p < 2; p++) {
            if (!pair[p]) continue;
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++)
                dup = v[j].chunk_id == pair[p]->chunk_id;
            if (!dup) v[k++] = *pair[p];
        }
    }
    free(own);
    free(*fused);
    *fused = v;
    *n_fused = k;
    /* the match reads the joined search's coverage, as before: a follow-up
     * such as "and where is it called?" is about what the last turn found */
    if (!info->notice[0]) snprintf(info->notice, sizeof info->notice, "%s", own_info.notice);
    return CR_OK;
}

/* The name a call of the focus is written with: its symbol's last part. */
static const char *focus_name(const RtvItem *focus)
{
    const char *s = focus->chunk.symbol ? focus->chunk.symbol : "";
    const char *p = s + strlen(s);
    while (p > s && p[-1] != '.' && p[-1] != ':')
        p--;
    return p;
}

/* The focus's callers ahead of the ranked candidates (each once); *n_callers
 * of them. */
static CrErr with_callers(IdxStore *st, int64_t focus, RtvCand **fused, size_t *n_fused,
                          size_t *n_callers, ErrInfo *e)
{
    RtvCand *callers = NULL;
    size_t n = 0;
    CrErr rc = rtv_focus_callers(st, focus, RTV_FOCUS_CALLERS, &callers, &n, e);
    *n_callers = rc ? 0 : n;
    if (rc || !n) {
        free(callers);
        return rc;
    }
    RtvCand *v = xcalloc(n + *n_fused, sizeof *v);
    memcpy(v, callers, n * sizeof *v);
    size_t k = n;
    for (size_t i = 0; i < *n_fused; i++) {
        int dup = 0;
        for (size_t j = 0; j < n && !dup; j++)
            dup = callers[j].chunk_id == (*fused)[i].chunk_id;
        if (!dup) v[k++] = (*fused)[i];
    }
    free(callers);
    free(*fused);
    *fused = v;
    *n_fused = k;
    return CR_OK;
}

CrErr rtv_ask_prepare(IdxStore *st, const RtvRequest *req, RtvAnswer *out, RtvDraft *d, ErrInfo *e)
{
    CrErr rc = CR_OK;
    StrBuf line_buf, joined;
    RtvPacker pk = {0};
    RtvQuery q = {0}, asked = {0};
    RtvCand *fused = NULL;
    size_t n_fused = 0, n_callers = 0;

    memset(out, 0, sizeof *out);
    draft_release(d);
    memset(d, 0, sizeof *d);
    d->t0 = now_ms();
    if (!req->question || blank(req->question)) return err_set(e, CR_EINVAL, "empty question");
    if (strlen(req->question) > RTV_MAX_QUESTION)
        return err_set(e, CR_ETOOBIG, "question longer than %d bytes", RTV_MAX_QUESTION);
    int has_llm = req->llm_url && req->llm_url[0];
    if (req->mode == RTV_MODE_LLM && !has_llm)
        return err_set(e, CR_EHTTP, "no LLM endpoint configured (llm.url)");
    d->llm_wanted = req->mode == RTV_MODE_LLM || (req->mode == RTV_MODE_AUTO && has_llm);
    out->mode = RTV_MODE_EXTRACTIVE;
    size_t budget = req->budget ? req->budget : RTV_DEFAULT_BUDGET;
    sb_init(&line_buf);
    sb_init(&joined);

    RtvRequest sreq = *req;
    sreq.question = search_text(req, &joined);
    /* Read once: the searched text, and the question alone (what the match
     * signals judge) when a follow-up joined the last turn's to it. */
    if ((rc = rtv_query_read(st, sreq.question, &q, e))) goto out;
    if (sreq.question != req->question && (rc = rtv_query_read(st, req->question, &asked, e)))
        goto out;
    RtvRankInfo info;
    if ((rc = rtv_rank(st, &sreq, &q, &rtv_tuning, &fused, &n_fused, &out->timings, &info, e)))
        goto out;
    if (rtv_tuning.rerank &&
        (rc = rtv_rerank(st, &q, &rtv_ranker, fused, n_fused, rtv_tuning.lexical_head, e)))
        goto out;
    if (sreq.question != req->question &&
        (rc = with_own(st, req, &asked, &fused, &n_fused, &info, &out->timings, e)))
        goto out;
    d->n_fused = n_fused;
    out->n_candidates = n_fused;
    out->coverage = info.coverage;
    snprintf(d->notice, sizeof d->notice, "%s", info.notice);

    /* Candidates are read in rank order only until the budget is spent:
     * long units are narrowed to their best-matching window first. */
    double t = now_ms();
    rtv_packer_init(&pk, budget, RTV_MAX_CANDIDATES);
    if (req->focus_chunk) { /* the definition asked about, whole, first; then its callers */
        RtvItem focus;
        if ((rc = rtv_focus_item(st, req, req->focus_chunk, &focus, e)) ||
            (rc = with_callers(st, req->focus_chunk, &fused, &n_fused, &n_callers, e)))
            goto out;
        out->items = xcalloc(n_fused + 1, sizeof *out->items);
        out->items[out->n_items++] = focus;
        rtv_packer_force(&pk, &out->items[0]);
    } else {
        out->items = xcalloc(n_fused + 1, sizeof *out->items);
    }
    /* By coverage: a second piece of a definition already packed waits
     * until every other candidate has had its turn. */
    size_t *later = xcalloc(n_fused + 1, sizeof *later), n_later = 0;
    for (size_t pass = 0; pass < 2 && rc == CR_OK; pass++) {
        size_t n_walk = pass ? n_later : n_fused;
        for (size_t k = 0; k < n_walk && rtv_packer_open(&pk); k++) {
            size_t i = pass ? later[k] : k;
            RtvItem *it = &out->items[out->n_items];
            rc = load_item(st, req, &fused[i], it, &line_buf, e);
            if (rc == CR_ENOENT) {
                rc = CR_OK;
                continue;
            }
            if (rc) break;
            if (!pass && rtv_tuning.pack_by_coverage && rtv_packer_has_def(&pk, it)) {
                later[n_later++] = i;
                rtv_item_release(it);
                continue;
            }
            /* a caller of the focus: the window with its call */
            if (i >= n_callers || !out->n_items ||
                !rtv_trim_item_to_call(it, focus_name(&out->items[0]), rtv_tuning.window_lines))
                rtv_trim_item(it, q.words, q.n_words, rtv_tuning.window_lines);
            if (rtv_packer_offer(&pk, it))
                out->n_items++;
            else
                rtv_item_release(it);
        }
    }
    free(later);
    if (rc) goto out;
    /* Pieces of one definition are joined when the lines between fit. */
    if ((rc = rtv_join_pieces(st, req, out->items, &out->n_items, &pk.left, e))) goto out;
    rtv_scores_by_rank(out->items, out->n_items);
    out->timings.pack_ms = now_ms() - t;

    rtv_match_signals(sreq.question != req->question ? &asked : &q, &info, out->n_items,
                      &out->signals);
    rtv_match_context(sreq.question != req->question ? &asked : &q, out->items, out->n_items,
                      &out->signals);
    out->match = rtv_match(&out->signals, out->match_reason, sizeof out->match_reason);
    /* an ablation: coverage is not measured; a focus: the context holds what is asked about */
    if ((!req->use_bm25 || req->focus_chunk) && out->n_items) {
        out->match = RTV_MATCH_STRONG;
        out->match_reason[0] = '\0';
    }
    {
        const RtvQuery *own = sreq.question != req->question ? &asked : &q;
        d->words = xstrdup(own->search_words ? own->search_words : "");
    }
    log_msg(LOG_DEBUG, "match %s (coverage %.2f, identifiers %zu/%zu, terms %zu, context %.2f)",
            rtv_match_name(out->match), info.coverage, out->signals.idents_hit, out->signals.idents,
            out->signals.terms, out->signals.context_share);
    /* auto asks no LLM about nothing relevant; llm mode asks, warned */
    d->want_llm = d->llm_wanted && out->n_items > 0 &&
                  (out->match != RTV_MATCH_NONE || req->mode == RTV_MODE_LLM);

out:
    if (rc != CR_OK) rtv_answer_release(out);
    rtv_packer_release(&pk);
    rtv_query_release(&q);
    rtv_query_release(&asked);
    sb_release(&line_buf);
    sb_release(&joined);
    free(fused);
    return rc;
}

CrErr rtv_ask_llm(const RtvRequest *req, const RtvAnswer *out, RtvDraft *d)
{
    StrBuf user;
    ErrInfo le = {0};
    sb_init(&user);
    if (out->match != RTV_MATCH_STRONG)
        sb_adds(&user, "Note: these code blocks match the question only weakly; they may not "
                       "answer it. If they do not, say so plainly in your first sentence.\n\n");
    rtv_prompt_user(out->items, out->n_items, req->question, &user);
    double t = now_ms();
    free(d->llm_text);
    d->llm_text = NULL;
    d->llm_rc = rtv_llm_complete(req, rtv_prompt_system, user.buf, &d->llm_text, &le);
    d->llm_ms = now_ms() - t;
    snprintf(d->llm_msg, sizeof d->llm_msg, "%s", le.msg);
    sb_release(&user);
    return d->llm_rc;
}

/* The extractive draft, headed by why the LLM did not answer. */
static char *extractive_draft(IdxStore *st, const RtvAnswer *out, const RtvDraft *d,
                              const RtvRequest *req)
{
    StrBuf text;
    sb_init(&text);
    const char *why = NULL;
    if (!req->use_bm25 && d->n_fused == 0)
        why = "BM25 retrieval is switched off, and the dense leg found nothing or is off "
              "(graph expansion starts from what the other legs find).";
    else if (d->n_fused > 0 && out->n_items == 0)
        why = "Every match was larger than the context budget.";
    if (!out->n_items) sb_adds(&text, "**Nothing relevant found:** ");
    if (out->match != RTV_MATCH_STRONG && out->n_items) {
        sb_adds(&text,
                out->match == RTV_MATCH_NONE ? "**Nothing relevant found:** " : "**Weak match:** ");
        rtv_add_escaped(&text, out->match_reason, 300);
        sb_adds(&text, out->match == RTV_MATCH_NONE
                           ? ". The closest locations are listed below.\n\n"
                           : ". Check the locations below.\n\n");
    }
    if (out->fallback_reason && out->n_items) {
        sb_adds(&text, "**No LLM answer:** ");
        rtv_add_escaped(&text, out->fallback_reason, 600);
        sb_adds(&text, ". This is the extractive answer instead.\n\n");
    }
    RtvAnswerIn in = {.st = st,
                      .req = req,
                      .items = out->items,
                      .n = out->n_items,
                      .words = d->words,
                      .focus_chunk = req->focus_chunk,
                      .all = req->answer_all,
                      .weak = out->match != RTV_MATCH_STRONG,
                      .why_empty = why,
                      .notice = d->notice};
    char *ex = rtv_extractive_answer(&in);
    sb_adds(&text, ex);
    free(ex);
    return sb_detach(&text, NULL);
}

CrErr rtv_ask_finish(IdxStore *st, const RtvRequest *req, RtvAnswer *out, RtvDraft *d, ErrInfo *e)
{
    CrErr rc = CR_OK;
    char *draft = NULL;
    VfyContextItem *ctx = NULL;
    VfyResult vr = {0};
    VfySource src;
    RtvSourceCtx src_ctx;
    StrBuf text;
    sb_init(&text);
    out->timings.llm_ms = d->llm_ms;
    if (d->llm_rc == CR_ECANCELED) {
        rc = err_set(e, CR_ECANCELED, "%s", d->llm_msg[0] ? d->llm_msg : "canceled");
        goto out;
    }
    if (d->llm_rc) {
        StrBuf why;
        sb_init(&why);
        sb_addf(&why, "%s: %s", llm_failure(d->llm_rc), d->llm_msg);
        if (req->mode == RTV_MODE_LLM) {
            rc = err_set(e, d->llm_rc == CR_ETIMEOUT ? CR_ETIMEOUT : CR_EHTTP, "%s", why.buf);
            sb_release(&why);
            goto out;
        }
        log_msg(LOG_WARN, "answering extractively: %s", why.buf);
        out->fallback_reason = sb_detach(&why, NULL);
        sb_release(&why);
    } else if (d->llm_wanted && !d->llm_text) {
        /* the answer itself says nothing matched */
        out->fallback_reason = xstrdup(out->n_items ? "nothing relevant was found, so the LLM was "
                                                      "not asked"
                                                    : "no indexed code matched the question, so "
                                                      "the LLM was not asked");
    }
    if (d->llm_text) {
        out->mode = RTV_MODE_LLM;
        draft = d->llm_text;
        d->llm_text = NULL;
    } else {
        draft = extractive_draft(st, out, d, req);
    }

    double t = now_ms();
    rtv_vfy_source(&src, &src_ctx, st, req); /* what was shown, unsaved buffers too */
    ctx = rtv_vfy_context(out->items, out->n_items);
    rc = vfy_check(&src, draft, strlen(draft), ctx, out->n_items,
                   out->mode == RTV_MODE_LLM ? VFY_AUTHOR_MODEL : VFY_AUTHOR_SERVER, &vr, e);
    if (rc != CR_OK) goto out;
    out->answer = vr.answer;
    out->citations = vr.citations;
    out->n_citations = vr.n_citations;
    out->rejected = vr.rejected;
    out->n_rejected = vr.n_rejected;
    memset(&vr, 0, sizeof vr);
    out->timings.verify_ms = now_ms() - t;
    if (out->mode == RTV_MODE_LLM && (d->notice[0] || out->match != RTV_MATCH_STRONG)) {
        /* added after verification: these are the server's words, not the model's */
        sb_reset(&text);
        if (out->match != RTV_MATCH_STRONG) {
            sb_adds(&text, out->match == RTV_MATCH_NONE ? "**Nothing relevant found:** "
                                                        : "**Weak match:** ");
            rtv_add_escaped(&text, out->match_reason, 300);
            sb_adds(&text, ".\n\n");
        }
        sb_adds(&text, out->answer);
        if (d->notice[0]) {
            sb_adds(&text,
                    text.len && text.buf[text.len - 1] == '\n' ? "\n_Note: " : "\n\n_Note: ");
            rtv_add_escaped(&text, d->notice, 400);
            sb_adds(&text, "._\n");
        }
        free(out->answer);
        out->answer = sb_detach(&text, NULL);
    }
    out->timings.total_ms = now_ms() - d->t0;

out:
    if (rc != CR_OK) rtv_answer_release(out);
    sb_release(&text);
    free(ctx);
    free(draft);
    vfy_result_release(&vr);
    return rc;
}

CrErr rtv_ask_check(IdxStore *st, const RtvRequest *req, const RtvAnswer *out, const char *text,
                    size_t len, VfyResult *vr, ErrInfo *e)
{
    VfySource src;
    RtvSourceCtx src_ctx;
    rtv_vfy_source(&src, &src_ctx, st, req);
    VfyContextItem *ctx = rtv_vfy_context(out->items, out->n_items);
    CrErr rc = vfy_check(&src, text, len, ctx, out->n_items, VFY_AUTHOR_MODEL, vr, e);
    free(ctx);
    return rc;
}

CrErr rtv_search(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    RtvDraft d = {0};
    RtvRequest r = *req;
    r.mode = RTV_MODE_EXTRACTIVE; /* the retrieval half: no LLM is due */
    CrErr rc = rtv_ask_prepare(st, &r, out, &d, e);
    if (!rc) out->timings.total_ms = now_ms() - d.t0;
    draft_release(&d);
    return rc;
}

CrErr rtv_ask(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    RtvDraft d = {0};
    CrErr rc = rtv_ask_prepare(st, req, out, &d, e);
    if (rc) return rc;
    if (d.want_llm) rtv_ask_llm(req, out, &d);
    rc = rtv_ask_finish(st, req, out, &d, e);
    draft_release(&d);
    return rc;
}
