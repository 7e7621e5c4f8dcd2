/* rows.c - reading the graph's rows: chunks by id or by file, edges of a
 * chunk, definitions by name. */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Columns as in CHUNK_GET / CHUNK_OF_FILE. */
static void chunk_from_row(sqlite3_stmt *s, IdxChunk *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(s, 0);
    c->file_id = sqlite3_column_int64(s, 1);
    c->path = idx_store_col_dup(s, 2);
    c->module = idx_store_col_dup(s, 3);
    c->symbol = idx_store_col_dup(s, 4);
    c->signature = idx_store_col_dup(s, 5);
    c->docstring = idx_store_col_dup(s, 6);
    c->start_line = (uint32_t)sqlite3_column_int(s, 7);
    c->end_line = (uint32_t)sqlite3_column_int(s, 8);
    c->window = (uint32_t)sqlite3_column_int(s, 9);
    c->kind = (IdxKind)sqlite3_column_int(s, 10);
    c->parent_id = sqlite3_column_int64(s, 11);
    const unsigned char *h = sqlite3_column_text(s, 12);
    snprintf(c->hash, sizeof c->hash, "%s", h ? (const char *)h : "");
    c->cont = sqlite3_column_int(s, 13);
}

void idx_chunk_release(IdxChunk *c)
{
    if (!c) return;
    free(c->path);
    free(c->module);
    free(c->symbol);
    free(c->signature);
    free(c->docstring);
    memset(c, 0, sizeof *c);
}

CrErr idx_file_chunks(IdxStore *st, const char *path, IdxChunk **out, size_t *n_out, ErrInfo *e)
{
    IdxChunk *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_OF_FILE, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        chunk_from_row(s, &v[n++]);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        idx_chunks_free(v, n);
        return idx_store_err(st, e, "file chunks");
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

int idx_file_has_chunks(IdxStore *st, const char *path)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_HAS_CHUNKS, NULL);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    int v = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_reset(s);
    return v;
}

/* Rows read last, kept while the index is as it was when they were read:
 * the same PRAGMA data_version (another connection's commit moves it) and
 * sqlite3_total_changes (any row this connection writes, rolled back or
 * not, moves it). An ask reads its candidates' chunks more than once (the
 * features, the pack, the answer) and the outline of each file it builds a
 * definition in, often the same few, ask after ask. */
#define OUTLINE_CACHE_SLOTS 8
#define CHUNK_CACHE_SLOTS 512 /* by id, direct-mapped */

typedef struct OutlineSlot {
    int64_t file_id; /* 0: empty */
    IdxChunk *v;
    size_t n;
    uint64_t used;
} OutlineSlot;

struct RowsCache {
    OutlineSlot slot[OUTLINE_CACHE_SLOTS];
    IdxChunk chunk[CHUNK_CACHE_SLOTS]; /* id 0: empty */
    size_t n_chunks;
    int64_t version, changes;
    uint64_t read_seq; /* the read transaction version was checked in (0: none) */
    uint64_t tick;
};

static void outline_slot_clear(OutlineSlot *o)
{
    idx_chunks_free(o->v, o->n);
    memset(o, 0, sizeof *o);
}

static void rows_cache_clear(RowsCache *c)
{
    for (size_t i = 0; i < OUTLINE_CACHE_SLOTS; i++)
        outline_slot_clear(&c->slot[i]);
    for (size_t i = 0; c->n_chunks && i < CHUNK_CACHE_SLOTS; i++)
        idx_chunk_release(&c->chunk[i]);
    c->n_chunks = 0;
}

void idx_store_rows_cache_free(RowsCache *c)
{
    if (!c) return;
    rows_cache_clear(c);
    free(c);
}

/* The store's cache, emptied first when the index may have changed since
 * it was filled; NULL when that cannot be told. */
static RowsCache *rows_cache(IdxStore *st)
{
    RowsCache *c = st->rows_cache;
    if (!c) c = st->rows_cache = xcalloc(1, sizeof *c);
    /* inside a read transaction of idx_read_begin's that checked already,
     * no other connection's commit can show */
    int checked = st->in_read && c->read_seq == st->read_seq;
    int64_t version = checked ? c->version : idx_store_data_version(st);
    int64_t changes = sqlite3_total_changes(st->db);
    if (version != c->version || changes != c->changes) {
        rows_cache_clear(c);
        c->version = version;
        c->changes = changes;
    }
    c->read_seq = st->in_read ? st->read_seq : 0;
    return version < 0 ? NULL : c;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* A copy of c, every string its own. */
static void chunk_copy(IdxChunk *out, const IdxChunk *c)
{
    *out = *c;
    out->path = dup_or_null(c->path);
    out->module = dup_or_null(c->module);
    out->symbol = dup_or_null(c->symbol);
    out->signature = dup_or_null(c->signature);
    out->docstring = dup_or_null(c->docstring);
}

/* A copy of v[0..n) as idx_file_outline returns it. */
static IdxChunk *outline_copy(const IdxChunk *v, size_t n)
{
    IdxChunk *w = n ? xcalloc(n, sizeof *w) : NULL;
    for (size_t i = 0; i < n; i++)
        chunk_copy(&w[i], &v[i]);
    return w;
}

/* c's slot of file_id, or NULL. */
static OutlineSlot *outline_cached(RowsCache *c, int64_t file_id)
{
    for (size_t i = 0; c && file_id && i < OUTLINE_CACHE_SLOTS; i++)
        if (c->slot[i].file_id == file_id) {
            c->slot[i].used = ++c->tick;
            return &c->slot[i];
        }
    return NULL;
}

/* Keeps a copy of file_id's outline v[0..n) in the least recently used slot. */
static void outline_keep(RowsCache *c, int64_t file_id, const IdxChunk *v, size_t n)
{
    if (!c || !file_id) return;
    OutlineSlot *o = &c->slot[0];
    for (size_t i = 1; i < OUTLINE_CACHE_SLOTS; i++)
        if (c->slot[i].used < o->used) o = &c->slot[i];
    outline_slot_clear(o);
    o->file_id = file_id;
    o->v = outline_copy(v, n);
    o->n = n;
    o->used = ++c->tick;
}

CrErr idx_chunk_get(IdxStore *st, int64_t id, IdxChunk *out, ErrInfo *e)
{
    RowsCache *cache = rows_cache(st);
    IdxChunk *slot = cache && id > 0 ? &cache->chunk[(uint64_t)id % CHUNK_CACHE_SLOTS] : NULL;
    if (slot && slot->id == id) {
        chunk_copy(out, slot);
        return CR_OK;
    }
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_GET, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        chunk_from_row(s, out);
        sqlite3_reset(s);
        if (slot) {
            if (slot->id)
                idx_chunk_release(slot);
            else
                cache->n_chunks++;
            chunk_copy(slot, out);
        }
        return CR_OK;
    }
    sqlite3_reset(s);
    if (rc == SQLITE_DONE) return err_set(e, CR_ENOENT, "no chunk %lld", (long long)id);
    return idx_store_err(st, e, "chunk");
}

CrErr idx_file_outline(IdxStore *st, int64_t file_id, IdxChunk **out, size_t *n_out, ErrInfo *e)
{
    IdxChunk *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    RowsCache *cache = rows_cache(st);
    const OutlineSlot *hit = outline_cached(cache, file_id);
    if (hit) {
        *out = outline_copy(hit->v, hit->n);
        *n_out = hit->n;
        return CR_OK;
    }
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CHUNK_OUTLINE_OF_FILE, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        IdxChunk *c = &v[n++];
        memset(c, 0, sizeof *c);
        c->id = sqlite3_column_int64(s, 0);
        c->file_id = file_id;
        c->symbol = idx_store_col_dup(s, 1);
        c->start_line = (uint32_t)sqlite3_column_int(s, 2);
        c->end_line = (uint32_t)sqlite3_column_int(s, 3);
        c->window = (uint32_t)sqlite3_column_int(s, 4);
        c->kind = (IdxKind)sqlite3_column_int(s, 5);
        c->cont = sqlite3_column_int(s, 6);
        c->signature = idx_store_col_dup(s, 7); /* tells overloads apart (retrieve/nav.c) */
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        idx_chunks_free(v, n);
        return idx_store_err(st, e, "file outline");
    }
    outline_keep(cache, file_id, v, n);
    *out = v;
    *n_out = n;
    return CR_OK;
}

void idx_chunks_free(IdxChunk *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        idx_chunk_release(&v[i]);
    free(v);
}

CrErr idx_edges(IdxStore *st, int64_t chunk_id, int outgoing, IdxEdge **out, size_t *n_out,
                ErrInfo *e)
{
    IdxEdge *v = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    sqlite3_stmt *s = idx_store_stmt(st, outgoing ? STMT_EDGE_OUT : STMT_EDGE_IN, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, chunk_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        v[n].src = sqlite3_column_int64(s, 0);
        v[n].dst = sqlite3_column_int64(s, 1);
        v[n].kind = (IdxEdgeKind)sqlite3_column_int(s, 2);
        v[n].other_kind = (IdxKind)sqlite3_column_int(s, 3);
        v[n].other_file = sqlite3_column_int64(s, 4);
        v[n].other_lines = (uint32_t)sqlite3_column_int(s, 5);
        v[n].builds = sqlite3_column_int(s, 6);
        n++;
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) {
        free(v);
        return idx_store_err(st, e, "edges");
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}

static CrErr collect_ids(IdxStore *st, sqlite3_stmt *s, int64_t **v, size_t *n, size_t *cap,
                         ErrInfo *e)
{
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "lookup");
}

CrErr idx_lookup_symbol(IdxStore *st, const char *name, int64_t **out, size_t *n_out, ErrInfo *e)
{
    int64_t *v = NULL;
    size_t n = 0, cap = 0;
    CrErr rc;
    *out = NULL;
    *n_out = 0;
    /* "Class::meth" is "Class.meth" */
    StrBuf dotted;
    sb_init(&dotted);
    for (const char *p = name; *p; p++) {
        if (p[0] == ':' && p[1] == ':') {
            sb_addc(&dotted, '.');
            p++;
        } else {
            sb_addc(&dotted, *p);
        }
    }
    const char *q = dotted.buf ? dotted.buf : "";
    sqlite3_stmt *s = idx_store_stmt(st, STMT_SYMBOL_BY_QUAL, e);
    if (!s) {
        sb_release(&dotted);
        return CR_EDB;
    }
    sqlite3_bind_text(s, 1, q, -1, SQLITE_STATIC);
    int64_t first;
    rc = idx_store_first_placed(st, s, &first, e);
    if (!rc && first) {
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = first;
    }
    if (!rc && n == 0) {
        const char *last = strrchr(q, '.');
        s = idx_store_stmt(st, last ? STMT_SYMBOL_BY_SUFFIX : STMT_SYMBOL_BY_NAME, e);
        if (!s) {
            free(v);
            sb_release(&dotted);
            return CR_EDB;
        }
        sqlite3_bind_text(s, 1, last ? last + 1 : q, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, 1000);
        if (last) sqlite3_bind_text(s, 3, q, -1, SQLITE_STATIC);
        rc = collect_ids(st, s, &v, &n, &cap, e);
    }
    sb_release(&dotted);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = n;
    return CR_OK;
}
