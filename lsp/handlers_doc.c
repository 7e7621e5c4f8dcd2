#include "handlers.h"
#include "folder.h"
#include "server_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Text document sync and watched files. Open documents are kept (full
 * sync) for what the cursor points at; only saved files are indexed. A
 * save or a watched-file event schedules a re-index of that file, which the
 * worker applies ahead of queued asks; events for one path coalesce. */

const Doc *lsp_docs_find(Server *s, const char *uri)
{
    for (Doc *d = s->docs; d; d = d->next)
        if (!strcmp(d->uri, uri)) return d;
    return NULL;
}

static void docs_set(Server *s, const char *uri, const char *text)
{
    Doc *d = (Doc *)lsp_docs_find(s, uri);
    if (!d) {
        d = xcalloc(1, sizeof *d);
        d->uri = xstrdup(uri);
        d->next = s->docs;
        s->docs = d;
    }
    free(d->text);
    d->text = text ? xstrdup(text) : NULL;
    d->len = text ? strlen(text) : 0;
}

static void docs_remove(Server *s, const char *uri)
{
    for (Doc **pp = &s->docs; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->uri, uri)) {
            Doc *d = *pp;
            *pp = d->next;
            free(d->uri);
            free(d->text);
            free(d);
            return;
        }
}

void lsp_docs_free(Server *s)
{
    while (s->docs)
        docs_remove(s, s->docs->uri);
}

/* The text an editor shows for uri (NULL: the disk's), for the asks of the
 * workspace holding it. */
static void buffer_put(Server *s, const char *uri, const char *text)
{
    char *rel = NULL;
    LspFolder *ws = lsp_folder_for_uri(s, uri, &rel);
    if (ws && rel) lsp_folder_buffer_put(ws, rel, text);
    free(rel);
}

static void bad_notification(const char *method, const json_error_t *je)
{
    log_msg(LOG_WARN, "%s with bad params ignored: %s", method, je ? je->text : "no params");
}

RpcStatus lsp_on_did_open(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *uri, *text;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:{s:s, s:s}}", "textDocument", "uri", &uri,
                                  "text", &text) != 0)
        bad_notification("textDocument/didOpen", params ? &je : NULL);
    else {
        docs_set(ctx, uri, text);
        buffer_put(ctx, uri, text);
    }
    return RPC_DONE;
}

RpcStatus lsp_on_did_change(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *uri;
    json_t *changes;
    json_error_t je;
    if (!params ||
        json_unpack_ex(params, &je, 0, "{s:{s:s}, s:o}", "textDocument", "uri", &uri,
                       "contentChanges", &changes) != 0 ||
        !json_is_array(changes)) {
        bad_notification("textDocument/didChange", params ? &je : NULL);
        return RPC_DONE;
    }
    /* Full sync: the last whole-text change wins; a ranged change (which
     * we did not ask for) leaves the text unknown. */
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c)
    {
        const char *text;
        json_t *range = NULL;
        if (json_unpack_ex(c, &je, 0, "{s:s, s?o}", "text", &text, "range", &range) != 0) continue;
        docs_set(ctx, uri, range ? NULL : text);
        buffer_put(ctx, uri, range ? NULL : text);
    }
    return RPC_DONE;
}

RpcStatus lsp_on_did_close(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *uri;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:{s:s}}", "textDocument", "uri", &uri) != 0)
        bad_notification("textDocument/didClose", params ? &je : NULL);
    else {
        docs_remove(ctx, uri);
        buffer_put(ctx, uri, NULL); /* the disk's text again */
    }
    return RPC_DONE;
}

/* A file changed on disk: re-index it, or rescan when a folder went or
 * ignore rules changed. */
static void file_changed(Server *s, const char *uri, int deleted)
{
    char *rel = NULL;
    LspFolder *ws = lsp_folder_for_uri(s, uri, &rel);
    WsChange kind = ws && rel ? ws_change_kind(rel, deleted) : WS_CHANGE_NONE;
    if (kind == WS_CHANGE_RESCAN)
        lsp_folder_request_build(ws);
    else if (kind == WS_CHANGE_FILE)
        lsp_folder_schedule_update(ws, rel);
    free(rel);
}

RpcStatus lsp_on_did_save(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    const char *uri;
    json_error_t je;
    if (!params || json_unpack_ex(params, &je, 0, "{s:{s:s}}", "textDocument", "uri", &uri) != 0)
        bad_notification("textDocument/didSave", params ? &je : NULL);
    else {
        buffer_put(ctx, uri, NULL); /* saved: the disk holds what the editor shows */
        file_changed(ctx, uri, 0);
    }
    return RPC_DONE;
}

RpcStatus lsp_on_watched_files(void *ctx, json_t *params, RpcCall *call, json_t **out,
                               RpcError *err)
{
    json_t *changes, *c;
    json_error_t je;
    size_t i;
    if (!params || json_unpack_ex(params, &je, 0, "{s:o}", "changes", &changes) != 0 ||
        !json_is_array(changes)) {
        bad_notification("workspace/didChangeWatchedFiles", params ? &je : NULL);
        return RPC_DONE;
    }
    json_array_foreach(changes, i, c)
    {
        const char *uri;
        int type = 0;
        if (json_unpack_ex(c, &je, 0, "{s:s, s:i}", "uri", &uri, "type", &type) == 0)
            file_changed(ctx, uri, type == 3);
    }
    return RPC_DONE;
}
