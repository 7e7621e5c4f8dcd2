/* graph_names.c - what the tables a lookup reads (symbols, files,
 * imports) hold, read once per resolution of many references: the names
 * a lookup can end at, the qualified names and import bindings as sets of
 * hashes (a name not in a set needs no probe; one in it is probed as
 * before, so a hash that collides costs a probe, never an answer), and the
 * modules, star imports and symbols' simple names themselves. A cold build's lookups are mostly a
 * walk through the includes (C's headers are star imports) that probes
 * names no header defines; here each step of the walk is a hash probe. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* An open-addressing set of 64-bit hashes (0 stands for hash 0 as 1). */
typedef struct HashSet {
    uint64_t *slot;
    size_t cap, len;
} HashSet;

struct GraphNames {
    HashSet quals;  /* symbols' qualified names */
    HashSet ends;   /* every last part a lookup can end at (see below) */
    StrMap names;   /* symbols' names: the one symbol so named, or -1: more */
    HashSet binds;  /* (file, alias) of the imports that are not star imports */
    StrMap modules; /* module -> the first file by path with status ok that has it */
    int64_t *star_file;
    char **star_target; /* star imports by file, in rowid order (as IMPORTS_OF_FILE) */
    size_t n_stars, cap_stars;
    /* What a walk through the star imports can end at (idx_graph_names_may_reach):
     * the files that bind a name by an import, the last parts of the
     * modules, and each symbol as the hashes of its last part and of the
     * rest of its qualified name (sorted), and its chunk. */
    HashSet bind_files, module_ends;
    struct NameDef {
        uint64_t h, prefix;
        int64_t chunk;
    } * defs;
    size_t n_defs, cap_defs;
};

static uint64_t set_key(uint64_t h)
{
    return h ? h : 1;
}

static void set_add(HashSet *s, uint64_t h);

static void set_grow(HashSet *s)
{
    HashSet n = {xcalloc(s->cap ? s->cap * 2 : 1024, sizeof(uint64_t)), s->cap ? s->cap * 2 : 1024,
                 0};
    for (size_t i = 0; i < s->cap; i++)
        if (s->slot[i]) set_add(&n, s->slot[i]);
    free(s->slot);
    *s = n;
}

static void set_add(HashSet *s, uint64_t h)
{
    if ((s->len + 1) * 2 > s->cap) set_grow(s);
    h = set_key(h);
    size_t mask = s->cap - 1, i = (size_t)h & mask;
    while (s->slot[i] && s->slot[i] != h)
        i = (i + 1) & mask;
    if (!s->slot[i]) s->len++;
    s->slot[i] = h;
}

static int set_has(const HashSet *s, uint64_t h)
{
    if (!s->cap) return 0;
    h = set_key(h);
    size_t mask = s->cap - 1, i = (size_t)h & mask;
    while (s->slot[i]) {
        if (s->slot[i] == h) return 1;
        i = (i + 1) & mask;
    }
    return 0;
}

static uint64_t bind_hash(int64_t file_id, const char *alias, size_t len)
{
    return hash64(alias, len) ^ ((uint64_t)file_id * 0x9e3779b97f4a7c15ull);
}

static const char *last_part(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? dot + 1 : s;
}

static void add_text(HashSet *s, const char *t)
{
    set_add(s, hash64(t, strlen(t)));
}

/* Runs sql and hands each row to fn; CR_OK or the failure. */
static CrErr each_row(IdxStore *st, const char *sql, void (*fn)(GraphNames *, sqlite3_stmt *),
                      GraphNames *g, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "graph names");
    CrErr rc;
    int row = 0;
    while ((rc = idx_store_step(st, s, &row, e, "graph names")) == CR_OK && row)
        fn(g, s);
    sqlite3_finalize(s);
    return rc;
}

static const char *col(sqlite3_stmt *s, int i)
{
    const char *t = (const char *)sqlite3_column_text(s, i);
    return t ? t : "";
}

/* A lookup of "a.b.c" (idx_graph_resolve_qualified) ends at a symbol
 * qualified so, a module so named, or, through an import binding of its
 * last part, at what the binding names; every other step keeps the last
 * part. So a last part that is no symbol's, module's or alias's last part
 * resolves to nothing. */
static void symbol_row(GraphNames *g, sqlite3_stmt *s)
{
    const char *q = col(s, 0);
    add_text(&g->quals, q);
    add_text(&g->ends, last_part(q));
    const char *name = sqlite3_column_type(s, 1) == SQLITE_NULL ? last_part(q) : col(s, 1);
    int64_t id = sqlite3_column_int64(s, 2);
    strmap_put(&g->names, name, strmap_get(&g->names, name, NULL) ? -1 : id);
    const char *last = last_part(q);
    ARRAY_GROW(g->defs, g->n_defs + 1, g->cap_defs);
    g->defs[g->n_defs++] = (struct NameDef){hash64(last, strlen(last)),
                                            hash64(q, last > q ? (size_t)(last - q - 1) : 0), id};
}

static void file_row(GraphNames *g, sqlite3_stmt *s)
{
    const char *m = col(s, 1);
    if (!strmap_get(&g->modules, m, NULL)) strmap_put(&g->modules, m, sqlite3_column_int64(s, 0));
    add_text(&g->ends, last_part(m));
    add_text(&g->module_ends, last_part(m));
}

static void import_row(GraphNames *g, sqlite3_stmt *s)
{
    int64_t fid = sqlite3_column_int64(s, 0);
    const char *alias = col(s, 1);
    if (strcmp(alias, "*") != 0) {
        set_add(&g->binds, bind_hash(fid, alias, strlen(alias)));
        add_text(&g->ends, alias);
        /* (an empty alias binds no name a lookup asks: its parts are
         * never empty) */
        if (alias[0]) set_add(&g->bind_files, (uint64_t)fid);
        return;
    }
    if (g->n_stars == g->cap_stars) {
        g->cap_stars = g->cap_stars ? g->cap_stars * 2 : 1024;
        g->star_file = xrealloc(g->star_file, g->cap_stars * sizeof *g->star_file);
        g->star_target = xrealloc(g->star_target, g->cap_stars * sizeof *g->star_target);
    }
    g->star_file[g->n_stars] = fid;
    g->star_target[g->n_stars++] = xstrdup(col(s, 2));
}

static int def_cmp(const void *a, const void *b)
{
    const struct NameDef *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    if (x->prefix != y->prefix) return x->prefix < y->prefix ? -1 : 1;
    return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

CrErr idx_graph_names_load(IdxStore *st, GraphNames **out, ErrInfo *e)
{
    GraphNames *g = xcalloc(1, sizeof *g);
    strmap_init(&g->modules);
    strmap_init(&g->names);
    CrErr rc = each_row(st, "SELECT qualname, own_name, chunk_id FROM symbols", symbol_row, g, e);
    if (!rc && g->n_defs) qsort(g->defs, g->n_defs, sizeof *g->defs, def_cmp);
    if (!rc)
        rc = each_row(st, "SELECT id, module FROM files WHERE status = 'ok' ORDER BY path",
                      file_row, g, e);
    /* a file's star imports in rowid order, as IMPORTS_OF_FILE reads them */
    if (!rc)
        rc = each_row(st, "SELECT file_id, alias, target FROM imports ORDER BY file_id, rowid",
                      import_row, g, e);
    if (rc) {
        idx_graph_names_free(g);
        g = NULL;
    }
    *out = g;
    return rc;
}

void idx_graph_names_free(GraphNames *g)
{
    if (!g) return;
    free(g->quals.slot);
    free(g->ends.slot);
    strmap_release(&g->names);
    free(g->binds.slot);
    free(g->bind_files.slot);
    free(g->module_ends.slot);
    free(g->defs);
    strmap_release(&g->modules);
    for (size_t i = 0; i < g->n_stars; i++)
        free(g->star_target[i]);
    free(g->star_target);
    free(g->star_file);
    free(g);
}

int idx_graph_names_may_end(const GraphNames *g, const char *q)
{
    return set_has(&g->ends, hash64(last_part(q), strlen(last_part(q))));
}

int idx_graph_names_may_qual(const GraphNames *g, const char *q)
{
    return set_has(&g->quals, hash64(q, strlen(q)));
}

int64_t idx_graph_names_unique(const GraphNames *g, const char *name)
{
    int64_t id = 0;
    return strmap_get(&g->names, name, &id) && id > 0 ? id : 0;
}

int idx_graph_names_may_bind(const GraphNames *g, int64_t file_id, const char *alias, size_t len)
{
    return set_has(&g->binds, bind_hash(file_id, alias, len));
}

int64_t idx_graph_names_module(const GraphNames *g, const char *module)
{
    int64_t id = 0;
    return strmap_get(&g->modules, module, &id) ? id : 0;
}

char *const *idx_graph_names_stars(const GraphNames *g, int64_t file_id, size_t *n_out)
{
    size_t lo = 0, hi = g->n_stars;
    while (lo < hi) { /* the first row of file_id */
        size_t mid = lo + (hi - lo) / 2;
        if (g->star_file[mid] < file_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < g->n_stars && g->star_file[lo + n] == file_id)
        n++;
    *n_out = n;
    return n ? &g->star_target[lo] : NULL;
}

/* A file whose star imports the walk asks at depth (when not yet queued). */
static void reach_file(GraphReach *rc, int64_t file, int64_t depth)
{
    if (!file || i64map_get(&rc->files, file, NULL)) return;
    i64map_put(&rc->files, file, depth);
    ARRAY_GROW(rc->queue, rc->n_queue + 1, rc->cap_queue);
    rc->queue[rc->n_queue++] = file;
}

/* A name the walk puts before ".name" at depth (its first, the least): a
 * module, whose file's star imports it asks one deeper; or a target no
 * module names, whose name alone is asked, unless a prefix of it names one
 * (the walk's longest-prefix step asks longer names there: wild). */
static void reach_prefix(const GraphNames *g, GraphReach *rc, const char *t, int64_t depth,
                         StrBuf *buf)
{
    int64_t h = (int64_t)hash64(t, strlen(t));
    if (!i64map_get(&rc->prefixes, h, NULL)) i64map_put(&rc->prefixes, h, depth);
    int64_t fid = idx_graph_names_module(g, t);
    if (fid) {
        reach_file(rc, fid, depth + 1);
        return;
    }
    sb_reset(buf);
    sb_adds(buf, t);
    for (char *dot = strrchr(buf->buf, '.'); dot && !rc->wild; dot = strrchr(buf->buf, '.')) {
        *dot = '\0';
        rc->wild = idx_graph_names_module(g, buf->buf) != 0;
    }
}

/* What a walk (idx_graph_resolve_expr's: module.name, then its file's star
 * imports, transitively; the calling file's own at depth 0 when it is not
 * the module's file) puts before a one-part name, each at the least depth
 * it is asked at, breadth first; wild when a file on the way binds names. */
static void reach_walk(const GraphNames *g, GraphReach *rc, int64_t file_id, const char *module)
{
    i64map_release(&rc->files);
    i64map_init(&rc->files);
    i64map_release(&rc->prefixes);
    i64map_init(&rc->prefixes);
    rc->n_queue = 0;
    rc->wild = 0;
    rc->file = file_id;
    rc->module = hash64(module, strlen(module));
    rc->module_is_file = idx_graph_names_module(g, module) == file_id;
    StrBuf t;
    sb_init(&t);
    if (!rc->module_is_file) reach_file(rc, file_id, 0);
    reach_prefix(g, rc, module, 0, &t);
    for (size_t i = 0; i < rc->n_queue && !rc->wild; i++) {
        rc->wild = set_has(&g->bind_files, (uint64_t)rc->queue[i]);
        int64_t depth = 0;
        i64map_get(&rc->files, rc->queue[i], &depth);
        size_t n = 0;
        char *const *v = idx_graph_names_stars(g, rc->queue[i], &n);
        for (size_t j = 0; j < n; j++)
            reach_prefix(g, rc, v[j], depth, &t);
    }
    sb_release(&t);
}

int idx_graph_names_may_reach(const GraphNames *g, GraphReach *rc, int64_t file_id,
                              const char *module, const char *name, int depth, int64_t *sure)
{
    *sure = 0;
    size_t len = strlen(name);
    uint64_t h = hash64(name, len);
    if (set_has(&g->module_ends, h)) return 1;
    size_t lo = 0, hi = g->n_defs;
    while (lo < hi) { /* the first symbol of the name's hash */
        size_t mid = lo + (hi - lo) / 2;
        if (g->defs[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == g->n_defs || g->defs[lo].h != h) return 0;
    if (!rc->file || rc->file != file_id || rc->module != hash64(module, strlen(module)))
        reach_walk(g, rc, file_id, module);
    if (rc->wild) return 1;
    size_t end = lo, n = 0, one = 0;
    while (end < g->n_defs && g->defs[end].h == h)
        end++;
    int64_t at;
    for (size_t i = lo; i < end; i++)
        if (i64map_get(&rc->prefixes, (int64_t)g->defs[i].prefix, &at) && at <= depth) {
            one = i;
            n++;
        }
    if (!n) return 0;
    /* one symbol on the way and no other so qualified (sorted, they are
     * its neighbours), asked from the module's own file: the walk ends
     * there, without the walk */
    if (n == 1 && rc->module_is_file &&
        (one == lo || g->defs[one - 1].prefix != g->defs[one].prefix) &&
        (one + 1 == end || g->defs[one + 1].prefix != g->defs[one].prefix))
        *sure = g->defs[one].chunk;
    return 1;
}

void idx_graph_reach_release(GraphReach *rc)
{
    i64map_release(&rc->files);
    i64map_release(&rc->prefixes);
    free(rc->queue);
    *rc = (GraphReach){0};
}
