#include "rpc.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The envelope: parse, validate, apply the lifecycle, route to the method
 * table, and send replies. Deferred calls live in a list under a mutex so
 * that $/cancelRequest (reader thread) can find them while a worker is
 * finishing them. */

enum { ST_NEW, ST_READY, ST_SHUTDOWN };

struct RpcCall {
    Rpc *rpc;
    int id_is_str;
    json_int_t id_int;
    char *id_str;
    char *method;
    int cancelled; /* under rpc->mu */
    RpcCall *prev, *next;
};

typedef struct Outgoing {
    json_int_t id;
    RpcResponseFn fn;
    void *ud;
    struct Outgoing *next;
} Outgoing;

struct Rpc {
    const RpcProfile *profile;
    const RpcMethod *methods;
    size_t n_methods;
    void *ctx;
    RpcSendFn send;
    void *send_ud;
    int state; /* reader thread only */
    int exited, exit_code;
    pthread_mutex_t mu; /* calls, outgoing, next_id, cancelled flags */
    RpcCall *calls;
    Outgoing *outgoing;
    json_int_t next_id;
    void (*on_cancel)(void *ctx); /* rpc_set_on_cancel; reader thread */
};

RpcStatus rpc_error(RpcError *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return RPC_FAIL;
}

Rpc *rpc_new(const RpcProfile *profile, const RpcMethod *methods, size_t n, void *ctx,
             RpcSendFn send, void *send_ud)
{
    Rpc *rpc = xcalloc(1, sizeof *rpc);
    rpc->profile = profile;
    rpc->methods = methods;
    rpc->n_methods = n;
    rpc->ctx = ctx;
    rpc->send = send;
    rpc->send_ud = send_ud;
    pthread_mutex_init(&rpc->mu, NULL);
    return rpc;
}

static void call_free(RpcCall *c)
{
    if (!c) return;
    free(c->id_str);
    free(c->method);
    free(c);
}

void rpc_free(Rpc *rpc)
{
    if (!rpc) return;
    while (rpc->calls) {
        RpcCall *c = rpc->calls;
        rpc->calls = c->next;
        call_free(c);
    }
    while (rpc->outgoing) {
        Outgoing *o = rpc->outgoing;
        rpc->outgoing = o->next;
        free(o);
    }
    pthread_mutex_destroy(&rpc->mu);
    free(rpc);
}

/* Serialises and sends msg (stolen). */
static void send_msg(Rpc *rpc, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text) {
        log_msg(LOG_ERROR, "%s: cannot serialise a message", rpc->profile->name);
        return;
    }
    if (rpc->send(rpc->send_ud, text, strlen(text)) != 0)
        log_msg(LOG_INFO, "%s: cannot send a message: the client is gone", rpc->profile->name);
    free(text);
}

static json_t *error_object(int code, const char *message)
{
    json_t *e = json_object();
    json_object_set_new(e, "code", json_integer(code));
    json_object_set_new(e, "message", json_text(message));
    return e;
}

/* Sends a reply; id (borrowed) may be NULL for an unknown id. */
static void send_reply(Rpc *rpc, json_t *id, json_t *result, const RpcError *err)
{
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set(m, "id", id ? id : json_null());
    if (err) {
        json_decref(result);
        json_object_set_new(m, "error", error_object(err->code, err->message));
    } else {
        json_object_set_new(m, "result", result ? result : json_null());
    }
    send_msg(rpc, m);
}

static void reply_error(Rpc *rpc, json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void reply_error(Rpc *rpc, json_t *id, int code, const char *fmt, ...)
{
    RpcError err = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    send_reply(rpc, id, NULL, &err);
}

void rpc_framing_error(Rpc *rpc, int code, const char *message)
{
    reply_error(rpc, NULL, code, "%s", message);
}

static json_t *call_id(const RpcCall *c)
{
    return c->id_is_str ? json_string(c->id_str) : json_integer(c->id_int);
}

static int id_matches(const RpcCall *c, json_t *id)
{
    if (json_is_integer(id)) return !c->id_is_str && c->id_int == json_integer_value(id);
    if (json_is_string(id)) return c->id_is_str && !strcmp(c->id_str, json_string_value(id));
    return 0;
}

static RpcCall *call_new(Rpc *rpc, json_t *id, const char *method)
{
    RpcCall *c = xcalloc(1, sizeof *c);
    c->rpc = rpc;
    if (json_is_string(id)) {
        c->id_is_str = 1;
        c->id_str = xstrdup(json_string_value(id));
    } else {
        c->id_int = json_integer_value(id);
    }
    c->method = xstrdup(method);
    pthread_mutex_lock(&rpc->mu);
    c->next = rpc->calls;
    if (rpc->calls) rpc->calls->prev = c;
    rpc->calls = c;
    pthread_mutex_unlock(&rpc->mu);
    return c;
}

/* Unlinks c; returns whether it was cancelled. */
static int call_unlink(RpcCall *c)
{
    Rpc *rpc = c->rpc;
    pthread_mutex_lock(&rpc->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        rpc->calls = c->next;
    if (c->next) c->next->prev = c->prev;
    int cancelled = c->cancelled;
    pthread_mutex_unlock(&rpc->mu);
    return cancelled;
}

void rpc_call_reply(RpcCall *call, json_t *result, const RpcError *err)
{
    Rpc *rpc = call->rpc;
    RpcError cancelled = {.code = RPC_REQUEST_CANCELLED};
    if (call_unlink(call)) {
        if (rpc->profile->cancel_silent) { /* the client wants no answer */
            json_decref(result);
            call_free(call);
            return;
        }
        snprintf(cancelled.message, sizeof cancelled.message, "%s was cancelled", call->method);
        err = &cancelled;
    }
    json_t *id = call_id(call);
    send_reply(rpc, id, result, err);
    json_decref(id);
    call_free(call);
}

void rpc_call_drop(RpcCall *call)
{
    if (!call) return;
    call_unlink(call);
    call_free(call);
}

int rpc_call_cancelled(const RpcCall *call)
{
    pthread_mutex_lock(&call->rpc->mu);
    int c = call->cancelled;
    pthread_mutex_unlock(&call->rpc->mu);
    return c;
}

const char *rpc_call_method(const RpcCall *call)
{
    return call->method;
}

static void cancel_request(Rpc *rpc, json_t *params)
{
    json_t *id = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:o}", rpc->profile->cancel_key, &id) != 0)
        return;
    int marked = 0;
    pthread_mutex_lock(&rpc->mu);
    for (RpcCall *c = rpc->calls; c; c = c->next)
        if (id_matches(c, id)) c->cancelled = marked = 1;
    pthread_mutex_unlock(&rpc->mu);
    if (marked && rpc->on_cancel) rpc->on_cancel(rpc->ctx);
}

void rpc_set_on_cancel(Rpc *rpc, void (*fn)(void *ctx))
{
    rpc->on_cancel = fn;
}

void rpc_notify(Rpc *rpc, const char *method, json_t *params)
{
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set_new(m, "method", json_string(method));
    if (params) json_object_set_new(m, "params", params);
    send_msg(rpc, m);
}

void rpc_request(Rpc *rpc, const char *method, json_t *params, RpcResponseFn fn, void *ud)
{
    Outgoing *o = xcalloc(1, sizeof *o);
    o->fn = fn;
    o->ud = ud;
    pthread_mutex_lock(&rpc->mu);
    o->id = ++rpc->next_id;
    o->next = rpc->outgoing;
    rpc->outgoing = o;
    json_int_t id = o->id;
    pthread_mutex_unlock(&rpc->mu);
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set_new(m, "id", json_integer(id));
    json_object_set_new(m, "method", json_string(method));
    if (params) json_object_set_new(m, "params", params);
    send_msg(rpc, m);
}

/* A response to one of our requests. */
static void handle_response(Rpc *rpc, json_t *msg, json_t *id)
{
    Outgoing *o = NULL;
    if (json_is_integer(id)) {
        pthread_mutex_lock(&rpc->mu);
        for (Outgoing **pp = &rpc->outgoing; *pp; pp = &(*pp)->next)
            if ((*pp)->id == json_integer_value(id)) {
                o = *pp;
                *pp = o->next;
                break;
            }
        pthread_mutex_unlock(&rpc->mu);
    }
    if (!o) {
        log_msg(LOG_DEBUG, "%s: response to an unknown request ignored", rpc->profile->name);
        return;
    }
    json_t *error = json_object_get(msg, "error");
    if (o->fn) o->fn(o->ud, error ? NULL : json_object_get(msg, "result"), error);
    free(o);
}

static const RpcMethod *find_method(const Rpc *rpc, const char *name)
{
    for (size_t i = 0; i < rpc->n_methods; i++)
        if (!strcmp(rpc->methods[i].name, name)) return &rpc->methods[i];
    return NULL;
}

static void dispatch(Rpc *rpc, json_t *msg)
{
    json_t *jv = json_object_get(msg, "jsonrpc");
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    int valid_id = json_is_integer(id) || json_is_string(id);
    json_t *reply_id = valid_id ? id : NULL;

    if (jv && !(json_is_string(jv) && !strcmp(json_string_value(jv), "2.0"))) {
        reply_error(rpc, reply_id, RPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!method) {
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
            handle_response(rpc, msg, id);
        else
            reply_error(rpc, reply_id, RPC_INVALID_REQUEST, "a message needs a \"method\"");
        return;
    }
    if (!json_is_string(method)) {
        reply_error(rpc, reply_id, RPC_INVALID_REQUEST, "\"method\" must be a string");
        return;
    }
    if (id && !valid_id) {
        reply_error(rpc, NULL, RPC_INVALID_REQUEST, "\"id\" must be an integer or a string");
        return;
    }
    const char *name = json_string_value(method);
    int is_request = id != NULL;
    const RpcProfile *pf = rpc->profile;
    if (pf->exit_method && !strcmp(name, pf->exit_method)) {
        rpc->exited = 1;
        rpc->exit_code = rpc->state == ST_SHUTDOWN ? 0 : 1;
        return;
    }
    if (!strcmp(name, pf->cancel_method)) {
        if (is_request)
            reply_error(rpc, id, RPC_INVALID_REQUEST, "%s is a notification", name);
        else
            cancel_request(rpc, params);
        return;
    }
    if (rpc->state == ST_SHUTDOWN) {
        if (is_request)
            reply_error(rpc, id, RPC_INVALID_REQUEST, "%s after shutdown: only exit is accepted",
                        name);
        return;
    }
    const RpcMethod *m = find_method(rpc, name);
    if (rpc->state == ST_NEW && (!m || (m->flags & RPC_NEEDS_INIT))) {
        if (is_request)
            reply_error(rpc, id, RPC_SERVER_NOT_INITIALIZED,
                        "%s before initialize: the server is not initialized", name);
        return;
    }
    if (!m) {
        if (is_request) reply_error(rpc, id, RPC_METHOD_NOT_FOUND, "unknown method %s", name);
        return; /* unknown notifications are ignored, $/ or not */
    }
    if (is_request && !(m->flags & RPC_REQUEST)) {
        reply_error(rpc, id, RPC_INVALID_REQUEST, "%s is a notification; it takes no id", name);
        return;
    }
    if (!is_request && !(m->flags & RPC_NOTIFY)) {
        log_msg(LOG_INFO, "%s: %s without an id is a notification nobody answers; ignored",
                rpc->profile->name, name);
        return;
    }
    if ((m->flags & RPC_INIT) && rpc->state != ST_NEW) {
        reply_error(rpc, id, RPC_INVALID_REQUEST, "initialize was already received");
        return;
    }
    if (json_is_null(params)) params = NULL;
    if (params && pf->object_params && !json_is_object(params)) {
        if (is_request) reply_error(rpc, id, RPC_INVALID_REQUEST, "\"params\" must be an object");
        return;
    }
    if (params && !json_is_object(params) && !json_is_array(params)) {
        if (is_request)
            reply_error(rpc, id, RPC_INVALID_PARAMS, "\"params\" must be an object or an array");
        return;
    }

    RpcCall *call = is_request ? call_new(rpc, id, name) : NULL;
    json_t *result = NULL;
    RpcError err = {0};
    RpcStatus st = m->fn(rpc->ctx, params, call, &result, &err);
    if (!call) {
        json_decref(result);
        return;
    }
    if (st == RPC_DONE) {
        if (m->flags & RPC_INIT) rpc->state = ST_READY;
        if (m->flags & RPC_SHUTDOWN) rpc->state = ST_SHUTDOWN;
        rpc_call_reply(call, result, NULL);
    } else if (st == RPC_FAIL) {
        rpc_call_reply(call, result, &err);
    }
}

/* An integer JSON allows and int64 does not hold ("startLine":
 * 18446744073709551616) makes jansson refuse the whole message, and the
 * call would be answered with an id-null parse error its client never
 * matches. Such a number is read as the real 1e300 (same sign) instead,
 * so the message parses, the call keeps its id, and the method's argument
 * check refuses the value for that call. At most RPC_BIG_INTS per
 * message; the copy is the caller's to free. */
#define RPC_BIG_INTS 16

static char *rpc__tame_big_int(const char *body, size_t len, size_t *out_len,
                               const json_error_t *je)
{
    if (!strstr(je->text, "too big")) return NULL;
    size_t at = (size_t)je->position;
    if (at > len) at = len;
    size_t a = at, b = at;
    while (a > 0 && ((body[a - 1] >= '0' && body[a - 1] <= '9') || body[a - 1] == '-'))
        a--;
    while (b < len && body[b] >= '0' && body[b] <= '9')
        b++;
    if (a == b) return NULL;
    const char *rep = body[a] == '-' ? "-1e300" : "1e300";
    size_t rl = strlen(rep);
    char *out = xmalloc(len - (b - a) + rl + 1);
    memcpy(out, body, a);
    memcpy(out + a, rep, rl);
    memcpy(out + a + rl, body + b, len - b);
    *out_len = len - (b - a) + rl;
    out[*out_len] = '\0';
    return out;
}

int rpc_handle(Rpc *rpc, const char *body, size_t len)
{
    json_error_t je;
    size_t flags = JSON_DECODE_ANY | rpc->profile->json_flags;
    json_t *msg = json_loadb(body, len, flags, &je);
    char *tamed = NULL;
    for (int i = 0; !msg && i < RPC_BIG_INTS; i++) {
        size_t tl = 0;
        char *t = rpc__tame_big_int(tamed ? tamed : body, tamed ? strlen(tamed) : len, &tl, &je);
        if (!t) break;
        free(tamed);
        tamed = t;
        msg = json_loadb(tamed, tl, flags, &je);
    }
    free(tamed);
    if (!msg) {
        reply_error(rpc, NULL, RPC_PARSE_ERROR, "not JSON: %s (at byte %zu)", je.text,
                    (size_t)je.position);
        return -1;
    }
    if (!json_is_object(msg))
        reply_error(rpc, NULL, RPC_INVALID_REQUEST,
                    json_is_array(msg) ? "batches (JSON arrays) are not supported"
                                       : "a message must be a JSON object");
    else
        dispatch(rpc, msg);
    json_decref(msg);
    return 0;
}

int rpc_exited(const Rpc *rpc, int *out_code)
{
    if (rpc->exited && out_code) *out_code = rpc->exit_code;
    return rpc->exited;
}

int rpc_shut_down(const Rpc *rpc)
{
    return rpc->state == ST_SHUTDOWN;
}
