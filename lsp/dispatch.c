#include "lsp.h"
#include "lsp_int.h"

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

struct LspCall {
    LspRpc *rpc;
    int id_is_str;
    json_int_t id_int;
    char *id_str;
    char *method;
    int cancelled; /* under rpc->mu */
    LspCall *prev, *next;
};

typedef struct Outgoing {
    json_int_t id;
    LspResponseFn fn;
    void *ud;
    struct Outgoing *next;
} Outgoing;

struct LspRpc {
    const LspMethod *methods;
    size_t n_methods;
    void *ctx;
    LspSendFn send;
    void *send_ud;
    int state; /* reader thread only */
    int exited, exit_code;
    pthread_mutex_t mu; /* calls, outgoing, next_id, cancelled flags */
    LspCall *calls;
    Outgoing *outgoing;
    json_int_t next_id;
};

LspStatus lsp_error(LspError *err, int code, const char *fmt, ...)
{
    va_list ap;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return LSP_FAIL;
}

LspRpc *lsp_rpc_new(const LspMethod *methods, size_t n, void *ctx, LspSendFn send, void *send_ud)
{
    LspRpc *rpc = xcalloc(1, sizeof *rpc);
    rpc->methods = methods;
    rpc->n_methods = n;
    rpc->ctx = ctx;
    rpc->send = send;
    rpc->send_ud = send_ud;
    pthread_mutex_init(&rpc->mu, NULL);
    return rpc;
}

static void call_free(LspCall *c)
{
    if (!c) return;
    free(c->id_str);
    free(c->method);
    free(c);
}

void lsp_rpc_free(LspRpc *rpc)
{
    if (!rpc) return;
    while (rpc->calls) {
        LspCall *c = rpc->calls;
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
static void send_msg(LspRpc *rpc, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text) {
        log_msg(LOG_ERROR, "lsp: cannot serialise a message");
        return;
    }
    if (rpc->send(rpc->send_ud, text, strlen(text)) != 0)
        log_msg(LOG_INFO, "lsp: cannot send a message: the client is gone");
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
static void send_reply(LspRpc *rpc, json_t *id, json_t *result, const LspError *err)
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

static void reply_error(LspRpc *rpc, json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void reply_error(LspRpc *rpc, json_t *id, int code, const char *fmt, ...)
{
    LspError err = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err.message, sizeof err.message, fmt, ap);
    va_end(ap);
    send_reply(rpc, id, NULL, &err);
}

void lsp_rpc_framing_error(LspRpc *rpc, int code, const char *message)
{
    reply_error(rpc, NULL, code, "%s", message);
}

static json_t *call_id(const LspCall *c)
{
    return c->id_is_str ? json_string(c->id_str) : json_integer(c->id_int);
}

static int id_matches(const LspCall *c, json_t *id)
{
    if (json_is_integer(id)) return !c->id_is_str && c->id_int == json_integer_value(id);
    if (json_is_string(id)) return c->id_is_str && !strcmp(c->id_str, json_string_value(id));
    return 0;
}

static LspCall *call_new(LspRpc *rpc, json_t *id, const char *method)
{
    LspCall *c = xcalloc(1, sizeof *c);
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
static int call_unlink(LspCall *c)
{
    LspRpc *rpc = c->rpc;
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

void lsp_call_reply(LspCall *call, json_t *result, const LspError *err)
{
    LspRpc *rpc = call->rpc;
    LspError cancelled = {.code = LSP_REQUEST_CANCELLED};
    if (call_unlink(call)) {
        snprintf(cancelled.message, sizeof cancelled.message, "%s was cancelled", call->method);
        err = &cancelled;
    }
    json_t *id = call_id(call);
    send_reply(rpc, id, result, err);
    json_decref(id);
    call_free(call);
}

int lsp_call_reply_failed(LspCall *call, CrErr rc, const ErrInfo *e)
{
    if (rc != CR_EDB && rc != CR_ECORRUPT && rc != CR_EIO) return 0;
    LspError err = {.code = LSP_REQUEST_FAILED};
    snprintf(err.message, sizeof err.message, "the index could not be read: %.400s",
             e && e->msg[0] ? e->msg : cr_strerror(rc));
    lsp_call_reply(call, NULL, &err);
    return 1;
}

void lsp_call_drop(LspCall *call)
{
    if (!call) return;
    call_unlink(call);
    call_free(call);
}

int lsp_call_cancelled(const LspCall *call)
{
    pthread_mutex_lock(&call->rpc->mu);
    int c = call->cancelled;
    pthread_mutex_unlock(&call->rpc->mu);
    return c;
}

const char *lsp_call_method(const LspCall *call)
{
    return call->method;
}

static void cancel_request(LspRpc *rpc, json_t *params)
{
    json_t *id = NULL;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:o}", "id", &id) != 0) return;
    pthread_mutex_lock(&rpc->mu);
    for (LspCall *c = rpc->calls; c; c = c->next)
        if (id_matches(c, id)) c->cancelled = 1;
    pthread_mutex_unlock(&rpc->mu);
}

void lsp_rpc_notify(LspRpc *rpc, const char *method, json_t *params)
{
    json_t *m = json_object();
    json_object_set_new(m, "jsonrpc", json_string("2.0"));
    json_object_set_new(m, "method", json_string(method));
    if (params) json_object_set_new(m, "params", params);
    send_msg(rpc, m);
}

void lsp_rpc_request(LspRpc *rpc, const char *method, json_t *params, LspResponseFn fn, void *ud)
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
static void handle_response(LspRpc *rpc, json_t *msg, json_t *id)
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
        log_msg(LOG_DEBUG, "lsp: response to an unknown request ignored");
        return;
    }
    json_t *error = json_object_get(msg, "error");
    if (o->fn) o->fn(o->ud, error ? NULL : json_object_get(msg, "result"), error);
    free(o);
}

static const LspMethod *find_method(const LspRpc *rpc, const char *name)
{
    for (size_t i = 0; i < rpc->n_methods; i++)
        if (!strcmp(rpc->methods[i].name, name)) return &rpc->methods[i];
    return NULL;
}

static void dispatch(LspRpc *rpc, json_t *msg)
{
    json_t *jv = json_object_get(msg, "jsonrpc");
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    int valid_id = json_is_integer(id) || json_is_string(id);
    json_t *reply_id = valid_id ? id : NULL;

    if (jv && !(json_is_string(jv) && !strcmp(json_string_value(jv), "2.0"))) {
        reply_error(rpc, reply_id, LSP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
        return;
    }
    if (!method) {
        if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
            handle_response(rpc, msg, id);
        else
            reply_error(rpc, reply_id, LSP_INVALID_REQUEST, "a message needs a \"method\"");
        return;
    }
    if (!json_is_string(method)) {
        reply_error(rpc, reply_id, LSP_INVALID_REQUEST, "\"method\" must be a string");
        return;
    }
    if (id && !valid_id) {
        reply_error(rpc, NULL, LSP_INVALID_REQUEST, "\"id\" must be an integer or a string");
        return;
    }
    const char *name = json_string_value(method);
    int is_request = id != NULL;
    if (!strcmp(name, "exit")) {
        rpc->exited = 1;
        rpc->exit_code = rpc->state == ST_SHUTDOWN ? 0 : 1;
        return;
    }
    if (!strcmp(name, "$/cancelRequest")) {
        if (is_request)
            reply_error(rpc, id, LSP_INVALID_REQUEST, "$/cancelRequest is a notification");
        else
            cancel_request(rpc, params);
        return;
    }
    if (rpc->state == ST_SHUTDOWN) {
        if (is_request)
            reply_error(rpc, id, LSP_INVALID_REQUEST, "%s after shutdown: only exit is accepted",
                        name);
        return;
    }
    const LspMethod *m = find_method(rpc, name);
    if (rpc->state == ST_NEW && (!m || (m->flags & LSP_NEEDS_INIT))) {
        if (is_request)
            reply_error(rpc, id, LSP_SERVER_NOT_INITIALIZED, "%s before initialize", name);
        return;
    }
    if (!m) {
        if (is_request) reply_error(rpc, id, LSP_METHOD_NOT_FOUND, "unknown method %s", name);
        return; /* unknown notifications are ignored, $/ or not */
    }
    if (is_request && !(m->flags & LSP_REQUEST)) {
        reply_error(rpc, id, LSP_INVALID_REQUEST, "%s is a notification; it takes no id", name);
        return;
    }
    if (!is_request && !(m->flags & LSP_NOTIFY)) {
        log_msg(LOG_INFO, "lsp: %s without an id is a notification nobody answers; ignored", name);
        return;
    }
    if ((m->flags & LSP_INIT) && rpc->state != ST_NEW) {
        reply_error(rpc, id, LSP_INVALID_REQUEST, "initialize was already received");
        return;
    }
    if (json_is_null(params)) params = NULL;
    if (params && !json_is_object(params) && !json_is_array(params)) {
        if (is_request)
            reply_error(rpc, id, LSP_INVALID_PARAMS, "\"params\" must be an object or an array");
        return;
    }

    LspCall *call = is_request ? call_new(rpc, id, name) : NULL;
    json_t *result = NULL;
    LspError err = {0};
    LspStatus st = m->fn(rpc->ctx, params, call, &result, &err);
    if (!call) {
        json_decref(result);
        return;
    }
    if (st == LSP_DONE) {
        if (m->flags & LSP_INIT) rpc->state = ST_READY;
        if (m->flags & LSP_SHUTDOWN) rpc->state = ST_SHUTDOWN;
        lsp_call_reply(call, result, NULL);
    } else if (st == LSP_FAIL) {
        lsp_call_reply(call, result, &err);
    }
}

int lsp_rpc_handle(LspRpc *rpc, const char *body, size_t len)
{
    json_error_t je;
    json_t *msg = json_loadb(body, len, JSON_DECODE_ANY, &je);
    if (!msg) {
        reply_error(rpc, NULL, LSP_PARSE_ERROR, "not JSON: %s (at byte %zu)", je.text,
                    (size_t)je.position);
        return -1;
    }
    if (!json_is_object(msg))
        reply_error(rpc, NULL, LSP_INVALID_REQUEST,
                    json_is_array(msg) ? "batches (JSON arrays) are not supported"
                                       : "a message must be a JSON object");
    else
        dispatch(rpc, msg);
    json_decref(msg);
    return 0;
}

int lsp_rpc_exited(const LspRpc *rpc, int *out_code)
{
    if (rpc->exited && out_code) *out_code = rpc->exit_code;
    return rpc->exited;
}

int lsp_rpc_shut_down(const LspRpc *rpc)
{
    return rpc->state == ST_SHUTDOWN;
}
