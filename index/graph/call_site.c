/* call_site.c - the definition a call written at a place reaches, as the
 * call graph resolved it (graph.c, graph_types.c: the receiver's type, the
 * class's bases, imports), so that every door that asks "what does this
 * name at this line mean" gets the graph's answer, not a guess by name. */
#include "../store/store_int.h"

#include <stdlib.h>
#include <string.h>

#define CALL_SITE_SQL                                                                              \
    "SELECT r.name, e.dst, r.id, c.symbol FROM files f JOIN chunks c ON c.file_id = f.id "         \
    "JOIN refs r ON r.chunk_id = c.id JOIN edges e ON e.src = c.id "                               \
    "AND e.ref_id = r.id "                                                                         \
    "WHERE f.path = ?1 AND ?2 BETWEEN c.start_line AND c.end_line AND r.last = ?3 "                \
    "AND r.kind = ?4 ORDER BY r.id, e.rowid"

/* The same in the chunks a line's definition is written in (its class's
 * first chunk, the module's code): a Python decorator's call runs there
 * (index/chunk/lang/python.c). */
#define CALL_AROUND_SQL                                                                            \
    "SELECT r.name, e.dst, r.id, c.symbol FROM files f JOIN chunks c ON c.file_id = f.id "         \
    "JOIN refs r ON r.chunk_id = c.id JOIN edges e ON e.src = c.id "                               \
    "AND e.ref_id = r.id "                                                                         \
    "WHERE f.path = ?1 AND (c.kind = ?5 OR c.id IN (SELECT h.parent_id FROM chunks h WHERE "       \
    "h.file_id = f.id AND ?2 BETWEEN h.start_line AND h.end_line)) AND r.last = ?3 "               \
    "AND r.kind = ?4 ORDER BY r.id, e.rowid"

/* The member named ?3 of the class whose method holds path ?1's line ?2,
 * its own or the nearest one it inherits (the graph's INHERIT edges). */
#define SELF_MEMBER_SQL                                                                            \
    "WITH RECURSIVE cls(id) AS (SELECT c.parent_id FROM files f JOIN chunks c ON c.file_id = "     \
    "f.id WHERE f.path = ?1 AND ?2 BETWEEN c.start_line AND c.end_line AND c.parent_id != 0 "      \
    "ORDER BY c.start_line DESC LIMIT 1), anc(id, d) AS (SELECT id, 0 FROM cls UNION ALL "         \
    "SELECT e.dst, anc.d + 1 FROM edges e JOIN anc ON e.src = anc.id WHERE e.kind = ?4 "           \
    "AND anc.d < 8) SELECT c.id FROM anc JOIN chunks c ON c.parent_id = anc.id "                   \
    "WHERE c.name = ?3 AND c.win <= 1 ORDER BY anc.d, c.start_line LIMIT 1"

static CrErr self_member(IdxStore *st, const char *path, uint32_t line, const char *word,
                         int64_t *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, SELF_MEMBER_SQL, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "self member");
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, line);
    sqlite3_bind_text(s, 3, word, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, IDX_EDGE_INHERIT);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "self member");
}

/* Whether a reference's name is a typed receiver's form ("T().m", "super().m"). */
static int typed_form(const char *name)
{
    return strstr(name, "().") != NULL;
}

/* Whether a typed receiver's call ("T().a.m") is the chain's rest after
 * its first part ("x.a.m", "this.a.m": "a.m"). */
static int typed_rest(const char *name, const char *chain)
{
    const char *open = NULL, *dot = chain ? strchr(chain, '.') : NULL;
    for (const char *p = strstr(name, "()."); p; p = strstr(p + 1, "()."))
        open = p;
    return open && dot && !strcmp(open + 3, dot + 1);
}

/* Whether a reference's name is IDX_RECEIVER + the chain's rest at dot. */
static int same_on_self(const char *name, const char *dot)
{
    return dot && !strncmp(name, IDX_RECEIVER, IDX_RECEIVER_LEN) &&
           !strcmp(name + IDX_RECEIVER_LEN, dot);
}

/* Whether a reference's name is word qualified by a class around the
 * definition holding it (symbol): a bare call of a member, which the
 * chunker writes "Class.word" (rows with implicit_this). */
static int member_around(const char *name, const char *word, const char *symbol)
{
    size_t n = strlen(name), w = strlen(word);
    if (!symbol || n <= w + 1 || name[n - w - 1] != '.' || strcmp(name + n - w, word) != 0)
        return 0;
    size_t q = n - w - 1;
    return !strncmp(symbol, name, q) && symbol[q] == '.';
}

static CrErr call_target(IdxStore *st, const char *sql, const char *path, uint32_t line,
                         const char *word, const char *chain, int64_t *out, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "call site");
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, line);
    sqlite3_bind_text(s, 3, word, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 4, REF_CALL);
    sqlite3_bind_int(s, 5, IDX_KIND_MODULE);
    /* the call written as the chain at the cursor; else the one typed
     * receiver's call (the chain is rewritten "self.h.get" -> "Headers().get");
     * else the one target every such call reaches */
    int64_t exact = 0, typed = 0, any = 0, member = 0;
    /* on the object the method runs on (`this.run`): the dot after the
     * word, which the index writes as `self` */
    const char *self_at = chain && idx_chain_on_self(path, chain) ? strchr(chain, '.') : NULL;
    int typed_n = 0, rest_n = 0, any_same = 1, rc;
    int64_t last_ref = 0, rest = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(s, 0);
        int64_t dst = sqlite3_column_int64(s, 1), ref = sqlite3_column_int64(s, 2);
        /* a reference's first target: a call dispatched through an
         * interface reaches its declaration first, then implementations */
        if (!name || ref == last_ref) continue;
        last_ref = ref;
        if (chain && !exact && (!strcmp(name, chain) || same_on_self(name, self_at))) exact = dst;
        /* a bare call of the class's member (`LoadDyndeps(node, &ddf, err)`
         * in an overload of it) */
        if ((!chain || !strchr(chain, '.')) && !member &&
            member_around(name, word, (const char *)sqlite3_column_text(s, 3)))
            member = dst;
        if (typed_form(name) && dst != typed) {
            typed = dst;
            typed_n++;
        }
        /* (several typed calls of the name: the one written as the chain's
         * rest, `this.queryCache.clear` among `this.mutationCache.clear`) */
        if (typed_form(name) && dst != rest && typed_rest(name, chain)) {
            rest = dst;
            rest_n++;
        }
        if (any && any != dst) any_same = 0;
        if (!any) any = dst;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return idx_store_err(st, e, "call site");
    /* a bare name only as written: on a definition's own line the name is
     * no call, whatever calls of it the definition holds */
    int bare = !chain || !strchr(chain, '.');
    if (exact)
        *out = exact;
    else if (member)
        *out = member;
    else if (typed_n == 1 && !bare)
        *out = typed;
    else if (rest_n == 1 && !bare)
        *out = rest;
    else if (any_same && !bare)
        *out = any;
    return CR_OK;
}

CrErr idx_call_target(IdxStore *st, const char *path, uint32_t line, const char *word,
                      const char *chain, int64_t *out, ErrInfo *e)
{
    *out = 0;
    if (!path || !word || !word[0]) return CR_OK;
    CrErr rc = call_target(st, CALL_SITE_SQL, path, line, word, chain, out, e);
    if (!rc && !*out) rc = call_target(st, CALL_AROUND_SQL, path, line, word, chain, out, e);
    if (rc) return rc;
    /* `self.name` with no call resolved there (a property, an attribute):
     * the class's member, or the one it inherits */
    const char *self_at = chain && idx_chain_on_self(path, chain) ? strchr(chain, '.') : NULL;
    if (!*out && self_at && !strcmp(self_at + 1, word))
        return self_member(st, path, line, word, out, e);
    return CR_OK;
}
