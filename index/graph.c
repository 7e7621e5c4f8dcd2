/* graph.c - the passes that turn references marked dirty into edges
 * (graph_lookup.c finds what a name names, graph_member.c what a class
 * inherits or an interface dispatches to). */
#include "graph_int.h"

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
 * is a guess that names itself, not a call of itself. */
static int self_edge(const RefRow *row)
{
    if (row->kind == REF_EXPAND) return 1;
    if (row->kind != REF_CALL) return 0;
    const char *n = row->name;
    if (!strncmp(n, "self.", 5)) n += 5;
    return !strchr(n, '.') || !strcmp(n, row->symbol);
}

/* The chunk a reference's edge points at now (0: none). */
static int64_t old_dst(Resolver *r, int64_t ref_id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_EDGE_DST_OF_REF);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, ref_id);
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

/* One pass over the references marked dirty; *n_seen gets how many. */
static void resolve_pass(Resolver *r, size_t *n_seen, size_t *added)
{
    IdxStore *st = r->st;
    ErrInfo *e = r->e;
    RefRow *rows = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_REF_DIRTY_LIST);
    if (!s) goto out;
    /* bases first: a moved one marks calls its pass has not resolved yet
     * (they stay dirty) rather than ones it has (resolved twice) */
    sqlite3_bind_int(s, 1, REF_INHERIT);
    while (idx_graph_step(r, s)) {
        ARRAY_GROW(rows, n + 1, cap);
        RefRow *row = &rows[n++];
        row->id = sqlite3_column_int64(s, 0);
        row->file_id = sqlite3_column_int64(s, 1);
        row->chunk_id = sqlite3_column_int64(s, 2);
        row->kind = sqlite3_column_int(s, 3);
        row->name = idx_store_col_dup(s, 4);
        row->module = idx_store_col_dup(s, 5);
        row->symbol = idx_store_col_dup(s, 6);
        const char *path = (const char *)sqlite3_column_text(s, 7);
        row->lang = path ? idx_lang_for_path(path) : NULL;
        row->strict = 0;
    }
    sqlite3_reset(s);
    /* calls on typed receivers to mark when a base moves (none resolved yet: none) */
    int typed_calls = 0;
    if (n && r->rc == CR_OK) r->rc = idx_graph_types_any_resolved(st, &typed_calls, e);
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        RefRow *row = &rows[i];
        int64_t was = row->kind == REF_INHERIT ? old_dst(r, row->id) : 0;
        if (r->rc || (s = idx_graph_stmt(r, STMT_EDGE_DELETE_REF)) == NULL) break;
        sqlite3_bind_int64(s, 1, row->id);
        if ((r->rc = idx_store_step_done(st, s, e, "edges"))) break;
        int64_t dst[DISPATCH_MAX];
        size_t nd = 0;
        if (row->kind == REF_IMPORT)
            dst[0] = idx_graph_resolve_qualified(r, row->name, 0);
        else if (row->kind == REF_EXPAND && !strcmp(row->name, IDX_REF_MACRO_MARK))
            dst[0] = row->chunk_id; /* the macro's mark */
        else
            dst[0] = idx_graph_resolve_expr(r, row);
        if (!dst[0] && row->kind == REF_CALL && !r->rc)
            dst[0] = idx_graph_resolve_inherited(r, row);
        if (dst[0])
            nd = 1;
        else if (!r->rc)
            nd = idx_graph_dispatch(r, row, dst);
        idx_graph_memo_end_ref(r);
        /* a lookup that failed resolved nothing: the ref stays dirty */
        if (r->rc) break;
        for (size_t k = 0; k < nd && !r->rc; k++) {
            if (dst[k] == row->chunk_id && !self_edge(row)) continue;
            if ((s = idx_graph_stmt(r, STMT_EDGE_INSERT)) == NULL) break;
            sqlite3_bind_int64(s, 1, row->chunk_id);
            sqlite3_bind_int64(s, 2, dst[k]);
            sqlite3_bind_int(s, 3, (int)edge_kind(row->kind));
            sqlite3_bind_int64(s, 4, row->id);
            if ((r->rc = idx_store_step_done(st, s, e, "edge"))) break;
            (*added)++;
        }
        if (r->rc) break;
        if ((s = idx_graph_stmt(r, STMT_REF_RESOLVED)) == NULL) break;
        sqlite3_bind_int64(s, 1, row->id);
        if ((r->rc = idx_store_step_done(st, s, e, "ref"))) break;
        if (row->kind == REF_INHERIT && base_moved(r, was, nd ? dst[0] : 0) && !r->rc) {
            r->rc = idx_facts_mark_subclasses(st, row->chunk_id, e);
            if (!r->rc && typed_calls) r->rc = idx_graph_types_mark(st, was, nd ? dst[0] : 0, e);
        }
    }
out:
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].module);
        free(rows[i].symbol);
    }
    free(rows);
    *n_seen = n;
}

/* ---------------------------------------------------------------- for graph_types.c */

static int64_t ops_expr(Resolver *r, const IdxRefAt *at, const char *expr)
{
    RefRow ref = {
        0, at->file_id, 0, REF_CALL, (char *)expr, (char *)at->module, (char *)at->symbol, at->lang,
        1};
    return idx_graph_resolve_expr(r, &ref);
}

static int64_t ops_qualified(Resolver *r, const char *q)
{
    return idx_graph_resolve_qualified(r, q, 0);
}

static int64_t ops_unique(Resolver *r, const char *name)
{
    return idx_graph_unique_by_name(r, name);
}

static int ops_imported(Resolver *r, int64_t file_id, const char *alias, size_t len)
{
    char *bound = idx_graph_import_binding(r, file_id, alias, len);
    int found = bound != NULL;
    free(bound);
    return found;
}

static int ops_chunk_kind(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_GET);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int kind = idx_graph_step(r, s) ? sqlite3_column_int(s, 10) : -1;
    sqlite3_reset(s);
    return kind;
}

static int64_t ops_inherited(Resolver *r, const IdxRefAt *at, const char *cls, const char *name)
{
    return idx_graph_inherited_member(r, at->file_id, at->module, cls, name, 0);
}

static int64_t ops_member(Resolver *r, int64_t cls, const char *name)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_QUAL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, cls);
    if (!idx_graph_step(r, s)) {
        sqlite3_reset(s);
        return 0;
    }
    int64_t file = sqlite3_column_int64(s, 0);
    char *mod = idx_store_col_dup(s, 1), *sym = idx_store_col_dup(s, 2);
    sqlite3_reset(s);
    StrBuf q;
    sb_init(&q);
    if (mod[0]) sb_addf(&q, "%s.", mod);
    sb_addf(&q, "%s.%s", sym, name);
    int64_t v = idx_graph_resolve_qualified(r, q.buf, 0);
    if (!v) v = idx_graph_inherited_member(r, file, mod, sym, name, 0);
    sb_release(&q);
    free(mod);
    free(sym);
    return v;
}

static const IdxGraphOps graph_ops = {ops_expr,   ops_qualified, ops_member,    ops_inherited,
                                      ops_unique, ops_imported,  ops_chunk_kind};

CrErr idx_graph_resolve_dirty(IdxStore *st, size_t *out_edges, ErrInfo *e)
{
    Resolver r = {st, {0}, e, CR_OK, 0, NULL, 0, 0, {0}, NULL, 0, 0, &graph_ops};
    size_t added = 0, n = 0;
    strmap_init(&r.memo);
    strmap_init(&r.top);
    /* Passes until nothing is dirty: a base that moved marks the calls of
     * its subclasses, resolved again in the next pass (each class's calls
     * at most once per moved base, so this ends). */
    for (int pass = 0; r.rc == CR_OK; pass++) {
        resolve_pass(&r, &n, &added);
        if (!n) break;
        /* the memo holds answers of the tables as they were */
        strmap_release(&r.memo);
        strmap_init(&r.memo);
        idx_graph_tops_clear(&r);
    }
    idx_graph_tops_clear(&r);
    strmap_release(&r.top);
    free(r.tops);
    idx_graph_memo_end_ref(&r);
    free(r.volatile_keys);
    strmap_release(&r.memo);
    if (r.rc == CR_OK) st->classes_moved = 0;
    if (out_edges) *out_edges = added;
    return r.rc;
}
