/* graph_lookup.c - what a reference names: lookups in SQLite through
 * prepared statements, through import bindings and star imports; a
 * per-pass memo keeps repeated names (the same helper called from many
 * places) cheap. */
#include "graph_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Memo marks: a lookup in progress (an import cycle meets it), one not
 * known, and answers that depended on where a cycle was entered (or on the
 * depth asked at): those hold while one reference resolves and are then
 * forgotten, so that every reference resolves the same whatever was resolved
 * before it (an update equals a fresh build). */
#define MEMO_BUSY (-1)
#define MEMO_UNCACHED (-2)
/* An answer that holds at any depth is kept with its height (how far below
 * it the walk went: it holds only where that stays within MAX_DEPTH); a
 * volatile one with the depth it was found at (it holds there and deeper,
 * for the current reference: nearer, the walk may reach more). */
#define MAX_DEPTH 6
#define MEMO_CLEAN(v, h) ((v)*8 + (h))
#define MEMO_VOLATILE(v, d) (-((v)*8 + (d)) - 3)

/* Forgets the answers that held for one reference. */
void idx_graph_memo_end_ref(Resolver *r)
{
    for (size_t i = 0; i < r->n_volatile; i++) {
        strmap_put(&r->memo, r->volatile_keys[i], MEMO_UNCACHED);
        free(r->volatile_keys[i]);
    }
    r->n_volatile = 0;
    r->top_at = 0;
}

/* Typed calls ask the same thing again and again (a member of a class, the
 * class of an attribute: each call on a receiver of that class). Such an
 * answer is kept in the memo, under a key no qualified name holds, when no
 * lookup on its way was cut short or gave an answer that holds for the
 * current reference only: it is the walk's answer wherever no such answer
 * is held (no qualified name's walk asks it, so it depends on where it is
 * asked from in no other way), and it is read only there; it is forgotten
 * with the rest of the memo. */
int idx_graph_memo_held(Resolver *r, GraphMemo *m, int64_t *v, const char *fmt, ...)
{
    va_list ap;
    sb_init(&m->key);
    va_start(ap, fmt);
    sb_vaddf(&m->key, fmt, ap);
    va_end(ap);
    if (!r->n_volatile && strmap_get(&r->memo, m->key.buf, v)) {
        sb_release(&m->key);
        return 1;
    }
    m->cuts = r->cuts;
    m->n_volatile = r->n_volatile;
    return 0;
}

int64_t idx_graph_memo_keep(Resolver *r, GraphMemo *m, int64_t v)
{
    if (r->rc == CR_OK && r->cuts == m->cuts && r->n_volatile == m->n_volatile)
        strmap_put(&r->memo, m->key.buf, v);
    sb_release(&m->key);
    return v;
}

/* One step of a lookup: 1 for a row. A failed step is remembered in r->rc
 * (the pass stops), never taken for "no such name". */
int idx_graph_step(Resolver *r, sqlite3_stmt *s)
{
    int row = 0;
    CrErr rc = idx_store_step(r->st, s, &row, r->e, "graph lookup");
    if (rc && r->rc == CR_OK) r->rc = rc;
    return row;
}

/* A prepared statement, or NULL with the pass stopped (r->rc). */
sqlite3_stmt *idx_graph_stmt(Resolver *r, StmtId id)
{
    sqlite3_stmt *s = idx_store_stmt(r->st, id, r->e);
    if (!s && r->rc == CR_OK) r->rc = CR_EDB;
    return s;
}

/* The first column of the first row of statement id bound with text (and num). */
static int64_t idx_graph_first_id(Resolver *r, StmtId id, const char *text, int64_t num,
                                  int use_num)
{
    sqlite3_stmt *s = idx_graph_stmt(r, id);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
    if (use_num) sqlite3_bind_int64(s, 2, num);
    int64_t v = idx_graph_step(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

static int64_t module_file(Resolver *r, const char *module)
{
    if (r->names) return idx_graph_names_module(r->names, module);
    int64_t v;
    if (strmap_get(&r->module_ids, module, &v)) return v;
    v = idx_graph_first_id(r, STMT_FILE_BY_MODULE, module, 0, 0);
    if (r->rc == CR_OK) strmap_put(&r->module_ids, module, v);
    return v;
}

void idx_graph_imports_forget(Resolver *r)
{
    for (size_t i = 0; i < r->n_file_imps; i++) {
        struct FileImports *f = &r->file_imps[i];
        idx_graph_free_strv(f->bind_alias, f->n_bind);
        idx_graph_free_strv(f->bind_target, f->n_bind);
        idx_graph_free_strv(f->star, f->n_star);
    }
    free(r->file_imps);
    r->file_imps = NULL;
    r->n_file_imps = r->cap_file_imps = 0;
    i64map_release(&r->imps_of);
    i64map_init(&r->imps_of);
    strmap_release(&r->module_ids);
    strmap_init(&r->module_ids);
}

/* A file's imports (no name tables), read at the first ask; NULL when the
 * read failed (r->rc). Borrowed: valid until idx_graph_imports_forget (the
 * arrays inside; the struct itself moves when another file is read). */
static const struct FileImports *file_imports(Resolver *r, int64_t file_id)
{
    int64_t at;
    if (i64map_get(&r->imps_of, file_id, &at)) return &r->file_imps[at - 1];
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_IMPORTS_OF_FILE);
    if (!s) return NULL;
    struct FileImports f = {0};
    size_t cap_bind = 0, cap_star = 0;
    sqlite3_bind_int64(s, 1, file_id);
    while (idx_graph_step(r, s)) {
        const char *alias = (const char *)sqlite3_column_text(s, 0);
        const char *target = (const char *)sqlite3_column_text(s, 1);
        if (!alias || !target) continue;
        if (!strcmp(alias, "*")) {
            ARRAY_GROW(f.star, f.n_star + 1, cap_star);
            f.star[f.n_star++] = xstrdup(target);
        } else if (!f.n_bind || strcmp(f.bind_alias[f.n_bind - 1], alias) != 0) {
            /* rows by alias, then rowid: the first of each is IMPORT_GET's */
            ARRAY_GROW(f.bind_alias, f.n_bind + 1, cap_bind);
            f.bind_target = xrealloc(f.bind_target, cap_bind * sizeof *f.bind_target);
            f.bind_alias[f.n_bind] = xstrdup(alias);
            f.bind_target[f.n_bind++] = xstrdup(target);
        }
    }
    sqlite3_reset(s);
    ARRAY_GROW(r->file_imps, r->n_file_imps + 1, r->cap_file_imps);
    r->file_imps[r->n_file_imps++] = f;
    i64map_put(&r->imps_of, file_id, (int64_t)r->n_file_imps);
    return r->rc == CR_OK ? &r->file_imps[r->n_file_imps - 1] : NULL;
}

int64_t idx_graph_symbol_by_qual(Resolver *r, const char *q)
{
    if (r->names && !idx_graph_names_may_qual(r->names, q)) return 0;
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_SYMBOL_BY_QUAL);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, q, -1, SQLITE_STATIC);
    int64_t v;
    CrErr rc = idx_store_first_placed(r->st, s, &v, r->e);
    if (rc && r->rc == CR_OK) r->rc = rc;
    return v;
}

static int64_t module_chunk(Resolver *r, int64_t file_id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_FIRST_OF_FILE);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, file_id);
    int64_t v = idx_graph_step(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

/* The target a file binds a local name to, or NULL. Caller frees. */
static char *import_binding(Resolver *r, int64_t file_id, const char *alias, size_t len)
{
    if (r->names && !idx_graph_names_may_bind(r->names, file_id, alias, len)) return NULL;
    if (!r->names) {
        const struct FileImports *f = file_imports(r, file_id);
        for (size_t i = 0; f && i < f->n_bind; i++)
            if (!strncmp(f->bind_alias[i], alias, len) && !f->bind_alias[i][len])
                return xstrdup(f->bind_target[i]);
        return NULL;
    }
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_IMPORT_GET);
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_text(s, 2, alias, (int)len, SQLITE_STATIC);
    char *v = NULL;
    if (idx_graph_step(r, s)) v = xstrdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return v;
}

/* The first column of every row of a bound statement, which is reset.
 * Caller frees each and the array. */
char **idx_graph_text_rows(Resolver *r, sqlite3_stmt *s, size_t *n_out)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    while (idx_graph_step(r, s)) {
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = xstrdup((const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_reset(s);
    *n_out = n;
    return v;
}

void idx_graph_free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Reads the references of kind (their names starting with prefix) of
 * file_id into r's per-chunk lists, in id order. */
static void chunk_refs_read(Resolver *r, int64_t file_id, int kind, const char *prefix)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_REFS_OF_FILE_KIND);
    if (!s) return;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_int(s, 2, kind);
    sqlite3_bind_text(s, 3, prefix, -1, SQLITE_STATIC);
    while (idx_graph_step(r, s)) {
        int64_t key = sqlite3_column_int64(s, 0) * 8 + kind, at;
        if (!i64map_get(&r->refs_chunks, key, &at)) {
            ARRAY_GROW(r->chunk_refs, r->n_chunk_refs + 1, r->cap_chunk_refs);
            r->chunk_refs[r->n_chunk_refs] = (struct ChunkRefs){0};
            at = (int64_t)++r->n_chunk_refs;
            i64map_put(&r->refs_chunks, key, at);
        }
        struct ChunkRefs *c = &r->chunk_refs[at - 1];
        ARRAY_GROW(c->v, c->n + 1, c->cap);
        c->v[c->n++] = xstrdup((const char *)sqlite3_column_text(s, 1));
    }
    sqlite3_reset(s);
}

char *const *idx_graph_chunk_refs(Resolver *r, int64_t chunk_id, int kind, size_t *n_out)
{
    int64_t at, file_id = 0, kinds = 0;
    *n_out = 0;
    if (i64map_get(&r->refs_chunks, chunk_id * 8 + kind, &at)) {
        *n_out = r->chunk_refs[at - 1].n;
        return r->chunk_refs[at - 1].v;
    }
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_FILE);
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, chunk_id);
    if (idx_graph_step(r, s)) file_id = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (!file_id) return NULL;
    i64map_get(&r->refs_files, file_id, &kinds);
    if (kinds & (1 << kind)) return NULL; /* read: the chunk has none */
    chunk_refs_read(r, file_id, kind, kind == REF_TYPE ? IDX_REF_TYPE_FACT : "");
    if (r->rc) return NULL;
    i64map_put(&r->refs_files, file_id, kinds | (1 << kind));
    if (!i64map_get(&r->refs_chunks, chunk_id * 8 + kind, &at)) return NULL;
    *n_out = r->chunk_refs[at - 1].n;
    return r->chunk_refs[at - 1].v;
}

void idx_graph_chunk_refs_forget(Resolver *r)
{
    for (size_t i = 0; i < r->n_chunk_refs; i++)
        idx_graph_free_strv(r->chunk_refs[i].v, r->chunk_refs[i].n);
    free(r->chunk_refs);
    r->chunk_refs = NULL;
    r->n_chunk_refs = r->cap_chunk_refs = 0;
    i64map_release(&r->refs_chunks);
    i64map_release(&r->refs_files);
    i64map_init(&r->refs_chunks);
    i64map_init(&r->refs_files);
}

int idx_graph_imported(Resolver *r, int64_t file_id, const char *alias, size_t len)
{
    char *bound = import_binding(r, file_id, alias, len);
    free(bound);
    return bound != NULL;
}

/* The targets of a file's star imports: borrowed from r->names, or from
 * what file_imports read (valid until idx_graph_memo_forget). */
typedef struct Stars {
    char *const *v;
    size_t n;
} Stars;

static void star_imports(Resolver *r, int64_t file_id, Stars *out)
{
    *out = (Stars){0};
    if (r->names) {
        out->v = idx_graph_names_stars(r->names, file_id, &out->n);
        return;
    }
    const struct FileImports *f = file_imports(r, file_id);
    if (!f) return;
    out->v = f->star;
    out->n = f->n_star;
}

/* Looks `rest` up inside module file `fid` (whose module name is known):
 * a definition, a re-exported import, or a name from a star import. */
static int64_t resolve_in_module(Resolver *r, const char *module, int64_t fid, const char *rest,
                                 int depth)
{
    int64_t v = 0;
    size_t first = strcspn(rest, ".");
    char *bound = import_binding(r, fid, rest, first);
    int imported = bound != NULL;
    StrBuf q;
    sb_init(&q);
    if (bound) {
        sb_addf(&q, "%s%s", bound, rest + first);
        if (strcmp(q.buf, module) != 0) v = idx_graph_resolve_qualified(r, q.buf, depth + 1);
        free(bound);
    }
    if (!v && !imported) {
        /* a name the module exports under another (JavaScript's
         * `exports.x = y`): IDX_LANG_MODULE_VALUE and the name */
        sb_addf(&q, "%s%.*s", IDX_LANG_MODULE_VALUE, (int)first, rest);
        char *own = import_binding(r, fid, q.buf, q.len);
        if (own) {
            sb_reset(&q);
            sb_addf(&q, "%s%s", own, rest + first);
            if (strcmp(q.buf, module) != 0) v = idx_graph_resolve_qualified(r, q.buf, depth + 1);
            free(own);
        }
        sb_reset(&q);
    }
    if (!v) {
        Stars st;
        star_imports(r, fid, &st);
        for (size_t i = 0; i < st.n && !v; i++) {
            sb_reset(&q);
            sb_addf(&q, "%s.%s", st.v[i], rest);
            if (strcmp(st.v[i], module) != 0) v = idx_graph_resolve_qualified(r, q.buf, depth + 1);
        }
    }
    sb_release(&q);
    return v;
}

static int64_t resolve_qualified_uncached(Resolver *r, const char *q, int depth)
{
    int64_t v = idx_graph_symbol_by_qual(r, q);
    if (v) return v;
    int64_t fid = module_file(r, q);
    if (fid) {
        /* a module whose value is one of its names: what a call of it reaches */
        char *own = import_binding(r, fid, IDX_LANG_MODULE_VALUE, strlen(IDX_LANG_MODULE_VALUE));
        if (own && strcmp(own, q) != 0) v = idx_graph_resolve_qualified(r, own, depth + 1);
        free(own);
        return v ? v : module_chunk(r, fid);
    }
    /* The longest prefix that names a workspace module, then the rest
     * inside it (definitions, re-exports through imports, star imports). */
    char *buf = xstrdup(q);
    for (char *dot = strrchr(buf, '.'); dot && !v && r->rc == CR_OK; dot = strrchr(buf, '.')) {
        *dot = '\0';
        fid = module_file(r, buf);
        if (fid) {
            v = resolve_in_module(r, buf, fid, q + (dot - buf) + 1, depth);
            break;
        }
    }
    free(buf);
    return v;
}

/* Forgets every top-level answer (the tables changed). */
void idx_graph_tops_clear(Resolver *r)
{
    for (size_t i = 0; i < r->n_tops; i++) {
        idx_graph_free_strv(r->tops[i].keys, r->tops[i].n);
        free(r->tops[i].vals);
    }
    r->n_tops = 0;
    r->top_at = 0;
    strmap_release(&r->top);
    strmap_init(&r->top);
}

/* idx_graph_resolve_qualified at depth 0. The volatile answers held then
 * are those the reference's earlier top-level lookups left (r->top_at: the
 * last of them that left any, a chain), and the memo's other answers do
 * not depend on the path: so the lookup's answer and the volatile answers
 * it leaves depend on that chain and q alone, and are replayed on the next
 * such lookup instead of walking the (star-)import graph again. */
static int64_t resolve_top(Resolver *r, const char *q)
{
    int64_t t;
    StrBuf key;
    sb_init(&key);
    sb_addf(&key, "%zu:%s", r->top_at, q);
    if (strmap_get(&r->top, key.buf, &t)) {
        sb_release(&key);
        struct TopMemo *m = &r->tops[t];
        for (size_t i = 0; i < m->n; i++) {
            strmap_put(&r->memo, m->keys[i], m->vals[i]);
            ARRAY_GROW(r->volatile_keys, r->n_volatile + 1, r->cap_volatile);
            r->volatile_keys[r->n_volatile++] = xstrdup(m->keys[i]);
        }
        r->cuts += m->cuts;
        r->top_at = (size_t)t + 1;
        return m->v;
    }
    size_t cuts = r->cuts, n0 = r->n_volatile;
    int64_t v = idx_graph_resolve_qualified(r, q, 1 << 30);
    if (r->n_volatile == n0 || r->rc != CR_OK) {
        sb_release(&key);
        return v;
    }
    size_t n = r->n_volatile - n0;
    ARRAY_GROW(r->tops, r->n_tops + 1, r->cap_tops);
    struct TopMemo *m = &r->tops[r->n_tops];
    *m = (struct TopMemo){v, r->cuts - cuts, n, xcalloc(n, sizeof(char *)),
                          xcalloc(n, sizeof(int64_t))};
    for (size_t i = 0; i < n; i++) {
        m->keys[i] = xstrdup(r->volatile_keys[n0 + i]);
        strmap_get(&r->memo, m->keys[i], &m->vals[i]);
    }
    strmap_put(&r->top, key.buf, (int64_t)r->n_tops++);
    r->top_at = r->n_tops;
    sb_release(&key);
    return v;
}

int64_t idx_graph_resolve_qualified(Resolver *r, const char *q, int depth)
{
    int64_t v;
    if (!q[0]) return 0;
    /* nothing to find: no step of the lookup (below) can reach anything */
    if (r->names && !idx_graph_names_may_end(r->names, q)) return 0;
    if (depth == 1 << 30)
        depth = 0;
    else if (depth == 0 && !(strmap_get(&r->memo, q, &v) && v >= 0))
        return resolve_top(r, q);
    if (depth > MAX_DEPTH) {
        r->cuts++;
        return 0;
    }
    /* A kept answer is the walk's answer only where the walk would go as
     * it went then: a clean one where its height stays within the bound
     * (found nearer, it may lie past the cut from here), a volatile one at
     * the depth it was found at or deeper; elsewhere the walk is made
     * again. So an answer kept from an earlier reference is the one this
     * reference's walk would find (test_graph_order). */
    int was_volatile = 0;
    if (strmap_get(&r->memo, q, &v) && v != MEMO_UNCACHED) {
        was_volatile = v < 0;
        if (v >= 0 && depth + (int)(v % 8) <= MAX_DEPTH) {
            if (depth + (int)(v % 8) > r->deepest) r->deepest = depth + (int)(v % 8);
            return v / 8;
        }
        if (v == MEMO_BUSY) {
            r->cuts++; /* an import cycle */
            return 0;
        }
        if (v < 0 && (-(v + 3)) % 8 <= depth) {
            r->cuts++; /* an answer that depended on a cut */
            return (-(v + 3)) / 8;
        }
    }
    strmap_put(&r->memo, q, MEMO_BUSY);
    size_t cuts = r->cuts;
    int deepest = r->deepest;
    r->deepest = depth;
    v = resolve_qualified_uncached(r, q, depth);
    int height = r->deepest - depth;
    if (deepest > r->deepest) r->deepest = deepest;
    /* one held as volatile stays so (with its new answer) until the
     * reference ends: a top-level lookup's replay restores it so */
    if (r->cuts == cuts && !was_volatile) {
        strmap_put(&r->memo, q, MEMO_CLEAN(v, height));
    } else {
        strmap_put(&r->memo, q, MEMO_VOLATILE(v, depth));
        ARRAY_GROW(r->volatile_keys, r->n_volatile + 1, r->cap_volatile);
        r->volatile_keys[r->n_volatile++] = xstrdup(q);
    }
    return v;
}

size_t idx_graph_symbol_ids(Resolver *r, const char *name, int64_t *ids, size_t max)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_SYMBOL_BY_NAME);
    if (!s) return 0;
    size_t n = 0;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)max);
    while (n < max && idx_graph_step(r, s))
        ids[n++] = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return n;
}

/* The only definition anywhere with this simple name, or 0. */
int64_t idx_graph_unique_by_name(Resolver *r, const char *name)
{
    if (r->names) return idx_graph_names_unique(r->names, name);
    /* memo key: the name after a byte no qualified name holds */
    StrBuf key;
    sb_init(&key);
    sb_addf(&key, "\x01%s", name);
    int64_t v = 0;
    if (strmap_get(&r->memo, key.buf, &v)) {
        sb_release(&key);
        return v;
    }
    int64_t two[2];
    v = idx_graph_symbol_ids(r, name, two, 2) == 1 ? two[0] : 0;
    if (r->rc == CR_OK) strmap_put(&r->memo, key.buf, v);
    sb_release(&key);
    return v;
}

/* Whether a call `x.name()` on a receiver the indexer cannot type more
 * likely names a method of one of the language's built-in types (its row's
 * builtin_methods) than a workspace method that shares the name. */
int idx_graph_builtin_method(const IdxLang *lang, const char *name)
{
    for (const char *const *m = lang ? lang->builtin_methods : NULL; m && *m; m++)
        if (!strcmp(*m, name)) return 1;
    return 0;
}

/* Whether a name is one of the language's built-in functions (its row's
 * builtins): a bare call of one the module neither defines nor imports is
 * the builtin, not a workspace definition that shares the name. */
int idx_graph_is_builtin(const IdxLang *lang, const char *name)
{
    for (const char *const *b = lang ? lang->builtins : NULL; b && *b; b++)
        if (!strcmp(*b, name)) return 1;
    return 0;
}

/* Whether a member call `x.name()` on a receiver the indexer cannot type
 * must not be resolved by its name alone: a built-in type's method, or a
 * function pointer held in a field (rows with field_calls). */
static int by_member_name(const IdxLang *lang, const char *name)
{
    return (lang && lang->field_calls) || idx_graph_builtin_method(lang, name);
}

/* Whether the receiver n[0..len) of a member call is one of the row's
 * builtin_objects (the walk above found no definition of it in the module). */
static int builtin_receiver(const RefRow *ref, size_t len)
{
    for (const char *const *b = ref->lang ? ref->lang->builtin_objects : NULL; b && *b; b++)
        if (strlen(*b) == len && !memcmp(*b, ref->name, len)) return 1;
    return 0;
}

/* Resolves the dotted expression of a call/base/raise written in a chunk. */
int idx_graph_chunk_kind(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_CHUNK_KIND);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int kind = idx_graph_step(r, s) ? sqlite3_column_int(s, 0) : -1;
    sqlite3_reset(s);
    return kind;
}

int64_t idx_graph_resolve_expr(Resolver *r, const RefRow *ref)
{
    const char *n = ref->name;
    size_t first = strcspn(n, ".");
    const char *rest = n[first] ? n + first + 1 : "";
    StrBuf q;
    int64_t v = 0;
    sb_init(&q);
    if (!strncmp(n, IDX_REF_GLOBAL, IDX_REF_GLOBAL_LEN) && n[IDX_REF_GLOBAL_LEN]) {
        /* `::f()`: a top-level f, as a bare name resolves; never a method
         * (the only one of the name: `::open(…)` is no File::open) */
        RefRow top = *ref;
        top.name = (char *)n + IDX_REF_GLOBAL_LEN;
        v = idx_graph_resolve_expr(r, &top);
        if (v && idx_graph_chunk_kind(r, v) == IDX_KIND_METHOD) v = 0;
        goto out;
    }
    if (first == 1 && n[0] == '?') {
        if (*rest && !strchr(rest, '.') && !by_member_name(ref->lang, rest))
            v = idx_graph_unique_by_name(r, rest);
        goto out;
    }
    if (idx_lang_self_word(ref->lang, n, first) && *rest) {
        /* A method of the enclosing class (the symbol up to its last part). */
        const char *dot = strrchr(ref->symbol, '.');
        if (dot) {
            if (ref->module[0]) sb_addf(&q, "%s.", ref->module);
            sb_add(&q, ref->symbol, (size_t)(dot - ref->symbol));
            sb_addf(&q, ".%s", rest);
            v = idx_graph_resolve_qualified(r, q.buf, 0);
        }
        /* in a function that is no method, in a row whose self word the
         * call binds: a constructor's prototype member, nothing else */
        const char *proto = ref->lang ? ref->lang->prototype_word : NULL;
        if (!dot && proto && ref->symbol[0]) {
            if (ref->module[0]) sb_addf(&q, "%s.", ref->module);
            sb_addf(&q, "%s.%s.%s", ref->symbol, proto, rest);
            v = idx_graph_resolve_qualified(r, q.buf, 0);
            goto out;
        }
        if (!v && !strchr(rest, '.') && !by_member_name(ref->lang, rest))
            v = idx_graph_unique_by_name(r, rest);
        goto out;
    }
    char *bound = import_binding(r, ref->file_id, n, first);
    if (bound) { /* (bound to the root package, "": its names are top-level) */
        sb_addf(&q, "%s%s", bound, bound[0] || !n[first] ? n + first : n + first + 1);
        free(bound);
        v = idx_graph_resolve_qualified(r, q.buf, 0);
        goto out;
    }
    /* a one-part name that no name the walk below asks holds: no walk (a
     * call of a function only a .c file defines, from under many headers);
     * one that only one does: that one */
    int64_t sure = 0;
    if (r->names && !n[first] && ref->module[0] &&
        !idx_graph_names_may_reach(r->names, &r->reach, ref->file_id, ref->module, n, MAX_DEPTH,
                                   &sure))
        goto fallback;
    if (sure) {
        v = sure;
        goto out;
    }
    sb_reset(&q);
    if (ref->module[0]) sb_addf(&q, "%s.", ref->module);
    sb_adds(&q, n);
    v = idx_graph_resolve_qualified(r, q.buf, 0);
    /* The file's star imports, when the walk above did not go through them
     * (a one-part name whose module is this file's went through them, a
     * step below: no need to walk them again). */
    if (!v && (n[first] || !ref->module[0] || module_file(r, ref->module) != ref->file_id)) {
        Stars st;
        star_imports(r, ref->file_id, &st);
        for (size_t i = 0; i < st.n && !v; i++) {
            sb_reset(&q);
            sb_addf(&q, "%s.%s", st.v[i], n);
            v = idx_graph_resolve_qualified(r, q.buf, 0);
        }
    }
fallback:
    /* a builtin the module neither defines nor imports is the builtin */
    if (!v && !n[first] && !ref->strict && !idx_graph_is_builtin(ref->lang, n))
        v = idx_graph_unique_by_name(r, n);
    /* `obj.method()` on a receiver we cannot type: the method, when only one
     * definition anywhere has that name; not on one of the language's
     * built-in objects the module does not define (`JSON.stringify()`) */
    if (!v && *rest && !strchr(rest, '.') && !ref->strict && !by_member_name(ref->lang, rest) &&
        !builtin_receiver(ref, first))
        v = idx_graph_unique_by_name(r, rest);
out:
    sb_release(&q);
    return v;
}

/* The length of module m without its last part (its extension: "src.util"
 * of "src.util.h"). */
static size_t module_stem(const char *m)
{
    const char *dot = strrchr(m, '.');
    return dot ? (size_t)(dot - m) : strlen(m);
}

int64_t idx_graph_declared_function(Resolver *r, const RefRow *ref)
{
    const char *n = ref->name;
    if (!strncmp(n, IDX_REF_GLOBAL, IDX_REF_GLOBAL_LEN)) n += IDX_REF_GLOBAL_LEN; /* `::f` */
    if (ref->kind != REF_CALL || !ref->lang || !ref->lang->out_of_line_members || strchr(n, '.') ||
        idx_graph_is_builtin(ref->lang, n))
        return 0;
    int64_t ids[16];
    size_t k = idx_graph_symbol_ids(r, n, ids, 16);
    /* none, or the one the name alone finds; or maybe more than 16: none
     * rather than some (the same in any order) */
    if (k < 2 || k == 16) return 0;
    Stars st;
    star_imports(r, ref->file_id, &st);
    int64_t v = 0, v_file = 0;
    for (size_t i = 0; i < k && v >= 0 && r->rc == CR_OK; i++) {
        sqlite3_stmt *q = idx_graph_stmt(r, STMT_CHUNK_QUAL);
        if (!q) break;
        sqlite3_bind_int64(q, 1, ids[i]);
        int64_t file = 0;
        char *mod = NULL;
        int top = 0;
        if (idx_graph_step(r, q)) {
            file = sqlite3_column_int64(q, 0);
            mod = idx_store_col_dup(q, 1);
            top = !strcmp((const char *)sqlite3_column_text(q, 2), n);
        }
        sqlite3_reset(q);
        size_t stem = mod ? module_stem(mod) : 0;
        int paired = 0;
        for (size_t j = 0; j < st.n && top && !paired; j++)
            paired = module_stem(st.v[j]) == stem && !strncmp(st.v[j], mod, stem) &&
                     strcmp(st.v[j], mod) != 0;
        free(mod);
        if (!paired || file == v_file) continue;
        v = v ? -1 : ids[i];
        v_file = file;
    }
    return v > 0 ? v : 0;
}

/* How many of the targets in a are also in b. */
static size_t shared_stars(const Stars *a, const Stars *b)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++)
            if (!strcmp(a->v[i], b->v[j])) {
                n++;
                break;
            }
    return n;
}

static int64_t linked_function(Resolver *r, const RefRow *ref)
{
    Stars own;
    star_imports(r, ref->file_id, &own);
    if (!own.n) return 0;
    int64_t ids[LINK_MAX + 1];
    size_t k = idx_graph_symbol_ids(r, ref->name, ids, LINK_MAX + 1);
    if (k < 2 || k > LINK_MAX) return 0; /* the one the name alone finds, or a common name */
    int64_t v = 0, v_file = 0;
    size_t best = 0;
    int tie = 0;
    for (size_t i = 0; i < k && r->rc == CR_OK; i++) {
        sqlite3_stmt *q = idx_graph_stmt(r, STMT_CHUNK_QUAL);
        if (!q) break;
        sqlite3_bind_int64(q, 1, ids[i]);
        int64_t file = 0;
        if (idx_graph_step(r, q) && !strcmp((const char *)sqlite3_column_text(q, 2), ref->name))
            file = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
        if (!file || file == ref->file_id || file == v_file) continue;
        Stars st;
        star_imports(r, file, &st);
        size_t n = shared_stars(&st, &own);
        if (n > best) {
            best = n;
            v = ids[i];
            v_file = file;
            tie = 0;
        } else if (n == best && n) {
            tie = 1;
        }
    }
    return tie || r->rc != CR_OK ? 0 : v;
}

int64_t idx_graph_linked_function(Resolver *r, const RefRow *ref)
{
    if (ref->kind != REF_CALL || !ref->lang || !ref->lang->links_by_includes ||
        strchr(ref->name, '.') || ref->strict || idx_graph_is_builtin(ref->lang, ref->name))
        return 0;
    /* memo key: the caller's file and the name after a byte no qualified
     * name holds (the answer depends on the file's includes alone) */
    StrBuf key;
    sb_init(&key);
    sb_addf(&key, "\x02%lld:%s", (long long)ref->file_id, ref->name);
    int64_t v = 0;
    if (!strmap_get(&r->memo, key.buf, &v)) {
        v = linked_function(r, ref);
        if (r->rc == CR_OK) strmap_put(&r->memo, key.buf, v);
    }
    sb_release(&key);
    return v;
}
