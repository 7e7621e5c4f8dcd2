#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* Resolution of raw references (imports, calls, bases, raises) into edges
 * between chunks, through each file's import bindings and the symbol table.
 * Lookups go to SQLite through prepared statements; a per-pass memo keeps
 * repeated names (the same helper called from many places) cheap. */

typedef struct Resolver {
    IdxStore *st;
    StrMap memo; /* "qualified name" -> chunk id (0: unresolved), or MEMO_* */
    ErrInfo *e;
    CrErr rc;
    size_t cuts;          /* lookups cut short (an import cycle, the depth bound) so far */
    char **volatile_keys; /* memo entries that hold for the current reference only */
    size_t n_volatile, cap_volatile;
    /* A top-level lookup (depth 0, entered with no volatile answer held) whose
     * answer was volatile: q -> index into tops, with the volatile answers it
     * left, replayed on the next such lookup of q instead of walking the
     * (star-)import cycle again. Same state after, so the same edges. */
    StrMap top;
    struct TopMemo {
        int64_t v;
        size_t cuts, n;
        char **keys;
        int64_t *vals;
    } * tops;
    size_t n_tops, cap_tops;
} Resolver;

/* Memo marks: a lookup in progress (an import cycle meets it), one not
 * known, and answers that depended on where a cycle was entered (or on the
 * depth asked at): those hold while one reference resolves and are then
 * forgotten, so that every reference resolves the same whatever was resolved
 * before it (an update equals a fresh build). */
#define MEMO_BUSY (-1)
#define MEMO_UNCACHED (-2)
#define MEMO_VOLATILE(v) (-(v)-3)
#define MEMO_IS_VOLATILE(m) ((m) <= -3)

/* Forgets the answers that held for one reference. */
static void memo_end_ref(Resolver *r)
{
    for (size_t i = 0; i < r->n_volatile; i++) {
        strmap_put(&r->memo, r->volatile_keys[i], MEMO_UNCACHED);
        free(r->volatile_keys[i]);
    }
    r->n_volatile = 0;
}

/* One step of a lookup: 1 for a row. A failed step is remembered in r->rc
 * (the pass stops), never taken for "no such name". */
static int step_row(Resolver *r, sqlite3_stmt *s)
{
    int row = 0;
    CrErr rc = idx_store_step(r->st, s, &row, r->e, "graph lookup");
    if (rc && r->rc == CR_OK) r->rc = rc;
    return row;
}

/* A prepared statement, or NULL with the pass stopped (r->rc). */
static sqlite3_stmt *lookup_stmt(Resolver *r, StmtId id)
{
    sqlite3_stmt *s = idx_store_stmt(r->st, id, r->e);
    if (!s && r->rc == CR_OK) r->rc = CR_EDB;
    return s;
}

static int64_t first_id(Resolver *r, StmtId id, const char *text, int64_t num, int use_num)
{
    sqlite3_stmt *s = lookup_stmt(r, id);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
    if (use_num) sqlite3_bind_int64(s, 2, num);
    int64_t v = step_row(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

static int64_t module_file(Resolver *r, const char *module)
{
    return first_id(r, STMT_FILE_BY_MODULE, module, 0, 0);
}

static int64_t module_chunk(Resolver *r, int64_t file_id)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_CHUNK_FIRST_OF_FILE);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, file_id);
    int64_t v = step_row(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

/* The target a file binds a local name to, or NULL. Caller frees. */
static char *import_binding(Resolver *r, int64_t file_id, const char *alias, size_t len)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_IMPORT_GET);
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_text(s, 2, alias, (int)len, SQLITE_STATIC);
    char *v = NULL;
    if (step_row(r, s)) v = xstrdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_reset(s);
    return v;
}

/* The first column of every row of a bound statement, which is reset.
 * Caller frees each and the array. */
static char **text_rows(Resolver *r, sqlite3_stmt *s, size_t *n_out)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    while (step_row(r, s)) {
        ARRAY_GROW(v, n + 1, cap);
        v[n++] = xstrdup((const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_reset(s);
    *n_out = n;
    return v;
}

/* Targets of a file's star imports. Caller frees each and the array. */
static char **star_imports(Resolver *r, int64_t file_id, size_t *n_out)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_IMPORT_STARS);
    *n_out = 0;
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, file_id);
    return text_rows(r, s, n_out);
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int64_t resolve_qualified(Resolver *r, const char *q, int depth);

/* Looks `rest` up inside module file `fid` (whose module name is known):
 * a definition, a re-exported import, or a name from a star import. */
static int64_t resolve_in_module(Resolver *r, const char *module, int64_t fid, const char *rest,
                                 int depth)
{
    int64_t v = 0;
    size_t first = strcspn(rest, ".");
    char *bound = import_binding(r, fid, rest, first);
    StrBuf q;
    sb_init(&q);
    if (bound) {
        sb_addf(&q, "%s%s", bound, rest + first);
        if (strcmp(q.buf, module) != 0) v = resolve_qualified(r, q.buf, depth + 1);
        free(bound);
    }
    if (!v) {
        size_t n;
        char **stars = star_imports(r, fid, &n);
        for (size_t i = 0; i < n && !v; i++) {
            sb_reset(&q);
            sb_addf(&q, "%s.%s", stars[i], rest);
            if (strcmp(stars[i], module) != 0) v = resolve_qualified(r, q.buf, depth + 1);
        }
        free_strv(stars, n);
    }
    sb_release(&q);
    return v;
}

static int64_t resolve_qualified_uncached(Resolver *r, const char *q, int depth)
{
    int64_t v = first_id(r, STMT_SYMBOL_BY_QUAL, q, 0, 0);
    if (v) return v;
    int64_t fid = module_file(r, q);
    if (fid) return module_chunk(r, fid);
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

static int64_t resolve_qualified(Resolver *r, const char *q, int depth);

/* Forgets every top-level answer (the tables changed). */
static void tops_clear(Resolver *r)
{
    for (size_t i = 0; i < r->n_tops; i++) {
        free_strv(r->tops[i].keys, r->tops[i].n);
        free(r->tops[i].vals);
    }
    r->n_tops = 0;
    strmap_release(&r->top);
    strmap_init(&r->top);
}

/* resolve_qualified at depth 0 with no volatile answer held: the memo holds
 * only answers that do not depend on the path, so the lookup's answer and
 * the volatile answers it leaves depend on q alone and are replayed. */
static int64_t resolve_top(Resolver *r, const char *q)
{
    int64_t t;
    if (strmap_get(&r->top, q, &t)) {
        struct TopMemo *m = &r->tops[t];
        for (size_t i = 0; i < m->n; i++) {
            strmap_put(&r->memo, m->keys[i], m->vals[i]);
            ARRAY_GROW(r->volatile_keys, r->n_volatile + 1, r->cap_volatile);
            r->volatile_keys[r->n_volatile++] = xstrdup(m->keys[i]);
        }
        r->cuts += m->cuts;
        return m->v;
    }
    size_t cuts = r->cuts;
    int64_t v = resolve_qualified(r, q, 1 << 30);
    if (r->n_volatile == 0 || r->rc != CR_OK) return v;
    ARRAY_GROW(r->tops, r->n_tops + 1, r->cap_tops);
    struct TopMemo *m = &r->tops[r->n_tops];
    *m = (struct TopMemo){v, r->cuts - cuts, r->n_volatile, xcalloc(r->n_volatile, sizeof(char *)),
                          xcalloc(r->n_volatile, sizeof(int64_t))};
    for (size_t i = 0; i < m->n; i++) {
        m->keys[i] = xstrdup(r->volatile_keys[i]);
        strmap_get(&r->memo, m->keys[i], &m->vals[i]);
    }
    strmap_put(&r->top, q, (int64_t)r->n_tops++);
    return v;
}

static int64_t resolve_qualified(Resolver *r, const char *q, int depth)
{
    int64_t v;
    if (!q[0]) return 0;
    if (depth == 1 << 30)
        depth = 0;
    else if (depth == 0 && r->n_volatile == 0 && !(strmap_get(&r->memo, q, &v) && v >= 0))
        return resolve_top(r, q);
    if (depth > 6) {
        r->cuts++;
        return 0;
    }
    if (strmap_get(&r->memo, q, &v) && v != MEMO_UNCACHED) {
        if (v >= 0) return v;
        r->cuts++; /* an import cycle, or an answer that depended on one */
        return v == MEMO_BUSY ? 0 : -(v + 3);
    }
    strmap_put(&r->memo, q, MEMO_BUSY);
    size_t cuts = r->cuts;
    v = resolve_qualified_uncached(r, q, depth);
    if (r->cuts == cuts) {
        strmap_put(&r->memo, q, v);
    } else {
        strmap_put(&r->memo, q, MEMO_VOLATILE(v));
        ARRAY_GROW(r->volatile_keys, r->n_volatile + 1, r->cap_volatile);
        r->volatile_keys[r->n_volatile++] = xstrdup(q);
    }
    return v;
}

/* The only definition anywhere with this simple name, or 0. */
static int64_t unique_by_name(Resolver *r, const char *name)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_SYMBOL_BY_NAME);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, 2);
    int64_t v = 0;
    int n = 0;
    while (step_row(r, s)) {
        v = sqlite3_column_int64(s, 0);
        n++;
    }
    sqlite3_reset(s);
    return n == 1 ? v : 0;
}

/* Whether a call `x.name()` on a receiver the indexer cannot type more
 * likely names a method of one of the language's built-in types (its row's
 * builtin_methods) than a workspace method that shares the name. */
static int builtin_method(const IdxLang *lang, const char *name)
{
    for (const char *const *m = lang ? lang->builtin_methods : NULL; m && *m; m++)
        if (!strcmp(*m, name)) return 1;
    return 0;
}

typedef struct RefRow {
    int64_t id, file_id, chunk_id;
    int kind;
    char *name, *module, *symbol;
    const IdxLang *lang; /* of the file the reference is written in; NULL: none known */
    int strict;          /* no match by the name alone (a receiver's type, graph_types.c) */
} RefRow;

static int64_t resolve_expr(Resolver *r, const RefRow *ref);
static const IdxGraphOps graph_ops;

/* The base expressions of a class chunk. Caller frees each and the array. */
static char **class_bases(Resolver *r, int64_t class_id, size_t *n_out)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_REF_BASES_OF_CHUNK);
    *n_out = 0;
    if (!s) return NULL;
    sqlite3_bind_int64(s, 1, class_id);
    sqlite3_bind_int(s, 2, REF_INHERIT);
    return text_rows(r, s, n_out);
}

/* Member `name` of a class that class `cls` (a symbol of module, in file
 * file_id) inherits: each base is resolved as the class's own inheritance
 * reference is, then looked into, then its bases, a few levels up. */
static int64_t inherited_member(Resolver *r, int64_t file_id, const char *module, const char *cls,
                                const char *name, int depth)
{
    if (depth > 4) return 0;
    StrBuf q;
    sb_init(&q);
    if (module[0]) sb_addf(&q, "%s.", module);
    sb_adds(&q, cls);
    int64_t class_id = first_id(r, STMT_SYMBOL_BY_QUAL, q.buf, 0, 0), v = 0;
    size_t n = 0;
    char **bases = class_id ? class_bases(r, class_id, &n) : NULL;
    for (size_t i = 0; i < n && !v && r->rc == CR_OK; i++) {
        RefRow base = {0,           file_id, class_id, REF_INHERIT, bases[i], (char *)module,
                       (char *)cls, NULL,    0};
        int64_t bid = resolve_expr(r, &base);
        sqlite3_stmt *s = bid ? lookup_stmt(r, STMT_CHUNK_QUAL) : NULL;
        if (!s) continue;
        sqlite3_bind_int64(s, 1, bid);
        if (step_row(r, s)) {
            int64_t bfile = sqlite3_column_int64(s, 0);
            char *bmod = idx_store_col_dup(s, 1), *bsym = idx_store_col_dup(s, 2);
            sqlite3_reset(s);
            sb_reset(&q);
            if (bmod[0]) sb_addf(&q, "%s.", bmod);
            sb_addf(&q, "%s.%s", bsym, name);
            v = resolve_qualified(r, q.buf, 0);
            if (!v) v = inherited_member(r, bfile, bmod, bsym, name, depth + 1);
            free(bmod);
            free(bsym);
        } else {
            sqlite3_reset(s);
        }
    }
    free_strv(bases, n);
    sb_release(&q);
    return v;
}

/* A member call the resolver could not place, in a language whose classes
 * inherit members: `self.name`, or a bare name where `this.` is implicit. */
static int64_t resolve_inherited(Resolver *r, const RefRow *ref)
{
    const IdxLang *lang = ref->lang;
    if (!lang || !lang->inherited_members || ref->kind != REF_CALL) return 0;
    const char *n = ref->name, *member = NULL;
    if (!strncmp(n, "self.", 5) && n[5] && !strchr(n + 5, '.'))
        member = n + 5;
    else if (lang->implicit_this && !strchr(n, '.'))
        member = n;
    const char *dot = strrchr(ref->symbol, '.');
    if (!member || !dot) return 0;
    char *cls = xstrndup(ref->symbol, (size_t)(dot - ref->symbol));
    int64_t v = inherited_member(r, ref->file_id, ref->module, cls, member, 0);
    free(cls);
    return v;
}

/* Resolves the dotted expression of a call/base/raise written in a chunk. */
static int64_t resolve_expr(Resolver *r, const RefRow *ref)
{
    const char *n = ref->name;
    size_t first = strcspn(n, ".");
    const char *rest = n[first] ? n + first + 1 : "";
    StrBuf q;
    int64_t v = 0;
    IdxRefAt at = {ref->file_id, ref->module, ref->symbol, ref->lang};
    if (ref->kind == REF_CALL && idx_graph_typed(&graph_ops, r, &at, n, &v)) return v;
    sb_init(&q);
    if (first == 1 && n[0] == '?') {
        if (*rest && !strchr(rest, '.') && !builtin_method(ref->lang, rest))
            v = unique_by_name(r, rest);
        goto out;
    }
    if (((first == 4 && !strncmp(n, "self", 4)) || (first == 3 && !strncmp(n, "cls", 3))) &&
        *rest) {
        /* A method of the enclosing class (the symbol up to its last part). */
        const char *dot = strrchr(ref->symbol, '.');
        if (dot) {
            if (ref->module[0]) sb_addf(&q, "%s.", ref->module);
            sb_add(&q, ref->symbol, (size_t)(dot - ref->symbol));
            sb_addf(&q, ".%s", rest);
            v = resolve_qualified(r, q.buf, 0);
        }
        if (!v && !strchr(rest, '.') && !builtin_method(ref->lang, rest))
            v = unique_by_name(r, rest);
        goto out;
    }
    char *bound = import_binding(r, ref->file_id, n, first);
    if (bound) {
        sb_addf(&q, "%s%s", bound, n + first);
        free(bound);
        v = resolve_qualified(r, q.buf, 0);
        goto out;
    }
    sb_reset(&q);
    if (ref->module[0]) sb_addf(&q, "%s.", ref->module);
    sb_adds(&q, n);
    v = resolve_qualified(r, q.buf, 0);
    if (!v) {
        size_t ns;
        char **stars = star_imports(r, ref->file_id, &ns);
        for (size_t i = 0; i < ns && !v; i++) {
            sb_reset(&q);
            sb_addf(&q, "%s.%s", stars[i], n);
            v = resolve_qualified(r, q.buf, 0);
        }
        free_strv(stars, ns);
    }
    /* a builtin the module neither defines nor imports is the builtin */
    if (!v && !n[first] && !ref->strict && !idx_graph_is_builtin(ref->lang, n))
        v = unique_by_name(r, n);
    /* `obj.method()` on a receiver we cannot type: the method, when only one
     * definition anywhere has that name. */
    if (!v && *rest && !strchr(rest, '.') && !ref->strict && !builtin_method(ref->lang, rest))
        v = unique_by_name(r, rest);
out:
    sb_release(&q);
    return v;
}

/* The last part of a dotted name. */
static const char *last_part(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? dot + 1 : s;
}

/* Whether a container's inheritance references (`impl Base for X`,
 * `class X implements Base`) name `base` (its last part). */
static int names_base(char *const *bases, size_t n, const char *base)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(last_part(bases[i]), base)) return 1;
    return 0;
}

enum { DISPATCH_MAX = 6, DISPATCH_SCAN = 16 };

/* A method call on a receiver the indexer cannot type, in a language whose
 * row says so (interface_dispatch: `self.re.find_at()` with `re: R` and
 * `R: RegularExpression`): when a method of that name is declared in an
 * interface that the containers of other methods of the name implement,
 * the call reaches the declaration and those implementations (best
 * supported declaration first; at most DISPATCH_MAX targets; none when
 * more than DISPATCH_SCAN methods share the name). Returns the count. */
static size_t dispatch_targets(Resolver *r, const RefRow *ref, int64_t *out)
{
    const IdxLang *lang = ref->lang;
    if (!lang || !lang->interface_dispatch || ref->kind != REF_CALL) return 0;
    const char *dot = strrchr(ref->name, '.');
    if (!dot || !dot[1] || builtin_method(lang, dot + 1)) return 0;
    sqlite3_stmt *s = lookup_stmt(r, STMT_METHODS_BY_NAME);
    if (!s) return 0;
    int64_t chunk[DISPATCH_SCAN + 1], cls[DISPATCH_SCAN + 1];
    char *cls_name[DISPATCH_SCAN + 1];
    size_t n = 0, best = 0, best_impls = 0;
    sqlite3_bind_text(s, 1, dot + 1, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, IDX_KIND_METHOD);
    sqlite3_bind_int(s, 3, DISPATCH_SCAN + 1);
    while (n <= DISPATCH_SCAN && step_row(r, s)) {
        chunk[n] = sqlite3_column_int64(s, 0);
        cls[n] = sqlite3_column_int64(s, 1);
        cls_name[n] = idx_store_col_dup(s, 2);
        n++;
    }
    sqlite3_reset(s);
    if (n > DISPATCH_SCAN) goto out;
    /* each container's bases read once (n queries, not n * n) */
    char **bases[DISPATCH_SCAN + 1] = {0};
    size_t n_bases[DISPATCH_SCAN + 1] = {0};
    for (size_t j = 0; j < n && r->rc == CR_OK; j++)
        bases[j] = class_bases(r, cls[j], &n_bases[j]);
    /* impl[i][j]: method j's container implements method i's */
    unsigned char impl[DISPATCH_SCAN][DISPATCH_SCAN] = {{0}};
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i && cls[j] != cls[i] && names_base(bases[j], n_bases[j], cls_name[i])) {
                impl[i][j] = 1;
                k++;
            }
        if (k > best_impls) best = i, best_impls = k;
    }
    for (size_t j = 0; j < n; j++)
        free_strv(bases[j], n_bases[j]);
    if (!best_impls || r->rc) {
        best_impls = 0;
        goto out;
    }
    out[0] = chunk[best];
    size_t m = 1;
    for (size_t j = 0; j < n && m < DISPATCH_MAX; j++)
        if (impl[best][j]) out[m++] = chunk[j];
    best_impls = m;
out:
    for (size_t i = 0; i < n; i++)
        free(cls_name[i]);
    return best_impls;
}

static IdxEdgeKind edge_kind(int ref_kind)
{
    switch ((RefKind)ref_kind) {
    case REF_IMPORT:
        return IDX_EDGE_IMPORT;
    case REF_INHERIT:
        return IDX_EDGE_INHERIT;
    case REF_RAISE:
        return IDX_EDGE_RAISE;
    case REF_CALL:
        break;
    }
    return IDX_EDGE_CALL;
}

/* The chunk a reference's edge points at now (0: none). */
static int64_t old_dst(Resolver *r, int64_t ref_id)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_EDGE_DST_OF_REF);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, ref_id);
    int64_t v = step_row(r, s) ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return v;
}

static int chunk_exists(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_CHUNK_EXISTS);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, id);
    int v = step_row(r, s);
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
    sqlite3_stmt *s = lookup_stmt(r, STMT_REF_DIRTY_LIST);
    if (!s) goto out;
    /* bases first: a moved one marks calls its pass has not resolved yet
     * (they stay dirty) rather than ones it has (resolved twice) */
    sqlite3_bind_int(s, 1, REF_INHERIT);
    while (step_row(r, s)) {
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
        if (r->rc || (s = lookup_stmt(r, STMT_EDGE_DELETE_REF)) == NULL) break;
        sqlite3_bind_int64(s, 1, row->id);
        if ((r->rc = idx_store_step_done(st, s, e, "edges"))) break;
        int64_t dst[DISPATCH_MAX];
        size_t nd = 0;
        dst[0] =
            row->kind == REF_IMPORT ? resolve_qualified(r, row->name, 0) : resolve_expr(r, row);
        if (!dst[0] && row->kind == REF_CALL && !r->rc) dst[0] = resolve_inherited(r, row);
        if (dst[0])
            nd = 1;
        else if (!r->rc)
            nd = dispatch_targets(r, row, dst);
        memo_end_ref(r);
        /* a lookup that failed resolved nothing: the ref stays dirty */
        if (r->rc) break;
        for (size_t k = 0; k < nd && !r->rc; k++) {
            if (dst[k] == row->chunk_id) continue;
            if ((s = lookup_stmt(r, STMT_EDGE_INSERT)) == NULL) break;
            sqlite3_bind_int64(s, 1, row->chunk_id);
            sqlite3_bind_int64(s, 2, dst[k]);
            sqlite3_bind_int(s, 3, (int)edge_kind(row->kind));
            sqlite3_bind_int64(s, 4, row->id);
            if ((r->rc = idx_store_step_done(st, s, e, "edge"))) break;
            (*added)++;
        }
        if (r->rc) break;
        if ((s = lookup_stmt(r, STMT_REF_RESOLVED)) == NULL) break;
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

CrErr idx_graph_resolve_dirty(IdxStore *st, size_t *out_edges, ErrInfo *e)
{
    Resolver r = {st, {0}, e, CR_OK, 0, NULL, 0, 0, {0}, NULL, 0, 0};
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
        tops_clear(&r);
    }
    tops_clear(&r);
    strmap_release(&r.top);
    free(r.tops);
    memo_end_ref(&r);
    free(r.volatile_keys);
    strmap_release(&r.memo);
    if (r.rc == CR_OK) st->classes_moved = 0;
    if (out_edges) *out_edges = added;
    return r.rc;
}

/* ---------------------------------------------------------------- for graph_types.c */

static int64_t ops_expr(Resolver *r, const IdxRefAt *at, const char *expr)
{
    RefRow ref = {
        0, at->file_id, 0, REF_CALL, (char *)expr, (char *)at->module, (char *)at->symbol, at->lang,
        1};
    return resolve_expr(r, &ref);
}

static int64_t ops_qualified(Resolver *r, const char *q)
{
    return resolve_qualified(r, q, 0);
}

static int64_t ops_unique(Resolver *r, const char *name)
{
    return unique_by_name(r, name);
}

static int ops_imported(Resolver *r, int64_t file_id, const char *alias, size_t len)
{
    char *bound = import_binding(r, file_id, alias, len);
    free(bound);
    return bound != NULL;
}

static int ops_chunk_kind(Resolver *r, int64_t id)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_CHUNK_GET);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    int kind = step_row(r, s) ? sqlite3_column_int(s, 10) : -1;
    sqlite3_reset(s);
    return kind;
}

static int64_t ops_inherited(Resolver *r, const IdxRefAt *at, const char *cls, const char *name)
{
    return inherited_member(r, at->file_id, at->module, cls, name, 0);
}

static int64_t ops_member(Resolver *r, int64_t cls, const char *name)
{
    sqlite3_stmt *s = lookup_stmt(r, STMT_CHUNK_QUAL);
    if (!s) return 0;
    sqlite3_bind_int64(s, 1, cls);
    if (!step_row(r, s)) {
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
    int64_t v = resolve_qualified(r, q.buf, 0);
    if (!v) v = inherited_member(r, file, mod, sym, name, 0);
    sb_release(&q);
    free(mod);
    free(sym);
    return v;
}

static const IdxGraphOps graph_ops = {ops_expr,   ops_qualified, ops_member,    ops_inherited,
                                      ops_unique, ops_imported,  ops_chunk_kind};
