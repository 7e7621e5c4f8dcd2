#include "handlers.h"
#include "folder.h"
#include "memory.h"
#include "server_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* textDocument/codeLens and textDocument/hover from the code graph.
 *
 * Code lens: above each function and class, its callers and other
 * references (incoming graph edges), and an "Ask CodeRAG" lens running the
 * coderag.ask command; ranges the last answer cited in the document get a
 * lens naming its question. Hover: for the identifier under the cursor, its
 * definition (signature, docstring, place), where it is called from and
 * imported by, as links, and an LLM explanation when one was asked for
 * (handlers_explain.c). Both are answered by the worker (they read the
 * index); the cursor's word is found on the reader thread, in the open
 * document's text. */

#define MAX_LINKS 8
#define MAX_DEFS 3

/* A hover or code lens request, for the worker. */
typedef struct NavJob {
    Job job;
    char *path; /* root-relative */
    char *uri;
    char *word;   /* identifier under the cursor (hover) */
    char *buffer; /* lens: the open document's unsaved text, or NULL */
    size_t buffer_len;
    int line;   /* 0-based */
    int c0, c1; /* UTF-16 columns of the word */
} NavJob;

static void nav_free(WsJob *wj)
{
    Job *job = (Job *)wj;
    rpc_call_drop(job->call);
    NavJob *j = (NavJob *)job;
    free(j->path);
    free(j->uri);
    free(j->word);
    free(j->buffer);
    free(j);
}

static WsJobNext run_hover(void *ctx, WsJob *wj);
static WsJobNext run_lens(void *ctx, WsJob *wj);

static NavJob *nav_job(LspFolder *ws, RpcCall *call, WsJobFn run)
{
    NavJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->job.hj, run, nav_free);
    j->job.ws = ws;
    j->job.call = call;
    return j;
}

/* ---------------------------------------------------------------- helpers */

/* "file:///srv/ws/path#L12": editors open such links at the line. */
static void add_link(StrBuf *sb, const char *root, const IdxChunk *c)
{
    char *uri = path_to_uri(root, c->path);
    const char *name = c->symbol[0] ? c->symbol : c->module;
    sb_addf(sb, "[`%s`](%s#L%u) (%s:%u)", name, uri, c->start_line, c->path, c->start_line);
    free(uri);
}

static const char *display_name(const IdxChunk *c)
{
    return c->symbol[0] ? c->symbol : c->module;
}

/* Files and positions of a request. */
static RpcStatus doc_params(Server *s, json_t *params, const char *method, int want_pos,
                            const char **out_uri, int *line, int *character, LspFolder **out_ws,
                            char **out_rel, RpcError *err)
{
    json_error_t je;
    *line = *character = 0;
    if (!params ||
        (want_pos
             ? json_unpack_ex(params, &je, 0, "{s:{s:s}, s:{s:i, s:i}}", "textDocument", "uri",
                              out_uri, "position", "line", line, "character", character)
             : json_unpack_ex(params, &je, 0, "{s:{s:s}}", "textDocument", "uri", out_uri)) != 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "%s: %s", method, params ? je.text : "no params");
    if (*line < 0 || *character < 0)
        return rpc_error(err, RPC_INVALID_PARAMS, "%s: negative position", method);
    *out_ws = lsp_folder_for_uri(s, *out_uri, out_rel);
    return RPC_DONE;
}

/* ---------------------------------------------------------------- code lens */

RpcStatus lsp_on_code_lens(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Server *s = ctx;
    const char *uri;
    int line, character;
    LspFolder *ws = NULL;
    char *rel = NULL;
    if (doc_params(s, params, "textDocument/codeLens", 0, &uri, &line, &character, &ws, &rel,
                   err) != RPC_DONE)
        return RPC_FAIL;
    if (!ws || !rel) { /* not in a workspace: no lenses */
        free(rel);
        *out = json_array();
        return RPC_DONE;
    }
    NavJob *j = nav_job(ws, call, run_lens);
    j->path = rel;
    j->uri = xstrdup(uri);
    const Doc *d = lsp_docs_find(s, uri);
    if (d && d->text) {
        j->buffer = xstrndup(d->text, d->len);
        j->buffer_len = d->len;
    }
    ws_host_submit(s->host, &j->job.hj);
    return RPC_LATER;
}

static json_t *lens(int line, const char *title, const char *command, json_t *args)
{
    json_t *cmd = json_object();
    json_object_set_new(cmd, "title", json_text(title));
    json_object_set_new(cmd, "command", json_string(command));
    if (args) json_object_set_new(cmd, "arguments", args);
    json_t *l = json_object();
    json_object_set_new(l, "range", lsp_range(line, 0, line, 0));
    json_object_set_new(l, "command", cmd);
    return l;
}

static WsJobNext run_lens(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    NavJob *j = (NavJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    ErrInfo e = {0};
    IdxStore *st = lsp_folder_query_store(j->job.ws, &e);
    json_t *out = json_array();
    WsLens *v = NULL;
    size_t n = 0;
    CrErr rc = st ? ws_nav_lenses(st, j->path, j->buffer, j->buffer_len, &v, &n, &e) : CR_OK;
    for (size_t i = 0; i < n; i++) {
        const IdxChunk *c = &v[i].def.head;
        char title[160], question[600];
        if (!v[i].callers && !v[i].refs)
            snprintf(title, sizeof title, "no callers or references");
        else
            snprintf(title, sizeof title, "%zu caller%s, %zu reference%s", v[i].callers,
                     v[i].callers == 1 ? "" : "s", v[i].refs, v[i].refs == 1 ? "" : "s");
        int line = (int)v[i].line - 1;
        json_array_append_new(out, lens(line, title, "", NULL));
        snprintf(question, sizeof question, "What does `%s` in %s do, and where is it used?",
                 display_name(c), c->path);
        json_t *args = json_pack("[{s:o, s:{s:s}, s:o}]", "question", json_text(question),
                                 "textDocument", "uri", j->uri, "position", lsp_position(line, 0));
        json_array_append_new(out, lens(line, "Ask CodeRAG", "coderag.ask", args));
    }
    ws_lenses_free(v, n);
    if (lsp_call_reply_failed(call, rc, &e)) {
        json_decref(out);
        return WS_JOB_DONE;
    }
    /* Ranges the last answer cited in this file, where their lines are now:
     * in the unsaved buffer when the document is open, else on disk. */
    StrBuf disk;
    sb_init(&disk);
    for (size_t i = 0; j->job.ws->last_question && i < j->job.ws->n_last_cites; i++) {
        const VfyAnchor *anchor = &j->job.ws->last_cites[i];
        if (strcmp(anchor->path, j->path) != 0) continue;
        const char *text = j->buffer;
        size_t len = j->buffer_len;
        if (!text) {
            if (!st) continue;
            sb_reset(&disk);
            if (ws_read_file(st, j->path, &disk, NULL) != CR_OK) sb_reset(&disk);
            text = disk.buf;
            len = disk.len;
        }
        VfyAnchorMatch m;
        if (vfy_anchor_resolve_shared(j->job.ws->r->cfg.shared, anchor, text, len, &m) ==
            VFY_ANCHOR_LOST)
            continue;
        char title[200];
        snprintf(title, sizeof title, "cited for: %.120s%s", j->job.ws->last_question,
                 strlen(j->job.ws->last_question) > 120 ? "…" : "");
        json_array_append_new(out, lens((int)m.start_line - 1, title, "", NULL));
    }
    sb_release(&disk);
    rpc_call_reply(call, out, NULL);
    return WS_JOB_DONE;
}

/* ---------------------------------------------------------------- hover */

static int ident_char(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}

/* Byte offset in a line of a UTF-16 column (LSP's default encoding). */
static size_t utf16_to_byte(const char *line, size_t len, int col)
{
    size_t i = 0;
    int units = 0;
    while (i < len && units < col) {
        unsigned char c = (unsigned char)line[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        units += k == 4 ? 2 : 1;
        i += k;
    }
    return i < len ? i : len;
}

static int byte_to_utf16(const char *line, size_t off)
{
    int units = 0;
    for (size_t i = 0; i < off;) {
        unsigned char c = (unsigned char)line[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        units += k == 4 ? 2 : 1;
        i += k;
    }
    return units;
}

/* The identifier at (line, col) of text, with its UTF-16 column span.
 * Returns NULL when the cursor is not on one. Caller frees. */
static char *word_at(const char *text, size_t len, int line, int col, int *c0, int *c1)
{
    const char *p = text, *end = text + len;
    for (int l = 0; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
    size_t at = utf16_to_byte(p, ll, col), a = at, b = at;
    while (a > 0 && ident_char((unsigned char)p[a - 1]))
        a--;
    while (b < ll && ident_char((unsigned char)p[b]))
        b++;
    if (a == b || (p[a] >= '0' && p[a] <= '9')) return NULL;
    *c0 = byte_to_utf16(p, a);
    *c1 = byte_to_utf16(p, b);
    return xstrndup(p + a, b - a);
}

char *lsp_nav_word_at_uri(Server *s, const char *uri, const LspFolder *ws, const char *rel,
                          int line, int col, int *c0, int *c1)
{
    char *word = NULL;
    const Doc *d = lsp_docs_find(s, uri);
    if (d && d->text) return word_at(d->text, d->len, line, col, c0, c1);
    if (!ws || !rel) return NULL;
    StrBuf text; /* not open here: the file as saved, never a symlink's target outside */
    sb_init(&text);
    if (path_read_under(ws->r->root, rel, &text, (size_t)1 << 20, NULL) == CR_OK)
        word = word_at(text.buf, text.len, line, col, c0, c1);
    sb_release(&text);
    return word;
}

RpcStatus lsp_nav_position_params(Server *s, json_t *params, const char *method,
                                  const char **out_uri, int *line, int *character,
                                  LspFolder **out_ws, char **out_rel, RpcError *err)
{
    return doc_params(s, params, method, 1, out_uri, line, character, out_ws, out_rel, err);
}

RpcStatus lsp_on_hover(void *ctx, json_t *params, RpcCall *call, json_t **out, RpcError *err)
{
    Server *s = ctx;
    const char *uri;
    int line, character, c0 = 0, c1 = 0;
    LspFolder *ws = NULL;
    char *rel = NULL, *word = NULL;
    if (doc_params(s, params, "textDocument/hover", 1, &uri, &line, &character, &ws, &rel, err) !=
        RPC_DONE)
        return RPC_FAIL;
    if (ws && rel) word = lsp_nav_word_at_uri(s, uri, ws, rel, line, character, &c0, &c1);
    if (!word) {
        free(rel);
        return RPC_DONE; /* null: nothing to say */
    }
    NavJob *j = nav_job(ws, call, run_hover);
    j->path = rel;
    j->uri = xstrdup(uri);
    j->word = word;
    j->line = line;
    j->c0 = c0;
    j->c1 = c1;
    ws_host_submit(s->host, &j->job.hj);
    return RPC_LATER;
}

/* What a hover lists of the definitions linking to the one it shows: the
 * edge kinds ws_nav_hover follows, and how each list is titled. */
static const IdxEdgeKind hover_kinds[WS_HOVER_LINKS] = {IDX_EDGE_CALL, IDX_EDGE_IMPORT,
                                                        IDX_EDGE_INHERIT};
static const char *const hover_labels[WS_HOVER_LINKS] = {"Called from", "Imported by",
                                                         "Subclassed by"};

/* Links to the definitions at the far end of incoming edges of one kind. */
static void add_edge_links(StrBuf *sb, const char *root, const RtvRef *refs, size_t n, size_t total,
                           const char *label)
{
    for (size_t i = 0; i < n; i++) {
        sb_adds(sb, i ? "\n- " : "\n\n");
        if (!i) sb_addf(sb, "**%s**\n- ", label);
        add_link(sb, root, &refs[i].other.head);
    }
    if (total > n) sb_addf(sb, "\n- … and %zu more", total - n);
}

static WsJobNext run_hover(void *ctx, WsJob *wj)
{
    Job *job = (Job *)wj;
    NavJob *j = (NavJob *)job;
    RpcCall *call = job->call;
    job->call = NULL;
    ErrInfo e = {0};
    IdxStore *st = lsp_folder_query_store(j->job.ws, &e);
    WsHover h = {0};
    json_t *result = NULL;
    /* the cursor's line in the unsaved buffer, as the index knows the file */
    uint32_t at = lsp_folder_disk_line(j->job.ws, st, j->path, j->line);
    CrErr rc = st ? ws_nav_hover(st, j->path, at, j->word, MAX_DEFS, hover_kinds, MAX_LINKS, &h, &e)
                  : CR_OK;
    if (!st || rc) {
        ws_hover_release(&h);
        if (!lsp_call_reply_failed(call, rc, &e)) rpc_call_reply(call, NULL, NULL);
        return WS_JOB_DONE;
    }
    RtvDef *defs = h.defs;
    size_t n_defs = h.n_defs, n = h.total;
    if (n_defs) {
        const char *root = ws_store_root(st);
        const IdxChunk *d = &defs[0].head;
        StrBuf md;
        sb_init(&md);
        sb_addf(&md, "```%s\n%s\n```\n", idx_fence_tag(d->path),
                d->signature[0] ? d->signature : display_name(d));
        if (d->docstring[0]) {
            sb_addc(&md, '\n');
            lsp_doc_markdown(d->docstring, &md);
            sb_addc(&md, '\n');
        }
        sb_addf(&md, "\n%s `%s` — ", idx_kind_name(d->kind), display_name(d));
        add_link(&md, root, d);
        for (size_t k = 0; k < WS_HOVER_LINKS; k++)
            add_edge_links(&md, root, h.links[k], h.n_links[k], h.total_links[k], hover_labels[k]);
        if (n_defs > 1 || n > n_defs) {
            sb_adds(&md, "\n\n**Also defined**");
            for (size_t i = 1; i < n_defs; i++) {
                sb_adds(&md, "\n- ");
                add_link(&md, root, &defs[i].head);
            }
            if (n > n_defs) sb_addf(&md, "\n- … %zu definitions in all", n);
        }
        /* the LLM only when asked (coderag.explain); its answer is kept */
        const char *why = lsp_explain_cached(j->job.ws, st, &defs[0]);
        if (why)
            sb_addf(&md, "\n\n---\n**Explanation** (LLM; its citations are verified)\n\n%s", why);
        result = json_object();
        json_object_set_new(
            result, "contents",
            json_pack("{s:s, s:o}", "kind", "markdown", "value", json_text(md.buf)));
        json_object_set_new(result, "range", lsp_range(j->line, j->c0, j->line, j->c1));
        sb_release(&md);
    }
    ws_hover_release(&h);
    rpc_call_reply(call, result, NULL);
    return WS_JOB_DONE;
}
