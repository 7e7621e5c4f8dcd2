/*
 * folder.h - a workspace folder of the language server (folder.c): its
 * lifecycle, query store, file updates and status; full builds (builder.c).
 */
#ifndef CODERAG_LSP_FOLDER_H
#define CODERAG_LSP_FOLDER_H

#include "progress.h"
#include "server_int.h"

#define HOVER_CACHE 64
/* Unsaved buffers kept for asks (buffers.c): at most this many bytes in
 * all, and a file's at most max_file_bytes (the index's cap; this when
 * unset); past either, asks read the file on disk. */
#define LSP_BUFFERS_MAX_BYTES (64 * 1024 * 1024)
#define LSP_BUFFER_MAX_FILE (1024 * 1024)
typedef struct LspBuffer LspBuffer;

struct LspFolder {
    Server *srv;
    WsRoot *r; /* the host's: the root, its settings, query store and index state */
    char *name;

    /* worker thread only */
    char *last_question;   /* the last answered question and its citations */
    VfyAnchor *last_cites; /* as anchors, so their lenses follow the lines as the
                            * document is edited; path and symbol owned here */
    size_t n_last_cites;
    LspBuffer *buffers;   /* unsaved buffers asks read (buffers.c) */
    size_t buffers_bytes; /* their text in all */
    /* LLM explanations for hover, by the definition's content hash: the
     * same code is explained once, an edited definition afresh. */
    struct {
        char key[17];
        char *markdown;
    } explained[HOVER_CACHE];
    size_t explained_next;

    /* under the host lock */
    LspBuffer *buf_pending; /* texts of open documents for the worker to take */
    int buf_queued;

    pthread_mutex_t pg_mu;
    Progress pg;
};

/* ---- folder.c */

/* Creates a workspace for root (not opened yet) on a root of the host. */
LspFolder *lsp_folder_new(Server *s, const char *root, const char *name, const WsConfig *cfg);
void lsp_folder_free(LspFolder *ws);
/* The same for a file:// URI (decoded by path_from_uri); NULL for one that
 * is not a file in a workspace folder. */
LspFolder *lsp_folder_for_uri(Server *s, const char *uri, char **out_rel);
/* The workspace a request is about: the one holding its document, else the
 * first not in the error state (else the first). */
LspFolder *lsp_folder_pick(Server *s, const char *uri);
/* Schedules a re-index of one file (root-relative), coalesced per path. */
void lsp_folder_schedule_update(LspFolder *ws, const char *rel);
/* Asks for a full build (rescan) of the workspace. */
void lsp_folder_request_build(LspFolder *ws);
/* Worker: the pending file updates, applied. */
void lsp_folder_run_updates(Server *s, LspFolder *ws);
/* Worker: the outcome of a write to the index of ws (why: NULL for a
 * success). The first failure after a success sets write_error and tells
 * the user (window/showMessage, an error); the first success after a
 * failure clears it, asks for a full pass when catch_up (the changes that
 * failed are caught up) and tells the user. Otherwise nothing is shown. */
void lsp_folder_write_outcome(LspFolder *ws, const char *why, int catch_up);
/* The coderag/status result. New reference. */
struct json_t *lsp_srv_status_json(Server *s);
/* Worker side: makes sure the root's query store (WsRoot.q) is open and,
 * during a first build, fresh enough; returns it or NULL with e set. */
IdxStore *lsp_folder_query_store(LspFolder *ws, ErrInfo *e);
/* Worker: keeps j (an ask) aside when ws's index has never finished a pass
 * and one is under way or due (the first index): returns 1, and j runs
 * again (its run called anew on the worker) when the build ends, fails or
 * j's call is cancelled. 0: j goes on now. */
int lsp_folder_park(LspFolder *ws, Job *j);
/* Any thread: puts parked jobs back in the worker's
 * queue, all of them (all 1: a build ended) or those whose call the client
 * cancelled (all 0). */
void lsp_folder_unpark(LspFolder *ws, int all);
/* Worker, idle: refreshes status counts that file updates made stale
 * (s->mu held). */
void lsp_folder_refresh_stale(void *ud);

/* ---- buffers.c */
/* Reader: the editor shows text (NULL: the file as on disk, after a
 * didClose, a didSave or a change the server cannot follow) for rel; the
 * worker takes it before its next job. */
void lsp_folder_buffer_put(LspFolder *ws, const char *rel, const char *text);
/* Worker (RtvRequest.buffer, ud an LspFolder): the unsaved text of rel, or NULL. */
const char *lsp_folder_buffer_text(void *ud, const char *rel, size_t *len);
/* Worker: the line (1-based) of rel as the index knows it (the disk's) of
 * line line0 (0-based) of what the editor shows: through its unsaved
 * buffer's line map when it has one (rtv_line_map_to_disk). */
uint32_t lsp_folder_disk_line(LspFolder *ws, IdxStore *st, const char *rel, int line0);
/* Worker: whether rel has an unsaved buffer whose text differs from the
 * file's on disk. */
int lsp_folder_buffer_unsaved(LspFolder *ws, IdxStore *st, const char *rel);
/* Frees them all (the workspace is going away). */
void lsp_folder_buffers_free(LspFolder *ws);
/* Worker: loads the query store's search structures (ws_root_warm); a
 * failure is logged and shown (a warning: searches load them again) and
 * returns 0. */
int lsp_folder_warm(LspFolder *ws);

/* ---- builder.c */
/* The host's builder callback (WsHostDoor.build), ud the Server. */
void lsp_builder_run(void *ud, WsRoot *r);

#endif
