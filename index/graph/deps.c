/* deps.c - which references a file's change can resolve differently, so
 * that an incremental update re-resolves exactly those (and the index equals
 * a fresh one). What a file offers the resolver are its facts: the
 * definitions it names (qualified and simple), the import bindings others
 * can reach through it (re-exports, star imports), the bases of its
 * classes, and whether it exists as a module with a module chunk. A fact
 * that comes or goes marks the references that could meet it: by their last
 * name, by the import aliases bound to it, by the star imports that pour a
 * module's names into another, and the calls in subclasses whose inherited
 * members can move (graph.c, when a class's base resolves elsewhere, or
 * any class or base changed in the update). References into the file's old rows are marked when
 * those rows go (RM_MARK_DEPENDENTS). A type fact (an attribute's class, a
 * function's result: IDX_REF_TYPE_FACT) or a base that comes or goes marks
 * every call typed through facts ("T().a.m", "f().m"). A function stored
 * in a field (REF_STORE) that comes or goes marks the calls through the
 * field; one that resolves again marks them too (graph.c). */
#include "../chunk/lang/lang.h"
#include "../store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* The calls on the result of a call or through a typed receiver's
 * attribute ("T().a.m", "f().m"): what a type fact (IDX_REF_TYPE_FACT) or
 * a class's bases say can move them, through any number of facts. */
#define TYPED_CALLS_SQL                                                                            \
    "UPDATE refs SET resolved = 0 WHERE resolved = 1 AND kind = ?1 AND instr(name, '().') > 0"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_facts(IdxFacts *f)
{
    if (f->n) qsort(f->v, f->n, sizeof *f->v, cmp_str);
}

static void facts_add(IdxFacts *f, char *s)
{
    ARRAY_GROW(f->v, f->n + 1, f->cap);
    f->v[f->n++] = s;
}

CrErr idx_facts_load(IdxStore *st, int64_t file_id, IdxFacts *out, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_FACTS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, file_id);
    sqlite3_bind_int(s, 2, REF_INHERIT);
    sqlite3_bind_int(s, 3, IDX_KIND_CLASS);
    sqlite3_bind_int(s, 4, IDX_KIND_METHOD);
    sqlite3_bind_int(s, 5, REF_TYPE);
    sqlite3_bind_text(s, 6, IDX_REF_TYPE_FACT, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 7, REF_STORE);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        facts_add(out, idx_store_col_dup(s, 0));
    CrErr r = rc == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "file facts");
    sqlite3_reset(s);
    return r;
}

void idx_facts_release(IdxFacts *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i]);
    free(f->v);
    memset(f, 0, sizeof *f);
}

static CrErr mark_text(IdxStore *st, StmtId id, const char *text, size_t len, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, id, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, text, (int)len, SQLITE_STATIC);
    return idx_store_step_done(st, s, e, "mark refs");
}

static const char *last_part(const char *q, size_t len, size_t *out_len)
{
    const char *d = q + len;
    while (d > q && d[-1] != '.')
        d--;
    *out_len = len - (size_t)(d - q);
    return d;
}

/* The calls named like a method of the class qualified q[0..len), when
 * some class is an interface its implementations need not name: which
 * types implement it moves with any of their methods (graph_types.c). */
static CrErr mark_siblings(IdxStore *st, const char *q, size_t len, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_CLASS_WITH_IFACES, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, q, (int)len, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, IDX_KIND_CLASS);
    int row = 0;
    CrErr rc = idx_store_step(st, s, &row, e, "mark refs");
    sqlite3_reset(s);
    if (rc || !row) return rc;
    return mark_text(st, STMT_REF_DIRTY_BY_SIBLINGS, q, len, e);
}

/* The references one fact that came or went can resolve through. */
static CrErr mark_fact(IdxStore *st, const char *module, const char *fact, ErrInfo *e)
{
    const char *a = fact + 2, *tab = strchr(a, '\t');
    if (!tab || fact[1] != '\t') return CR_OK;
    const char *b = tab + 1;
    size_t alen = (size_t)(tab - a), n;
    CrErr rc = CR_OK;
    StrBuf q;
    sb_init(&q);
    switch (fact[0]) {
    case 'D': /* qualname, name: lookups by either, and aliases bound to it; a
               * method: the calls of its class's others (an implicit interface's) */
        rc = mark_text(st, STMT_REF_DIRTY_BY_LAST, b, strlen(b), e);
        if (!rc) rc = mark_text(st, STMT_REF_DIRTY_BY_ALIAS, a, alen, e);
        last_part(a, alen, &n);
        if (!rc && n < alen) rc = mark_siblings(st, a, alen - n - 1, e);
        break;
    case 'I': /* alias, target: a re-export reached as module.alias */
        if (alen == 1 && a[0] == '*') {
            rc = mark_text(st, STMT_REF_DIRTY_BY_MODULE_NAMES, b, strlen(b), e);
            break;
        }
        rc = mark_text(st, STMT_REF_DIRTY_BY_LAST, a, alen, e);
        sb_addf(&q, "%s%s%.*s", module, module[0] ? "." : "", (int)alen, a);
        if (!rc) rc = mark_text(st, STMT_REF_DIRTY_BY_ALIAS, q.buf, q.len, e);
        break;
    case 'M': /* method name, its container and a base it names: calls that dispatch
               * through an interface (graph.c dispatch_targets) by the method's name */
        rc = mark_text(st, STMT_REF_DIRTY_BY_LAST, a, alen, e);
        break;
    case 'T': { /* "=X:T" on a module's scope (package_vars): the calls "X.m" in its
                 * other files (typed ones, "X().m", are marked as all typed calls) */
        size_t pre = strlen(IDX_REF_TYPE_FACT), vn = strcspn(b + pre, ":.#()");
        if (strncmp(b, IDX_REF_TYPE_FACT, pre) || !vn || b[pre + vn] != ':' ||
            (alen && (alen != vn || memcmp(a, b + pre, vn))))
            break;
        sqlite3_stmt *s = idx_store_stmt(st, STMT_REF_DIRTY_CALLS_BY_ROOT, e);
        if (!s) {
            rc = CR_EDB;
            break;
        }
        sqlite3_bind_text(s, 1, b + pre, (int)vn, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, REF_CALL);
        rc = idx_store_step_done(st, s, e, "mark refs");
        break;
    }
    case 'S': /* "field.function" stored: the calls through the field */
        rc = idx_graph_store_mark(st, a, strcspn(a, "."), e);
        break;
    case 'F': { /* module, has chunks: the module itself, and what is looked up inside it */
        const char *last = last_part(a, alen, &n);
        rc = mark_text(st, STMT_REF_DIRTY_BY_LAST, last, n, e);
        if (!rc) rc = mark_text(st, STMT_REF_DIRTY_BY_ALIAS, a, alen, e);
        break;
    }
    }
    sb_release(&q);
    return rc;
}

/* The facts that decide how classes inherit (class bases, classes, and
 * the imports a base is resolved through) of f, sorted, in out. */
static void class_facts(IdxFacts *f, IdxFacts *out)
{
    sort_facts(f);
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i][0] == 'B' || f->v[i][0] == 'C' || f->v[i][0] == 'I') facts_add(out, f->v[i]);
}

int idx_facts_classes_differ(IdxFacts *old, IdxFacts *now)
{
    IdxFacts a = {0}, b = {0};
    class_facts(old, &a);
    class_facts(now, &b);
    int differ = a.n != b.n;
    for (size_t i = 0; i < a.n && !differ; i++)
        differ = strcmp(a.v[i], b.v[i]) != 0;
    free(a.v); /* borrowed strings */
    free(b.v);
    return differ;
}

/* The module the facts are of (the F fact's), or "". Borrowed up to the tab. */
static const char *facts_module(const IdxFacts *f, size_t *len)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i][0] == 'F' && f->v[i][1] == '\t') {
            const char *m = f->v[i] + 2, *tab = strchr(m, '\t');
            *len = tab ? (size_t)(tab - m) : strlen(m);
            return m;
        }
    return NULL;
}

/* The files that import module (or a name in it) in a language that
 * resolves imports against the filesystem: what they import may resolve to
 * another file, or none, now that it is gone. Noted in st->reread. */
/* Notes the paths a bound statement yields (column 0) in st->reread, those
 * of a language that resolves imports against the filesystem; resets it. */
static CrErr reread_paths(IdxStore *st, sqlite3_stmt *s, ErrInfo *e)
{
    int row = 0;
    CrErr rc;
    while (!(rc = idx_store_step(st, s, &row, e, "importers")) && row) {
        const char *path = (const char *)sqlite3_column_text(s, 0);
        const IdxLang *lang = path ? idx_lang_for_path(path) : NULL;
        if (!lang || !lang->resolve_import) continue;
        ARRAY_GROW(st->reread, st->n_reread + 1, st->cap_reread);
        st->reread[st->n_reread++] = xstrdup(path);
    }
    sqlite3_reset(s);
    return rc;
}

static CrErr note_importers(IdxStore *st, const char *module, size_t len, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_IMPORTERS_OF_MODULE, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, module, (int)len, SQLITE_TRANSIENT);
    return reread_paths(st, s, e);
}

/* The last two runs of name characters of s (up to len), in a and b ("" for
 * none): "../util/Scheduler" -> util, Scheduler; "a/b.h" -> b, h;
 * "src.internal.Scheduler" -> internal, Scheduler. */
static void last_two_names(const char *s, size_t len, StrBuf *a, StrBuf *b)
{
    const char *runs[2] = {NULL, NULL};
    size_t lens[2] = {0, 0};
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == '_' || c == '-' || c >= 0x80 || (c >= '0' && c <= '9') ||
              ((c | 32) >= 'a' && (c | 32) <= 'z'))) {
            i++;
            continue;
        }
        size_t k = i;
        while (k < len &&
               (s[k] == '_' || s[k] == '-' || (unsigned char)s[k] >= 0x80 ||
                (s[k] >= '0' && s[k] <= '9') || ((s[k] | 32) >= 'a' && (s[k] | 32) <= 'z')))
            k++;
        runs[0] = runs[1];
        lens[0] = lens[1];
        runs[1] = s + i;
        lens[1] = k - i;
        i = k;
    }
    if (runs[0]) sb_add(a, runs[0], lens[0]);
    if (runs[1]) sb_add(b, runs[1], lens[1]);
}

CrErr idx_facts_add_pending(IdxStore *st, int64_t file_id, const char *spec, ErrInfo *e)
{
    StrBuf k[2];
    sb_init(&k[0]);
    sb_init(&k[1]);
    last_two_names(spec ? spec : "", spec ? strlen(spec) : 0, &k[0], &k[1]);
    CrErr rc = CR_OK;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!k[i].len || (i == 1 && k[0].len && !strcmp(k[0].buf, k[1].buf))) continue;
        sqlite3_stmt *s = idx_store_stmt(st, STMT_IMPORT_INSERT, e);
        if (!s) {
            rc = CR_EDB;
            break;
        }
        sqlite3_bind_int64(s, 1, file_id);
        sqlite3_bind_text(s, 2, "", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, k[i].buf, (int)k[i].len, SQLITE_STATIC);
        rc = idx_store_step_done(st, s, e, "import");
    }
    sb_release(&k[0]);
    sb_release(&k[1]);
    return rc;
}

/* A module appeared: the files whose imports found no file under its last
 * names read again, in a language that resolves against the filesystem. */
static CrErr note_pending(IdxStore *st, const char *module, ErrInfo *e)
{
    StrBuf k[2];
    sb_init(&k[0]);
    sb_init(&k[1]);
    last_two_names(module, strlen(module), &k[0], &k[1]);
    CrErr rc = CR_OK;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_IMPORTERS_PENDING, e);
    if (!s) rc = CR_EDB;
    if (!rc) {
        sqlite3_bind_text(s, 1, k[0].buf ? k[0].buf : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, k[1].buf ? k[1].buf : "", -1, SQLITE_TRANSIENT);
        rc = reread_paths(st, s, e);
    }
    sb_release(&k[0]);
    sb_release(&k[1]);
    return rc;
}

/* A type fact or a class's bases changed: every call whose receiver is
 * typed through facts is resolved again (facts lead to facts, in any file). */
static CrErr mark_typed_calls(IdxStore *st, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v3(st->db, TYPED_CALLS_SQL, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) !=
        SQLITE_OK)
        return idx_store_err(st, e, "typed calls");
    sqlite3_bind_int(s, 1, REF_CALL);
    CrErr rc = idx_store_step_done(st, s, e, "typed calls");
    sqlite3_finalize(s);
    return rc;
}

CrErr idx_facts_mark(IdxStore *st, IdxFacts *old, IdxFacts *now, ErrInfo *e)
{
    size_t mlen = 0;
    const char *m = facts_module(now, &mlen);
    if (!m) m = facts_module(old, &mlen);
    char *module = xstrndup(m ? m : "", mlen);
    sort_facts(old);
    sort_facts(now);
    size_t i = 0, k = 0;
    int typed = 0, stars = 0;
    CrErr rc = CR_OK;
    while (!rc && (i < old->n || k < now->n)) {
        int c = i == old->n ? 1 : k == now->n ? -1 : strcmp(old->v[i], now->v[k]);
        if (c == 0) {
            i++;
            k++;
            continue;
        }
        const char *fact = c < 0 ? old->v[i++] : now->v[k++];
        /* B and C facts work through the class graph (idx_facts_mark_subclasses) */
        if (fact[0] != 'B' && fact[0] != 'C') rc = mark_fact(st, module, fact, e);
        typed = typed || fact[0] == 'T' || fact[0] == 'B';
        stars = stars || !strncmp(fact, "I\t*\t", 4);
    }
    if (!rc && typed) rc = mark_typed_calls(st, e);
    /* the file's own includes decide which of several definitions of its
     * names a call elsewhere links to (idx_graph_linked_function) */
    for (size_t j = 0; stars && !rc && j < old->n + now->n; j++) {
        const char *f = j < old->n ? old->v[j] : now->v[j - old->n];
        const char *name = f[0] == 'D' && f[1] == '\t' ? strchr(f + 2, '\t') : NULL;
        if (name) rc = mark_text(st, STMT_REF_DIRTY_BY_LAST, name + 1, strlen(name + 1), e);
    }
    size_t olen = 0, nlen = 0;
    const char *om = facts_module(old, &olen), *nm = facts_module(now, &nlen);
    if (!rc && om && !nm) rc = note_importers(st, module, strlen(module), e);
    if (!rc && nm && !om) rc = note_pending(st, module, e);
    free(module);
    return rc;
}

CrErr idx_facts_mark_subclasses(IdxStore *st, int64_t class_id, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_REF_DIRTY_SUBCLASS_CALLS, e);
    if (!s) return CR_EDB;
    sqlite3_bind_int64(s, 1, class_id);
    sqlite3_bind_int(s, 2, IDX_EDGE_INHERIT);
    sqlite3_bind_int(s, 3, REF_CALL);
    return idx_store_step_done(st, s, e, "mark subclass calls");
}
