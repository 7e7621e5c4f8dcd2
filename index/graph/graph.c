/* graph.c - the passes that turn references marked dirty into edges
 * (graph_lookup.c finds what a name names, graph_member.c what a class
 * inherits or an interface dispatches to, graph_types.c what a call on a
 * typed receiver reaches). */
#include "graph_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static IdxEdgeKind edge_kind(int ref_kind)
{
    switch ((RefKind)ref_kind) {
    case REF_IMPORT:
        return IDX_EDGE_IMPORT;
    case REF_INHERIT:
        return IDX_EDGE_INHERIT;
    case REF_RAISE:
        return IDX_EDGE_RAISE;
    case REF_TYPE:
        return IDX_EDGE_TYPE;
    case REF_VALUE:
    case REF_STORE:
        return IDX_EDGE_REFERENCE;
    case REF_EXPAND:
        return IDX_EDGE_EXPAND;
    case REF_CALL:
        break;
    }
    return IDX_EDGE_CALL;
}

/* Whether a reference that resolved to the chunk it is written in is an
 * edge: a macro's mark, and a call written without a receiver (`f()`,
 * `self.f()`, or a bare member name made `Class.f`), which is recursion. A
 * call on another object (`out.write()` in `write`) found by its name alone
 * is a guess that names itself, not a call of itself; one on an object typed
 * as the method's own class is a call. */
static int self_edge(const RefRow *row)
{
    if (row->kind == REF_EXPAND) return 1;
    if (row->kind != REF_CALL) return 0;
    const char *n = row->name;
    if (!strncmp(n, IDX_RECEIVER ".", IDX_RECEIVER_LEN + 1)) n += IDX_RECEIVER_LEN + 1;
    if (!strchr(n, '.') || !strcmp(n, row->symbol)) return 1;
    /* another instance of the method's own class, typed (`self.parent.find()`
     * in `find`, parent a Symbols: "Symbols().find") */
    const char *dot = strrchr(row->symbol, '.');
    size_t cls = dot ? (size_t)(dot - row->symbol) : 0;
    return cls && !strncmp(n, row->symbol, cls) && !strncmp(n + cls, "().", 3) &&
           !strcmp(n + cls + 3, dot + 1);
}

/* The chunk a reference's edge points at now (0: none). */
static int64_t old_dst(Resolver *r, const RefRow *row)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_EDGE_DST_OF_REF);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, row->id);
    sqlite3_bind_int64(s, 2, row->chunk_id);
    int64_t v = idx_graph_step(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

static int chunk_exists(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_EXISTS);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, id);
    int v = idx_graph_step(r, s);
    sqlite3_reset(s);
    return v;
}

/* Whether a class's base moving from was to now can change what calls in
 * it and its subclasses find by inheritance. When some written file changed
 * its classes, bases or imports (classes_moved), any move can; otherwise a
 * base that resolved to a class still there and now resolves elsewhere (a
 * re-export changed). A base whose file was rewritten resolving to the same
 * class again (the old chunk gone), and a class rewritten with the same
 * bases (its references new), change nothing. */
static int base_moved(Resolver *r, int64_t was, int64_t now)
{
    if (was == now) return 0;
    if (r->st->classes_moved) return 1;
    return was && chunk_exists(r, was);
}

/* Dirty references are read and resolved a page at a time: a cold build of
 * millions of references holds one page of rows, and a memo that is forgotten
 * after each page (its answers depend on the tables alone, never on which
 * references were resolved before), so memory does not grow with the tree. */
#define RESOLVE_PAGE 32768

/* The chunk and file a page's references are read in (dirty_page): a
 * file's references are neighbours, and a chunk's, so each row is read once
 * per run of them rather than joined to every reference (3,000
 * instructions a reference). */
typedef struct PageAt {
    int64_t chunk_id, file_id, file_seen;
    char *symbol, *module;
    const IdxLang *lang;
    int ok; /* the chunk and its file are there (a reference of neither: skipped) */
} PageAt;

static void page_at_release(PageAt *at)
{
    free(at->symbol);
    free(at->module);
}

static void page_at(Resolver *r, PageAt *at, int64_t chunk_id)
{
    if (at->chunk_id == chunk_id && chunk_id) return;
    at->chunk_id = chunk_id;
    at->ok = 0;
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_FILE_SYMBOL);
    if (!s) return;
    sqlite3_bind_int64(s, 1, chunk_id);
    if (!idx_graph_step(r, s)) {
        sqlite3_reset(s);
        return;
    }
    int64_t file_id = sqlite3_column_int64(s, 0);
    free(at->symbol);
    at->symbol = idx_store_col_dup(s, 1);
    sqlite3_reset(s);
    if (at->file_seen && at->file_id == file_id) {
        at->ok = at->module != NULL;
        return;
    }
    at->file_id = file_id;
    at->file_seen = 1;
    free(at->module);
    at->module = NULL;
    if ((s = idx_graph_stmt(r, STMT_FILE_MODULE_PATH)) == NULL) return;
    sqlite3_bind_int64(s, 1, file_id);
    if (idx_graph_step(r, s)) {
        at->module = idx_store_col_dup(s, 0);
        const char *path = (const char *)sqlite3_column_text(s, 1);
        at->lang = path ? idx_lang_for_file(&r->st->lang_pick, path) : NULL;
        at->ok = 1;
    }
    sqlite3_reset(s);
}

/* Reads the next page of dirty references of one group (bases and stores,
 * or the rest) with an id above after; born: every reference of the group
 * (a cold build's calls, written resolved). */
static size_t dirty_page(Resolver *r, int bases, int born, int64_t after, RefRow **rows,
                         size_t *cap)
{
    size_t n = 0;
    sqlite3_stmt *s = idx_graph_stmt(r, born ? STMT_REF_BORN_LIST : STMT_REF_DIRTY_LIST);
    if (!s) return 0;
    sqlite3_bind_int(s, 1, REF_INHERIT);
    sqlite3_bind_int(s, 2, bases);
    sqlite3_bind_int64(s, 3, after);
    /* no LIMIT: a reference of no chunk is skipped, not counted */
    sqlite3_bind_int(s, 4, -1);
    PageAt at = {0};
    while (n < RESOLVE_PAGE && idx_graph_step(r, s)) {
        page_at(r, &at, sqlite3_column_int64(s, 1));
        if (!at.ok) continue;
        ARRAY_GROW(*rows, n + 1, *cap);
        RefRow *row = &(*rows)[n++];
        row->id = sqlite3_column_int64(s, 0);
        row->file_id = at.file_id;
        row->chunk_id = at.chunk_id;
        row->kind = sqlite3_column_int(s, 2);
        row->name = idx_store_col_dup(s, 3);
        row->module = xstrdup(at.module);
        row->symbol = xstrdup(at.symbol);
        row->lang = at.lang;
        row->strict = 0;
        int64_t argc = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 4);
        row->argc = argc < 0 ? -1 : (int)(argc & ((1 << IDX_ARGC_BITS) - 1));
        row->argt = argc < 0 ? 0 : (uint64_t)argc >> IDX_ARGC_BITS;
    }
    sqlite3_reset(s);
    page_at_release(&at);
    return n;
}

/* How a pass writes: typed_calls, some call on a typed receiver is
 * resolved (to mark when a base moves); fresh, no reference had an edge
 * when the pass began (a cold build): nothing to delete or compare; born,
 * the calls are a cold build's, written resolved (refs_born): every one is
 * read, and no page is marked. */
typedef struct PassMode {
    int typed_calls, fresh, born;
    int64_t new_from;   /* references from this id had no edge when the pass began (0: none) */
    const I64Map *kept; /* but these, written with their old edges (update/keep.c) */
} PassMode;

/* Whether a reference may have edges to delete or compare. */
static int may_have_edges(const PassMode *m, const RefRow *row)
{
    return !m->fresh &&
           !(m->new_from && row->id >= m->new_from && !i64map_get(m->kept, row->id, NULL));
}

/* Notes for the fan-in the edges of a reference about to be deleted. */
static CrErr note_old_edges(Resolver *r, const RefRow *row)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_EDGES_OF_REF);
    if (!s) return r->rc;
    sqlite3_bind_int64(s, 1, row->id);
    sqlite3_bind_int64(s, 2, row->chunk_id);
    CrErr rc = CR_OK;
    while (!rc && idx_graph_step(r, s))
        rc = idx_fanin_note_edge(r->st, row->file_id, sqlite3_column_int64(s, 0),
                                 sqlite3_column_int(s, 1), -1, r->e);
    sqlite3_reset(s);
    return rc ? rc : r->rc;
}

/* Writes one reference's edges (dst[0..nd), as idx_graph_lookup_row found
 * them) in place of its old ones; its page marks it resolved. */
static void apply_row(Resolver *r, const RefRow *row, const int64_t *dst, size_t nd,
                      const PassMode *m, size_t *added)
{
    IdxStore *st = r->st;
    ErrInfo *e = r->e;
    sqlite3_stmt *s;
    int old = may_have_edges(m, row);
    int64_t was = row->kind == REF_INHERIT && old ? old_dst(r, row) : 0;
    if (r->rc) return;
    if (old) {
        if (st->fanin_on && (r->rc = note_old_edges(r, row))) return;
        if ((s = idx_graph_stmt(r, STMT_EDGE_DELETE_REF)) == NULL) return;
        sqlite3_bind_int64(s, 1, row->id);
        sqlite3_bind_int64(s, 2, row->chunk_id);
        if ((r->rc = idx_store_step_done(st, s, e, "edges"))) return;
    }
    for (size_t k = 0; k < nd && !r->rc; k++) {
        if (dst[k] == row->chunk_id && !self_edge(row)) continue;
        if ((s = idx_graph_stmt(r, STMT_EDGE_INSERT)) == NULL) return;
        sqlite3_bind_int64(s, 1, row->chunk_id);
        sqlite3_bind_int64(s, 2, dst[k]);
        sqlite3_bind_int(s, 3, (int)edge_kind(row->kind));
        sqlite3_bind_int64(s, 4, row->id);
        if ((r->rc = idx_store_step_done(st, s, e, "edge"))) return;
        if ((r->rc = idx_fanin_note_edge(st, row->file_id, dst[k], edge_kind(row->kind), 1, e)))
            return;
        (*added)++;
    }
    /* a store resolved again (its function's definitions or its file
     * changed): the calls through its field may reach another function */
    if (row->kind == REF_STORE && !m->fresh && !r->rc)
        r->rc = idx_graph_store_mark(st, row->name, strcspn(row->name, "."), e);
    if (row->kind == REF_INHERIT && base_moved(r, was, nd ? dst[0] : 0) && !r->rc) {
        r->rc = idx_facts_mark_subclasses(st, row->chunk_id, e);
        if (!r->rc && m->typed_calls) r->rc = idx_graph_types_mark(st, was, nd ? dst[0] : 0, e);
    }
}

/* Marks the rows of a page resolved, by one statement: the dirty refs of
 * its group between its first and last id are its rows (a moved base marks
 * calls, never bases, dirty; so does a store resolved again). */
static void page_resolved(Resolver *r, int bases, const RefRow *rows, size_t n)
{
    sqlite3_stmt *s = NULL;
    if (!n || r->rc) return;
    if (sqlite3_prepare_v2(r->st->db,
                           "UPDATE refs SET resolved = 1 WHERE id BETWEEN ?1 AND ?2 "
                           "AND resolved = 0 AND (kind IN (?3, " IDX_REF_STORE_SQL ")) = ?4",
                           -1, &s, NULL) != SQLITE_OK) {
        r->rc = idx_store_err(r->st, r->e, "refs");
        return;
    }
    sqlite3_bind_int64(s, 1, rows[0].id);
    sqlite3_bind_int64(s, 2, rows[n - 1].id);
    sqlite3_bind_int(s, 3, REF_INHERIT);
    sqlite3_bind_int(s, 4, bases);
    r->rc = idx_store_step_done(r->st, s, r->e, "refs");
    sqlite3_finalize(s);
}

/* Cold builds write their calls resolved (store_int.h's refs_born): a
 * resolution that starts with no edge reads every call anyway, and marking
 * each resolved after cost a cold build an UPDATE per row (SQLite rewrites
 * the row: 3,800 instructions each, 0.16 G of Django's 11 G). Meta
 * "refs_born" (the first id written so) stays until the resolution that
 * reads them commits; any other resolution finds it and marks those calls
 * unresolved first (a build stopped half way, or one whose pass is not
 * fresh). */
int idx_graph_born_kind(int kind)
{
    return kind != REF_INHERIT && kind != REF_STORE;
}

CrErr idx_graph_born_begin(IdxStore *st, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_REF_NEXT_ID, e);
    if (!s) return CR_EDB;
    if (sqlite3_step(s) != SQLITE_ROW) return idx_store_err(st, e, "refs");
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)sqlite3_column_int64(s, 0));
    sqlite3_reset(s);
    CrErr rc = idx_store_meta_put(st, "refs_born", v, e);
    /* the bases and stores, written unresolved, are a few: found by
     * refs_dirty rather than by a scan of every reference (and the index
     * is not made by one after) */
    if (!rc) rc = idx_store_dirty_index(st, e);
    st->refs_born = rc == CR_OK;
    return rc;
}

/* Runs sql on refs with ?1 bound to REF_INHERIT and ?2 to from. */
static void born_exec(Resolver *r, const char *sql, int64_t from)
{
    sqlite3_stmt *s = NULL;
    if (r->rc) return;
    if (sqlite3_prepare_v2(r->st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        r->rc = idx_store_err(r->st, r->e, "refs");
        return;
    }
    sqlite3_bind_int(s, 1, REF_INHERIT);
    if (sqlite3_bind_parameter_count(s) > 1) sqlite3_bind_int64(s, 2, from);
    r->rc = idx_store_step_done(r->st, s, r->e, "refs");
    sqlite3_finalize(s);
    if (!r->rc) r->rc = idx_store_exec(r->st, "DELETE FROM meta WHERE key = 'refs_born'", r->e);
}

/* The calls a cold build wrote resolved, marked unresolved (meta
 * "refs_born"; none: nothing done). */
static void born_undo(Resolver *r)
{
    char v[32];
    if (r->rc) return;
    CrErr rc = idx_store_meta_get(r->st, "refs_born", v, sizeof v, r->e);
    if (rc == CR_ENOENT) return;
    if (rc) {
        r->rc = rc;
        return;
    }
    born_exec(r,
              "UPDATE refs SET resolved = 0 WHERE id >= ?2 AND resolved = 1 "
              "AND (kind IN (?1, " IDX_REF_STORE_SQL ")) = 0",
              strtoll(v, NULL, 10));
}

/* After a born pass: the calls some write marked unresolved while it ran
 * (a file read again, bases moved), all of which it read, marked resolved
 * again (by refs_dirty, made by now: the few there are). */
static void born_end(Resolver *r)
{
    born_exec(r,
              "UPDATE refs SET resolved = 1 WHERE resolved = 0 "
              "AND (kind IN (?1, " IDX_REF_STORE_SQL ")) = 0",
              0);
}

/* Whether no reference has an edge (PassMode.fresh). */
static int no_ref_edges(Resolver *r)
{
    sqlite3_stmt *s = NULL;
    int none = 0;
    if (r->rc) return 0;
    if (sqlite3_prepare_v2(r->st->db, "SELECT 1 FROM edges WHERE ref_id > 0 LIMIT 1", -1, &s,
                           NULL) != SQLITE_OK) {
        r->rc = idx_store_err(r->st, r->e, "edges");
        return 0;
    }
    int row = 0;
    r->rc = idx_store_step(r->st, s, &row, r->e, "edges");
    none = !r->rc && !row;
    sqlite3_finalize(s);
    return none;
}

static void rows_free(RefRow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].module);
        free(rows[i].symbol);
    }
}

/* Resolves one page of references, in id order: looked up here, or on
 * par's threads while this thread writes the edges of the rows they are
 * done with. */
static void resolve_page(Resolver *r, GraphPar *par, int bases, const RefRow *rows, size_t n,
                         const PassMode *m, size_t *added)
{
    int64_t buf[DISPATCH_MAX];
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        const int64_t *dst = buf;
        size_t nd;
        if (par)
            r->rc = idx_graph_par_take(par, i, &dst, &nd, r->e);
        else
            nd = idx_graph_lookup_row(r, &rows[i], buf);
        /* a lookup that failed resolved nothing: the ref stays dirty */
        if (r->rc == CR_OK) apply_row(r, &rows[i], dst, nd, m, added);
    }
    if (par) idx_graph_par_finish(par);
    if (!m->born || bases) page_resolved(r, bases, rows, n);
}

/* One pass over the references marked dirty; *n_seen gets how many. Bases
 * and stores first: a moved base or a store resolved again marks calls its
 * pass has not resolved yet (they stay dirty) rather than ones it has
 * (resolved twice). The next page of a group is read before this one is
 * written: writing a page marks calls alone, never rows of its own group. */
static void resolve_pass(Resolver *r, GraphPar *par, int64_t new_from, int born, size_t *n_seen,
                         size_t *added)
{
    RefRow *rows[2] = {NULL, NULL};
    size_t cap[2] = {0, 0};
    *n_seen = 0;
    PassMode m = {0, 0, 0, new_from, &r->st->refs_kept};
    m.fresh = no_ref_edges(r);
    /* a cold build's calls, written resolved, read as such only by a pass
     * that starts with no edge over the name tables (bulk, below) */
    m.born = born && m.fresh && r->names;
    if (!m.born) born_undo(r);
    /* calls on typed receivers to mark when a base moves (none resolved
     * yet, a cold build's: none) */
    if (!m.born && !r->rc) r->rc = idx_graph_types_any_resolved(r->st, &m.typed_calls, r->e);
    for (int bases = 1; bases >= 0 && r->rc == CR_OK; bases--) {
        /* Many files written and no edge yet (a cold build): the calls
         * write millions of edges and resolved marks, which no lookup and
         * no write of theirs reads back; the indexes over them are made
         * after, each by one sort (a scan of refs: not for a small update
         * of an index that happens to have no edge). */
        int bulk = !bases && m.fresh && r->names;
        int born_group = m.born && !bases;
        /* (a born pass marks no call: refs_dirty stays) */
        if (bulk) r->rc = idx_store_resolve_indexes(r->st, 0, born_group, r->e);
        int cur = 0;
        size_t n = dirty_page(r, bases, born_group, 0, &rows[cur], &cap[cur]);
        for (;;) {
            if (par) idx_graph_par_post(par, rows[cur], n);
            size_t n_next = 0;
            if (n == RESOLVE_PAGE && r->rc == CR_OK)
                n_next =
                    dirty_page(r, bases, born_group, rows[cur][n - 1].id, &rows[!cur], &cap[!cur]);
            resolve_page(r, par, bases, rows[cur], n, &m, added);
            rows_free(rows[cur], n);
            *n_seen += n;
            if (n < RESOLVE_PAGE || r->rc) {
                rows_free(rows[!cur], n_next);
                break;
            }
            idx_graph_memo_forget(r);
            cur = !cur;
            n = n_next;
        }
        if (bulk && r->rc == CR_OK) {
            double t = now_ms();
            r->rc = idx_store_resolve_indexes(r->st, 1, 0, r->e);
            log_msg(LOG_DEBUG, "resolve: edges and refs_dirty indexed in %.0f ms", now_ms() - t);
        }
        if (born_group) born_end(r);
    }
    free(rows[0]);
    free(rows[1]);
}

static CrErr resolve_dirty(IdxStore *st, GraphPar *par, const GraphNames *names, size_t *out_edges,
                           ErrInfo *e)
{
    Resolver r;
    size_t added = 0, n = 0;
    idx_graph_resolver_init(&r, st, e);
    r.names = names;
    /* the references this transaction wrote, unless another connection
     * wrote since (it may have resolved them); edges written from here on
     * are this resolution's, so a later pass deletes them */
    int64_t new_from = st->refs_new_from;
    if (new_from && idx_store_data_version(st) != st->refs_new_version) new_from = 0;
    st->refs_new_from = 0;
    /* Passes until nothing is dirty: a base that moved marks the calls of
     * its subclasses, resolved again in the next pass (each class's calls
     * at most once per moved base, so this ends). */
    int born = st->refs_born;
    st->refs_born = 0;
    for (int pass = 0; r.rc == CR_OK; pass++) {
        resolve_pass(&r, par, pass ? 0 : new_from, born && !pass, &n, &added);
        if (!n) break;
        /* the memo holds answers of the tables as they were */
        idx_graph_memo_forget(&r);
    }
    CrErr rc = r.rc;
    idx_graph_resolver_release(&r);
    i64map_release(&st->refs_kept);
    if (rc == CR_OK) st->classes_moved = 0;
    if (out_edges) *out_edges = added;
    return rc;
}

CrErr idx_graph_resolve_dirty(IdxStore *st, size_t *out_edges, ErrInfo *e)
{
    return resolve_dirty(st, NULL, NULL, out_edges, e);
}

CrErr idx_graph_resolve_dirty_par(IdxStore *st, size_t *out_edges, ErrInfo *e)
{
    /* many references: what the tables hold is read once, not probed
     * per name (the tables a lookup reads do not change while it runs) */
    GraphNames *names = NULL;
    double t = now_ms();
    CrErr rc = idx_graph_names_load(st, &names, e);
    if (rc) return rc;
    log_msg(LOG_DEBUG, "resolve: names read in %.0f ms", now_ms() - t);
    GraphPar *par = st->threads > 1 ? idx_graph_par_start(st, st->threads, names) : NULL;
    rc = resolve_dirty(st, par, names, out_edges, e);
    idx_graph_par_stop(par);
    idx_graph_names_free(names);
    return rc;
}
