#include "server_int.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

/* The worker and builder threads, the job queue, builds with work-done
 * progress, and coderag/status. See server_int.h for the design. */

#define RELOAD_INTERVAL_MS 1000.0

Workspace *ws_new(Server *s, const char *root, const char *name, const CrConfig *cfg)
{
    Workspace *ws = xcalloc(1, sizeof *ws);
    char real[PATH_MAX];
    ws->srv = s;
    ws->root = xstrdup(realpath(root, real) ? real : root);
    if (strcmp(ws->root, root) != 0) ws->alias = xstrdup(root);
    ws->name = xstrdup(name);
    config_copy(&ws->cfg, cfg);
    free(ws->cfg.root);
    ws->cfg.root = xstrdup(ws->root);
    ws->state = WS_OPENING;
    snprintf(ws->message, sizeof ws->message, "waiting for initialized");
    strmap_init(&ws->pending);
    pthread_mutex_init(&ws->pg_mu, NULL);
    return ws;
}

void ws_free(Workspace *ws)
{
    if (!ws) return;
    nav_forget_answer(ws);
    for (size_t i = 0; i < HOVER_CACHE; i++) free(ws->explained[i].markdown);
    idx_close(ws->q);
    free(ws->root);
    free(ws->alias);
    free(ws->name);
    config_release(&ws->cfg);
    strmap_release(&ws->pending);
    pthread_mutex_destroy(&ws->pg_mu);
    free(ws);
}

/* Length of root when abs is root itself or inside it, else 0. */
static size_t under_root(const char *abs, const char *root)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (strncmp(abs, root, n) != 0) return 0;
    if (abs[n] == '/' || abs[n] == '\0' || (n == 1 && root[0] == '/')) return n;
    return 0;
}

Workspace *ws_for_path(Server *s, const char *abs, char **out_rel)
{
    Workspace *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < s->n_ws; i++) {
        const char *names[2] = {s->ws[i]->root, s->ws[i]->alias};
        for (int k = 0; k < 2; k++) {
            size_t n = names[k] ? under_root(abs, names[k]) : 0;
            if (n > best_len) {
                best = s->ws[i];
                best_len = n;
            }
        }
    }
    if (out_rel) {
        *out_rel = NULL;
        if (best) {
            const char *rel = abs + best_len;
            while (*rel == '/')
                rel++;
            *out_rel = rel[0] ? xstrdup(rel) : NULL;
        }
    }
    return best;
}

int ws_indexing(Workspace *ws)
{
    pthread_mutex_lock(&ws->srv->mu);
    int r = ws->state == WS_OPENING || ws->state == WS_INDEXING || ws->building;
    pthread_mutex_unlock(&ws->srv->mu);
    return r;
}

/* ---------------------------------------------------------------- jobs */

Job *job_new(JobKind kind, Workspace *ws, LspCall *call)
{
    Job *j = xcalloc(1, sizeof *j);
    j->kind = kind;
    j->ws = ws;
    j->call = call;
    return j;
}

void job_free(Job *j)
{
    if (!j) return;
    lsp_call_drop(j->call);
    free(j->ask.question);
    free(j->ask.mode);
    free(j->ask.uri);
    json_decref(j->ask.wd_token);
    free(j->path);
    free(j->uri);
    free(j->word);
    free(j->buffer);
    idx_close(j->built);
    free(j);
}

void srv_push(Server *s, Job *j, int urgent)
{
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        job_free(j);
        return;
    }
    if (urgent) {
        /* After other urgent jobs, before the rest: order among updates holds. */
        Job **pp = &s->head;
        while (*pp && ((*pp)->kind == JOB_UPDATE || (*pp)->kind == JOB_ADOPT))
            pp = &(*pp)->next;
        j->next = *pp;
        *pp = j;
        if (!j->next) s->tail = j;
    } else {
        j->next = NULL;
        if (s->tail)
            s->tail->next = j;
        else
            s->head = j;
        s->tail = j;
    }
    pthread_cond_signal(&s->work_cond);
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------- notices */

void srv_notice(Server *s, int kind, int type, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_msg(type == 1 ? LOG_ERROR : LOG_WARN, "%s", msg);
    pthread_mutex_lock(&s->mu);
    int shown = s->notified[kind];
    s->notified[kind] = 1;
    pthread_mutex_unlock(&s->mu);
    if (shown) return;
    json_t *p = json_object();
    json_object_set_new(p, "type", json_integer(type));
    json_object_set_new(p, "message", lsp_json_string(msg));
    lsp_rpc_notify(s->rpc, "window/showMessage", p);
}

void srv_notice_clear(Server *s, int kind)
{
    pthread_mutex_lock(&s->mu);
    s->notified[kind] = 0;
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------- progress */

static json_t *progress_value(const char *kind, const char *title, size_t done, size_t total,
                              const char *message)
{
    json_t *v = json_object();
    json_object_set_new(v, "kind", json_string(kind));
    if (title) json_object_set_new(v, "title", lsp_json_string(title));
    if (!strcmp(kind, "begin")) json_object_set_new(v, "cancellable", json_false());
    char msg[96];
    if (!message && total) {
        snprintf(msg, sizeof msg, "%zu/%zu files", done, total);
        message = msg;
    }
    if (message) json_object_set_new(v, "message", lsp_json_string(message));
    if (strcmp(kind, "end") != 0)
        json_object_set_new(v, "percentage",
                            json_integer(total ? (json_int_t)(done * 100 / total) : 0));
    return v;
}

/* Sends one $/progress; caller holds ws->pg_mu. */
static void progress_send(Workspace *ws, json_t *value)
{
    json_t *p = json_object();
    json_object_set_new(p, "token", json_string(ws->pg.token));
    json_object_set_new(p, "value", value);
    lsp_rpc_notify(ws->srv->rpc, "$/progress", p);
}

static void progress_begin_locked(Workspace *ws)
{
    char title[300];
    size_t done, total;
    pthread_mutex_lock(&ws->srv->mu);
    done = ws->done;
    total = ws->total;
    pthread_mutex_unlock(&ws->srv->mu);
    snprintf(title, sizeof title, "Indexing %s", ws->name);
    progress_send(ws, progress_value("begin", title, done, total, total ? NULL : "scanning"));
    ws->pg.st = PG_ACTIVE;
    ws->pg.last_pct = total ? (int)(done * 100 / total) : 0;
    ws->pg.last_ms = now_ms();
}

/* Reader thread: the client answered window/workDoneProgress/create. */
static void on_progress_created(void *ud, json_t *result, json_t *error)
{
    Workspace *ws = ud;
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_CREATING) {
        if (error) {
            ws->pg.st = PG_NONE;
        } else {
            progress_begin_locked(ws);
            if (ws->pg.finished) {
                progress_send(ws, progress_value("end", NULL, 0, 0, ws->pg.end_msg));
                ws->pg.st = PG_DONE;
            }
        }
    }
    pthread_mutex_unlock(&ws->pg_mu);
}

static void progress_start(Workspace *ws)
{
    Server *s = ws->srv;
    if (!s->cap_progress) return;
    pthread_mutex_lock(&s->mu);
    int seq = ++s->progress_seq;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&ws->pg_mu);
    memset(&ws->pg, 0, sizeof ws->pg);
    ws->pg.seq = seq;
    snprintf(ws->pg.token, sizeof ws->pg.token, "coderag/index/%d", seq);
    ws->pg.st = PG_CREATING;
    json_t *p = json_object();
    json_object_set_new(p, "token", json_string(ws->pg.token));
    pthread_mutex_unlock(&ws->pg_mu);
    lsp_rpc_request(s->rpc, "window/workDoneProgress/create", p, on_progress_created, ws);
}

static void progress_report(Workspace *ws, size_t done, size_t total)
{
    if (!ws->srv->cap_progress) return;
    int pct = total ? (int)(done * 100 / total) : 0;
    double now = now_ms();
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_ACTIVE && pct != ws->pg.last_pct && now - ws->pg.last_ms >= 100) {
        progress_send(ws, progress_value("report", NULL, done, total, NULL));
        ws->pg.last_pct = pct;
        ws->pg.last_ms = now;
    }
    pthread_mutex_unlock(&ws->pg_mu);
}

static void progress_finish(Workspace *ws, const char *msg)
{
    pthread_mutex_lock(&ws->pg_mu);
    if (ws->pg.st == PG_ACTIVE) {
        progress_send(ws, progress_value("end", NULL, 0, 0, msg));
        ws->pg.st = PG_DONE;
    } else if (ws->pg.st == PG_CREATING) {
        ws->pg.finished = 1;
        snprintf(ws->pg.end_msg, sizeof ws->pg.end_msg, "%s", msg);
    }
    pthread_mutex_unlock(&ws->pg_mu);
}

/* ---------------------------------------------------------------- builder */

static int on_build_progress(void *ud, size_t done, size_t total)
{
    Workspace *ws = ud;
    pthread_mutex_lock(&ws->srv->mu);
    ws->done = done;
    ws->total = total;
    int stop = ws->srv->stopping; /* exit: a build stops at the next file */
    pthread_mutex_unlock(&ws->srv->mu);
    progress_report(ws, done, total);
    return stop;
}

static int endpoint_error(CrErr rc)
{
    return rc == CR_EHTTP || rc == CR_ETIMEOUT;
}

/* Builder thread: a full update with a handle of its own, handed to the
 * worker when done. */
static void build(Workspace *ws)
{
    Job *j = job_new(JOB_ADOPT, ws, NULL);
    IdxConfig ic;
    ErrInfo e = {0};
    double t0 = now_ms();
    config_idx(&ws->cfg, &ic);
    /* Inside an editor, a full build leaves a core to the editor unless
     * told otherwise (threads). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!ic.threads) ic.threads = cores > 1 ? (int)cores - 1 : 1;
    progress_start(ws);
    CrErr rc = idx_open(&ic, 0, &j->built, &e);
    if (!rc) rc = idx_update(j->built, on_build_progress, ws, &j->stats, &e);
    if ((!rc || endpoint_error(rc)) && idx_status(j->built, &j->built_status, NULL) != CR_OK)
        memset(&j->built_status, 0, sizeof j->built_status);
    j->build_rc = rc;
    snprintf(j->build_msg, sizeof j->build_msg, "%s",
             rc ? (e.msg[0] ? e.msg : cr_strerror(rc)) : "");
    log_msg(LOG_INFO, "indexed %s: %zu files (%zu changed, %zu removed) in %.0f ms%s%s", ws->root,
            j->stats.files_seen, j->stats.files_changed, j->stats.files_removed, now_ms() - t0,
            rc ? ": " : "", j->build_msg);
    srv_push(ws->srv, j, 1);
}

static Workspace *next_build(Server *s)
{
    for (size_t i = 0; i < s->n_ws; i++)
        if (s->ws[i]->build_wanted && !s->ws[i]->building) return s->ws[i];
    return NULL;
}

static void *builder_main(void *arg)
{
    Server *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        Workspace *ws = NULL;
        while (!s->stopping && !(ws = next_build(s)))
            pthread_cond_wait(&s->build_cond, &s->mu);
        if (s->stopping) break;
        ws->build_wanted = 0;
        ws->building = 1;
        ws->state = WS_INDEXING;
        ws->done = ws->total = 0;
        snprintf(ws->message, sizeof ws->message, "indexing %s", ws->root);
        pthread_mutex_unlock(&s->mu);
        build(ws);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---------------------------------------------------------------- worker */

static void set_error(Workspace *ws, const char *msg)
{
    pthread_mutex_lock(&ws->srv->mu);
    ws->state = WS_ERROR;
    snprintf(ws->message, sizeof ws->message, "%s", msg);
    pthread_mutex_unlock(&ws->srv->mu);
}

static void set_snapshot(Workspace *ws, const IdxStatus *st)
{
    pthread_mutex_lock(&ws->srv->mu);
    ws->snap = *st;
    pthread_mutex_unlock(&ws->srv->mu);
}

/* Opens q (idempotent); errors put the workspace in the error state. */
static int ws_open(Workspace *ws, ErrInfo *e)
{
    if (ws->q) return 1;
    IdxConfig ic;
    config_idx(&ws->cfg, &ic);
    CrErr rc = idx_open(&ic, 0, &ws->q, e);
    if (rc) {
        set_error(ws, e->msg[0] ? e->msg : cr_strerror(rc));
        srv_notice(ws->srv, NOTICE_INDEX, 1, "coderag: cannot open the index of %s: %s", ws->root,
                   e->msg);
        return 0;
    }
    ws->q_reopened = 0;
    ws->q_loaded_ms = now_ms();
    ws->q_loaded_done = 0;
    idx_warm(ws->q, NULL);
    if (idx_status(ws->q, &ws->q_status, NULL) == CR_OK) set_snapshot(ws, &ws->q_status);
    return 1;
}

/* JOB_OPEN: open the query store and ask the builder for a build. */
static void run_open(Server *s, Workspace *ws)
{
    ErrInfo e = {0};
    if (!ws_open(ws, &e)) return;
    pthread_mutex_lock(&s->mu);
    ws->build_wanted = 1;
    if (!ws->building) {
        ws->state = WS_INDEXING;
        snprintf(ws->message, sizeof ws->message, "indexing %s", ws->root);
    }
    pthread_cond_signal(&s->build_cond);
    pthread_mutex_unlock(&s->mu);
}

IdxStore *ws_query_store(Workspace *ws, ErrInfo *e)
{
    if (!ws->q) {
        pthread_mutex_lock(&ws->srv->mu);
        WsState st = ws->state;
        pthread_mutex_unlock(&ws->srv->mu);
        if (st == WS_ERROR) {
            pthread_mutex_lock(&ws->srv->mu);
            err_set(e, CR_EIO, "%s", ws->message);
            pthread_mutex_unlock(&ws->srv->mu);
            return NULL;
        }
        if (!ws_open(ws, e)) return NULL;
    }
    /* A first build commits in batches the worker's handle cannot see in
     * its in-memory search structures: reopen, at most once a second. */
    pthread_mutex_lock(&ws->srv->mu);
    size_t done = ws->done, total = ws->total;
    int partial = ws->building && (size_t)ws->q_status.files < total && done != ws->q_loaded_done;
    pthread_mutex_unlock(&ws->srv->mu);
    if (partial && now_ms() - ws->q_loaded_ms >= RELOAD_INTERVAL_MS) {
        IdxConfig ic;
        IdxStore *q = NULL;
        ErrInfo e2 = {0};
        config_idx(&ws->cfg, &ic);
        if (idx_open(&ic, IDX_OPEN_READONLY, &q, &e2) == CR_OK) {
            idx_close(ws->q);
            ws->q = q;
            ws->q_reopened = 1;
            if (idx_status(q, &ws->q_status, NULL) == CR_OK) set_snapshot(ws, &ws->q_status);
            log_msg(LOG_DEBUG, "reopened the index of %s during the build (%lld files)", ws->root,
                    (long long)ws->q_status.files);
        }
        ws->q_loaded_ms = now_ms();
        ws->q_loaded_done = done;
    }
    return ws->q;
}

/* Applies the pending file updates (worker). */
static void run_updates(Server *s, Workspace *ws)
{
    StrMap todo;
    pthread_mutex_lock(&s->mu);
    ws->update_queued = 0;
    if (ws->building) { /* the adoption runs them */
        pthread_mutex_unlock(&s->mu);
        return;
    }
    todo = ws->pending;
    strmap_init(&ws->pending);
    pthread_mutex_unlock(&s->mu);
    if (!todo.len) return;
    ErrInfo e = {0};
    if (!ws->q && !ws_open(ws, &e)) {
        strmap_release(&todo);
        return;
    }
    for (size_t i = 0; i < todo.cap; i++) {
        if (!todo.keys[i]) continue;
        double t0 = now_ms();
        e.msg[0] = '\0';
        CrErr rc = idx_update_file(ws->q, todo.keys[i], &e);
        double t1 = now_ms();
        if (rc && rc != CR_EOUTSIDE)
            log_msg(LOG_WARN, "re-indexing %s failed: %s", todo.keys[i], e.msg);
        if (endpoint_error(rc))
            srv_notice(s, NOTICE_EMBED, 2,
                       "coderag: the embeddings endpoint failed (%s); "
                       "the text index is current, vectors follow when it is back",
                       e.msg);
        log_msg(LOG_INFO, "re-indexed %s in %.1f ms (%.1f ms after the notification)", todo.keys[i],
                t1 - t0, t1 - (double)todo.vals[i] / 1000.0);
    }
    strmap_release(&todo);
    ws->q_status_stale = 1; /* counted when the worker is idle, not before the next ask */
}

void ws_schedule_update(Workspace *ws, const char *rel)
{
    Server *s = ws->srv;
    pthread_mutex_lock(&s->mu);
    if (!strmap_get(&ws->pending, rel, NULL))
        strmap_put(&ws->pending, rel, (int64_t)(now_ms() * 1000));
    int queue = !ws->update_queued && !ws->building;
    if (queue) ws->update_queued = 1;
    pthread_mutex_unlock(&s->mu);
    if (queue) srv_push(s, job_new(JOB_UPDATE, ws, NULL), 1);
}

void ws_request_build(Workspace *ws)
{
    srv_push(ws->srv, job_new(JOB_OPEN, ws, NULL), 0);
}

/* JOB_ADOPT: a build ended; keep its handle as the query store. */
static void run_adopt(Server *s, Job *j)
{
    Workspace *ws = j->ws;
    char msg[sizeof ws->message];
    if (j->build_rc && !endpoint_error(j->build_rc)) {
        idx_close(j->built);
        j->built = NULL;
        pthread_mutex_lock(&s->mu);
        ws->building = 0;
        if (ws->build_wanted) pthread_cond_signal(&s->build_cond);
        pthread_mutex_unlock(&s->mu);
        set_error(ws, j->build_msg);
        snprintf(msg, sizeof msg, "Indexing failed: %.400s", j->build_msg);
        progress_finish(ws, msg);
        srv_notice(s, NOTICE_INDEX, 1, "coderag: indexing %s failed: %s", ws->root, j->build_msg);
        return;
    }
    int keep = ws->q && !ws->q_reopened && j->stats.files_changed == 0 &&
               j->stats.files_removed == 0 && j->built_status.chunks == ws->q_status.chunks &&
               j->built_status.vectors == ws->q_status.vectors &&
               j->built_status.edges == ws->q_status.edges;
    if (!keep) {
        double t0 = now_ms();
        idx_close(ws->q);
        ws->q = j->built;
        j->built = NULL;
        ws->q_reopened = 0;
        idx_warm(ws->q, NULL);
        log_msg(LOG_INFO, "search structures of %s loaded in %.0f ms", ws->root, now_ms() - t0);
    }
    ws->q_status = j->built_status;
    ws->q_status_stale = 0;
    ws->q_loaded_ms = now_ms();
    snprintf(msg, sizeof msg, "%lld files, %lld chunks, %lld edges",
             (long long)j->built_status.files, (long long)j->built_status.chunks,
             (long long)j->built_status.edges);
    pthread_mutex_lock(&s->mu);
    ws->snap = j->built_status;
    ws->state = WS_READY;
    ws->building = 0;
    ws->done = ws->total = j->stats.files_seen;
    snprintf(ws->message, sizeof ws->message, "%s", msg);
    if (ws->build_wanted) pthread_cond_signal(&s->build_cond);
    pthread_mutex_unlock(&s->mu);
    if (endpoint_error(j->build_rc))
        srv_notice(s, NOTICE_EMBED, 2,
                   "coderag: the embeddings endpoint failed (%s); answers "
                   "use BM25 and the graph until it is back",
                   j->build_msg);
    progress_finish(ws, msg);
    run_updates(s, ws);
}

static void run_job(Server *s, Job *j)
{
    switch (j->kind) {
    case JOB_OPEN:
        run_open(s, j->ws);
        break;
    case JOB_ADOPT:
        run_adopt(s, j);
        break;
    case JOB_UPDATE:
        run_updates(s, j->ws);
        break;
    case JOB_ASK:
        run_ask(s, j);
        break;
    case JOB_HOVER:
        run_hover(s, j);
        break;
    case JOB_LENS:
        run_lens(s, j);
        break;
    case JOB_HIER:
        run_hier(s, j);
        break;
    }
}

/* Worker, with s->mu held and the queue empty: refreshes status counts
 * that file updates made stale. */
static void refresh_stale(Server *s)
{
    for (size_t i = 0; i < s->n_ws && !s->head && !s->stopping; i++) {
        Workspace *ws = s->ws[i];
        if (!ws->q_status_stale || !ws->q) continue;
        ws->q_status_stale = 0;
        pthread_mutex_unlock(&s->mu);
        IdxStatus st;
        int ok = idx_status(ws->q, &st, NULL) == CR_OK;
        pthread_mutex_lock(&s->mu);
        if (ok) {
            ws->q_status = st;
            ws->snap = st;
        }
    }
}

static void *worker_main(void *arg)
{
    Server *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (!s->head) refresh_stale(s);
        while (!s->stopping && !s->head)
            pthread_cond_wait(&s->work_cond, &s->mu);
        if (s->stopping) break;
        Job *j = s->head;
        s->head = j->next;
        if (!s->head) s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        run_job(s, j);
        job_free(j);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void srv_start_threads(Server *s)
{
    if (s->threads_started) return;
    pthread_create(&s->worker, NULL, worker_main, s);
    pthread_create(&s->builder, NULL, builder_main, s);
    s->threads_started = 1;
}

static int join_until(pthread_t t, const struct timespec *deadline)
{
    return pthread_timedjoin_np(t, NULL, deadline) == 0 ? 0 : -1;
}

int srv_stop_threads(Server *s, int wait_ms)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->work_cond);
    pthread_cond_broadcast(&s->build_cond);
    pthread_mutex_unlock(&s->mu);
    if (s->threads_started) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += wait_ms / 1000;
        dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        int rw = join_until(s->worker, &dl), rb = join_until(s->builder, &dl);
        if (rw || rb) return -1;
        s->threads_started = 0;
    }
    while (s->head) {
        Job *j = s->head;
        s->head = j->next;
        job_free(j);
    }
    s->tail = NULL;
    return 0;
}

/* ---------------------------------------------------------------- status */

static const char *state_name(WsState st)
{
    switch (st) {
    case WS_OPENING:
    case WS_INDEXING:
        return "indexing";
    case WS_READY:
        return "ready";
    default:
        return "error";
    }
}

json_t *srv_status_json(Server *s)
{
    json_t *roots = json_array();
    json_int_t files = 0, chunks = 0, edges = 0, vectors = 0, indexed = 0, total = 0;
    int any_indexing = 0, any_error = 0;
    StrBuf msg;
    sb_init(&msg);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_ws; i++) {
        Workspace *ws = s->ws[i];
        WsState st = ws->building && ws->state == WS_READY ? WS_INDEXING : ws->state;
        size_t w_indexed = ws->done, w_total = ws->total;
        if (st == WS_READY) w_indexed = w_total = (size_t)ws->snap.files;
        any_indexing |= st == WS_OPENING || st == WS_INDEXING;
        any_error |= st == WS_ERROR;
        files += ws->snap.files;
        chunks += ws->snap.chunks;
        edges += ws->snap.edges;
        vectors += ws->snap.vectors;
        indexed += (json_int_t)w_indexed;
        total += (json_int_t)w_total;
        char line[700];
        if (st == WS_INDEXING && w_total)
            snprintf(line, sizeof line, "%s: indexing, %zu/%zu files", ws->name, w_indexed,
                     w_total);
        else
            snprintf(line, sizeof line, "%s: %s", ws->name, ws->message);
        if (msg.len) sb_adds(&msg, "; ");
        sb_adds(&msg, line);
        json_t *r = json_object();
        json_object_set_new(r, "root", lsp_json_string(ws->root));
        json_object_set_new(r, "state", json_string(state_name(st)));
        json_object_set_new(r, "files", json_integer(ws->snap.files));
        json_object_set_new(r, "chunks", json_integer(ws->snap.chunks));
        json_object_set_new(r, "indexed", json_integer((json_int_t)w_indexed));
        json_object_set_new(r, "total", json_integer((json_int_t)w_total));
        json_object_set_new(r, "message", lsp_json_string(ws->message));
        json_array_append_new(roots, r);
    }
    pthread_mutex_unlock(&s->mu);
    const char *state = any_indexing ? "indexing" : any_error ? "error" : "ready";
    if (!s->n_ws) {
        state = "error";
        sb_adds(&msg, "no workspace folder is open");
    }
    json_t *o = json_object();
    json_object_set_new(o, "state", json_string(state));
    json_object_set_new(o, "files", json_integer(files));
    json_object_set_new(o, "chunks", json_integer(chunks));
    json_object_set_new(o, "indexed", json_integer(indexed));
    json_object_set_new(o, "total", json_integer(total));
    json_object_set_new(o, "message", lsp_json_string(msg.buf));
    json_object_set_new(o, "edges", json_integer(edges));
    json_object_set_new(o, "vectors", json_integer(vectors));
    json_object_set_new(o, "roots", roots);
    sb_release(&msg);
    return o;
}
