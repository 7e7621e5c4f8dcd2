#include "ws.h"

#include <jansson.h>

/* The status keys every door reports for an index (docs/protocol.md). */

json_t *ws_status_json(const char *root, const IdxStatus *s)
{
    char when[32];
    utc_iso8601(s->last_update, when);
    return json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "root", json_text(root),
                     "files", (json_int_t)s->files, "skipped", (json_int_t)s->skipped, "chunks",
                     (json_int_t)s->chunks, "symbols", (json_int_t)s->symbols, "edges",
                     (json_int_t)s->edges, "vectors", (json_int_t)s->vectors, "indexBytes",
                     (json_int_t)s->db_bytes, "lastUpdate", when, "embedder", s->embedder);
}
