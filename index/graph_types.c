/* graph_types.c - calls on receivers of a known type, as a row's chunker
 * writes them (lang/python_types.c): "T().m" is method m of an instance of
 * T, T read in the calling file's scope ("=T": a qualified name, a proxy
 * of the row's receiver_proxies); "super().m" is m as the enclosing class
 * inherits it. A receiver whose type is a library's (its name imported from
 * outside the workspace, or a builtin) calls no workspace method; one whose
 * type is no class the workspace defines resolves by the method's name
 * alone, as an untyped receiver does. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* A chunk's kind (IdxKind), or -1. */
static int chunk_kind(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_GET);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int kind = idx_graph_step(r, s) ? sqlite3_column_int(s, 10) : -1;
    sqlite3_reset(s);
    return kind;
}

/* A dotted expression resolved as a call written where ref is, by what the
 * name reaches only (never by its last part alone). */
static int64_t type_expr(Resolver *r, const RefRow *at, const char *expr)
{
    RefRow ref = *at;
    ref.id = ref.chunk_id = 0;
    ref.kind = REF_CALL;
    ref.name = (char *)expr;
    ref.strict = 1;
    return idx_graph_resolve_expr(r, &ref);
}

/* Member `name` that the class holding ref's symbol inherits, or 0. */
static int64_t enclosing_inherited(Resolver *r, const RefRow *at, const char *dot, const char *name)
{
    char *cls = xstrndup(at->symbol, (size_t)(dot - at->symbol));
    int64_t v = idx_graph_inherited_member(r, at->file_id, at->module, cls, name);
    free(cls);
    return v;
}

/* The chunk a type expression names, or 0 with *lib set when it is a
 * library's (or a builtin's) type. */
static int64_t type_of(Resolver *r, const RefRow *at, const char *type, int *lib, int depth)
{
    *lib = 0;
    const char *open = NULL;
    for (const char *p = strstr(type, "()."); p; p = strstr(p + 1, "()."))
        open = p;
    if (open && depth < 8) {
        /* a method of an instance: its class's member, the type unknown */
        char *inner = xstrndup(type, (size_t)(open - type));
        int64_t t = type_of(r, at, inner, lib, depth + 1);
        free(inner);
        if (*lib) return 0;
        const char *m = open + 3;
        if (!t || strchr(m, '.') || chunk_kind(r, t) != IDX_KIND_CLASS) return 0;
        return idx_graph_member(r, t, m);
    }
    if (type[0] == '=') {
        int64_t t = idx_graph_resolve_qualified(r, type + 1, 0);
        *lib = !t;
        return t;
    }
    int64_t t = type_expr(r, at, type);
    if (t) return t;
    size_t root = strcspn(type, ".");
    char *name = xstrndup(type, root);
    *lib = idx_graph_imported(r, at->file_id, type, root) || idx_graph_is_builtin(at->lang, name);
    free(name);
    return 0;
}

int idx_graph_typed(Resolver *r, const RefRow *at, int64_t *out)
{
    const char *name = at->name;
    *out = 0;
    if (at->kind != REF_CALL) return 0;
    if (!strncmp(name, "super().", 8)) {
        const char *m = name + 8, *dot = strrchr(at->symbol, '.');
        if (!*m || strchr(m, '.') || !dot) return 1;
        *out = enclosing_inherited(r, at, dot, m);
        return 1;
    }
    if (!strncmp(name, "__class__().", 12)) { /* `self.name` read: a method only */
        const char *m = name + 12, *dot = strrchr(at->symbol, '.');
        if (!*m || strchr(m, '.') || !dot) return 1;
        StrBuf q;
        sb_init(&q);
        if (at->module[0]) sb_addf(&q, "%s.", at->module);
        sb_add(&q, at->symbol, (size_t)(dot - at->symbol));
        sb_addf(&q, ".%s", m);
        int64_t v = idx_graph_resolve_qualified(r, q.buf, 0);
        sb_release(&q);
        if (!v) v = enclosing_inherited(r, at, dot, m);
        if (v && chunk_kind(r, v) == IDX_KIND_METHOD) *out = v;
        return 1;
    }
    const char *open = strrchr(name, '(');
    if (!open || strncmp(open, "().", 3) != 0) return 0;
    const char *m = open + 3;
    char *type = xstrndup(name, (size_t)(open - name));
    int lib = 0;
    int64_t t = type_of(r, at, type, &lib, 0);
    free(type);
    if (lib || strchr(m, '.')) return 1;
    if (t && chunk_kind(r, t) == IDX_KIND_CLASS)
        *out = idx_graph_member(r, t, m);
    else if (!idx_graph_builtin_method(at->lang, m))
        *out = idx_graph_unique_by_name(r, m);
    return 1;
}

#define ANCESTOR_METHODS                                                                           \
    "WITH RECURSIVE anc(id) AS (SELECT ?1 UNION SELECT ?2 UNION SELECT e.dst FROM edges e "        \
    "JOIN anc ON e.src = anc.id WHERE e.kind = ?3) "                                               \
    "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND kind = ?4 AND last IN "                   \
    "(SELECT c.name FROM chunks c WHERE c.parent_id IN anc AND c.parent_id != 0)"

CrErr idx_graph_types_any_resolved(IdxStore *st, int *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    *out = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM refs WHERE resolved = 1 AND kind = ?1 LIMIT 1",
                           -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "typed receivers");
    sqlite3_bind_int(s, 1, REF_CALL);
    CrErr rc = idx_store_step(st, s, out, e, "typed receivers");
    sqlite3_finalize(s);
    return rc;
}

CrErr idx_graph_types_mark(IdxStore *st, int64_t was, int64_t now, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, ANCESTOR_METHODS, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "typed receivers");
    sqlite3_bind_int64(s, 1, was);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int(s, 3, IDX_EDGE_INHERIT);
    sqlite3_bind_int(s, 4, REF_CALL);
    CrErr rc = idx_store_step_done(st, s, e, "typed receivers");
    sqlite3_finalize(s);
    return rc;
}
