/* keep.c - what a rewritten file keeps of its old resolution.
 *
 * An update rewrites every row of a changed file. Most of its definitions
 * are usually as they were: a chunk whose stored columns are all the same
 * (lines, window, kind, symbol, name, signature, docstring, content hash,
 * continuation, its parent the same chunk) is the same chunk under a new id.
 * What resolved to it, or from it, resolved against the same facts, except
 * for what the file's facts moved, which deps.c marks by name as it does for
 * every other file's references (graph.c resolves those again). So:
 *  - the edges of other files' references into a kept chunk are given its
 *    new id, not deleted and resolved again (only those into a chunk that
 *    went are);
 *  - a kept chunk's references, when their list (kind, name, arguments, in
 *    order) is the old chunk's and the file's imports rows (pending ones
 *    too: a name resolves through the file's includes) are the old ones,
 *    are written resolved, with the old reference's edges (a destination in
 *    the file by its kept chunk's new id; none that went).
 * A chunk is kept only when the choices among the file's chunks that a
 * lookup makes by position still fall on it: every chunk of its symbol kept
 * (overloads, variants, the definition that names the symbol), and the
 * file's first chunk (an import's target) the first still. Bases are
 * resolved again (graph.c follows a moved base into the subclasses), as is
 * everything when the file's preprocessor facts moved. A store kept names
 * the same function from the same place: the calls through its field are
 * not resolved again for it (a store that comes or goes moves the file's
 * facts, deps.c). */
#include "update_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct KeepChunk {
    int64_t id, parent_id;
    int kind, owner;
    uint32_t start;
    char *key;    /* the stored columns but ids */
    int64_t next; /* the next old chunk of the same key, or -1 */
    int64_t now;  /* the new chunk's index, or -1: not kept */
    char *symbol;
} KeepChunk;

typedef struct KeepRef {
    int64_t id, chunk; /* chunk: index into old */
    int kind, resolved;
    int64_t argc; /* the column: arity and argument types */
    char *name;
    size_t e0, ne; /* its edges: edges[e0 .. e0+ne) */
} KeepRef;

typedef struct KeepEdge {
    int64_t rowid, src_file, dst, ref_id;
    int kind;
} KeepEdge;

struct FileKeep {
    int64_t file_id;
    KeepChunk *old;
    size_t n_old;
    I64Map old_at;    /* old chunk id -> index into old */
    int64_t *new_ids; /* per new chunk: its id once written */
    size_t n_new;
    KeepRef *refs; /* the old refs, by id */
    size_t n_refs;
    KeepEdge *out; /* the old refs' edges, by ref id and rowid */
    size_t n_out;
    KeepEdge *in; /* other files' edges into a kept chunk */
    size_t n_in;
    size_t kept_refs, kept_in; /* what was kept, for the log */
    char *imports;             /* the file's imports rows (pending ones too), as text */
};

static void chunk_key(StrBuf *sb, uint32_t start, uint32_t end, uint32_t win, int kind, int cont,
                      uint64_t hash, const char *symbol, const char *name, const char *sig,
                      const char *doc)
{
    const char *text[4] = {symbol, name, sig, doc};
    sb_reset(sb);
    sb_addf(sb, "%u %u %u %d %d %llx", start, end, win, kind, cont, (unsigned long long)hash);
    for (int i = 0; i < 4; i++) {
        size_t len = strlen(text[i]); /* (by length: no text a separator) */
        sb_addf(sb, "\t%zu:", len);
        sb_add(sb, text[i], len);
    }
}

static const char *col(sqlite3_stmt *s, int i)
{
    const char *v = (const char *)sqlite3_column_text(s, i);
    return v ? v : "";
}

/* The old chunks, with their keys (by id: the file's order). */
static CrErr read_chunks(IdxStore *st, FileKeep *k, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_KEEP_CHUNKS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, k->file_id);
    StrBuf sb;
    sb_init(&sb);
    size_t cap = 0;
    int row = 0;
    CrErr rc;
    while (!(rc = idx_store_step(st, s, &row, e, "kept chunks")) && row) {
        ARRAY_GROW(k->old, k->n_old + 1, cap);
        KeepChunk *c = &k->old[k->n_old];
        memset(c, 0, sizeof *c);
        c->id = sqlite3_column_int64(s, 0);
        c->kind = sqlite3_column_int(s, 4);
        c->start = (uint32_t)sqlite3_column_int(s, 1);
        c->parent_id = sqlite3_column_int64(s, 9);
        c->symbol = xstrdup(col(s, 5));
        const char *name = sqlite3_column_type(s, 6) == SQLITE_NULL ? col(s, 5) : col(s, 6);
        chunk_key(&sb, (uint32_t)sqlite3_column_int(s, 1), (uint32_t)sqlite3_column_int(s, 2),
                  (uint32_t)sqlite3_column_int(s, 3), c->kind, sqlite3_column_int(s, 11),
                  (uint64_t)sqlite3_column_int64(s, 10), c->symbol, name, col(s, 7), col(s, 8));
        c->key = sb_detach(&sb, NULL);
        c->now = -1;
        c->next = -1;
        i64map_put(&k->old_at, c->id, (int64_t)k->n_old);
        k->n_old++;
    }
    sqlite3_reset(s);
    sb_release(&sb);
    if (rc) return rc;
    if (!(s = idx_store_stmt(st, STMT_KEEP_OWNERS, e))) return CR_EDB;
    sqlite3_bind_int64(s, 1, k->file_id);
    while (!(rc = idx_store_step(st, s, &row, e, "kept chunks")) && row) {
        int64_t at;
        if (i64map_get(&k->old_at, sqlite3_column_int64(s, 0), &at)) k->old[at].owner = 1;
    }
    sqlite3_reset(s);
    return rc;
}

/* The first chunk of a file as CHUNK_FIRST_OF_FILE picks it, by index
 * (kind, line, and the order they were written in). */
static int first_before(int kind_a, uint32_t line_a, int kind_b, uint32_t line_b)
{
    return (kind_a != 0) < (kind_b != 0) || ((kind_a != 0) == (kind_b != 0) && line_a < line_b);
}

/* Matches each new chunk to an old one of the same key and parent, then
 * drops what a lookup by position could now choose otherwise. */
static void match_chunks(FileKeep *k, const FileWork *fw, const char *owner)
{
    StrMap heads;
    StrBuf sb;
    strmap_init(&heads);
    sb_init(&sb);
    for (size_t i = k->n_old; i-- > 0;) {
        int64_t h;
        if (strmap_get(&heads, k->old[i].key, &h)) k->old[i].next = h;
        strmap_put(&heads, k->old[i].key, (int64_t)i);
    }
    for (size_t i = 0; i < fw->set.n_chunks; i++) {
        const ChunkDef *c = &fw->set.chunks[i];
        const char *sym = c->symbol ? c->symbol : "";
        chunk_key(&sb, c->start_line, c->end_line, c->window, (int)c->kind, fw->cont[i],
                  (uint64_t)strtoull(fw->chunk_hash[i], NULL, 16), sym, c->name ? c->name : "",
                  c->signature ? c->signature : "", c->docstring ? c->docstring : "");
        int64_t at;
        if (!strmap_get(&heads, sb.buf, &at)) continue;
        for (; at >= 0; at = k->old[at].next) {
            KeepChunk *o = &k->old[at];
            if (o->now >= 0 || o->owner != owner[i]) continue;
            int64_t op = -1;
            if (o->parent_id) i64map_get(&k->old_at, o->parent_id, &op);
            int np = c->parent >= 0 && (size_t)c->parent < i ? c->parent : -1;
            if (np < 0 ? o->parent_id != 0 : (op < 0 || k->old[op].now != np)) continue;
            o->now = (int64_t)i;
            break;
        }
    }
    /* every chunk of a symbol kept, or none */
    StrMap olds, news;
    strmap_init(&olds);
    strmap_init(&news);
    for (size_t i = 0; i < k->n_old; i++) {
        int64_t v = 0;
        if (!k->old[i].symbol[0]) continue;
        strmap_get(&olds, k->old[i].symbol, &v);
        strmap_put(&olds, k->old[i].symbol, v + (k->old[i].now >= 0 ? 1 : 1000000));
    }
    for (size_t i = 0; i < fw->set.n_chunks; i++) {
        const char *sym = fw->set.chunks[i].symbol;
        int64_t v = 0;
        if (!sym || !sym[0]) continue;
        strmap_get(&news, sym, &v);
        strmap_put(&news, sym, v + 1);
    }
    for (size_t i = 0; i < k->n_old; i++) {
        int64_t a = 0, b = 0;
        if (!k->old[i].symbol[0] || k->old[i].now < 0) continue;
        strmap_get(&olds, k->old[i].symbol, &a);
        strmap_get(&news, k->old[i].symbol, &b);
        if (a != b) k->old[i].now = -1;
    }
    /* the file's first chunk (CHUNK_FIRST_OF_FILE: by kind, then line) the
     * first still, with no other of its place (whose order SQLite leaves
     * open) before or after */
    size_t of = 0, nf = 0, n_of = 0, n_nf = 0;
    for (size_t i = 0; i < k->n_old; i++) {
        const KeepChunk *o = &k->old[i];
        if (!n_of || first_before(o->kind, o->start, k->old[of].kind, k->old[of].start)) {
            of = i;
            n_of = 1;
        } else if (!first_before(k->old[of].kind, k->old[of].start, o->kind, o->start)) {
            n_of++;
        }
    }
    for (size_t i = 0; i < fw->set.n_chunks; i++) {
        const ChunkDef *c = &fw->set.chunks[i], *f = &fw->set.chunks[nf];
        if (!n_nf || first_before((int)c->kind, c->start_line, (int)f->kind, f->start_line)) {
            nf = i;
            n_nf = 1;
        } else if (!first_before((int)f->kind, f->start_line, (int)c->kind, c->start_line)) {
            n_nf++;
        }
    }
    if (n_of && !(n_of == 1 && n_nf == 1 && k->old[of].now == (int64_t)nf)) {
        const KeepChunk *f = &k->old[of];
        const ChunkDef *g = n_nf ? &fw->set.chunks[nf] : NULL;
        for (size_t i = 0; i < k->n_old; i++) {
            KeepChunk *o = &k->old[i];
            int old_tie = (o->kind != 0) == (f->kind != 0) && o->start == f->start;
            const ChunkDef *c = o->now >= 0 ? &fw->set.chunks[o->now] : NULL;
            int new_tie =
                c && g && (c->kind != 0) == (g->kind != 0) && c->start_line == g->start_line;
            if (old_tie || new_tie) o->now = -1;
        }
    }
    /* a kept chunk under one that is not: not kept */
    for (size_t i = 0; i < k->n_old; i++) {
        int64_t op;
        KeepChunk *o = &k->old[i];
        if (o->now >= 0 && o->parent_id && i64map_get(&k->old_at, o->parent_id, &op) &&
            k->old[op].now < 0)
            o->now = -1;
    }
    strmap_release(&olds);
    strmap_release(&news);
    strmap_release(&heads);
    sb_release(&sb);
}

/* The old refs and their edges; the edges of other files' references into
 * the file. */
static CrErr read_refs(IdxStore *st, FileKeep *k, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_KEEP_REFS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, k->file_id);
    size_t cap = 0;
    int row = 0;
    CrErr rc;
    I64Map at;
    i64map_init(&at);
    while (!(rc = idx_store_step(st, s, &row, e, "kept refs")) && row) {
        int64_t c;
        if (!i64map_get(&k->old_at, sqlite3_column_int64(s, 1), &c)) continue;
        ARRAY_GROW(k->refs, k->n_refs + 1, cap);
        KeepRef *r = &k->refs[k->n_refs];
        r->id = sqlite3_column_int64(s, 0);
        r->chunk = c;
        r->kind = sqlite3_column_int(s, 2);
        r->name = xstrdup(col(s, 3));
        r->argc = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 4);
        r->resolved = sqlite3_column_int(s, 5);
        r->e0 = r->ne = 0;
        i64map_put(&at, r->id, (int64_t)k->n_refs);
        k->n_refs++;
    }
    sqlite3_reset(s);
    if (!rc && !(s = idx_store_stmt(st, STMT_KEEP_EDGES_OUT, e))) rc = CR_EDB;
    if (!rc) {
        sqlite3_bind_int64(s, 1, k->file_id);
        cap = 0;
        while (!(rc = idx_store_step(st, s, &row, e, "kept edges")) && row) {
            int64_t r;
            if (!i64map_get(&at, sqlite3_column_int64(s, 0), &r)) continue;
            ARRAY_GROW(k->out, k->n_out + 1, cap);
            KeepEdge *x = &k->out[k->n_out];
            x->ref_id = sqlite3_column_int64(s, 0);
            x->dst = sqlite3_column_int64(s, 1);
            x->kind = sqlite3_column_int(s, 2);
            x->rowid = x->src_file = 0;
            if (!k->refs[r].ne) k->refs[r].e0 = k->n_out;
            /* (by ref id, then rowid: a ref's edges are one run) */
            k->refs[r].ne++;
            k->n_out++;
        }
        sqlite3_reset(s);
    }
    i64map_release(&at);
    if (!rc && !(s = idx_store_stmt(st, STMT_KEEP_EDGES_IN, e))) rc = CR_EDB;
    if (!rc) {
        sqlite3_bind_int64(s, 1, k->file_id);
        cap = 0;
        while (!(rc = idx_store_step(st, s, &row, e, "kept edges")) && row) {
            ARRAY_GROW(k->in, k->n_in + 1, cap);
            KeepEdge *x = &k->in[k->n_in++];
            x->rowid = sqlite3_column_int64(s, 0);
            x->src_file = sqlite3_column_int64(s, 1);
            x->dst = sqlite3_column_int64(s, 2);
            x->kind = sqlite3_column_int(s, 3);
            x->ref_id = sqlite3_column_int64(s, 4);
        }
        sqlite3_reset(s);
    }
    return rc;
}

/* The file's imports rows (alias, target: a pending one's alias is ''), in
 * the order written, as one text. Caller frees. */
static char *imports_text(IdxStore *st, int64_t file_id, CrErr *rc, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_KEEP_IMPORTS, e);
    if (!s) {
        *rc = CR_EDB;
        return NULL;
    }
    sqlite3_bind_int64(s, 1, file_id);
    StrBuf sb;
    sb_init(&sb);
    int row = 0;
    while (!(*rc = idx_store_step(st, s, &row, e, "kept imports")) && row) {
        const char *a = col(s, 0), *t = col(s, 1);
        sb_addf(&sb, "%zu:%s%zu:%s", strlen(a), a, strlen(t), t);
    }
    sqlite3_reset(s);
    sb_addc(&sb, '\0');
    return sb_detach(&sb, NULL);
}

void idx_keep_free(FileKeep *k)
{
    if (!k) return;
    free(k->imports);
    for (size_t i = 0; i < k->n_old; i++) {
        free(k->old[i].key);
        free(k->old[i].symbol);
    }
    for (size_t i = 0; i < k->n_refs; i++)
        free(k->refs[i].name);
    free(k->old);
    free(k->refs);
    free(k->out);
    free(k->in);
    free(k->new_ids);
    i64map_release(&k->old_at);
    free(k);
}

CrErr idx_keep_load(IdxStore *st, const FileWork *fw, int64_t file_id, const char *owner,
                    FileKeep **out, ErrInfo *e)
{
    *out = NULL;
    FileKeep *k = xcalloc(1, sizeof *k);
    k->file_id = file_id;
    i64map_init(&k->old_at);
    CrErr rc = read_chunks(st, k, e);
    if (!rc) match_chunks(k, fw, owner);
    size_t kept = 0;
    for (size_t i = 0; i < k->n_old; i++)
        kept += k->old[i].now >= 0;
    if (!rc && kept) rc = read_refs(st, k, e);
    if (!rc && kept) k->imports = imports_text(st, file_id, &rc, e);
    if (rc || !kept) {
        idx_keep_free(k);
        return rc;
    }
    k->n_new = fw->set.n_chunks;
    k->new_ids = xcalloc(k->n_new + 1, sizeof *k->new_ids);
    *out = k;
    return CR_OK;
}

/* The old chunk id's new id (once written), or 0: not kept. */
static int64_t kept_id(const FileKeep *k, int64_t old_id)
{
    int64_t at;
    if (!i64map_get(&k->old_at, old_id, &at) || k->old[at].now < 0) return 0;
    return k->new_ids[k->old[at].now];
}

static CrErr run_id(IdxStore *st, StmtId id, int64_t a, int64_t b, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, id, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, a);
    if (id == STMT_KEEP_EDGE_DST || id == STMT_KEEP_REFS_RESOLVED) sqlite3_bind_int64(s, 2, b);
    return idx_store_step_done(st, s, e, "kept edges");
}

CrErr idx_keep_remove_in(IdxStore *st, FileKeep *k, ErrInfo *e)
{
    CrErr rc = CR_OK;
    size_t n = 0;
    for (size_t i = 0; i < k->n_in && !rc; i++) {
        int64_t at;
        KeepEdge *x = &k->in[i];
        if (i64map_get(&k->old_at, x->dst, &at) && k->old[at].now >= 0) {
            k->in[n++] = *x; /* kept: its destination's new id once written */
            continue;
        }
        /* into a chunk that goes: its reference is resolved again */
        rc = run_id(st, STMT_KEEP_EDGE_DEL, x->rowid, 0, e);
        if (!rc && x->ref_id) rc = run_id(st, STMT_KEEP_REF_DIRTY, x->ref_id, 0, e);
    }
    k->n_in = n;
    return rc;
}

void idx_keep_chunk_id(FileKeep *k, size_t i, int64_t id)
{
    if (i < k->n_new) k->new_ids[i] = id;
}

CrErr idx_keep_in_edges(IdxStore *st, FileKeep *k, ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (size_t i = 0; i < k->n_in && !rc; i++) {
        KeepEdge *x = &k->in[i];
        int64_t now = kept_id(k, x->dst);
        rc = run_id(st, STMT_KEEP_EDGE_DST, x->rowid, now, e);
        if (!rc) rc = idx_fanin_note_edge(st, x->src_file, now, x->kind, 1, e);
    }
    k->kept_in = k->n_in;
    return rc;
}

CrErr idx_keep_moved(IdxStore *st, FileKeep *k, ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (size_t i = 0; i < k->n_in && !rc; i++)
        if (k->in[i].ref_id) rc = run_id(st, STMT_KEEP_REF_DIRTY, k->in[i].ref_id, 0, e);
    return rc;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether an old reference's resolution holds for the new one of the same
 * list: resolved, of a kind resolved alone, every destination still there. */
static int ref_keeps(const FileKeep *k, const KeepRef *o)
{
    if (!o->resolved || o->kind == REF_INHERIT) return 0;
    for (size_t j = 0; j < o->ne; j++) {
        int64_t at, d = k->out[o->e0 + j].dst;
        if (i64map_get(&k->old_at, d, &at) && k->old[at].now < 0) return 0;
    }
    return 1;
}

/* Writes new reference id (in chunk src) resolved, with the edges of old. */
static CrErr keep_ref(IdxStore *st, FileKeep *k, const KeepRef *o, int64_t id, int64_t src,
                      ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (size_t j = 0; j < o->ne && !rc; j++) {
        const KeepEdge *x = &k->out[o->e0 + j];
        int64_t d = x->dst, at;
        if (i64map_get(&k->old_at, d, &at)) d = k->new_ids[k->old[at].now];
        sqlite3_stmt *s = idx_store_stmt(st, STMT_EDGE_INSERT, e);
        if (!s) return CR_EDB;
        sqlite3_bind_int64(s, 1, src);
        sqlite3_bind_int64(s, 2, d);
        sqlite3_bind_int(s, 3, x->kind);
        sqlite3_bind_int64(s, 4, id);
        if ((rc = idx_store_step_done(st, s, e, "edge"))) return rc;
        rc = idx_fanin_note_edge(st, k->file_id, d, x->kind, 1, e);
    }
    if (!rc) i64map_put(&st->refs_kept, id, 1);
    k->kept_refs++;
    return rc;
}

CrErr idx_keep_refs(IdxStore *st, FileKeep *k, int64_t ref_lo, ErrInfo *e)
{
    /* a reference resolves through its file's imports: the same ones, or
     * none kept */
    CrErr rc = CR_OK;
    char *now = imports_text(st, k->file_id, &rc, e);
    int same = !rc && now && k->imports && !strcmp(now, k->imports);
    free(now);
    if (rc) return rc;
    if (!same) return idx_keep_moved(st, k, e);
    /* the new refs of each kept chunk, in id order */
    sqlite3_stmt *s = idx_store_stmt(st, STMT_KEEP_REFS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, k->file_id);
    I64Map new_at; /* new chunk id -> its index */
    i64map_init(&new_at);
    for (size_t i = 0; i < k->n_new; i++)
        i64map_put(&new_at, k->new_ids[i], (int64_t)i);
    KeepRef *nr = NULL;
    int64_t *ids = NULL; /* the new refs kept */
    size_t n = 0, cap = 0, n_ids = 0, cap_ids = 0;
    int row = 0;
    while (!(rc = idx_store_step(st, s, &row, e, "kept refs")) && row) {
        int64_t c;
        if (sqlite3_column_int64(s, 0) < ref_lo) continue;
        if (!i64map_get(&new_at, sqlite3_column_int64(s, 1), &c)) continue;
        ARRAY_GROW(nr, n + 1, cap);
        KeepRef *r = &nr[n++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(s, 0);
        r->chunk = c;
        r->kind = sqlite3_column_int(s, 2);
        r->name = xstrdup(col(s, 3));
        r->argc = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 4);
    }
    sqlite3_reset(s);
    i64map_release(&new_at);
    /* per chunk, its refs in id order: old ones by old chunk, new by new */
    size_t *o_at = xcalloc(k->n_old + 2, sizeof *o_at),
           *o_ix = xmalloc((k->n_refs + 1) * sizeof *o_ix);
    size_t *n_at = xcalloc(k->n_new + 2, sizeof *n_at), *n_ix = xmalloc((n + 1) * sizeof *n_ix);
    for (size_t i = 0; i < k->n_refs; i++)
        o_at[k->refs[i].chunk + 2]++;
    for (size_t i = 0; i < n; i++)
        n_at[nr[i].chunk + 2]++;
    for (size_t c = 2; c < k->n_old + 2; c++)
        o_at[c] += o_at[c - 1];
    for (size_t c = 2; c < k->n_new + 2; c++)
        n_at[c] += n_at[c - 1];
    for (size_t i = 0; i < k->n_refs; i++)
        o_ix[o_at[k->refs[i].chunk + 1]++] = i;
    for (size_t i = 0; i < n; i++)
        n_ix[n_at[nr[i].chunk + 1]++] = i;
    /* (o_at[c] .. o_at[c + 1]: chunk c's) */
    for (size_t oc = 0; oc < k->n_old && !rc; oc++) {
        if (k->old[oc].now < 0) continue;
        size_t nc = (size_t)k->old[oc].now, m = o_at[oc + 1] - o_at[oc], j;
        if (m != n_at[nc + 1] - n_at[nc]) continue;
        for (j = 0; j < m; j++) {
            const KeepRef *x = &k->refs[o_ix[o_at[oc] + j]], *y = &nr[n_ix[n_at[nc] + j]];
            if (x->kind != y->kind || x->argc != y->argc || strcmp(x->name, y->name)) break;
        }
        if (j < m) continue;
        for (j = 0; j < m && !rc; j++) {
            const KeepRef *x = &k->refs[o_ix[o_at[oc] + j]], *y = &nr[n_ix[n_at[nc] + j]];
            if (!ref_keeps(k, x)) continue;
            rc = keep_ref(st, k, x, y->id, k->new_ids[nc], e);
            ARRAY_GROW(ids, n_ids + 1, cap_ids);
            ids[n_ids++] = y->id;
        }
    }
    /* marked resolved a run of ids at a time */
    if (n_ids) qsort(ids, n_ids, sizeof *ids, cmp_id);
    for (size_t i = 0, j; i < n_ids && !rc; i = j) {
        for (j = i + 1; j < n_ids && ids[j] == ids[j - 1] + 1;)
            j++;
        rc = run_id(st, STMT_KEEP_REFS_RESOLVED, ids[i], ids[j - 1], e);
    }
    free(ids);
    free(o_at);
    free(o_ix);
    free(n_at);
    free(n_ix);
    for (size_t i = 0; i < n; i++)
        free(nr[i].name);
    free(nr);
    return rc;
}

void idx_keep_log(const FileKeep *k, const char *path)
{
    size_t kept = 0;
    for (size_t i = 0; i < k->n_old; i++)
        kept += k->old[i].now >= 0;
    log_msg(LOG_DEBUG,
            "%s: %zu of %zu chunks kept, %zu of %zu refs resolved as before, %zu edges "
            "into it kept",
            path, kept, k->n_old, k->kept_refs, k->n_refs, k->kept_in);
}
