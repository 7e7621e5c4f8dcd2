#include "ws.h"

#include <stdio.h>
#include <stdlib.h>

/* The one orchestration of a question, for every door: retrieve's three
 * steps with the LLM endpoint's back-off around the LLM step. */

struct WsAsk {
    WsEndpoint *ep; /* borrowed; NULL: no back-off */
    RtvDraft *draft;
};

WsAsk *ws_ask_new(WsEndpoint *ep)
{
    WsAsk *a = xcalloc(1, sizeof *a);
    a->ep = ep;
    a->draft = rtv_draft_new();
    return a;
}

void ws_ask_free(WsAsk *a)
{
    if (!a) return;
    rtv_draft_free(a->draft);
    free(a);
}

CrErr ws_ask_prepare(WsAsk *a, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    int txn = idx_read_begin(st); /* one snapshot, one lock: not one per read */
    CrErr rc = rtv_ask_prepare(st, req, out, a->draft, e);
    idx_read_end(st, txn);
    if (rc) return rc;
    char why[600];
    /* a dead endpoint is not asked again before its back-off is over */
    if (a->ep && rtv_draft_wants_llm(a->draft) && req->mode == RTV_MODE_AUTO &&
        ws_endpoint_skip(a->ep, why, sizeof why)) {
        char msg[512];
        snprintf(msg, sizeof msg, "%.500s", why);
        rtv_draft_skip_llm(a->draft, CR_EHTTP, msg);
    }
    return CR_OK;
}

int ws_ask_wants_llm(const WsAsk *a)
{
    return rtv_draft_wants_llm(a->draft);
}

CrErr ws_ask_llm(WsAsk *a, const RtvRequest *req, const RtvAnswer *out)
{
    CrErr rc = rtv_ask_llm(req, out, a->draft);
    int cancelled = rc == CR_ECANCELED || (req->cancel && req->cancel(req->cancel_ud));
    if (a->ep && !cancelled) ws_endpoint_report(a->ep, rc, rtv_draft_llm_msg(a->draft));
    return rc;
}

const char *ws_ask_llm_text(const WsAsk *a)
{
    return rtv_draft_llm_text(a->draft);
}

CrErr ws_ask_finish(WsAsk *a, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    int txn = idx_read_begin(st);
    CrErr rc = rtv_ask_finish(st, req, out, a->draft, e);
    idx_read_end(st, txn);
    return rc;
}

CrErr ws_ask(WsEndpoint *ep, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e)
{
    WsAsk *a = ws_ask_new(ep);
    CrErr rc = ws_ask_prepare(a, st, req, out, e);
    if (!rc && ws_ask_wants_llm(a)) ws_ask_llm(a, req, out);
    if (!rc) rc = ws_ask_finish(a, st, req, out, e);
    ws_ask_free(a);
    return rc;
}
