#include "ws.h"

#include <jansson.h>
#include <string.h>

static json_t *ws_partial_index_json(const IdxStatus *s);

/* The status keys every door reports for an index (docs/protocol.md). */

json_t *ws_status_json(const char *root, const IdxStatus *s)
{
    char when[32];
    utc_iso8601(s->last_update, when);
    json_t *j =
        json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "root", json_text(root),
                  "files", (json_int_t)s->files, "skipped", (json_int_t)s->skipped, "chunks",
                  (json_int_t)s->chunks, "symbols", (json_int_t)s->symbols, "edges",
                  (json_int_t)s->edges, "vectors", (json_int_t)s->vectors, "indexBytes",
                  (json_int_t)s->db_bytes, "lastUpdate", when, "embedder", s->embedder);
    json_t *partial = ws_partial_index_json(s);
    if (partial) json_object_set_new(j, "partialIndex", partial);
    return j;
}

const char *ws_index_state(const IdxStatus *s)
{
    if (!s->pass_total) return "ready";
    return s->pass_pid ? "indexing" : "partial";
}

void ws_index_state_text(const IdxStatus *s, StrBuf *sb)
{
    if (!s->pass_total) return;
    if (s->pass_pid)
        sb_addf(sb, "indexing %lld/%lld files (process %d)", (long long)s->pass_done,
                (long long)s->pass_total, s->pass_pid);
    else
        sb_addf(sb,
                "partial: %lld/%lld files indexed, then the pass stopped (`coderag index` "
                "finishes it)",
                (long long)s->pass_done, (long long)s->pass_total);
}

/* {"state", "indexed", "total", "pid"} of an index that is not whole
 * (docs/protocol.md's partialIndex), NULL when it is. New reference. */
static json_t *ws_partial_index_json(const IdxStatus *s)
{
    if (!s->pass_total) return NULL;
    return json_pack("{s:s, s:I, s:I, s:i}", "state", ws_index_state(s), "indexed",
                     (json_int_t)s->pass_done, "total", (json_int_t)s->pass_total, "pid",
                     s->pass_pid);
}

int ws_answer_mark_partial(json_t *result, IdxStore *st, StrBuf *note)
{
    IdxStatus s;
    memset(&s, 0, sizeof s);
    if (idx_status_pass(st, &s, NULL) || !s.pass_total) return 0;
    if (result) json_object_set_new(result, "partialIndex", ws_partial_index_json(&s));
    if (note) ws_index_state_text(&s, note);
    return 1;
}

/* Appends why an index holds no file: every file found was skipped (how
 * many), or none is of a language the index reads (its suffixes). */
static void empty_index_text(int64_t skipped, StrBuf *sb)
{
    if (skipped) {
        sb_addf(sb,
                "0 files indexed: all %lld files found were skipped (`coderag status --skipped` "
                "lists them with the reason)",
                (long long)skipped);
        return;
    }
    sb_adds(sb, "0 files indexed: no file under the root is one coderag reads (by suffix:");
    const char *x;
    for (size_t i = 0; (x = idx_source_ext(i)) != NULL; i++)
        sb_addf(sb, " %s", x);
    sb_adds(sb, "; or a script with a known #! line); is it the right folder?");
}

int ws_empty_index_note(IdxStore *st, StrBuf *sb)
{
    int64_t skipped;
    if (!idx_status_empty(st, &skipped)) return 0;
    empty_index_text(skipped, sb);
    return 1;
}

CrErr ws_status_check(IdxStore *st, ErrInfo *e)
{
    return idx_verify(st, e);
}

CrErr ws_status_report(IdxStore *st, int with_skipped, WsStatusReport *out, ErrInfo *e)
{
    memset(out, 0, sizeof *out);
    CrErr rc = idx_status(st, &out->s, e);
    if (!rc && with_skipped && out->s.skipped)
        rc = idx_skipped(st, &out->skipped, &out->n_skipped, e);
    return rc;
}

void ws_status_report_release(WsStatusReport *r)
{
    idx_skipped_free(r->skipped, r->n_skipped);
    r->skipped = NULL;
    r->n_skipped = 0;
}

CrErr ws_status_sizes(IdxStore *st, int64_t *chunks, int64_t *edges, ErrInfo *e)
{
    return idx_status_sizes(st, chunks, edges, e);
}
