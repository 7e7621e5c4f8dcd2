/*
 * postings_rebuild.c - the search text of a chunk, defined once for the
 * write (write.c) and for rebuilding the postings from the source files:
 * the index keeps no copy of it. A chunk's text is its rows (symbol,
 * docstring, signature, continuation) and the lines it spans, read again
 * from a file whose content hash still matches its files row.
 */
#include "../store/store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void idx_search_path_tokens(const char *path, StrBuf *out)
{
    /* the path without its extension ("a/b.py" -> "a/b") */
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    size_t plen = dot && dot > (slash ? slash + 1 : path) ? (size_t)(dot - path) : strlen(path);
    idx_tok_code(path, plen, out);
}

void idx_chunk_span(uint32_t start_line, uint32_t end_line, const size_t *line_off,
                    uint32_t n_lines, size_t src_len, size_t *out_a, size_t *out_b)
{
    uint32_t s = start_line ? start_line : 1, e = end_line;
    if (e > n_lines) e = n_lines;
    size_t a = s <= n_lines ? line_off[s - 1] : src_len;
    *out_a = a;
    *out_b = e >= s ? (e < n_lines ? line_off[e] : src_len) : a;
}

void idx_search_fields(const char *symbol, const char *path_tok, const char *docstring, int cont,
                       const char *signature, const char *lines, size_t len, char *out[4])
{
    StrBuf sb, raw;
    sb_init(&sb);
    sb_init(&raw);
    idx_tok_code(symbol, strlen(symbol), &sb);
    out[0] = sb_detach(&sb, NULL);
    out[1] = xstrdup(path_tok);
    if (docstring) idx_tok_code(docstring, strlen(docstring), &sb);
    out[2] = sb_detach(&sb, NULL);
    idx_chunk_body(cont, signature, lines, len, &raw);
    idx_tok_code(raw.buf, raw.len, &sb);
    out[3] = sb_detach(&sb, NULL);
    sb_release(&raw);
    sb_release(&sb);
}

/* One source file as the rebuild reads it: its text and line starts when
 * its hash matches the files row (ok), else nothing. */
typedef struct SrcFile {
    int64_t id;
    int ok;
    StrBuf text;
    size_t *line_off;
    uint32_t n_lines;
    StrBuf path_tok;
} SrcFile;

static void srcfile__load(IdxStore *st, SrcFile *f, int64_t id, const char *path, const char *hash)
{
    f->id = id;
    f->ok = 0;
    sb_reset(&f->text);
    sb_reset(&f->path_tok);
    free(f->line_off);
    f->line_off = NULL;
    ErrInfo e = {0};
    char h[17];
    if (path_read_under(st->root, path, &f->text, st->max_file_bytes, &e)) return;
    idx_hash_text(f->text.buf, f->text.len, h);
    if (strcmp(h, hash) != 0) return;
    f->n_lines = (uint32_t)count_lines(f->text.buf, f->text.len);
    line_offsets(f->text.buf, f->text.len, &f->line_off);
    idx_search_path_tokens(path, &f->path_tok);
    f->ok = 1;
}

/* A file whose content no longer matches its rows: left out of the
 * postings (its rows describe text that is gone), and read again by the
 * next update (st->reread), never trusted. */
static void note_stale(IdxStore *st, int64_t id, const char *path)
{
    log_msg(LOG_INFO, "%s changed since it was indexed: left out of the search until re-indexed",
            path);
    ARRAY_GROW(st->post_stale, st->n_post_stale + 1, st->cap_post_stale);
    st->post_stale[st->n_post_stale++] = id;
    if (st->readonly) return;
    ARRAY_GROW(st->reread, st->n_reread + 1, st->cap_reread);
    st->reread[st->n_reread++] = xstrdup(path);
}

CrErr idx_postings_add_files_since(IdxStore *st, Postings *p, int64_t gen, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    /* By chunk id, as a build from nothing adds them: a file's chunks are
     * written together, so each file is read once. Everything: one pass
     * over the chunks in id order. What changed since a snapshot (a few
     * files, usually): those files first (files_gen), their chunks
     * (chunks_file), sorted; a scan of every chunk would cost more than the
     * rest of a one-shot ask. */
    static const char cols[] = "SELECT c.id, c.file_id, c.kind, c.start_line, c.end_line, "
                               "c.symbol, c.docstring, c.signature, c.cont, f.path, f.hash ";
    char sql[512];
    snprintf(sql, sizeof sql, "%s%s", cols,
             gen < 0 ? "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
                     : "FROM files f CROSS JOIN chunks c ON c.file_id = f.id "
                       "WHERE f.gen > ?1 ORDER BY c.id");
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "load search text");
    if (gen >= 0) sqlite3_bind_int64(s, 1, gen);
    SrcFile f = {0};
    sb_init(&f.text);
    sb_init(&f.path_tok);
    I64Map stale_seen;
    i64map_init(&stale_seen);
    st->n_post_stale = 0;
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t file_id = sqlite3_column_int64(s, 1);
        if (file_id != f.id) {
            const char *path = (const char *)sqlite3_column_text(s, 9);
            srcfile__load(st, &f, file_id, path, (const char *)sqlite3_column_text(s, 10));
            if (!f.ok && !i64map_get(&stale_seen, file_id, NULL)) {
                i64map_put(&stale_seen, file_id, 1);
                note_stale(st, file_id, path);
            }
        }
        if (!f.ok) continue;
        size_t a, b;
        idx_chunk_span((uint32_t)sqlite3_column_int(s, 3), (uint32_t)sqlite3_column_int(s, 4),
                       f.line_off, f.n_lines, f.text.len, &a, &b);
        char *fields[IDX_SEARCH_FIELDS];
        idx_search_fields((const char *)sqlite3_column_text(s, 5), f.path_tok.buf,
                          (const char *)sqlite3_column_text(s, 6), sqlite3_column_int(s, 8),
                          (const char *)sqlite3_column_text(s, 7), f.text.buf + a, b - a, fields);
        idx_postings_add(p, sqlite3_column_int64(s, 0), file_id, (IdxKind)sqlite3_column_int(s, 2),
                         (const char *const *)fields);
        for (int k = 0; k < IDX_SEARCH_FIELDS; k++)
            free(fields[k]);
    }
    sqlite3_finalize(s);
    i64map_release(&stale_seen);
    sb_release(&f.text);
    sb_release(&f.path_tok);
    free(f.line_off);
    return step == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "load search text");
}
