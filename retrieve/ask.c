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
static CrErr load_item(IdxStore *st, const RtvCand *c, RtvItem *it, StrBuf *sb, ErrInfo *e)
{
    memset(it, 0, sizeof *it);
    CrErr rc = idx_chunk_get(st, c->chunk_id, &it->chunk, e);
    if (rc) return rc;
    sb_reset(sb);
    rc = idx_read_lines(st, it->chunk.path, it->chunk.start_line, it->chunk.end_line, sb, NULL, e);
    if (rc) {
        idx_chunk_release(&it->chunk);
        return rc == CR_EDB ? rc : CR_ENOENT;
    }
    it->start_line = it->chunk.start_line;
    it->end_line = it->chunk.end_line;
    it->score = c->score;
    it->via = c->via;
    it->text = xstrndup(sb->buf, sb->len);
    return CR_OK;
}

/* Asks the LLM about the packed items; *out is its answer text. */
static CrErr llm_answer(const RtvRequest *req, const RtvItem *items, size_t n, char **out,
                        ErrInfo *e)
{
    StrBuf user;
    sb_init(&user);
    rtv_prompt_user(items, n, req->question, &user);
    CrErr rc = rtv_llm_complete(req, rtv_prompt_system, user.buf, out, e);
    sb_release(&user);
    return rc;
}

static const char *llm_failure(CrErr rc)
{
    switch (rc) {
    case CR_ETIMEOUT: return "the LLM timed out";
    case CR_ETOOBIG: return "the LLM's response was over the size cap";
    case CR_EPARSE: return "the LLM's response was unreadable";
    default: return "the LLM failed";
    }
}

CrErr rtv_ask(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    StrBuf qw, line_buf, text;
    RtvPacker pk = {0};
    RtvCand *fused = NULL;
    size_t n_fused = 0;
    VfyContextItem *ctx = NULL;
    char *draft = NULL, *llm_text = NULL;
    VfyResult vr = {0};
    VfySource src;
    double t0 = now_ms(), t;

    memset(out, 0, sizeof *out);
    sb_init(&qw);
    sb_init(&line_buf);
    sb_init(&text);
    if (!req->question || blank(req->question)) {
        rc = err_set(e, CR_EINVAL, "empty question");
        goto out;
    }
    if (strlen(req->question) > RTV_MAX_QUESTION) {
        rc = err_set(e, CR_ETOOBIG, "question longer than %d bytes", RTV_MAX_QUESTION);
        goto out;
    }
    int has_llm = req->llm_url && req->llm_url[0];
    if (req->mode == RTV_MODE_LLM && !has_llm) {
        rc = err_set(e, CR_EHTTP, "no LLM endpoint configured (llm.url)");
        goto out;
    }
    int want_llm = req->mode == RTV_MODE_LLM || (req->mode == RTV_MODE_AUTO && has_llm);
    out->mode = RTV_MODE_EXTRACTIVE;
    size_t budget = req->budget ? req->budget : RTV_DEFAULT_BUDGET;

    RtvRankInfo info;
    if ((rc = rtv_rank(st, req, &rtv_tuning, &fused, &n_fused, &out->timings, &info, e))) goto out;

    /* Candidates are read in rank order only until the budget is spent:
     * long units are narrowed to their best-matching window first. */
    t = now_ms();
    idx_query_words(req->question, &qw);
    const char *words[64];
    size_t n_words = 0;
    for (char *p = qw.buf, *save = NULL, *w; n_words < 64 && (w = strtok_r(p, " ", &save)); p = NULL)
        words[n_words++] = w;
    rtv_packer_init(&pk, budget, RTV_MAX_CANDIDATES);
    out->items = n_fused ? xcalloc(n_fused, sizeof *out->items) : NULL;
    for (size_t i = 0; i < n_fused && rtv_packer_open(&pk); i++) {
        RtvItem *it = &out->items[out->n_items];
        rc = load_item(st, &fused[i], it, &line_buf, e);
        if (rc == CR_ENOENT) continue;
        if (rc) goto out;
        rtv_trim_item(it, words, n_words, rtv_tuning.window_lines);
        if (rtv_packer_offer(&pk, it))
            out->n_items++;
        else
            rtv_item_release(it);
    }
    rc = CR_OK;
    out->timings.pack_ms = now_ms() - t;

    if (want_llm && out->n_items > 0) {
        ErrInfo le = {0};
        t = now_ms();
        CrErr lrc = llm_answer(req, out->items, out->n_items, &llm_text, &le);
        out->timings.llm_ms = now_ms() - t;
        if (lrc == CR_ECANCELED) {
            rc = err_set(e, lrc, "%s", le.msg);
            goto out;
        }
        if (lrc) {
            StrBuf why;
            sb_init(&why);
            sb_addf(&why, "%s: %s", llm_failure(lrc), le.msg);
            if (req->mode == RTV_MODE_LLM) {
                rc = err_set(e, lrc == CR_ETIMEOUT ? CR_ETIMEOUT : CR_EHTTP, "%s", why.buf);
                sb_release(&why);
                goto out;
            }
            log_msg(LOG_WARN, "answering extractively: %s", why.buf);
            out->fallback_reason = sb_detach(&why, NULL);
            sb_release(&why);
        }
    } else if (want_llm) {
        /* the answer itself says nothing matched */
        out->fallback_reason = xstrdup("no indexed code matched the question, so the LLM was not "
                                       "asked");
    }

    const char *why = NULL;
    if (!req->use_bm25 && n_fused == 0)
        why = "BM25 retrieval is switched off, and the dense leg found nothing or is off "
              "(graph expansion starts from what the other legs find).";
    else if (n_fused > 0 && out->n_items == 0)
        why = "Every match was larger than the context budget.";
    int weak = req->use_bm25 && info.coverage < RTV_WEAK_COVERAGE;
    log_msg(LOG_DEBUG, "best BM25 coverage of the question: %.2f", info.coverage);
    if (llm_text) {
        out->mode = RTV_MODE_LLM;
        draft = llm_text;
        llm_text = NULL;
    } else {
        char *ex = rtv_extractive_answer(out->items, out->n_items, why, weak, info.notice);
        if (out->fallback_reason && out->n_items) {
            sb_adds(&text, "**No LLM answer:** ");
            rtv_add_escaped(&text, out->fallback_reason, 600);
            sb_adds(&text, ". This is the extractive answer instead.\n\n");
        }
        sb_adds(&text, ex);
        free(ex);
        draft = sb_detach(&text, NULL);
    }

    t = now_ms();
    vfy_source_for_store(&src, st);
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
    if (out->mode == RTV_MODE_LLM && info.notice[0]) {
        /* added after verification: a notice is the server's, not the model's */
        sb_reset(&text);
        sb_adds(&text, out->answer);
        sb_adds(&text, text.len && text.buf[text.len - 1] == '\n' ? "\n_Note: " : "\n\n_Note: ");
        rtv_add_escaped(&text, info.notice, 400);
        sb_adds(&text, "._\n");
        free(out->answer);
        out->answer = sb_detach(&text, NULL);
    }
    out->timings.total_ms = now_ms() - t0;

out:
    if (rc != CR_OK) rtv_answer_release(out);
    rtv_packer_release(&pk);
    sb_release(&qw);
    sb_release(&line_buf);
    sb_release(&text);
    free(fused);
    free(ctx);
    free(draft);
    free(llm_text);
    vfy_result_release(&vr);
    return rc;
}
