/*
 * server_int.h - the language server's state, shared by its files:
 * server.c (lifecycle, method table, main loop), jobs.c (the job queue,
 * the worker and the LLM pool), builder.c (full builds and their
 * adoption), progress.c (work-done progress of builds, notices, endpoint
 * state), workspace.c (workspace lifecycle, query store, file updates,
 * status), root.c (the root rule) and the handler files (handlers_*.c,
 * ask_run.c), each of which owns its job payload.
 *
 * Threads and ownership
 * ---------------------
 * reader (the caller of lsp_server_run): reads the transport and runs the
 *     dispatch table. Handlers decode params there, then either answer at
 *     once (status, lifecycle, document sync, code actions) or queue a Job.
 *     It owns the open documents (Docs) and never touches an IdxStore.
 * worker: owns every workspace's query store (Workspace.q) and runs the job
 *     queue in order - retrieval for asks, hovers, code lenses, symbol and
 *     call hierarchy queries, file updates (saves and watched-file events,
 *     coalesced per path and run ahead of other jobs), the adoption of a
 *     finished build, and the verification of LLM answers. IdxStore is
 *     single-threaded, so this one thread is the only user of q.
 * LLM pool (LLM_THREADS threads): runs the LLM step of asks and
 *     explanations, which never touches a store; a job goes there from the
 *     worker and comes back to the worker to be verified (the shape of
 *     libuv's uv_queue_work). So no question, hover or lens ever waits
 *     behind an LLM call, and at most LLM_THREADS LLM requests run at once.
 * builder: runs full builds (the first on `initialized`, later ones on
 *     coderag.reindex or watched-file events that need a rescan) with its
 *     own IdxStore handle, one workspace at a time, reporting $/progress.
 *     SQLite WAL lets the worker read while it writes. When a build ends
 *     the handle is handed to the worker (an adopt job), which closes its
 *     old query handle and keeps the builder's, unless nothing changed.
 *     File updates wait while a build runs and are applied when it is
 *     adopted, so the two handles never race on the same file.
 *
 * A job is {ws, call, run, free, next}: `run` is called on the thread of
 * the queue it is in and returns JOB_DONE (the queue frees it) or JOB_KEPT
 * (it was handed on: pushed to the other queue); `free` releases the
 * payload of the struct that embeds the Job as its first member. Adding a
 * request is a method-table row and a handler file.
 *
 * Shared state (workspace state, counters, pending updates, the queues) is
 * guarded by Server.mu; progress notifications of a workspace by its pg_mu
 * (so that begin, report and end go out in order); endpoint state by its
 * own mutex. Messages may be sent from any thread: the transport writes
 * each one whole under its own lock.
 */
#ifndef CODERAG_SERVER_INT_H
#define CODERAG_SERVER_INT_H

#include "lsp.h"
#include "lsp_int.h"

#include <pthread.h>

struct json_t;
typedef struct Server Server;

typedef enum { WS_OPENING, WS_INDEXING, WS_READY, WS_ERROR } WsState;

typedef enum { PG_NONE, PG_CREATING, PG_ACTIVE, PG_DONE } PgState;

/* Work-done progress of one build. */
typedef struct Progress {
    PgState st;
    int seq;
    char token[48];
    int finished; /* the build ended while the token was being created */
    char end_msg[256];
    int last_pct;
    double last_ms;
} Progress;

#define HOVER_CACHE 64

typedef struct Workspace {
    Server *srv;
    char *root;  /* absolute and canonical (symbolic links resolved) */
    char *alias; /* the root as the client named it, when that differs; or NULL */
    char *name;
    CrConfig cfg; /* settings with this root (borrowed by the index) */

    /* worker thread only */
    IdxStore *q;
    IdxStatus q_status;    /* at the last open/adopt/update */
    int q_status_stale;    /* files changed since: recount when idle */
    char *last_question;   /* the last answered question and its citations */
    VfyAnchor *last_cites; /* as anchors, so their lenses follow the lines as the
                            * document is edited; path and symbol owned here */
    size_t n_last_cites;
    /* LLM explanations for hover, by the definition's content hash: the
     * same code is explained once, an edited definition afresh. */
    struct {
        char key[17];
        char *markdown;
    } explained[HOVER_CACHE];
    size_t explained_next;

    /* under srv->mu */
    WsState state;
    int build_wanted; /* a full build is due (the builder takes it) */
    int building;
    size_t done, total; /* files of the running or last build */
    IdxStatus snap;     /* counts for coderag/status */
    char message[512];
    StrMap pending; /* path -> arrival time (ms * 1000) of updates to apply */
    int update_queued;

    pthread_mutex_t pg_mu;
    Progress pg;
} Workspace;

typedef struct Job Job;
enum { JOB_DONE = 0, JOB_KEPT = 1 };
typedef int (*JobRunFn)(Server *s, Job *j);
typedef void (*JobFreeFn)(Job *j);

struct Job {
    Workspace *ws;
    RpcCall *call; /* requests: answered by run (lsp_job_free drops what is left) */
    JobRunFn run;
    JobFreeFn free; /* frees the payload and the job; NULL: free(j) */
    Job *next;
    int urgent; /* file updates, adoption, verification: before other jobs */
};

#define LLM_THREADS 2

/* An endpoint's health (LLM), kept to back off a dead one and to tell the
 * user when it changes. */
typedef enum { EP_UNKNOWN, EP_OK, EP_DOWN } EpState;
typedef struct Endpoint {
    pthread_mutex_t mu;
    const char *what; /* "LLM" */
    EpState st;
    char reason[400];
    double retry_at_ms; /* while down: not contacted before this (auto mode) */
    double backoff_ms;
} Endpoint;

/* An open document (reader thread only). */
typedef struct Doc {
    char *uri;
    char *text;
    size_t len;
    struct Doc *next;
} Doc;

enum { NOTICE_LLM, NOTICE_EMBED, NOTICE_INDEX, NOTICE__COUNT };

struct Server {
    Rpc *rpc;
    RpcTransport *tr;
    CrConfig cfg; /* CLI + environment, then initializationOptions */

    /* client capabilities */
    int cap_progress;      /* window.workDoneProgress */
    int cap_watch_dynamic; /* workspace.didChangeWatchedFiles.dynamicRegistration */

    Workspace **ws; /* fixed at initialize */
    size_t n_ws;
    Doc *docs;
    int initialized;

    pthread_mutex_t mu;
    pthread_cond_t work_cond, build_cond, llm_cond;
    Job *head, *tail;         /* the worker's queue */
    Job *llm_head, *llm_tail; /* the LLM pool's */
    int stopping;
    int threads_started;
    void (*on_idle)(Server *s); /* run by the worker when its queue is empty */
    pthread_t worker, builder, llm[LLM_THREADS];
    char notified[NOTICE__COUNT][256]; /* the last message shown per kind, "" when none */
    int progress_seq;
    Endpoint llm_ep;
    unsigned explain_gen; /* of the latest coderag.explain: older ones are superseded */
};

/* ---- jobs.c */

void lsp_job_init(Job *j, Workspace *ws, RpcCall *call, JobRunFn run, JobFreeFn free_fn);
/* Drops what is left of the call and frees the job. */
void lsp_job_free(Job *j);
/* Queues a job for the worker (the queue owns it); urgent jobs go first,
 * in their order. */
void lsp_srv_push(Server *s, Job *j);
/* Queues a job for the LLM pool: its run must not touch a store. */
void lsp_srv_push_llm(Server *s, Job *j);
/* Starts the worker, LLM and builder threads. */
/* The worker, the LLM pool and the builder thread (its main given here, as
 * the hook the worker runs when its queue is empty: jobs.c knows neither). */
void lsp_srv_start_threads(Server *s, void *(*builder)(void *), void (*on_idle)(Server *));
/* Stops them: waits up to wait_ms for running work; returns 0 when all
 * ended, -1 when one is still busy (the caller then leaves at once). */
int lsp_srv_stop_threads(Server *s, int wait_ms);
int lsp_srv_stopping(Server *s);

/* ---- builder.c */
void *lsp_builder_main(void *arg);
int lsp_endpoint_error(CrErr rc);

/* ---- progress.c */
/* Shows a message when it differs from the last one of its kind (until
 * lsp_srv_notice_clear). type: 1 error, 2 warning, 3 info. */
void lsp_srv_notice(Server *s, int kind, int type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void lsp_srv_notice_clear(Server *s, int kind);
void lsp_progress_start(Workspace *ws);
void lsp_progress_report(Workspace *ws, size_t done, size_t total);
void lsp_progress_finish(Workspace *ws, const char *msg);
void lsp_ep_init(Endpoint *ep, const char *what);
void lsp_ep_destroy(Endpoint *ep);
/* Whether a request in auto mode should skip the endpoint (down, back-off
 * not over); *why then says so. */
int lsp_ep_skip(Endpoint *ep, char *why, size_t why_size);
/* The outcome of a request: CR_OK, or a failure (CR_ECANCELED is none).
 * Tells the user (window/showMessage) when the state or reason changes. */
void lsp_ep_report(Server *s, Endpoint *ep, CrErr rc, const char *msg);
/* {"configured", "state", "message"} for coderag/status. New reference. */
struct json_t *lsp_ep_status_json(Endpoint *ep, int configured);

/* ---- workspace.c */

/* Creates a workspace for root (not opened yet). */
Workspace *lsp_ws_new(Server *s, const char *root, const char *name, const CrConfig *cfg);
void lsp_ws_free(Workspace *ws);
/* The workspace holding an absolute path (longest root first), or NULL;
 * *out_rel (may be NULL) gets the root-relative part, normalised
 * (path_is_normal_rel), or NULL for the root itself (caller frees). The
 * path is normalised first: "/ws/a/../../etc/x" is in no workspace. */
Workspace *lsp_ws_for_path(Server *s, const char *abs, char **out_rel);
/* The same for a file:// URI (decoded by path_from_uri); NULL for one that
 * is not a file in a workspace folder. */
Workspace *lsp_ws_for_uri(Server *s, const char *uri, char **out_rel);
/* The workspace a request is about: the one holding its document, else the first. */
Workspace *lsp_ws_pick(Server *s, const char *uri);
/* Schedules a re-index of one file (root-relative), coalesced per path. */
void lsp_ws_schedule_update(Workspace *ws, const char *rel);
/* Asks for a full build (rescan) of the workspace. */
void lsp_ws_request_build(Workspace *ws);
/* Worker: opens q (idempotent); errors put the workspace in the error state. */
int lsp_ws_open(Workspace *ws, ErrInfo *e);
/* Worker: the pending file updates, applied. */
void lsp_ws_run_updates(Server *s, Workspace *ws);
void lsp_ws_set_error(Workspace *ws, const char *msg);
/* The coderag/status result. New reference. */
struct json_t *lsp_srv_status_json(Server *s);
/* Worker side: makes sure ws->q is open and, during a first build, fresh
 * enough; returns it or NULL with e set. */
IdxStore *lsp_ws_query_store(Workspace *ws, ErrInfo *e);
/* Whether the workspace is (still) indexing; any thread. */
int lsp_ws_indexing(Workspace *ws);
/* Worker, idle: refreshes status counts that file updates made stale
 * (s->mu held). */
void lsp_ws_refresh_stale(Server *s);

/* ---- root.c */
/* The root rule (docs/protocol.md): the nearest folder from `start` up with
 * a VCS marker, else with a project marker, else `fallback`. Caller frees. */
char *lsp_find_root(const char *start, const char *fallback);
/* The nearest VCS root strictly above dir, or NULL. Caller frees. */
char *lsp_vcs_root_above(const char *dir);

/* ---- handlers_ask.c (decoding, commands, status) and ask_run.c (the pipeline) */
RpcStatus lsp_on_ask(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                     RpcError *err);
RpcStatus lsp_on_status(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                        RpcError *err);
RpcStatus lsp_on_execute_command(void *ctx, struct json_t *params, RpcCall *call,
                                 struct json_t **out, RpcError *err);

/* An ask (or an explanation) through the worker, the LLM pool and back. */
typedef struct AskJob {
    Job job;
    char *question;
    char *mode;
    long long budget;
    int bm25, dense, graph;
    char *uri; /* textDocument.uri or NULL */
    int line, character;
    struct json_t *wd_token;      /* client's workDoneToken (a private copy) or NULL */
    struct json_t *partial_token; /* client's partialResultToken or NULL */
    RtvTurn *turns;               /* history; strings owned */
    size_t n_turns;
    /* coderag.explain: the definition under the cursor, resolved by the worker */
    char *explain_word, *explain_rel;
    char explain_key[17];
    char *explain_symbol;
    unsigned explain_gen; /* 0: not an explanation */
    /* the pipeline's state */
    RtvRequest req;
    RtvAnswer ans;
    RtvDraft draft;
    int prepared, indexing;
    double wd_last_ms, partial_last_ms;
    size_t partial_sent; /* chars of text in the last partial result */
} AskJob;

AskJob *lsp_ask_job_new(Workspace *ws, RpcCall *call);
/* Decodes coderag/ask params into j (reader thread). */
RpcStatus lsp_ask_decode(Server *s, struct json_t *params, AskJob *j, RpcError *err);
/* Queues it: sends work-done "begin" at once, then the worker retrieves. */
void lsp_ask_queue(Server *s, AskJob *j);
/* Worker: fills an explain job's question from the definition under the
 * cursor (this file's first); 0 when there is none (err set). */
int lsp_explain_resolve(Server *s, AskJob *j, IdxStore *st, RpcError *err);

/* ---- handlers_explain.c */
RpcStatus lsp_on_code_action(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                             RpcError *err);
RpcStatus lsp_explain_command(Server *s, struct json_t *args, RpcCall *call, RpcError *err);

/* ---- memory.c: what a workspace remembers between requests */
/* Worker: keeps the question and citations of an answer for code lenses. */
void lsp_nav_remember_answer(Workspace *ws, const char *question, const RtvAnswer *a);
void lsp_nav_forget_answer(Workspace *ws);
/* Worker: keeps an explanation for hovers. */
void lsp_explain_store(Workspace *ws, const char *key, const char *markdown);
/* Worker: the cached explanation of a definition, or NULL (borrowed). */
const char *lsp_explain_cached(Workspace *ws, const IdxChunk *d);
/* The cache key of a definition's explanation: its place and content. */
void lsp_explain_key(const IdxChunk *d, char key[17]);

/* ---- handlers_doc.c */
RpcStatus lsp_on_did_open(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                          RpcError *err);
RpcStatus lsp_on_did_change(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                            RpcError *err);
RpcStatus lsp_on_did_close(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                           RpcError *err);
RpcStatus lsp_on_did_save(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                          RpcError *err);
RpcStatus lsp_on_watched_files(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                               RpcError *err);
/* The open document's text, or NULL (borrowed; reader thread). */
const Doc *lsp_docs_find(Server *s, const char *uri);
void lsp_docs_free(Server *s);

/* ---- handlers_nav.c */
RpcStatus lsp_on_hover(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                       RpcError *err);
RpcStatus lsp_on_code_lens(void *ctx, struct json_t *params, RpcCall *call, struct json_t **out,
                           RpcError *err);
/* Reader: the identifier at (line, UTF-16 col) of a document (open, else
 * as saved at rel in ws, read only when it resolves inside the root), with
 * its column span; NULL when none. Caller frees. */
char *lsp_nav_word_at_uri(Server *s, const char *uri, const Workspace *ws, const char *rel,
                          int line, int col, int *c0, int *c1);
/* Reader: decodes {textDocument: {uri}, position: {line, character}};
 * *out_ws is the workspace holding the document (NULL when none) and
 * *out_rel its root-relative path (caller frees). */
RpcStatus lsp_nav_position_params(Server *s, struct json_t *params, const char *method,
                                  const char **out_uri, int *line, int *character,
                                  Workspace **out_ws, char **out_rel, RpcError *err);

/* ---- handlers_hier.c: workspace/symbol and call hierarchy */
RpcStatus lsp_on_workspace_symbol(void *ctx, struct json_t *params, RpcCall *call,
                                  struct json_t **out, RpcError *err);
RpcStatus lsp_on_prepare_call_hierarchy(void *ctx, struct json_t *params, RpcCall *call,
                                        struct json_t **out, RpcError *err);
RpcStatus lsp_on_incoming_calls(void *ctx, struct json_t *params, RpcCall *call,
                                struct json_t **out, RpcError *err);
RpcStatus lsp_on_outgoing_calls(void *ctx, struct json_t *params, RpcCall *call,
                                struct json_t **out, RpcError *err);

#endif
