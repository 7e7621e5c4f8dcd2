/*
 * server_int.h - the language server's state, shared by server.c
 * (lifecycle, method table, main loop), workspace.c (threads, jobs,
 * indexing, progress), handlers_ask.c, handlers_doc.c and handlers_nav.c.
 *
 * Threads and ownership
 * ---------------------
 * reader (the caller of lsp_server_run): reads the transport and runs the
 *     dispatch table. Handlers decode params there, then either answer at
 *     once (status, lifecycle, document sync) or queue a Job. It owns the
 *     open documents (Docs) and never touches an IdxStore.
 * worker: owns every workspace's query store (Workspace.q) and runs the job
 *     queue in order - asks, hovers, code lenses, file updates (saves and
 *     watched-file events, coalesced per path and run ahead of other jobs),
 *     and the adoption of a finished build. IdxStore is single-threaded, so
 *     this one thread is the only user of q.
 * builder: runs full builds (the first on `initialized`, later ones on
 *     coderag.reindex or watched-file events that need a rescan) with its
 *     own IdxStore handle, one workspace at a time, reporting $/progress.
 *     SQLite WAL lets the worker read while it writes. When a build ends
 *     the handle is handed to the worker (JOB_ADOPT), which closes its old
 *     query handle and keeps the builder's (whose search structures are
 *     then loaded fresh), unless nothing changed. During a first build the
 *     worker reopens q, at most once a second, when the builder has
 *     committed more files, so that asks see what is indexed so far. File
 *     updates wait while a build runs and are applied when it is adopted,
 *     so the two handles never race on the same file.
 *
 * Shared state (workspace state, counters, pending updates, the job queue)
 * is guarded by Server.mu; progress notifications of a workspace by its
 * pg_mu (so that begin, report and end go out in order). Messages may be
 * sent from any thread: the transport writes each one whole under its own
 * lock.
 *
 * A request's memory: the job owns copies of everything it needs (params
 * are decoded into C strings on the reader thread); the reply is built and
 * sent by the worker, then the job is freed.
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

/* A citation of the last answer, for code lenses. */
/* A citation of the last answer, with its content anchor so its lens
 * follows the lines as the document is edited. */
typedef struct LastCite {
    char *path;
    char *symbol;
    uint32_t start_line, end_line;
    char hash[17];
} LastCite;

#define HOVER_CACHE 64

typedef struct Workspace {
    Server *srv;
    char *root;  /* absolute and canonical (symbolic links resolved) */
    char *alias; /* the root as the client named it, when that differs; or NULL */
    char *name;
    CrConfig cfg; /* settings with this root (borrowed by the index) */

    /* worker thread only */
    IdxStore *q;
    int q_reopened; /* q was reopened during a build (read only since) */
    double q_loaded_ms;
    size_t q_loaded_done;
    IdxStatus q_status;  /* at the last open/adopt/update */
    int q_status_stale;  /* files changed since: recount when idle */
    char *last_question; /* the last answered question and its citations */
    LastCite *last_cites;
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

typedef enum { JOB_OPEN, JOB_ADOPT, JOB_UPDATE, JOB_ASK, JOB_HOVER, JOB_LENS, JOB_HIER } JobKind;

typedef struct AskParams {
    char *question;
    char *mode;
    long long budget;
    int bm25, dense, graph;
    char *uri; /* textDocument.uri or NULL */
    int line, character;
    struct json_t *wd_token; /* client's workDoneToken (a private copy) or NULL */
    double wd_last_ms;
} AskParams;

typedef struct Job {
    JobKind kind;
    Workspace *ws;
    LspCall *call; /* requests: answered by the worker */
    AskParams ask;
    /* JOB_HOVER, JOB_LENS */
    char *path; /* root-relative */
    char *uri;
    char *word; /* identifier under the cursor (hover) */
    char *buffer; /* JOB_LENS: the open document's unsaved text, or NULL */
    size_t buffer_len;
    int line;   /* 0-based */
    int c0, c1; /* UTF-16 columns of the word */
    int hier_op; /* JOB_HIER: which request (handlers_hier.c) */
    /* JOB_ADOPT */
    IdxStore *built;
    CrErr build_rc;
    char build_msg[512];
    IdxUpdateStats stats;
    IdxStatus built_status;
    struct Job *next;
} Job;

/* An open document (reader thread only). */
typedef struct Doc {
    char *uri;
    char *text;
    size_t len;
    struct Doc *next;
} Doc;

enum { NOTICE_LLM, NOTICE_EMBED, NOTICE_INDEX, NOTICE__COUNT };

struct Server {
    LspRpc *rpc;
    LspTransport *tr;
    CrConfig cfg; /* CLI + environment, then initializationOptions */

    /* client capabilities */
    int cap_progress;      /* window.workDoneProgress */
    int cap_watch_dynamic; /* workspace.didChangeWatchedFiles.dynamicRegistration */

    Workspace **ws; /* fixed at initialize */
    size_t n_ws;
    Doc *docs;
    int initialized;

    pthread_mutex_t mu;
    pthread_cond_t work_cond, build_cond;
    Job *head, *tail;
    int stopping;
    int threads_started;
    pthread_t worker, builder;
    int notified[NOTICE__COUNT];
    int progress_seq;
};

/* ---- workspace.c */

/* Creates a workspace for root (not opened yet). */
Workspace *ws_new(Server *s, const char *root, const char *name, const CrConfig *cfg);
void ws_free(Workspace *ws);
/* The workspace holding an absolute path (longest root first), or NULL;
 * *out_rel (may be NULL) gets the root-relative part (caller frees). */
Workspace *ws_for_path(Server *s, const char *abs, char **out_rel);
/* Starts the worker and builder threads. */
void srv_start_threads(Server *s);
/* Stops them: waits up to wait_ms for running work; returns 0 when both
 * ended, -1 when one is still busy (the caller then leaves at once). */
int srv_stop_threads(Server *s, int wait_ms);
/* Queues a job (the queue owns it); urgent jobs go first. */
void srv_push(Server *s, Job *j, int urgent);
Job *job_new(JobKind kind, Workspace *ws, LspCall *call);
void job_free(Job *j);
/* Schedules a re-index of one file (root-relative), coalesced per path. */
void ws_schedule_update(Workspace *ws, const char *rel);
/* Asks for a full build (rescan) of the workspace. */
void ws_request_build(Workspace *ws);
/* Shows a message once per kind until srv_notice_clear. type: 1 error,
 * 2 warning, 3 info. */
void srv_notice(Server *s, int kind, int type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void srv_notice_clear(Server *s, int kind);
/* The coderag/status result. New reference. */
struct json_t *srv_status_json(Server *s);
/* Worker side: makes sure ws->q is open and, during a first build, fresh
 * enough; returns it or NULL with e set. */
IdxStore *ws_query_store(Workspace *ws, ErrInfo *e);
/* Whether the workspace is (still) indexing; any thread. */
int ws_indexing(Workspace *ws);

/* ---- handlers_ask.c */
LspStatus on_ask(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                 LspError *err);
LspStatus on_status(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                    LspError *err);
LspStatus on_execute_command(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                             LspError *err);
void run_ask(Server *s, Job *j);

/* ---- handlers_doc.c */
LspStatus on_did_open(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                      LspError *err);
LspStatus on_did_change(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                        LspError *err);
LspStatus on_did_close(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                       LspError *err);
LspStatus on_did_save(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                      LspError *err);
LspStatus on_watched_files(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                           LspError *err);
/* The open document's text, or NULL (borrowed; reader thread). */
const Doc *docs_find(Server *s, const char *uri);
void docs_free(Server *s);

/* ---- handlers_nav.c */
LspStatus on_hover(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                   LspError *err);
LspStatus on_code_lens(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                       LspError *err);
void run_hover(Server *s, Job *j);
void run_lens(Server *s, Job *j);
/* The identifier at a UTF-16 position of a document (its open text, else
 * the file on disk), with its column span; NULL when none. Caller frees. */
char *nav_word_at(Server *s, const char *uri, int line, int character, int *c0, int *c1);
/* Decodes TextDocumentPositionParams and finds the workspace (NULL when
 * the file is in none) and the root-relative path (caller frees). */
LspStatus nav_position_params(Server *s, struct json_t *params, const char *method,
                              const char **out_uri, int *line, int *character, Workspace **out_ws,
                              char **out_rel, LspError *err);

/* ---- handlers_hier.c: workspace/symbol and call hierarchy */
LspStatus on_workspace_symbol(void *ctx, struct json_t *params, LspCall *call,
                              struct json_t **out, LspError *err);
LspStatus on_prepare_call_hierarchy(void *ctx, struct json_t *params, LspCall *call,
                                    struct json_t **out, LspError *err);
LspStatus on_incoming_calls(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                            LspError *err);
LspStatus on_outgoing_calls(void *ctx, struct json_t *params, LspCall *call, struct json_t **out,
                            LspError *err);
void run_hier(Server *s, Job *j);
/* Worker: keeps the question and citations of an answer for code lenses. */
void nav_remember_answer(Workspace *ws, const char *question, const RtvAnswer *a);
void nav_forget_answer(Workspace *ws);

#endif
