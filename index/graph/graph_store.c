/* graph_store.c - dispatch through C ops tables: a call through a field
 * (`class->pick_next_task(rq)`, rows with field_calls) reaches the
 * functions designated initializers store in a field of that name
 * (`.pick_next_task = pick_next_task_fair`, REF_STORE), each read where it
 * is stored (a static function of the table's file). A field stored from
 * many tables (`.open`, `.probe`) says nothing of which one a call means:
 * past STORE_SCAN stores, or STORE_FUNCS functions, the call reaches none. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(REF_STORE == 7, "IDX_REF_STORE_SQL is REF_STORE's value, the last kind");

/* Most stores of one field read (a field stored more often is generic),
 * and most distinct functions a call through it reaches. */
enum { STORE_SCAN = 32, STORE_FUNCS = 6 };
_Static_assert((int)STORE_FUNCS <= (int)DISPATCH_MAX, "a call's targets fit in DISPATCH_MAX");

/* Memo keys: the field after a byte no qualified name holds; its count of
 * targets (-1: none) and each target under "field\001k". */
#define STORE_MEMO "\x03"

typedef struct Store {
    char *fn, *path, *module, *symbol;
    int64_t file_id, chunk_id;
} Store;

/* The stores of field (at most STORE_SCAN + 1, into v); returns the count. */
static size_t stores_read(Resolver *r, const char *field, Store *v)
{
    sqlite3_stmt *s = idx_graph_stmt(r, STMT_STORES_OF_FIELD);
    if (!s) return 0;
    StrBuf lo, hi;
    sb_init(&lo);
    sb_init(&hi);
    sb_addf(&lo, "%s.", field);
    sb_addf(&hi, "%s/", field); /* '/' follows '.' */
    sqlite3_bind_text(s, 1, lo.buf, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, hi.buf, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, STORE_SCAN + 1);
    size_t n = 0;
    while (n <= STORE_SCAN && idx_graph_step(r, s)) {
        v[n].fn = idx_store_col_dup(s, 0);
        v[n].file_id = sqlite3_column_int64(s, 1);
        v[n].chunk_id = sqlite3_column_int64(s, 2);
        v[n].path = idx_store_col_dup(s, 3);
        v[n].module = idx_store_col_dup(s, 4);
        v[n].symbol = idx_store_col_dup(s, 5);
        n++;
    }
    sqlite3_reset(s);
    sb_release(&lo);
    sb_release(&hi);
    return n;
}

/* The distinct functions the stores name, each looked up as a value named
 * where it is stored (at most STORE_FUNCS, into out); -1 when there are
 * more. */
static long stores_resolve(Resolver *r, const Store *v, size_t n, int64_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n && r->rc == CR_OK; i++) {
        RefRow row = {.id = 0,
                      .file_id = v[i].file_id,
                      .chunk_id = v[i].chunk_id,
                      .kind = REF_VALUE,
                      .name = v[i].fn,
                      .module = v[i].module ? v[i].module : (char *)"",
                      .symbol = v[i].symbol ? v[i].symbol : (char *)"",
                      .lang = v[i].path ? idx_lang_for_file(&r->st->lang_pick, v[i].path) : NULL,
                      .strict = 0};
        if (!row.name) continue;
        int64_t id = idx_graph_resolve_expr(r, &row);
        idx_graph_memo_end_ref(r);
        size_t k = 0;
        while (k < m && out[k] != id)
            k++;
        if (!id || k < m) continue;
        if (m == STORE_FUNCS) return -1;
        out[m++] = id;
    }
    return (long)m;
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
    for (size_t i = 0; i < ns; i++) {
        free(v[i].fn);
        free(v[i].path);
        free(v[i].module);
        free(v[i].symbol);
    }
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
