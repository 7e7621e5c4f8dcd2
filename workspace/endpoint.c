#include "ws.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An LLM endpoint's health, shared by every question of a process: a dead
 * endpoint is backed off (10 s, doubling up to 5 min) so that auto-mode
 * answers do not each wait for it, and the user is told when it changes. */

#define EP_BACKOFF_FIRST_MS 10000.0
#define EP_BACKOFF_MAX_MS 300000.0

typedef enum { EP_UNKNOWN, EP_OK, EP_DOWN } EpState;

struct WsEndpoint {
    pthread_mutex_t mu;
    const char *what; /* "LLM" */
    WsNoticeFn notice;
    void *notice_ud;
    EpState st;
    char reason[400];
    double retry_at_ms; /* while down: not contacted before this (auto mode) */
    double backoff_ms;
};

WsEndpoint *ws_endpoint_new(const char *what, WsNoticeFn notice, void *ud)
{
    WsEndpoint *ep = xcalloc(1, sizeof *ep);
    pthread_mutex_init(&ep->mu, NULL);
    ep->what = what;
    ep->notice = notice;
    ep->notice_ud = ud;
    return ep;
}

void ws_endpoint_free(WsEndpoint *ep)
{
    if (!ep) return;
    pthread_mutex_destroy(&ep->mu);
    free(ep);
}

int ws_endpoint_skip(WsEndpoint *ep, char *why, size_t why_size)
{
    pthread_mutex_lock(&ep->mu);
    double now = now_ms();
    int skip = ep->st == EP_DOWN && now < ep->retry_at_ms;
    if (skip)
        snprintf(why, why_size, "the %s endpoint is down (%.300s); next try in %.0f s", ep->what,
                 ep->reason, (ep->retry_at_ms - now) / 1000.0 + 0.5);
    pthread_mutex_unlock(&ep->mu);
    return skip;
}

void ws_endpoint_report(WsEndpoint *ep, CrErr rc, const char *msg)
{
    char text[600];
    int type = 0;
    if (rc == CR_ECANCELED) return;
    pthread_mutex_lock(&ep->mu);
    if (rc == CR_OK) {
        if (ep->st == EP_DOWN) {
            snprintf(text, sizeof text, "coderag: the %s endpoint works again", ep->what);
            type = 3;
        }
        ep->st = EP_OK;
        ep->reason[0] = '\0';
        ep->backoff_ms = 0;
    } else {
        int changed = ep->st != EP_DOWN || strcmp(ep->reason, msg ? msg : "") != 0;
        ep->backoff_ms = ep->st != EP_DOWN || ep->backoff_ms <= 0 ? EP_BACKOFF_FIRST_MS
                         : ep->backoff_ms * 2 > EP_BACKOFF_MAX_MS ? EP_BACKOFF_MAX_MS
                                                                  : ep->backoff_ms * 2;
        ep->st = EP_DOWN;
        ep->retry_at_ms = now_ms() + ep->backoff_ms;
        snprintf(ep->reason, sizeof ep->reason, "%s", msg ? msg : "");
        if (changed) {
            snprintf(text, sizeof text,
                     "coderag: the %s endpoint failed: %.400s; answers are extractive until it "
                     "works again (next try in %.0f s)",
                     ep->what, ep->reason, ep->backoff_ms / 1000.0);
            type = 2;
        }
    }
    WsNoticeFn fn = ep->notice;
    void *ud = ep->notice_ud;
    pthread_mutex_unlock(&ep->mu);
    if (!type) return;
    if (fn)
        fn(ud, type, text);
    else
        log_msg(type == 3 ? LOG_INFO : LOG_WARN, "%s", text);
}

json_t *ws_endpoint_status_json(WsEndpoint *ep, int configured)
{
    static const char *const names[] = {"unknown", "ok", "down"};
    pthread_mutex_lock(&ep->mu);
    json_t *o = json_pack("{s:b, s:s, s:o}", "configured", configured, "state",
                          configured ? names[ep->st] : "off", "message", json_text(ep->reason));
    pthread_mutex_unlock(&ep->mu);
    return o;
}
