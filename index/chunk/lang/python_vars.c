/* python_vars.c - the variables python_types.c infers a type for: a
 * function's or the module's names, a class's attributes (self.name), with
 * what they were assigned, declared or narrowed to; a mapping's values; isinstance guards. */
#include "python_int.h"

#include <stdlib.h>

void idx_py_var_put(PyTypes *t, int scope, int attr, const char *name, size_t len, const char *type,
                    int declared)
{
    for (size_t i = 0; i < t->n; i++) {
        PyVar *v = &t->v[i];
        if (v->scope != scope || v->attr != attr || strlen(v->name) != len ||
            memcmp(v->name, name, len) != 0)
            continue;
        if (declared && !v->declared) {
            free(v->type);
            v->type = type ? xstrdup(type) : NULL;
            v->declared = 1;
        } else if (v->declared) {
            if (declared && v->type && (!type || strcmp(v->type, type) != 0)) {
                free(v->type);
                v->type = NULL;
                v->narrow = 2;
            } else if (!declared && !v->narrow && !v->type) {
                v->type = type ? xstrdup(type) : NULL;
                v->narrow = type ? 1 : 2;
            } else if (!declared && v->narrow == 1 && (!type || strcmp(v->type, type) != 0)) {
                free(v->type);
                v->type = NULL;
                v->narrow = 2;
            }
        } else if (v->type && (!type || strcmp(v->type, type) != 0)) {
            free(v->type);
            v->type = NULL;
        }
        return;
    }
    ARRAY_GROW(t->v, t->n + 1, t->cap);
    t->v[t->n++] = (PyVar){.scope = scope,
                           .attr = attr,
                           .name = xstrndup(name, len),
                           .type = type ? xstrdup(type) : NULL,
                           .declared = declared};
}

void idx_py_var_tail(PyTypes *t, int scope, const char *name, size_t len, const char *type,
                     uint32_t line)
{
    for (size_t i = 0; i < t->n; i++) {
        PyVar *v = &t->v[i];
        if (v->scope != scope || v->attr || strlen(v->name) != len || memcmp(v->name, name, len))
            continue;
        free(v->tail);
        v->tail = type ? xstrdup(type) : NULL;
        for (int k = 0; k < v->n_in; k++)
            if (line >= v->in[k].from && line <= v->in[k].to) { /* assigned in the block */
                free(v->in[k].type);
                v->in[k].type = NULL;
            }
        v->tail_line = type ? line : 0;
        return;
    }
}

const PyVar *idx_py_var_get(const PyTypes *t, int scope, int attr, const char *name, size_t len)
{
    for (size_t i = 0; i < t->n; i++) {
        const PyVar *v = &t->v[i];
        if (v->scope == scope && v->attr == attr && strlen(v->name) == len &&
            !memcmp(v->name, name, len))
            return v;
    }
    return NULL;
}

int idx_py_mapping_value(ChunkRun *r, PyTypes *t, TSNode rhs, int scope)
{
    const ChunkSyms *sy = r->sy;
    TSNode obj = {0};
    if (ts_node_symbol(rhs) == sy->subscript) {
        obj = ts_node_child_by_field_id(rhs, sy->f_value);
    } else if (ts_node_symbol(rhs) == sy->call) {
        TSNode fn = ts_node_child_by_field_id(rhs, sy->f_function);
        if (ts_node_is_null(fn) || ts_node_symbol(fn) != sy->attribute) return 0;
        TSNode m = ts_node_child_by_field_id(fn, sy->f_attribute);
        if (ts_node_is_null(m) || !(idx_py_text_is(r, m, "get") || idx_py_text_is(r, m, "pop") ||
                                    idx_py_text_is(r, m, "setdefault")))
            return 0;
        obj = ts_node_child_by_field_id(fn, sy->f_object);
    }
    return idx_py_values_of(r, t, obj, scope);
}

int idx_py_values_of(ChunkRun *r, PyTypes *t, TSNode obj, int scope)
{
    if (ts_node_is_null(obj)) return 0;
    StrBuf k;
    sb_init(&k);
    idx_py_squeezed(r, obj, &k);
    sb_adds(&k, "{}");
    const PyVar *v = NULL;
    int cls = scope >= 0 && r->units[scope].kind == IDX_KIND_METHOD ? r->units[scope].parent : -1;
    if (k.len > 5 && !memcmp(k.buf, "self.", 5)) {
        if (cls >= 0) v = idx_py_var_get(t, cls, 1, k.buf + 5, k.len - 5);
    } else {
        for (int s = scope; s >= 0 && !v; s = r->units[s].parent)
            if (r->units[s].kind != IDX_KIND_CLASS) v = idx_py_var_get(t, s, 0, k.buf, k.len);
        if (!v) v = idx_py_var_get(t, -1, 0, k.buf, k.len);
    }
    sb_release(&k);
    if (!v || !v->type) return 0;
    sb_reset(&t->t);
    sb_adds(&t->t, v->type);
    return 1;
}

void idx_py_note_guard(ChunkRun *r, PyTypes *t, TSNode st, int scope, int top)
{
    const ChunkSyms *sy = r->sy;
    TSNode c = ts_node_child_by_field_id(st, sy->f_condition);
    TSNode then = ts_node_child_by_field_id(st, sy->f_consequence);
    if (ts_node_is_null(c) || ts_node_is_null(then)) return;
    int neg = ts_node_symbol(c) == sy->not_operator;
    uint32_t k = ts_node_named_child_count(then);
    TSNode last = k ? ts_node_named_child(then, k - 1) : (TSNode){0};
    if (neg && (!top || !ts_node_is_null(ts_node_child_by_field_id(st, sy->f_alternative)) ||
                ts_node_is_null(last) ||
                (ts_node_symbol(last) != sy->return_statement &&
                 ts_node_symbol(last) != sy->raise_statement)))
        return;
    TSNode call = neg ? ts_node_child_by_field_id(c, sy->f_argument) : c;
    if (ts_node_is_null(call) || ts_node_symbol(call) != sy->call) return;
    TSNode fn = ts_node_child_by_field_id(call, sy->f_function);
    TSNode args = ts_node_child_by_field_id(call, sy->f_arguments);
    if (ts_node_is_null(fn) || !idx_py_text_is(r, fn, "isinstance") || ts_node_is_null(args) ||
        ts_node_named_child_count(args) != 2)
        return;
    TSNode x = ts_node_named_child(args, 0), cls = ts_node_named_child(args, 1);
    if (ts_node_symbol(x) != sy->identifier) return;
    StrBuf ty;
    sb_init(&ty);
    idx_py_squeezed(r, cls, &ty);
    uint32_t a = ts_node_start_byte(x), b = ts_node_end_byte(x);
    if (idx_py_is_chain(ty.buf ? ty.buf : "", ty.len) && b <= r->len) {
        if (!idx_py_var_get(t, scope, 0, r->src + a, b - a))
            idx_py_var_put(t, scope, 0, r->src + a, b - a, NULL, 0);
        PyVar *v = (PyVar *)idx_py_var_get(t, scope, 0, r->src + a, b - a);
        if (neg) {
            idx_py_var_tail(t, scope, r->src + a, b - a, ty.buf, ts_node_end_point(st).row + 1);
        } else { /* `if isinstance(x, C):` x is a C in the block (the last such block) */
            if (v->n_in < IDX_PY_BLOCKS) {
                v->in[v->n_in].type = xstrndup(ty.buf, ty.len);
                v->in[v->n_in].from = ts_node_start_point(then).row + 1;
                v->in[v->n_in++].to = ts_node_end_point(then).row + 1;
            }
        }
    }
    sb_release(&ty);
}

void idx_py_vars_release(PyTypes *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].type);
        free(t->v[i].tail);
        for (int k = 0; k < t->v[i].n_in; k++)
            free(t->v[i].in[k].type);
    }
    free(t->v);
    sb_release(&t->t);
}
