/* graph_row.c - one reference looked up (reads only), and the resolver
 * that looks it up: below both the serial pass (graph.c) and the threads
 * that look up a page at a time (graph_par.c). */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

size_t idx_graph_lookup_row(Resolver *r, const RefRow *row, int64_t *dst)
{
    size_t nd = 0;
    dst[0] = 0;
    if (row->kind == REF_STORE) return 0; /* a fact for calls through its field */
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
    if (dst[0] && row->kind == REF_CALL && row->argc >= 0 && row->lang && row->lang->overloads &&
        !r->rc)
        dst[0] = idx_graph_overload(r, dst[0], row->argc);
    if (dst[0])
        nd = 1 + (row->kind == REF_CALL && strstr(row->name, "().")
                      ? idx_graph_implementations(r, dst[0], dst + 1, DISPATCH_MAX - 1)
                      : 0);
    else if (!r->rc)
        nd = idx_graph_dispatch(r, row, dst);
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
}
