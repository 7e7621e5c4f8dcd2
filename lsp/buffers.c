#include "folder.h"
#include "server_int.h"

#include <stdlib.h>
#include <string.h>

/* Unsaved buffers (docs/protocol.md, "Unsaved buffers"): the reader copies
 * an open document's text into the workspace's pending list at each
 * didOpen/didChange (the latest text of a path replaces the one not yet
 * taken: a burst of keystrokes costs the worker one copy), and the worker
 * takes the pending texts into the buffers asks read (RtvRequest.buffer)
 * before its next job. A didClose, a didSave or a change the server cannot
 * follow puts the path back on the disk's text. The index never sees them. */

struct LspBuffer {
    char *rel;
    char *text; /* NULL (pending only): back to the disk's text */
    size_t len;
    LspBuffer *next;
};

static void list_free(LspBuffer *b)
{
    while (b) {
        LspBuffer *next = b->next;
        free(b->rel);
        free(b->text);
        free(b);
        b = next;
    }
}

/* Unlinks the entry for rel from *list and returns it, or NULL. */
static LspBuffer *take(LspBuffer **list, const char *rel)
{
    for (LspBuffer **p = list; *p; p = &(*p)->next)
        if (!strcmp((*p)->rel, rel)) {
            LspBuffer *b = *p;
            *p = b->next;
            b->next = NULL;
            return b;
        }
    return NULL;
}

void lsp_folder_buffers_free(LspFolder *ws)
{
    list_free(ws->buffers);
    list_free(ws->buf_pending);
    ws->buffers = ws->buf_pending = NULL;
    ws->buffers_bytes = 0;
}

/* Worker: the pending texts taken, within the caps. */
static WsJobNext run_take(void *ctx, WsJob *wj)
{
    Server *s = ctx;
    Job *job = (Job *)wj;
    LspFolder *ws = job->ws;
    ws_host_lock(s->host);
    LspBuffer *todo = ws->buf_pending;
    ws->buf_pending = NULL;
    ws->buf_queued = 0;
    ws_host_unlock(s->host);
    size_t max_file = ws->r->cfg.max_file_bytes ? ws->r->cfg.max_file_bytes : LSP_BUFFER_MAX_FILE;
    while (todo) {
        LspBuffer *b = todo;
        todo = b->next;
        b->next = NULL;
        LspBuffer *old = take(&ws->buffers, b->rel);
        if (old) ws->buffers_bytes -= old->len;
        list_free(old);
        if (b->text && (b->len > max_file || ws->buffers_bytes + b->len > LSP_BUFFERS_MAX_BYTES)) {
            log_msg(LOG_WARN,
                    "unsaved buffer %s (%zu bytes) over the cap (%zu per file, %d in all): "
                    "answers read the file on disk",
                    b->rel, b->len, max_file, LSP_BUFFERS_MAX_BYTES);
            free(b->text);
            b->text = NULL;
        }
        if (!b->text) {
            list_free(b);
            continue;
        }
        ws->buffers_bytes += b->len;
        b->next = ws->buffers;
        ws->buffers = b;
    }
    return WS_JOB_DONE;
}

void lsp_folder_buffer_put(LspFolder *ws, const char *rel, const char *text)
{
    Server *s = ws->srv;
    LspBuffer *b = xcalloc(1, sizeof *b);
    b->rel = xstrdup(rel);
    if (text) {
        b->len = strlen(text);
        b->text = xstrndup(text, b->len);
    }
    ws_host_lock(s->host);
    list_free(take(&ws->buf_pending, rel)); /* not taken yet: the newer text wins */
    b->next = ws->buf_pending;
    ws->buf_pending = b;
    int queue = !ws->buf_queued;
    ws->buf_queued = 1;
    ws_host_unlock(s->host);
    if (queue) {
        Job *j = xcalloc(1, sizeof *j);
        ws_job_init(&j->hj, run_take, NULL);
        j->ws = ws;
        j->hj.urgent = 1; /* before the asks queued after the change */
        ws_host_submit(s->host, &j->hj);
    }
}

const char *lsp_folder_buffer_text(void *ud, const char *rel, size_t *len)
{
    LspFolder *ws = ud;
    for (LspBuffer *b = ws->buffers; b; b = b->next)
        if (!strcmp(b->rel, rel)) {
            *len = b->len;
            return b->text;
        }
    return NULL;
}

uint32_t lsp_folder_disk_line(LspFolder *ws, IdxStore *st, const char *rel, int line0)
{
    size_t len = 0;
    uint32_t line = (uint32_t)line0 + 1;
    const char *buf = st && rel ? lsp_folder_buffer_text(ws, rel, &len) : NULL;
    return buf ? ws_nav_disk_line(st, rel, buf, len, line) : line;
}

int lsp_folder_buffer_unsaved(LspFolder *ws, IdxStore *st, const char *rel)
{
    size_t len = 0;
    const char *buf = rel ? lsp_folder_buffer_text(ws, rel, &len) : NULL;
    if (!buf) return 0;
    StrBuf disk;
    sb_init(&disk);
    CrErr rc = ws_read_file(st, rel, &disk, NULL);
    int differs = rc || disk.len != len || (len && memcmp(disk.buf, buf, len) != 0);
    sb_release(&disk);
    return differs;
}
