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

static int by_score(const void *pa, const void *pb)
{
    const RtvItem *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? 1 : -1;
    int c = strcmp(a->chunk.path, b->chunk.path);
    if (c) return c;
    return a->start_line < b->start_line ? -1 : a->start_line > b->start_line;
}

/* Loads each hit's chunk and current text as a candidate. Hits whose chunk
 * vanished or whose file changed or became unreadable since indexing are
 * dropped; only store failures abort. */
static CrErr load_candidates(IdxStore *st, const RtvCand *hits, size_t n_hits, RtvItem **out,
                             size_t *n_out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    RtvItem *v = n_hits ? xcalloc(n_hits, sizeof *v) : NULL;
    size_t n = 0;
    StrBuf sb;
    sb_init(&sb);

    for (size_t i = 0; i < n_hits; i++) {
        RtvItem *it = &v[n];
        rc = idx_chunk_get(st, hits[i].chunk_id, &it->chunk, e);
        if (rc == CR_ENOENT) continue;
        if (rc != CR_OK) goto out;
        sb_reset(&sb);
        rc = idx_read_lines(st, it->chunk.path, it->chunk.start_line, it->chunk.end_line, &sb, NULL,
                            e);
        if (rc == CR_ENOENT || rc == CR_EINVAL || rc == CR_EIO || rc == CR_ETOOBIG ||
            rc == CR_EBINARY || rc == CR_EUTF8 || rc == CR_EOUTSIDE) {
            idx_chunk_release(&it->chunk);
            continue;
        }
        if (rc != CR_OK) {
            idx_chunk_release(&it->chunk);
            goto out;
        }
        it->start_line = it->chunk.start_line;
        it->end_line = it->chunk.end_line;
        it->score = hits[i].score;
        it->via = hits[i].via;
        it->text = xstrndup(sb.buf, sb.len);
        n++;
    }
    rc = CR_OK;

out:
    sb_release(&sb);
    if (rc != CR_OK) {
        for (size_t i = 0; i < n; i++)
            rtv_item_release(&v[i]);
        free(v);
        v = NULL;
        n = 0;
    }
    *out = v;
    *n_out = n;
    return rc;
}

CrErr rtv_ask(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    size_t n_cands = 0, *picks = NULL;
    RtvItem *cands = NULL;
    RtvCand *fused = NULL;
    size_t n_fused = 0;
    VfyContextItem *ctx = NULL;
    char *draft = NULL;
    VfyResult vr = {0};
    VfySource src;
    double t0 = now_ms(), t;

    memset(out, 0, sizeof *out);
    if (!req->question || blank(req->question)) {
        rc = err_set(e, CR_EINVAL, "empty question");
        goto out;
    }
    if (strlen(req->question) > RTV_MAX_QUESTION) {
        rc = err_set(e, CR_ETOOBIG, "question longer than %d bytes", RTV_MAX_QUESTION);
        goto out;
    }
    if (req->mode == RTV_MODE_LLM) {
        if (!req->llm_url || !req->llm_url[0])
            rc = err_set(e, CR_EHTTP, "no LLM endpoint configured (llm.url)");
        else
            rc = err_set(e, CR_EHTTP, "LLM answers are not available in this build");
        goto out;
    }
    if (req->mode == RTV_MODE_AUTO && req->llm_url && req->llm_url[0])
        log_msg(LOG_WARN, "llm.url is set but LLM answers are not available yet; answering "
                          "extractively");
    out->mode = RTV_MODE_EXTRACTIVE;
    size_t budget = req->budget ? req->budget : RTV_DEFAULT_BUDGET;

    RtvRankInfo info;
    if ((rc = rtv_rank(st, req, &rtv_tuning, &fused, &n_fused, &out->timings, &info, e))) goto out;

    t = now_ms();
    rc = load_candidates(st, fused, n_fused, &cands, &n_cands, e);
    if (rc != CR_OK) goto out;
    {
        /* Long units contribute their best-matching window, not the whole. */
        StrBuf qw;
        sb_init(&qw);
        idx_query_words(req->question, &qw);
        const char *words[64];
        size_t n_words = 0;
        for (char *p = qw.buf, *save = NULL, *w; n_words < 64 && (w = strtok_r(p, " ", &save));
             p = NULL)
            words[n_words++] = w;
        for (size_t i = 0; i < n_cands; i++)
            rtv_trim_item(&cands[i], words, n_words, rtv_tuning.window_lines);
        sb_release(&qw);
    }
    rtv_apply_priors(cands, n_cands, &rtv_tuning);
    if (n_cands) qsort(cands, n_cands, sizeof *cands, by_score);
    picks = n_cands ? xcalloc(n_cands, sizeof *picks) : NULL;
    size_t n_picks = rtv_pack_select(cands, n_cands, budget, RTV_MAX_CANDIDATES, picks);
    out->items = n_picks ? xcalloc(n_picks, sizeof *out->items) : NULL;
    for (size_t i = 0; i < n_picks; i++) {
        out->items[i] = cands[picks[i]];
        memset(&cands[picks[i]], 0, sizeof cands[picks[i]]);
    }
    out->n_items = n_picks;
    out->timings.pack_ms = now_ms() - t;

    const char *why = NULL;
    if (!req->use_bm25)
        why = "BM25 retrieval is switched off, and the dense leg is not available yet "
              "(graph expansion starts from what the other legs find).";
    else if (n_cands > 0 && n_picks == 0)
        why = "Every match was larger than the context budget.";
    int weak = req->use_bm25 && info.coverage < RTV_WEAK_COVERAGE;
    log_msg(LOG_DEBUG, "best BM25 coverage of the question: %.2f", info.coverage);
    draft = rtv_extractive_answer(out->items, out->n_items, why, weak, info.notice);

    t = now_ms();
    vfy_source_for_store(&src, st);
    ctx = rtv_vfy_context(out->items, out->n_items);
    rc = vfy_check(&src, draft, strlen(draft), ctx, out->n_items, VFY_AUTHOR_SERVER, &vr, e);
    if (rc != CR_OK) goto out;
    out->answer = vr.answer;
    out->citations = vr.citations;
    out->n_citations = vr.n_citations;
    out->rejected = vr.rejected;
    out->n_rejected = vr.n_rejected;
    memset(&vr, 0, sizeof vr);
    out->timings.verify_ms = now_ms() - t;
    out->timings.total_ms = now_ms() - t0;

out:
    if (rc != CR_OK) rtv_answer_release(out);
    for (size_t i = 0; i < n_cands; i++)
        rtv_item_release(&cands[i]);
    free(cands);
    free(picks);
    free(fused);
    free(ctx);
    free(draft);
    vfy_result_release(&vr);
    return rc;
}
