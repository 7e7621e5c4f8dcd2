/*
 * ws.h - the workspace layer: what the three doors (the language server,
 * the command line and the MCP server) share above retrieve/. It owns
 *   - the settings (flags, environment, initialization options: one table);
 *   - the root rule (which folder a path or a command belongs to);
 *   - opening the store and keeping it fresh (a pre-ask check, a file
 *     watcher, the skip list of what is never watched);
 *   - the status every door reports (one builder for the shared keys);
 *   - the host: the job queue, worker, LLM pool and builder threads the
 *     servers share, the roots they serve (WsRoot: a root's query store
 *     and the state of its index), and the one writer of whole passes;
 *   - what the doors read of a store besides retrieval (status, a file's
 *     lines, a definition's content key), and the one rule of an index
 *     that could not be read;
 *   - the pace and the words of progress reports (an index pass, an LLM
 *     writing), the same in every door;
 *   - the one orchestration of a question (prepare -> LLM -> verify) with
 *     the LLM endpoint's back-off, as steps (for a server that runs the
 *     LLM on another thread) and as one call;
 *   - the answer as JSON: SPEC.md's coderag/ask result object, and the
 *     parts of it every door's results share.
 *
 * JSON values are jansson's; the header only forward-declares json_t.
 */
#ifndef CODERAG_WS_H
#define CODERAG_WS_H

#include "base.h"
#include "idx.h"
#include "rtv.h"

#include <stddef.h>
#include <stdio.h>

struct json_t;

/* ---------------------------------------------------------------- settings */

/* Settings from SPEC.md's configuration table, plus index tuning. Strings
 * are owned (NULL: unset). */
typedef struct WsConfig {
    char *root;
    char *index_dir;
    char *llm_url, *llm_model, *llm_api_key_env;
    char *embed_provider, *embed_url, *embed_model, *embed_api_key_env;
    char **exclude;
    size_t n_exclude;
    size_t max_file_bytes;
    int threads;
    /* Read-only data lent to every store opened with these settings (the
     * builtin model): a server with many roots sets it once
     * (ws_config_share), a copy takes a reference, release drops it. NULL:
     * each store loads its own. */
    IdxShared *shared;
} WsConfig;

void ws_config_init(WsConfig *c);
void ws_config_release(WsConfig *c);
/* A deep copy of src into dst (not initialised before). */
void ws_config_copy(WsConfig *dst, const WsConfig *src);
/* Makes every store opened with c (and its copies) share one copy of the
 * index's read-only data, when it does not already. */
void ws_config_share(WsConfig *c);

/* Sets a key by its SPEC name ("llm.url", "indexDir", "exclude", ...) or
 * its CLI flag name ("llm-url", "index-dir", ...). "exclude" appends; a
 * comma-separated value appends several. CR_EUSAGE for an unknown key or a
 * bad number. */
CrErr ws_config_set(WsConfig *c, const char *key, const char *value, ErrInfo *e);

/* Applies CODERAG_* environment variables (CODERAG_LLM_URL, CODERAG_INDEXDIR,
 * CODERAG_EXCLUDE, ...). Explicit settings made afterwards win. */
CrErr ws_config_from_env(WsConfig *c, ErrInfo *e);

/* Applies LSP initializationOptions: SPEC keys, flat ("llm.url") or nested
 * ({"llm": {"url": ...}}); "exclude" may be a list of strings. A bad entry
 * is logged and skipped (the editor's settings never keep a server from
 * starting). obj is borrowed; anything but an object is ignored. */
void ws_config_from_json(WsConfig *c, const struct json_t *obj);

/* Which commands take a setting (a column of the settings table): index
 * builds (root, index, files, embeddings), ask also answers (the LLM),
 * status reports (where the index is, the embedder whose vectors count,
 * the LLM in use), the servers do everything. The environment applies to every command all the
 * same. */
typedef enum {
    WS_FOR_INDEX = 1,
    WS_FOR_ASK = 2,
    WS_FOR_STATUS = 4,
    WS_FOR_SERVER = 8,
} WsFor;

/* Whether a CLI flag (without leading dashes) is a configuration key;
 * *takes (may be NULL) gets the WsFor bits of the commands that take it. */
int ws_config_is_flag(const char *flag, unsigned *takes);
/* Prints the settings that commands `mask` (WsFor bits) take as command-line
 * flags, one line each. */
void ws_config_print_flags(FILE *f, unsigned mask);

/* The root of a door that was named no folder (the CLI's commands, the MCP
 * server, a language server whose client named none), one rule for all: a
 * root setting (--root, CODERAG_ROOT, the initialization options) is used
 * as given -- the user chose it, no marker overrides that; without one, the
 * root rule from the current folder (ws_find_root; the folder itself when
 * no marker is found; "." when the current folder is gone), which is then
 * set in c. Returns the root (borrowed from c). */
const char *ws_config_resolve_root(WsConfig *c);
/* The same; a folder with no marker in it or above it that lies inside a
 * folder already indexed (ws_index_above; no indexDir set) takes that
 * folder's index rather than starting a second one, and note (may be NULL)
 * then gets a sentence saying which root was chosen and why. */
const char *ws_config_resolve_root_note(WsConfig *c, StrBuf *note);

/* The IdxConfig view of c (borrowing its strings). root defaults to ".". */
void ws_config_idx(const WsConfig *c, IdxConfig *out);
/* The LLM settings of a request (endpoint, model, key variable), from the
 * configuration: the one place they are copied. Borrows from c. */
void ws_config_llm(const WsConfig *c, RtvRequest *req);
/* Appends to sb the LLM as every door's status shows it: llm.url as
 * http_redact_url shows it, or "none" when it is unset. */
void ws_config_llm_label(const WsConfig *c, StrBuf *sb);

/* ---------------------------------------------------------------- root rule */

/* The root rule (docs/protocol.md): the nearest folder from `start` up with
 * a VCS marker, else with a project marker, else `fallback` (may be NULL).
 * An index left behind (.coderag/) is never a marker. Caller frees. */
char *ws_find_root(const char *start, const char *fallback);
/* The root rule's markers, NULL past the last (static strings): the i-th
 * VCS marker (index/'s VCS folder names: idx_vcs_dir), and the i-th
 * project marker (the language table's: idx_project_marker). `coderag root --markers` lists
 * them for the editor clients, which must use the same. */
const char *ws_vcs_marker(size_t i);
const char *ws_project_marker(size_t i);
/* The nearest folder from dir up (dir included) holding an index
 * (IDX_DIR_NAME with its database), or NULL. Caller frees. */
char *ws_index_above(const char *dir);
/* The nearest VCS root strictly above dir, or NULL. Caller frees. */
char *ws_vcs_root_above(const char *dir);
/* Whether a directory of that name is never watched nor a source of
 * changes: a VCS's metadata (idx_is_vcs_dir), or an index left behind
 * (IDX_DIR_NAME). */
int ws_skip_dir_name(const char *name);

/* ---------------------------------------------------------------- freshness */

/* How a door opens the store. */
typedef enum {
    WS_OPEN_READ,     /* an existing index, read only (status); CR_ENOINDEX when none */
    WS_OPEN_EXISTING, /* an existing index as it is (ask --no-update); CR_ENOINDEX when none */
    WS_OPEN_CREATE,   /* created when missing (the servers; a build follows) */
} WsOpen;

/* Opens the store of c (root as set: see ws_config_resolve_root). Caller
 * closes *out with idx_close (a root's store: the host, with the root). */
CrErr ws_store_open(const WsConfig *c, WsOpen how, IdxStore **out, ErrInfo *e);
/* The one writer of a whole pass over st's index (idx_update: the only
 * place that calls it): brings it up to date, reporting progress through
 * fn (may be NULL) and the pass in *stats (may be NULL). When another
 * process is in the middle of a pass over the index (one that has
 * committed files), waiting (may be NULL) is told first, with wait_ud and
 * a sentence to show; the pass then waits its turn (idx_set_write_wait).
 * Errors: idx_update's. */
CrErr ws_store_pass(IdxStore *st, IdxProgressFn fn, void *ud,
                    void (*waiting)(void *ud, const char *msg), void *wait_ud,
                    IdxUpdateStats *stats, ErrInfo *e);
/* ws_store_pass for a server whose readers must not wait behind another
 * writer: when the pass has waited wait_ms (> 0) for another writer of the
 * index, yield(yield_ud) is told (its readers go on from what is
 * committed), and the pass then waits its turn however long it takes.
 * wait_ms 0: ws_store_pass. Leaves st's write wait at 0. */
CrErr ws_store_pass_yield(IdxStore *st, int wait_ms, void (*yield)(void *ud), void *yield_ud,
                          IdxProgressFn fn, void *ud, IdxUpdateStats *stats, ErrInfo *e);
/* Re-indexes one file (idx_update_file: the one place that calls it),
 * waiting at most wait_ms (> 0; 0: however long it takes) for another
 * writer of the index: past that it fails and *out_busy is 1 (the caller
 * hands the file to a full pass), else 0. Errors: idx_update_file's. */
CrErr ws_store_update_file(IdxStore *st, const char *path, int wait_ms, int *out_busy, ErrInfo *e);
/* The root of st's index: absolute and canonical. Borrowed. */
const char *ws_store_root(IdxStore *st);
/* A process's one-time setup of the index (before any store opens). */
void ws_process_init(void);
/* The version of the index's schema this build writes. */
int ws_schema_version(void);

/* What a door reads of a store besides retrieval (read.c). */
/* Appends lines start..end (1-based, inclusive) of the root-relative file
 * rel as they are on disk now, as the index counts them; *out_total (may
 * be NULL) gets its line count. CR_ENOENT when the file is gone, CR_EINVAL
 * for a range outside it. */
CrErr ws_read_lines(IdxStore *st, const char *rel, uint32_t start, uint32_t end, StrBuf *out,
                    uint32_t *out_total, ErrInfo *e);
/* Appends the whole of rel as ws_read_lines reads it. */
CrErr ws_read_file(IdxStore *st, const char *rel, StrBuf *out, ErrInfo *e);
/* A definition's content key (16 hex digits and a NUL): its place, name
 * and the content of every piece, so that the same code has the same key
 * and an edited definition a new one (a door's cache of what it said of
 * it). */
void ws_def_key(IdxStore *st, const RtvDef *d, char key[17]);

/* What a change of one file calls for. */
typedef enum {
    WS_CHANGE_NONE,   /* nothing: not a source, or under a skipped folder (.git/, .coderag/) */
    WS_CHANGE_FILE,   /* re-indexing that file */
    WS_CHANGE_RESCAN, /* a full pass: ignore rules changed, or perhaps a folder went */
} WsChange;

/* For a root-relative path that was saved, created, changed (deleted 0)
 * or deleted (1): the language server's saves and watched files. */
WsChange ws_change_kind(const char *rel, int deleted);

typedef struct WsWatch WsWatch;

/* Watches every directory under root (but ws_skip_dir_name's and the index
 * directory) for changes. NULL when inotify is unavailable or runs out of
 * watches: then every call is treated as possibly stale. */
WsWatch *ws_watch_open(const char *root, const char *index_dir);
void ws_watch_close(WsWatch *w);
/* Reads the pending events without blocking: 1 when something under the
 * root changed since the last call (or the queue overflowed; or w is
 * NULL), 0 otherwise. New directories are watched as they appear. */
int ws_watch_changed(WsWatch *w);

/* Whether an idx_update failure is the embedder's alone (CR_EHTTP,
 * CR_ETIMEOUT): the text index is then current and the vectors follow at
 * the next update, so a server goes on with the dense leg off. */
int ws_update_embed_failed(CrErr rc);

/* Whether a failed read of the index means the index could not be read
 * (CR_EDB, CR_ECORRUPT, CR_EIO): every door then answers with that error,
 * never with an empty result. The one place this rule is kept. */
int ws_index_unreadable(CrErr rc);
/* "the index could not be read: " and why (e's message, else rc's), in buf. */
void ws_unreadable_text(CrErr rc, const ErrInfo *e, char *buf, size_t size);

/* ---------------------------------------------------------------- the host */

/* The workspace host: the job queue and the threads every server door's
 * work goes through. Threads:
 *   worker: runs the worker queue in order; the one thread that reads a
 *     door's query stores (IdxStore is single-threaded);
 *   LLM pool (WS_LLM_THREADS threads, started by the first job sent there:
 *     a server that never asks an LLM never starts them): runs the stages
 *     that ask an LLM and never touch a store, so no other job waits behind
 *     an LLM call;
 *   builder: runs the door's full builds (the index's one writer of whole
 *     passes, ws_store_pass), one at a time, on handles of its own.
 * A job is a struct that embeds WsJob as its first member. Its `run` is the
 * stage to run next; a stage returns where the job goes next (the shape of
 * libuv's uv_queue_work): done (the host frees it), kept (the stage handed
 * it to someone who submits it again), the worker (urgent first) or the LLM
 * pool, after setting `run` to the next stage. No stage queues its own job.
 * The host's lock guards its queues and the door's state the threads share
 * (ws_host_lock); the door's callbacks are told which of them hold it. */
#define WS_LLM_THREADS 2

typedef struct WsHost WsHost;
typedef struct WsJob WsJob;

typedef enum {
    WS_JOB_DONE,   /* finished: the host frees it */
    WS_JOB_KEPT,   /* handed on: whoever took it submits or frees it */
    WS_JOB_WORKER, /* its next stage on the worker (urgent: before other jobs) */
    WS_JOB_LLM,    /* its next stage on the LLM pool: must not touch a store */
} WsJobNext;

/* ctx: the door's (WsHostDoor.ud). */
typedef WsJobNext (*WsJobFn)(void *ctx, WsJob *j);

struct WsJob {
    WsJobFn run;
    void (*free)(WsJob *j); /* frees the job and its payload; NULL: free(j) */
    WsJob *next;            /* the host's */
    int urgent;             /* file updates, adoption, verification: before other jobs */
};

typedef struct WsRoot WsRoot;

/* What a door lends the host. */
typedef struct WsHostDoor {
    void *ud;
    /* Worker, host lock held, its queue empty: idle work (may be NULL). */
    void (*on_idle)(void *ud);
    /* Builder, unlocked: runs the full build of r, the first root due
     * one (build_wanted), which the host marked as building ("indexing",
     * no files done). NULL: no builder thread. */
    void (*build)(void *ud, WsRoot *r);
    /* Reads and handles one message of the door's input (on whichever
     * thread's turn it is: ws_host_serve): 1 to go on, 0 at its end. NULL:
     * the door reads on a thread of its own and only submits jobs. */
    int (*serve_one)(void *ud);
} WsHostDoor;

/* The threads start at ws_host_start. Free with ws_host_free (after
 * ws_host_stop). */
WsHost *ws_host_new(const WsHostDoor *door);
void ws_host_free(WsHost *h);
/* Starts the threads: 0, or the errno of the one that could not start. */
int ws_host_start(WsHost *h);
/* The door's input (WsHostDoor.serve_one) read on the calling thread and
 * the worker by turns, until it ends: whichever thread is free reads the
 * next message, and runs the worker stage that message queued itself
 * while the other reads on. Before ws_host_start the caller alone reads. */
void ws_host_serve(WsHost *h);
/* Stops them: waits up to wait_ms for running work, frees the queued jobs;
 * 0 when all ended, -1 when one is still busy (the caller then leaves at
 * once). */
int ws_host_stop(WsHost *h, int wait_ms);
/* Queues j (a new job, or one handed back: WS_JOB_KEPT) for the worker;
 * the host owns it. While stopping it is freed at once. */
void ws_host_submit(WsHost *h, WsJob *j);
/* A host whose threads have not started (a one-shot command's: none is
 * started for one job) runs j on the calling thread, stage after stage,
 * worker and LLM stages alike, until a stage says it is done (then freed)
 * or kept; the calling thread stands for the worker and the LLM pool. Once
 * the threads have started, submits it (ws_host_submit). */
void ws_host_run(WsHost *h, WsJob *j);
/* Sets j's first stage and its free (NULL: free(j)); not urgent. */
void ws_job_init(WsJob *j, WsJobFn run, void (*free_fn)(WsJob *j));
/* The same, the host lock held (a job handed back from a door's list). */
void ws_host_submit_locked(WsHost *h, WsJob *j);
/* Frees a job the host never took (its free, or free()). */
void ws_job_free(WsJob *j);

void ws_host_lock(WsHost *h);
void ws_host_unlock(WsHost *h);
/* Host lock held: whether ws_host_stop has begun. */
int ws_host_stopping(const WsHost *h);
/* Host lock held: whether the worker's queue holds a job. */
int ws_host_queued(const WsHost *h);
/* Waits (not holding the host lock) until done(ud), asked with the lock
 * held, says 1: asked again after every stage a thread ran and at every
 * ws_host_changed. */
void ws_host_wait_until(WsHost *h, int (*done)(void *ud), void *ud);
/* Host lock held: what ws_host_wait_until waits for may have changed. */
void ws_host_changed(WsHost *h);
/* Host lock held: the builder looks for a root due a build again. */
void ws_host_wake_builder(WsHost *h);

/* The roots the host serves, added before its threads start (they run
 * until ws_host_free, which frees them). */
WsRoot *ws_host_add_root(WsHost *h, const char *root, const WsConfig *cfg);
/* The root holding an absolute path (the longest root, or alias, first),
 * or NULL; *out_rel (may be NULL) gets the root-relative part, normalised
 * (path_is_normal_rel), or NULL for the root itself (caller frees). The
 * path is normalised first: "/ws/a/../../etc/x" is in no root. */
WsRoot *ws_host_root_for_path(const WsHost *h, const char *abs, char **out_rel);

/* ---------------------------------------------------------------- a root */

/* A root the host serves: its settings, its query store, the state of its
 * index and its freshness, the same for every server door. A door keeps
 * its own per-root state (an editor's buffers) beside it, in `door`.
 * Fields are read and written by the thread or under the lock each group
 * names. */
typedef enum { WS_ROOT_OPENING, WS_ROOT_INDEXING, WS_ROOT_READY, WS_ROOT_ERROR } WsRootState;

struct WsRoot {
    WsHost *host;
    char *root;   /* absolute and canonical (symbolic links resolved) */
    char *alias;  /* the root as the door named it, when that differs; or NULL */
    WsConfig cfg; /* settings with this root */
    void *door;   /* the door's own state of this root, or NULL */

    /* worker thread only */
    IdxStore *q;        /* the query store (IdxStore is single-threaded) */
    IdxStatus q_status; /* at the last open/adopt/update */
    int q_status_stale; /* files changed since: recount when idle */

    /* builder thread only: a writer kept across passes (a door whose
     * builds refresh one handle), closed with the root */
    IdxStore *writer;

    /* under the host lock */
    WsRootState state;
    char message[512];
    /* Why the last write to the index failed (a file update, a refresh),
     * or "" when the last one succeeded. */
    char write_error[512];
    int build_wanted; /* a full build is due (the builder takes it) */
    int building;
    size_t done, total; /* files of the running or last pass */
    unsigned passes;    /* passes begun (a door's progress phases) */
    int yielded;        /* the running pass waits for another writer */
    IdxStatus snap;     /* counts for status */
    int counted;        /* snap holds counts that were read */
    /* Whether the index has finished a whole pass (it had when opened, or
     * a build was adopted): until then a door may park jobs. */
    int complete;
    WsJob *parked, **parked_tail; /* jobs waiting for a pass, in order */
    StrMap pending; /* root-relative path -> arrival (ms * 1000) of updates to apply */
    int update_queued;
    WsWatch *watch; /* a door's watcher of the tree (read under the lock), or NULL */
};

/* State changes (they take the host lock). */
void ws_root_set_error(WsRoot *r, const char *msg);
/* Asks the builder for a full pass; the root says "indexing" from now. */
void ws_root_want_build(WsRoot *r);
/* Whether the root is (still) indexing; any thread. */
int ws_root_indexing(WsRoot *r);
/* Builder: a pass's progress (done of total files) recorded; returns 1
 * when the host is stopping (the pass stops at the next file). */
int ws_root_progress(WsRoot *r, size_t done, size_t total);

/* Host lock held: j waits for a pass (after the jobs already waiting). */
void ws_root_park_locked(WsRoot *r, WsJob *j);
/* Host lock held: the parked jobs pick (NULL: all) says 1 to, taken out in
 * the order they were parked, linked by `next`. */
WsJob *ws_root_unpark_locked(WsRoot *r, int (*pick)(WsJob *j, void *ud), void *ud);

/* Worker: opens the query store q (when not open; the index is created
 * when missing). A failure puts the root in the error state. */
CrErr ws_root_open_query(WsRoot *r, ErrInfo *e);
/* How a one-shot command's root gets its query store: opened as `how`;
 * WS_OPEN_CREATE also brings the index up to date first (the pre-ask pass:
 * an unchanged file costs a stat), reporting through fn (may be NULL),
 * waiting and *stats (may be NULL) as ws_store_pass. */
typedef struct WsFresh {
    WsOpen how;
    IdxProgressFn fn;
    void *ud;
    void (*waiting)(void *ud, const char *msg);
    void *wait_ud;
    IdxUpdateStats *stats;
} WsFresh;
/* The calling thread, the host's threads not started (a one-shot
 * command's): r's query store q opened and brought up to date as f says;
 * the root is then ready (and complete when a pass ran), or in the error
 * state with q closed. */
CrErr ws_root_open_fresh(WsRoot *r, const WsFresh *f, ErrInfo *e);
/* Worker: loads q's search structures (idx_warm). */
CrErr ws_root_warm(WsRoot *r, ErrInfo *e);
/* Worker: one throw-away search on q, so that what a process sets up on
 * first use (SQLite's statements and page cache, the query tokenizer) is
 * not paid by the first question. */
void ws_root_warm_search(WsRoot *r);
/* st's counts (a handle on r's index) into *out: 1; a failure is logged
 * and returns 0, *out as it was. */
int ws_root_count(WsRoot *r, IdxStore *st, IdxStatus *out);
/* Status's counts (snap) set (takes the lock). */
void ws_root_snapshot(WsRoot *r, const IdxStatus *s);

/* A full build on a handle of its own, for the worker to adopt. */
typedef struct WsBuilt {
    IdxStore *store; /* owned until adopted */
    CrErr rc;
    char msg[512]; /* why it failed, or "" */
    IdxUpdateStats stats;
    IdxStatus status; /* its counts (a build whose counts cannot be read failed) */
} WsBuilt;

/* Builder: a full pass over r's index on a new handle (leave_core: at
 * most all cores but one, unless the settings say how many), reporting
 * through fn; the outcome in *b. */
void ws_root_build(WsRoot *r, int leave_core, IdxProgressFn fn, void *ud, WsBuilt *b);
/* Closes a build's handle that was not adopted. */
void ws_built_free(WsBuilt *b);
/* Worker: a build ended. A failure (not the embedder's alone) puts the
 * root in the error state and returns 0. Otherwise the built handle
 * becomes q, *was_complete says whether the index was whole before, and
 * it returns 1: the door then warms q and calls ws_root_adopted. */
int ws_root_adopt(WsRoot *r, WsBuilt *b, int *was_complete);
/* Worker: the adopted build's counts and message; the root is ready and
 * whole. */
void ws_root_adopted(WsRoot *r, const WsBuilt *b, const char *msg);

/* File updates due (saves, watched files), coalesced per path: adds rel;
 * 1 when the caller is to queue the job that applies them (none queued,
 * no build running: the adoption applies them). */
int ws_root_pending_add(WsRoot *r, const char *rel);
/* Puts an update back (handed to a full pass), keeping when it came. */
void ws_root_pending_put_back(WsRoot *r, const char *rel, int64_t when);
/* Worker: takes the updates due into *todo (the caller releases it): 1;
 * 0 while a build runs (its adoption applies them). */
int ws_root_pending_take(WsRoot *r, StrMap *todo);

/* "indexing", "ready" or "error": a root's state as status says it. */
const char *ws_root_state_name(WsRootState st);

/* ---------------------------------------------------------------- status */

/* The keys every door reports for an index (docs/protocol.md): root, files,
 * skipped, chunks, symbols, edges, vectors, indexBytes, lastUpdate,
 * embedder. A door adds its own (state, llm, ...). New reference. */
struct json_t *ws_status_json(const char *root, const IdxStatus *s);

/* The index's state as every door says it: "ready" (whole), "indexing" (a
 * pass under way, in this process or another: s->pass_pid) or "partial"
 * (a pass that stopped half way: the next update finishes it). */
const char *ws_index_state(const IdxStatus *s);
/* Appends to sb what a person reads of a state that is not "ready":
 * "indexing 11000/55405 files (process 4242)" or "partial: 11000/55405
 * files indexed, then the pass stopped (`coderag index` finishes it)".
 * Nothing when ready. */
void ws_index_state_text(const IdxStatus *s, StrBuf *sb);
/* Marks an ask result (may be NULL) answered from st when st's index is not
 * whole: sets its "partialIndex", and appends ws_index_state_text to note
 * (may be NULL). Returns 1 when it did, 0 for a whole index (or when the
 * state cannot be read: nothing is said). */
int ws_answer_mark_partial(struct json_t *result, IdxStore *st, StrBuf *note);
/* When st's index holds no file: appends why to sb -- every file found
 * was skipped (how many), or none is of a language the index reads (its
 * suffixes) -- and returns 1; else (or when it cannot be counted) 0. */
int ws_empty_index_note(IdxStore *st, StrBuf *sb);

/* What `status` reports of a store: its counts, and on request the files
 * it skipped. */
typedef struct WsStatusReport {
    IdxStatus s;
    IdxSkipped *skipped; /* when asked for and there are some; owned */
    size_t n_skipped;
} WsStatusReport;

/* Fills *out from st: the counts, then the skipped files when
 * with_skipped and the index skipped some. Release with
 * ws_status_report_release (also after a failure). */
CrErr ws_status_report(IdxStore *st, int with_skipped, WsStatusReport *out, ErrInfo *e);
/* The index's integrity check (idx_verify: SQLite's own, then the index's
 * invariants). */
CrErr ws_status_check(IdxStore *st, ErrInfo *e);
void ws_status_report_release(WsStatusReport *r);
/* st's chunk and edge counts alone (a pass's summary line). */
CrErr ws_status_sizes(IdxStore *st, int64_t *chunks, int64_t *edges, ErrInfo *e);

/* ---------------------------------------------------------------- progress */

/* How often every door tells a human how long work goes (an index build
 * over files, an LLM writing tokens): a report when the work crosses a
 * step -- one of WS_PACE_STEPS equal steps of a known total, or every
 * WS_PACE_UNITS units of open-ended work -- and no sooner than min_ms after
 * the previous report. The first report is always due, and so is the last
 * one of a known total (done == total); the time floor only ever drops
 * reports, so the step rule bounds their number (at most WS_PACE_STEPS + 1
 * over a known total, 1 + done / WS_PACE_UNITS otherwise). */
#define WS_PACE_STEPS 50     /* a report per 2% of the files */
#define WS_PACE_UNITS 16     /* a report per 16 tokens of an answer */
#define WS_PACE_MIN_MS 250.0 /* at most four reports a second */

typedef struct WsPace {
    double min_ms, last_ms;
    long long last_step; /* -1: nothing reported yet */
} WsPace;

/* min_ms: the time floor (0: none; WS_PACE_MIN_MS for people). */
void ws_pace_init(WsPace *p, double min_ms);
/* Whether a report of done out of total (0: open-ended) is due now; when
 * it is, the report is counted as made. */
int ws_pace_due(WsPace *p, size_t done, size_t total);

/* The messages of the reports, the same in every door. */
/* "12/860 files", or "scanning" while total is 0. */
void ws_progress_files(char *buf, size_t size, size_t done, size_t total);
/* "writing the answer: 48 tokens". */
void ws_progress_tokens(char *buf, size_t size, size_t tokens);

/* ---------------------------------------------------------------- the LLM endpoint */

/* An endpoint's health, kept to back off a dead one and to tell the user
 * when it changes. Thread-safe. */
typedef struct WsEndpoint WsEndpoint;

/* Told when the endpoint's state changes: type 2 (it failed; a warning) or
 * 3 (it works again; information), with a message for the user. */
typedef void (*WsNoticeFn)(void *ud, int type, const char *msg);

/* what names it in messages ("LLM"; borrowed for its life); notice may be
 * NULL (the change is logged). */
WsEndpoint *ws_endpoint_new(const char *what, WsNoticeFn notice, void *ud);
void ws_endpoint_free(WsEndpoint *ep);
/* Whether a request in auto mode should skip the endpoint (down, back-off
 * not over); *why then says so. */
int ws_endpoint_skip(WsEndpoint *ep, char *why, size_t why_size);
/* The outcome of a request: CR_OK, or a failure (CR_ECANCELED is none). */
void ws_endpoint_report(WsEndpoint *ep, CrErr rc, const char *msg);
/* {"configured", "state", "message"}. New reference. */
struct json_t *ws_endpoint_status_json(WsEndpoint *ep, int configured);

/* ---------------------------------------------------------------- a question */

/* One question through prepare -> LLM -> verify:
 *   ws_ask_prepare (store's thread): retrieval and packing; a dead endpoint
 *     in its back-off is not asked (auto mode answers extractively);
 *   ws_ask_llm (any thread, no store): the LLM's draft, when wanted; the
 *     outcome is reported to the endpoint;
 *   ws_ask_finish (store's thread): the draft verified into *out.
 * req and out must stay the same and valid through the three; out is the
 * caller's (release with rtv_answer_release, also after a failure). */
typedef struct WsAsk WsAsk;

/* ep may be NULL (no back-off). Free with ws_ask_free. */
WsAsk *ws_ask_new(WsEndpoint *ep);
void ws_ask_free(WsAsk *a);
CrErr ws_ask_prepare(WsAsk *a, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);
/* Whether the LLM is to be asked (after prepare). */
int ws_ask_wants_llm(const WsAsk *a);
/* Returns the LLM's outcome (CR_ECANCELED when req->cancel said so). */
CrErr ws_ask_llm(WsAsk *a, const RtvRequest *req, const RtvAnswer *out);
/* The LLM's whole text (after ws_ask_llm succeeded), or NULL. Borrowed. */
const char *ws_ask_llm_text(const WsAsk *a);
CrErr ws_ask_finish(WsAsk *a, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);

/* The three steps in one call, on the calling thread: what the CLI and the
 * MCP server use. Errors: rtv_ask's. */
CrErr ws_ask(WsEndpoint *ep, IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);

/* ---------------------------------------------------------------- navigation */

/* What the doors' navigation requests ask of a store (nav.c), one call per
 * request on the store's thread: the door decodes the request, calls one,
 * and renders what comes back. Each reads the index in one read
 * transaction (idx_read_begin). Lines are 1-based. */

/* The line of the indexed file rel that line of an editor's unsaved text
 * buf (NULL: none) shows (rtv_line_map_to_disk); line itself without buf
 * or when the file cannot be read. */
uint32_t ws_nav_disk_line(IdxStore *st, const char *rel, const char *buf, size_t len,
                          uint32_t line);
/* The definition word at rel:line names (rtv_def_under: hover, go-to,
 * explain). Errors: rtv_def_under's (CR_ENOENT: none). */
CrErr ws_nav_def_under(IdxStore *st, const char *rel, uint32_t line, const char *word, RtvDef *out,
                       ErrInfo *e);
/* A workspace-wide symbol query (rtv_symbols). */
CrErr ws_nav_symbols(IdxStore *st, const char *query, size_t max, RtvDef **out, size_t *n_out,
                     ErrInfo *e);
/* The calls into (outgoing 0) or out of the definition around rel:line, at
 * most max (rtv_refs of calls): none when no definition is there. Free
 * with rtv_refs_free. */
CrErr ws_nav_calls(IdxStore *st, const char *rel, uint32_t line, int outgoing, size_t max,
                   RtvRef **out, size_t *n_out, ErrInfo *e);

/* A code lens: a definition of a file, its distinct callers and other
 * referrers (rtv_def_counts), and the line it starts on in the editor's
 * text (the file's own without one). */
typedef struct WsLens {
    RtvDef def;
    size_t callers, refs;
    uint32_t line;
} WsLens;
/* The lenses of rel's definitions in line order, over buf (NULL: the file
 * as indexed). Free with ws_lenses_free. */
CrErr ws_nav_lenses(IdxStore *st, const char *rel, const char *buf, size_t len, WsLens **out,
                    size_t *n_out, ErrInfo *e);
void ws_lenses_free(WsLens *v, size_t n);

/* A hover over a word: the definitions it names, the one it reaches from
 * the cursor (rtv_def_under) first and once, then those rtv_defs_named
 * ranks near the cursor, at most max_defs of total; and for the first,
 * the definitions at the far end of its incoming edges of each of the
 * kinds asked (at most max_links each, of total_links). */
#define WS_HOVER_LINKS 3
typedef struct WsHover {
    RtvDef *defs;
    size_t n_defs, total;
    RtvRef *links[WS_HOVER_LINKS];
    size_t n_links[WS_HOVER_LINKS], total_links[WS_HOVER_LINKS];
} WsHover;
/* Errors: the lookups' (CR_ENOENT: the index defines no word). Release
 * with ws_hover_release (also after a failure). */
CrErr ws_nav_hover(IdxStore *st, const char *rel, uint32_t line, const char *word, size_t max_defs,
                   const IdxEdgeKind kinds[WS_HOVER_LINKS], size_t max_links, WsHover *out,
                   ErrInfo *e);
void ws_hover_release(WsHover *h);

/* Definitions with what a tool shows of each: its variants (its pieces
 * under distinct #if branches; none when no piece is under one) and, for
 * ws_nav_references, its references. */
typedef struct WsNavDef {
    RtvDef def;
    RtvVariant *variants;
    size_t n_variants;
    IdxBuilt built; /* of the variants: yes if one is built, no if none can be */
    RtvRef *refs;
    size_t n_refs, total_refs;
} WsNavDef;
typedef struct WsNavDefs {
    WsNavDef *v;
    size_t n;
    size_t total; /* definitions there are (of the name) */
    /* ws_nav_references: what the graph cannot see of the first
     * definition's language (rtv_graph_limits; with none, of any), a
     * paragraph to show beside the references; owned. NULL otherwise. */
    char *limits;
} WsNavDefs;
void ws_nav_defs_release(WsNavDefs *r);

/* The definitions of name (rtv_defs_named near rel, at most limit), the
 * one the name's last part at rel:line reaches (a call site; line 0: none)
 * first and once. */
CrErr ws_nav_definitions(IdxStore *st, const char *name, const char *rel, uint32_t line,
                         size_t limit, WsNavDefs *out, ErrInfo *e);

/* Which definitions a references request is about: the one the name word
 * written at rel:line reaches (a call site), the one around rel:line (word
 * NULL), or (line 0) those named name near rel, at most max_defs. */
typedef struct WsNavTarget {
    const char *name, *rel, *word;
    uint32_t line;
    size_t max_defs;
} WsNavTarget;
/* The target's definitions, each with its references (outgoing 0: into
 * it) of the kinds asked (rtv_refs), at most limit each. No definition at
 * a place is none, not a failure. Release with ws_nav_defs_release. */
CrErr ws_nav_references(IdxStore *st, const WsNavTarget *t, int outgoing, unsigned kinds,
                        size_t limit, WsNavDefs *out, ErrInfo *e);

/* Retrieval alone, a question's context without an answer (rtv_search). */
CrErr ws_search(IdxStore *st, const RtvRequest *req, RtvAnswer *out, ErrInfo *e);
/* After ws_ask_prepare: a piece of an LLM's text checked as the answer's
 * will be (rtv_ask_check): a citation as it streams. */
CrErr ws_ask_check(IdxStore *st, const RtvRequest *req, const RtvAnswer *out, const char *text,
                   size_t len, VfyResult *vr, ErrInfo *e);

/* ---------------------------------------------------------------- the answer as JSON */

/* The coderag/ask result object of SPEC.md for a (keys answer, mode, match,
 * matchReason, citations, rejected, context, timings): the language
 * server's coderag/ask result and `coderag ask --json`. A citation's uri is
 * its file under root_abs; its range is ws_lines_range_json's. Invalid
 * UTF-8 in strings becomes U+FFFD, a number JSON cannot hold 0. New
 * reference (caller json_decref's). */
struct json_t *ws_answer_json(const RtvAnswer *a, const char *root_abs);
/* The result's "citations" array alone, the citation objects of SPEC.md
 * (uri, range, path, startLine, endLine, symbol, verified, source, origin,
 * anchor): every door's ask. New reference. */
struct json_t *ws_answer_citations_json(const RtvAnswer *a, const char *root_abs);
/* The result's "context" array alone (a server's partial result). New reference. */
struct json_t *ws_answer_context_json(const RtvAnswer *a);
/* The result's "rejected" array, {text, reason} per citation verification
 * removed: the same in every door's ask result. New reference. */
struct json_t *ws_answer_rejected_json(const RtvAnswer *a);
/* The retrievers of a via bitmask (RTV_VIA_*) by name, ["bm25", "dense",
 * "graph"] in that order: every door's context and search items. New reference. */
struct json_t *ws_via_json(unsigned via);
/* A 1-based inclusive line span as an LSP Range of whole lines: start
 * {line: start_line-1, character: 0}, end {line: end_line, character: 0}.
 * New reference. */
struct json_t *ws_lines_range_json(uint32_t start_line, uint32_t end_line);

#endif
