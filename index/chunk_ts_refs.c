/* chunk_ts_refs.c - references once the units are known: members named
 * without `this`, and the order a chunk's edges are stored in. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

/* With an implicit `this`, a bare name used in a method that names a
 * member of the method's class (or of a class around it) defined in this
 * file is that member: the reference becomes its qualified symbol. */
void idx_chunk_ts_member_refs(TsRun *r)
{
    StrMap syms;
    StrBuf q;
    strmap_init(&syms);
    sb_init(&q);
    for (size_t i = 0; i < r->em.n_units; i++)
        strmap_put(&syms, r->em.units[i].symbol, 1);
    for (size_t i = 0; i < r->em.n_refs; i++) {
        ChunkRef *ref = &r->em.refs[i];
        if (ref->kind != REF_CALL || !ref->name || strchr(ref->name, '.') || ref->line < 1 ||
            ref->line > r->em.n_lines)
            continue;
        int o = r->em.owner[ref->line];
        if (o < 0) continue;
        const EmitUnit *u = &r->em.units[o];
        if (u->kind != IDX_KIND_METHOD) continue;
        /* the method's class, then the classes around it (Java's inner
         * classes see their outer class's members) */
        size_t n = strlen(u->symbol);
        int found = 0;
        while (!found && n) {
            while (n && u->symbol[n - 1] != '.')
                n--;
            if (!n) break;
            sb_reset(&q);
            sb_add(&q, u->symbol, n);
            sb_adds(&q, ref->name);
            found = strmap_get(&syms, q.buf, NULL);
            n--;
        }
        if (!found) continue;
        free(ref->name);
        ref->name = sb_detach(&q, NULL); /* "Outer.Inner.name": resolved in the file's module */
    }
    sb_release(&q);
    strmap_release(&syms);
}

/* Calls of functions this file defines lead a chunk's calls: a
 * function's own module's helpers are the steps of what it does, more
 * often than the calls it makes into other modules' interfaces. */
void idx_chunk_ts_local_calls_first(TsRun *r)
{
    if (!r->first_type) return;
    StrMap names;
    strmap_init(&names);
    for (size_t i = 0; i < r->em.n_units; i++)
        if (r->em.units[i].kind != IDX_KIND_CLASS) strmap_put(&names, r->em.units[i].name, 1);
    size_t n = r->first_type, k = 0;
    ChunkRef *v = xmalloc((n + 1) * sizeof *v);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            const ChunkRef *ref = &r->em.refs[i];
            const char *last = ref->name ? strrchr(ref->name, '.') : NULL;
            last = last ? last + 1 : ref->name;
            int local = ref->kind == REF_CALL && last && strmap_get(&names, last, NULL);
            if (local == !pass) v[k++] = *ref;
        }
    memcpy(r->em.refs, v, n * sizeof *v);
    free(v);
    strmap_release(&names);
}
