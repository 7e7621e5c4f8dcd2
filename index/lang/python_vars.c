/* python_vars.c - the variables python_types.c infers a type for: a
 * function's or the module's names, a class's attributes (self.name), with
 * what they were assigned, declared or narrowed to. */
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
    t->v[t->n++] = (PyVar){
        scope, attr, xstrndup(name, len), type ? xstrdup(type) : NULL, declared, 0, NULL, 0};
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

void idx_py_vars_release(PyTypes *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].type);
        free(t->v[i].tail);
    }
    free(t->v);
    sb_release(&t->t);
}
