/* graph_row.c - one reference looked up (reads only), and the resolver
 * that looks it up: below both the serial pass (graph.c) and the threads
 * that look up a page at a time (graph_par.c). */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* Whether chunk id is a macro (its body's mark, IDX_REF_MACRO_MARK). */
static int is_macro(Resolver *r, int64_t id)
{
    size_t n = 0;
    char *const *v = idx_graph_chunk_refs(r, id, REF_EXPAND, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], IDX_REF_MACRO_MARK)) return 1;
    return 0;
}

/* The macro a definition is written by (IDX_REF_WRITER "#.NAME"): the one
 * macro named NAME, or 0 (none, or several: never a function). */
static int64_t writer_macro(Resolver *r, const RefRow *row)
{
    int64_t ids[64], v = 0;
    size_t k = idx_graph_symbol_ids(r, row->name + strlen(IDX_REF_WRITER), ids, 64);
    if (k == 64) return 0; /* maybe more: none rather than some (the same in any order) */
    for (size_t i = 0; i < k && v >= 0 && !r->rc; i++)
        if (is_macro(r, ids[i])) v = v ? -1 : ids[i];
    return v > 0 ? v : 0;
}

/* A call of class chunk cls (`Foo(x)`, `new Foo(x)`, `Foo f(x);`) in a row
 * with constructor_calls: its constructor (the member named as the class,
 * defined in it or out of line; the overload taking as many arguments),
 * else nothing: a class that defines none, or a type (an alias, an enum:
 * their chunks are classes too), is built without a call of the
 * workspace's (its name is a type reference already). Any other chunk:
 * as found. */
static int64_t constructor_of(Resolver *r, int64_t cls, const RefRow *row, int64_t *also,
                              size_t *n_also)
{
    if (idx_graph_chunk_kind(r, cls) != IDX_KIND_CLASS) return cls;
    char *sym = idx_graph_chunk_symbol(r, cls);
    const char *name = sym ? strrchr(sym, '.') : NULL;
    int64_t m = sym ? idx_graph_member_out_of_line(r, cls, name ? name + 1 : sym) : 0;
    free(sym);
    if (m && row->lang->overloads && !r->rc) m = idx_graph_overload(r, m, row, also, 8, n_also);
    return r->rc ? cls : m;
}

/* An object built of the type a construction names (IDX_REF_CONSTRUCT):
 * the constructor of the class that name finds (a field's, in a method of
 * its class: an initializer list's `result_()`), or 0 (a function, a
 * method, a class without a constructor of its own). */
static int64_t construct_target(Resolver *r, const RefRow *row)
{
    RefRow t = *row;
    t.name = row->name + strlen(IDX_REF_CONSTRUCT);
    /* a field built with no arguments in a constructor's list (`result_()`):
     * its type (with arguments it may hold an address, `builder_(b)`, which
     * the field's type fact does not say) */
    int64_t c = row->argc == 0 ? idx_graph_field_class(r, &t) : 0;
    if (!c && !r->rc) c = idx_graph_resolve_expr(r, &t);
    if (!c && !r->rc) c = idx_graph_declared_function(r, &t);
    int cls = c && !r->rc && idx_graph_chunk_kind(r, c) == IDX_KIND_CLASS;
    int64_t also[8];
    size_t n_also = 0;
    return cls && !r->rc ? constructor_of(r, c, &t, also, &n_also) : 0;
}

size_t idx_graph_lookup_row(Resolver *r, const RefRow *row, int64_t *dst)
{
    size_t nd = 0;
    dst[0] = 0;
    if (row->kind == REF_STORE) return 0; /* a fact for calls through its field */
    if (row->kind == REF_CALL &&
        !strncmp(row->name, IDX_REF_CONSTRUCT, strlen(IDX_REF_CONSTRUCT))) {
        dst[0] = row->lang && row->lang->constructor_calls ? construct_target(r, row) : 0;
        idx_graph_memo_end_ref(r);
        return r->rc || !dst[0] ? 0 : 1;
    }
    if (row->kind == REF_CALL && !strncmp(row->name, IDX_REF_WRITER, strlen(IDX_REF_WRITER))) {
        dst[0] = writer_macro(r, row);
        idx_graph_memo_end_ref(r);
        return r->rc || !dst[0] ? 0 : 1;
    }
    if (row->kind == REF_IMPORT)
        dst[0] = idx_graph_resolve_qualified(r, row->name, 0);
    else if (row->kind == REF_EXPAND && !strcmp(row->name, IDX_REF_MACRO_MARK))
        dst[0] = row->chunk_id; /* the macro's mark */
    else if (!idx_graph_typed(r, row, &dst[0]) && !r->rc &&
             !idx_graph_field_call(r, row, &dst[0]) && !r->rc &&
             !(dst[0] = idx_graph_class_call(r, row)) && !r->rc)
        dst[0] = idx_graph_resolve_expr(r, row);
    if (!dst[0] && row->kind == REF_CALL && !r->rc) dst[0] = idx_graph_resolve_inherited(r, row);
    if (!dst[0] && !r->rc) dst[0] = idx_graph_declared_function(r, row);
    if (!dst[0] && !r->rc) dst[0] = idx_graph_linked_function(r, row);
    int64_t also[8];
    size_t n_also = 0;
    if (dst[0] && row->kind == REF_CALL && row->argc >= 0 && row->lang && row->lang->overloads &&
        !r->rc)
        dst[0] = idx_graph_overload(r, dst[0], row, also, 8, &n_also);
    if (dst[0] && row->kind == REF_CALL && row->lang && row->lang->constructor_calls && !r->rc)
        dst[0] = constructor_of(r, dst[0], row, also, &n_also);
    if (dst[0])
        nd = 1 + (row->kind == REF_CALL && strstr(row->name, "().")
                      ? idx_graph_implementations(r, dst[0], dst + 1, DISPATCH_MAX - 1)
                      : 0);
    else if (!r->rc)
        nd = idx_graph_dispatch(r, row, dst);
    for (size_t i = 0; nd && i < n_also && nd < DISPATCH_MAX; i++)
        dst[nd++] = also[i];
    int call = row->kind == REF_CALL ||
               (row->kind == REF_EXPAND && strcmp(row->name, IDX_REF_MACRO_MARK) != 0);
    if (nd && call && row->lang && row->lang->out_of_line_members && !r->rc)
        nd += idx_graph_twins(r, dst[0], dst + nd, DISPATCH_MAX - nd);
    if (!nd && !r->rc) nd = idx_graph_store_calls(r, row, dst);
    idx_graph_memo_end_ref(r);
    return r->rc ? 0 : nd;
}

void idx_graph_memo_forget(Resolver *r)
{
    strmap_release(&r->memo);
    strmap_init(&r->memo);
    idx_graph_tops_clear(r);
    idx_graph_chunk_refs_forget(r);
    idx_graph_implementations_forget(r);
    idx_graph_imports_forget(r);
}

void idx_graph_resolver_init(Resolver *r, IdxStore *st, ErrInfo *e)
{
    *r = (Resolver){0};
    r->st = st;
    r->e = e;
    r->rc = CR_OK;
    strmap_init(&r->memo);
    strmap_init(&r->top);
    i64map_init(&r->refs_chunks);
    i64map_init(&r->refs_files);
    strmap_init(&r->impl_of);
    strmap_init(&r->module_ids);
    i64map_init(&r->imps_of);
    i64map_init(&r->reach.files);
    i64map_init(&r->reach.prefixes);
}

void idx_graph_resolver_release(Resolver *r)
{
    idx_graph_tops_clear(r);
    strmap_release(&r->top);
    free(r->tops);
    idx_graph_implementations_forget(r);
    strmap_release(&r->impl_of);
    idx_graph_memo_end_ref(r);
    free(r->volatile_keys);
    strmap_release(&r->memo);
    idx_graph_chunk_refs_forget(r);
    i64map_release(&r->refs_chunks);
    i64map_release(&r->refs_files);
    idx_graph_imports_forget(r);
    strmap_release(&r->module_ids);
    i64map_release(&r->imps_of);
    idx_graph_reach_release(&r->reach);
}
