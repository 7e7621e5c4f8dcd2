/* graph_store.c - dispatch through C ops tables: a call through a field
 * (`class->pick_next_task(rq)`, rows with field_calls) reaches the
 * functions designated initializers store in a field of that name
 * (`.pick_next_task = pick_next_task_fair`, REF_STORE), each read where it
 * is stored (a static function of the table's file). A field stored from
 * many tables (`.open`, `.probe`) says nothing of which one a call means:
 * past STORE_SCAN stores, or STORE_FUNCS functions, the call reaches only
 * the implementations most of those tables share (stores_common). */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(REF_STORE == 7, "IDX_REF_STORE_SQL is REF_STORE's value, the last kind");

/* Most stores of one field read (a field stored more often is generic),
 * and most distinct functions a call through it reaches. */
enum { STORE_SCAN = 32, STORE_FUNCS = 6 };
_Static_assert((int)STORE_FUNCS <= (int)DISPATCH_MAX, "a call's targets fit in DISPATCH_MAX");

/* A function counts as shared by a field's tables when at least one store
 * in COMMON_SHARE and COMMON_MIN stores name it, and COMMON_MIN of the
 * first COMMON_SITES of them read it as the same function (a static
 * function of each table's own file is not shared, whatever its name). */
enum { COMMON_SHARE = 8, COMMON_MIN = 4, COMMON_SITES = 8 };

/* Memo keys: the field after a byte no qualified name holds; its count of
 * targets (-1: none) and each target under "field\001k". */
#define STORE_MEMO "\x03"

typedef struct Store {
    char *fn, *path, *module, *symbol;
    int64_t file_id, chunk_id;
} Store;

/* Binds ?1 and ?2 to the bounds of field's stores' names: from "field." to
 * "field/" ('/' follows '.'). */
static void stores_bind_range(sqlite3_stmt *s, const char *field)
{
    StrBuf b;
    sb_init(&b);
    sb_addf(&b, "%s.", field);
    sqlite3_bind_text(s, 1, b.buf, -1, SQLITE_TRANSIENT);
    b.buf[b.len - 1] = '/';
    sqlite3_bind_text(s, 2, b.buf, -1, SQLITE_TRANSIENT);
    sb_release(&b);
}

/* The rows statement s gives (at most max, into v); returns the count. */
static size_t stores_rows(Resolver *r, sqlite3_stmt *s, Store *v, size_t max)
{
    size_t n = 0;
    while (n < max && idx_graph_step(r, s)) {
        v[n].fn = idx_store_col_dup(s, 0);
        v[n].file_id = sqlite3_column_int64(s, 1);
        v[n].chunk_id = sqlite3_column_int64(s, 2);
        v[n].path = idx_store_col_dup(s, 3);
        v[n].module = idx_store_col_dup(s, 4);
        v[n].symbol = idx_store_col_dup(s, 5);
        n++;
    }
    sqlite3_reset(s);
    return n;
}

/* The stores of field (at most STORE_SCAN + 1, into v); returns the count. */
static size_t stores_read(Resolver *r, const char *field, Store *v)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_STORES_OF_FIELD);
    if (!s) return 0;
    stores_bind_range(s, field);
    sqlite3_bind_int(s, 3, STORE_SCAN + 1);
    size_t n = stores_rows(r, s, v, STORE_SCAN + 1);
    return n;
}

static void stores_free(Store *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].fn);
        free(v[i].path);
        free(v[i].module);
        free(v[i].symbol);
    }
}

/* The function a store names, looked up as a value named where it is
 * stored, or 0. */
static int64_t store_resolve(Resolver *r, const Store *v)
{
    RefRow row = {.id = 0,
                  .file_id = v->file_id,
                  .chunk_id = v->chunk_id,
                  .kind = REF_VALUE,
                  .name = v->fn,
                  .module = v->module ? v->module : (char *)"",
                  .symbol = v->symbol ? v->symbol : (char *)"",
                  .lang = v->path ? idx_lang_for_file(&r->st->lang_pick, v->path) : NULL,
                  .strict = 0};
    if (!row.name) return 0;
    int64_t id = idx_graph_resolve_expr(r, &row);
    idx_graph_memo_end_ref(r);
    return id;
}

/* The distinct functions the stores name, each looked up as a value named
 * where it is stored (at most STORE_FUNCS, into out); -1 when there are
 * more. */
static long stores_resolve(Resolver *r, const Store *v, size_t n, int64_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        int64_t id = store_resolve(r, &v[i]);
        size_t k = 0;
        while (k < m && out[k] != id)
            k++;
        if (!id || k < m) continue;
        if (m == STORE_FUNCS) return -1;
        out[m++] = id;
    }
    return (long)m;
}

typedef struct Common {
    char *qual;
    int64_t n;
} Common;

/* The function the first COMMON_SITES stores of qual ("field.fn") read as,
 * when COMMON_MIN of them agree, or 0. */
static int64_t common_function(Resolver *r, const char *qual)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_STORES_OF_QUAL);
    if (!s) return 0;
    sqlite3_bind_text(s, 1, qual, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, COMMON_SITES);
    Store v[COMMON_SITES];
    size_t n = stores_rows(r, s, v, COMMON_SITES);
    int64_t ids[COMMON_SITES], best = 0;
    int best_n = 0;
    for (size_t i = 0; i < n && r->rc == CR_OK; i++)
        ids[i] = store_resolve(r, &v[i]);
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        int c = 0;
        for (size_t k = 0; k < n; k++)
            c += ids[i] && ids[k] == ids[i];
        if (c > best_n) {
            best_n = c;
            best = ids[i];
        }
    }
    stores_free(v, n);
    return best_n >= COMMON_MIN ? best : 0;
}

/* The functions most tables storing field share (at most STORE_FUNCS, into
 * out, most stored first); returns the count. */
static long stores_common(Resolver *r, const char *field, int64_t *out)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_STORES_BY_FUNC);
    if (!s) return 0;
    stores_bind_range(s, field);
    Common *c = NULL;
    size_t nc = 0, cap = 0;
    int64_t total = 0;
    while (idx_graph_step(r, s)) {
        int64_t n = sqlite3_column_int64(s, 1);
        total += n;
        if (n < COMMON_MIN) continue;
        ARRAY_GROW(c, nc + 1, cap);
        c[nc].qual = idx_store_col_dup(s, 0);
        c[nc++].n = n;
    }
    sqlite3_reset(s);
    /* most stored first (ties: by name, as the rows came) */
    for (size_t i = 1; i < nc; i++)
        for (size_t k = i; k > 0 && c[k].n > c[k - 1].n; k--) {
            Common t = c[k];
            c[k] = c[k - 1];
            c[k - 1] = t;
        }
    long m = 0;
    for (size_t i = 0; i < nc && m < STORE_FUNCS && r->rc == CR_OK; i++) {
        if (!c[i].qual || c[i].n * COMMON_SHARE < total) continue;
        int64_t id = common_function(r, c[i].qual);
        long k = 0;
        while (k < m && out[k] != id)
            k++;
        if (id && k == m) out[m++] = id;
    }
    for (size_t i = 0; i < nc; i++)
        free(c[i].qual);
    free(c);
    return m;
}

size_t idx_graph_store_calls(Resolver *r, const RefRow *ref, int64_t *out)
{
    if (!ref->lang || !ref->lang->field_calls || ref->kind != REF_CALL) return 0;
    const char *dot = strrchr(ref->name, '.');
    if (!dot || !dot[1]) return 0;
    const char *field = dot + 1;
    StrBuf key;
    sb_init(&key);
    sb_addf(&key, STORE_MEMO "%s", field);
    int64_t n = 0;
    if (strmap_get(&r->memo, key.buf, &n)) {
        size_t len = key.len;
        for (int64_t k = 0; k < n; k++) {
            sb_truncate(&key, len);
            sb_addf(&key, "\x01%d", (int)k);
            strmap_get(&r->memo, key.buf, &out[k]);
        }
        sb_release(&key);
        return n > 0 ? (size_t)n : 0;
    }
    Store v[STORE_SCAN + 1];
    size_t ns = stores_read(r, field, v);
    long m = ns > STORE_SCAN ? -1 : stores_resolve(r, v, ns, out);
    stores_free(v, ns);
    if (m < 0 && r->rc == CR_OK) m = stores_common(r, field, out);
    if (r->rc == CR_OK) {
        size_t len = key.len;
        strmap_put(&r->memo, key.buf, m);
        for (long k = 0; k < m; k++) {
            sb_truncate(&key, len);
            sb_addf(&key, "\x01%d", (int)k);
            strmap_put(&r->memo, key.buf, out[k]);
        }
    }
    sb_release(&key);
    return m > 0 && r->rc == CR_OK ? (size_t)m : 0;
}

CrErr idx_graph_store_mark(IdxStore *st, const char *field, size_t len, ErrInfo *e)
{
    sqlite3_stmt *s = idx_store_stmt(st, STMT_REF_DIRTY_CALLS_BY_LAST, e);
    if (!s) return CR_EDB;
    sqlite3_bind_text(s, 1, field, (int)len, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, REF_CALL);
    return idx_store_step_done(st, s, e, "mark field calls");
}
