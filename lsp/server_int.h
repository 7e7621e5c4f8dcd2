/*
 * server_int.h - the language server's state (Server), shared by its
 * files, and its jobs (Job). Each owner declares its own part in
 * a header of its own: progress.h
 * (work-done progress of builds, notices: progress.c), folder.h (a
 * workspace folder's lifecycle (LspFolder), query store, file updates, status:
 * folder.c), memory.h (what a workspace remembers: memory.c),
 * handlers.h (the method table's handlers: handlers_*.c) and ask_job.h
 * (the ask pipeline's job: handlers_ask.c, ask_run.c).
 *
 * Threads and ownership
 * ---------------------
 reader and worker: the caller of lsp_server_run and the host's worker
 *     take turns (ws_host_serve). The one whose turn it is reads the
 *     transport and runs the dispatch table: handlers decode params, then
 *     either answer at once (status, lifecycle, document sync, code
 *     actions) or queue a Job; the reader's turn owns the open documents
 *     (Docs), and a handler never touches an IdxStore. A job the message
 *     queued, the same thread then runs as the worker (no other thread is
 *     woken on a request's way) while the other thread takes the next
 *     turn at reading, so a running job holds up no message.
 * the worker's turn: owns every root's query store (WsRoot.q) and runs the
 *     job queue in order, one stage at a time - retrieval for asks, hovers,
 *     code lenses, symbol and
 *     call hierarchy queries, file updates (saves and watched-file events,
 *     coalesced per path and run ahead of other jobs), the adoption of a
 *     finished build, and the verification of LLM answers. IdxStore is
 *     single-threaded: the host lets one thread at a time take that turn,
 *     so q has one user at a time.
 * The worker, the LLM pool and the builder are the workspace host's
 * (ws.h: WsHost), which owns the queues and the roots (WsRoot: a root's
 * store and index state; the server's own part of a root is its
 * LspFolder); the server lends it its builds.
 * LLM pool (WS_LLM_THREADS threads, started by the first LLM step): runs
 *     the LLM step of asks and explanations, which never touches a store;
 *     a job goes there from the
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
 * A job is a WsJob with {ws, call}: its stage runs on the thread of the
 * queue it is in and returns where the job goes next (ws.h: done, kept
 * aside, the worker, the LLM pool); no stage queues its own job. Adding a
 * request is a method-table row (with the capability it announces) and a
 * handler file.
 *
 * Shared state (a root's state, counters, pending updates, the queues) is
 * guarded by the host's lock (ws_host_lock); progress notifications of a workspace by its pg_mu
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
typedef struct LspFolder LspFolder;
typedef struct Job Job;
typedef struct Doc Doc;

enum { NOTICE_LLM, NOTICE_EMBED, NOTICE_INDEX, NOTICE_FOLDERS, NOTICE_UPDATE, NOTICE__COUNT };

struct Server {
    Rpc *rpc;
    RpcTransport *tr;
    StrBuf in_body; /* the message being read (serve_one) */
    RpcEnd end;     /* why the input ended */
    WsConfig cfg;   /* CLI + environment, then initializationOptions */

    /* client capabilities */
    int cap_progress;      /* window.workDoneProgress */
    int cap_watch_dynamic; /* workspace.didChangeWatchedFiles.dynamicRegistration */

    LspFolder **ws; /* fixed at initialize */
    size_t n_ws;
    char *skipped_folders; /* what initialize could not serve, told at initialized; or NULL */
    Doc *docs;
    int initialized;

    WsHost *host; /* the job queue and threads (ws.h); its lock guards the shared state */
    char notified[NOTICE__COUNT][256]; /* the last message shown per kind, "" when none */
    int progress_seq;
    WsEndpoint *llm_ep;   /* the LLM's health and back-off */
    unsigned explain_gen; /* of the latest coderag.explain: older ones are superseded */
};

/* A job of the server: a WsJob of the host (ws_job_init, then
 * ws_host_submit) with the workspace folder and the request it serves (its
 * free drops `call` with rpc_call_drop; a job with no call may have none). */
struct Job {
    WsJob hj; /* first: the host's (its stage, urgency, queue link) */
    LspFolder *ws;
    RpcCall *call; /* requests: answered by a stage (the job's free drops what is left) */
};

#endif
