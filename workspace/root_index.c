#include "ws.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A root's index (ws.h: WsRoot): its query store and counts, a full build
 * on a handle of its own and the worker's adoption of it. Its state and
 * the host's lock are host.c's. The doors keep only what is theirs (an
 * editor's buffers, an agent's calls). */

CrErr ws_root_open_query(WsRoot *r, ErrInfo *e)
{
    if (r->q) return CR_OK;
    CrErr rc = ws_store_open(&r->cfg, WS_OPEN_CREATE, &r->q, e);
    if (rc) ws_root_set_error(r, e && e->msg[0] ? e->msg : cr_strerror(rc));
    return rc;
}

CrErr ws_root_open_fresh(WsRoot *r, const WsFresh *f, ErrInfo *e)
{
    CrErr rc = r->q ? CR_OK : ws_store_open(&r->cfg, f->how, &r->q, e);
    if (!rc && f->how == WS_OPEN_CREATE)
        rc = ws_store_pass(r->q, f->fn, f->ud, f->waiting, f->wait_ud, f->stats, e);
    if (rc) {
        ws_root_set_error(r, e && e->msg[0] ? e->msg : cr_strerror(rc));
        idx_close(r->q);
        r->q = NULL;
        return rc;
    }
    ws_host_lock(r->host);
    r->state = WS_ROOT_READY;
    r->complete = f->how == WS_OPEN_CREATE;
    ws_host_unlock(r->host);
    return CR_OK;
}

CrErr ws_root_warm(WsRoot *r, ErrInfo *e)
{
    return idx_warm(r->q, e);
}

void ws_root_warm_search(WsRoot *r)
{
    RtvRequest req;
    RtvAnswer a = {0};
    double t0 = now_ms();
    rtv_request_init(&req);
    req.question = "function class method module";
    req.use_dense = 0;
    rtv_search(r->q, &req, &a, NULL);
    rtv_answer_release(&a);
    log_msg(LOG_DEBUG, "warm-up search: %.1f ms", now_ms() - t0);
}

int ws_root_count(WsRoot *r, IdxStore *st, IdxStatus *out)
{
    ErrInfo e = {0};
    IdxStatus got;
    CrErr rc = idx_status(st, &got, &e);
    if (rc == CR_OK) {
        *out = got;
        return 1;
    }
    log_msg(LOG_WARN, "counting the index of %s failed: %s", r->root,
            e.msg[0] ? e.msg : cr_strerror(rc));
    return 0;
}

/* ---------------------------------------------------------------- a build and its adoption */

void ws_built_free(WsBuilt *b)
{
    if (!b) return;
    idx_close(b->store);
    b->store = NULL;
}

void ws_root_build(WsRoot *r, int leave_core, IdxProgressFn fn, void *ud, WsBuilt *b)
{
    ErrInfo e = {0};
    double t0 = now_ms();
    memset(b, 0, sizeof *b);
    /* A shallow copy: its strings stay r->cfg's. */
    WsConfig cfg = r->cfg;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (leave_core && !cfg.threads) cfg.threads = cores > 1 ? (int)cores - 1 : 1;
    CrErr rc = ws_store_open(&cfg, WS_OPEN_CREATE, &b->store, &e);
    if (!rc) rc = ws_store_pass(b->store, fn, ud, NULL, NULL, &b->stats, &e);
    if (!rc || ws_update_embed_failed(rc)) {
        /* counts that cannot be read: the build failed (never "0 files") */
        ErrInfo se = {0};
        CrErr src = idx_status(b->store, &b->status, &se);
        if (src) {
            rc = src;
            ws_unreadable_text(src, &se, e.msg, sizeof e.msg);
        }
    }
    b->rc = rc;
    snprintf(b->msg, sizeof b->msg, "%s", rc ? (e.msg[0] ? e.msg : cr_strerror(rc)) : "");
    log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed, %zu removed) in %.0f ms%s%s", r->root,
            b->stats.files_seen, b->stats.files_changed, b->stats.files_removed, now_ms() - t0,
            rc ? ": " : "", b->msg);
}

int ws_root_adopt(WsRoot *r, WsBuilt *b, int *was_complete)
{
    if (b->rc && !ws_update_embed_failed(b->rc)) {
        ws_built_free(b);
        ws_host_lock(r->host);
        r->building = 0;
        if (r->build_wanted) ws_host_wake_builder(r->host);
        ws_host_unlock(r->host);
        ws_root_set_error(r, b->msg);
        return 0;
    }
    /* The builder's handle is as fresh as the database: it becomes the
     * query store (warm, or mapped from the snapshot in milliseconds). */
    idx_close(r->q);
    r->q = b->store;
    b->store = NULL;
    r->q_status = b->status;
    r->q_status_stale = 0;
    ws_host_lock(r->host);
    *was_complete = r->complete;
    ws_host_unlock(r->host);
    return 1;
}

void ws_root_adopted(WsRoot *r, const WsBuilt *b, const char *msg)
{
    ws_host_lock(r->host);
    r->snap = b->status;
    r->counted = 1;
    r->state = WS_ROOT_READY;
    r->building = 0;
    r->complete = 1;
    r->done = r->total = b->stats.files_seen;
    snprintf(r->message, sizeof r->message, "%s", msg);
    if (r->build_wanted) ws_host_wake_builder(r->host);
    ws_host_unlock(r->host);
}

/* ---------------------------------------------------------------- status */

const char *ws_root_state_name(WsRootState st)
{
    switch (st) {
    case WS_ROOT_OPENING:
    case WS_ROOT_INDEXING:
        return "indexing";
    case WS_ROOT_READY:
        return "ready";
    default:
        return "error";
    }
}
