/* nav_cond.c - preprocessor conditions in navigation: the condition a
 * reference is compiled under, the variants of a definition written once
 * per #if branch, and definitions the build compiles ranked before those
 * it does not (idx_pp_cond decides, against compile_commands.json when the
 * workspace has one). */
#include "rtv_int.h"

#include <stdlib.h>
#include <string.h>

int rtv_built_rank(IdxBuilt b)
{
    return b == IDX_BUILT_YES ? 0 : b == IDX_BUILT_UNKNOWN ? 1 : 2;
}

static void cond_join(char **acc, IdxBuilt *built, char *cond, IdxBuilt b)
{
    *built = idx_built_and(*built, b);
    if (!cond) return;
    if (!*acc) {
        *acc = cond;
        return;
    }
    if (strcmp(*acc, cond)) {
        StrBuf sb;
        sb_init(&sb);
        sb_addf(&sb, "%s && %s", *acc, cond);
        free(*acc);
        *acc = sb_detach(&sb, NULL);
    }
    free(cond);
}

/* Whether target's condition holds for every call of it: a definition
 * under a branch with no variant elsewhere in its file (a variant's calls
 * reach the first variant, whatever the branch). */
static CrErr target_cond(IdxStore *st, const IdxChunk *target, char **cond, IdxBuilt *built,
                         ErrInfo *e)
{
    char *c = NULL;
    IdxBuilt b = IDX_BUILT_YES;
    CrErr rc = idx_pp_cond(st, target->file_id, target->start_line, target->end_line, &c, &b, e);
    if (rc || !c) return rc;
    int64_t *v = NULL;
    size_t nv = 0;
    rc = idx_variant_chunks(st, target->id, &v, &nv, e);
    free(v);
    if (!rc && !nv) {
        cond_join(cond, built, c, b);
        c = NULL;
    }
    free(c);
    return rc;
}

CrErr rtv_built_variant(IdxStore *st, const IdxChunk *c, int64_t *alt, ErrInfo *e)
{
    char *cond = NULL;
    IdxBuilt b = IDX_BUILT_YES;
    *alt = 0;
    CrErr rc = idx_pp_cond(st, c->file_id, c->start_line, c->end_line, &cond, &b, e);
    free(cond);
    if (rc || b == IDX_BUILT_YES) return rc;
    int64_t *v = NULL;
    size_t nv = 0;
    rc = idx_variant_chunks(st, c->id, &v, &nv, e);
    int best = rtv_built_rank(b);
    for (size_t i = 0; i < nv && !rc && best > 0; i++) {
        IdxChunk x;
        if (idx_chunk_get(st, v[i], &x, NULL) != CR_OK) continue;
        rc = idx_pp_cond(st, x.file_id, x.start_line, x.end_line, &cond, &b, e);
        free(cond);
        if (!rc && rtv_built_rank(b) < best) {
            best = rtv_built_rank(b);
            *alt = x.id;
        }
        idx_chunk_release(&x);
    }
    free(v);
    return rc;
}

CrErr rtv_site_cond(IdxStore *st, const IdxChunk *site, int64_t via, const IdxChunk *target,
                    const char *callee, char **cond, IdxBuilt *built, ErrInfo *e)
{
    char *c = NULL;
    IdxBuilt b = IDX_BUILT_YES;
    IdxChunk m = {0};
    int have_via = via && idx_chunk_get(st, via, &m, NULL) == CR_OK;
    *cond = NULL;
    *built = IDX_BUILT_YES;
    /* the name written at the call: the macro's when it goes through one */
    const char *name = callee;
    if (have_via) name = strrchr(m.symbol, '.') ? strrchr(m.symbol, '.') + 1 : m.symbol;
    CrErr rc =
        idx_pp_site_cond(st, site->file_id, site->start_line, site->end_line, name, &c, &b, e);
    if (!rc) cond_join(cond, built, c, b);
    if (!rc && have_via) {
        rc = idx_pp_cond(st, m.file_id, m.start_line, m.end_line, &c, &b, e);
        if (!rc) cond_join(cond, built, c, b);
    }
    idx_chunk_release(&m);
    if (!rc && target) rc = target_cond(st, target, cond, built, e);
    if (rc) {
        free(*cond);
        *cond = NULL;
    }
    return rc;
}

void rtv_variants_free(RtvVariant *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].cond);
    free(v);
}

CrErr rtv_def_variants(IdxStore *st, const RtvDef *d, RtvVariant **out, size_t *n_out, ErrInfo *e)
{
    RtvVariant *v = NULL;
    size_t n = 0, cap = 0;
    int any = 0;
    CrErr rc = CR_OK;
    for (size_t i = 0; i < d->n_pieces && !rc; i++) {
        IdxChunk c;
        if ((rc = idx_chunk_get(st, d->pieces[i], &c, e))) {
            if (rc == CR_ENOENT) rc = CR_OK;
            continue;
        }
        char *cond = NULL;
        IdxBuilt b = IDX_BUILT_YES;
        rc = idx_pp_cond(st, c.file_id, c.start_line, c.end_line, &cond, &b, e);
        if (!rc && n &&
            ((!cond && !v[n - 1].cond) ||
             (cond && v[n - 1].cond && !strcmp(cond, v[n - 1].cond)))) {
            if (c.end_line > v[n - 1].end_line) v[n - 1].end_line = c.end_line; /* one more piece */
            free(cond);
        } else if (!rc) {
            ARRAY_GROW(v, n + 1, cap);
            v[n++] = (RtvVariant){c.start_line, c.end_line, cond, b};
            any |= cond != NULL;
        }
        idx_chunk_release(&c);
    }
    if (rc || !any) {
        rtv_variants_free(v, n);
        v = NULL;
        n = 0;
    }
    *out = v;
    *n_out = n;
    return rc;
}

IdxBuilt rtv_variants_built(const RtvVariant *v, size_t n)
{
    IdxBuilt best = n ? IDX_BUILT_NO : IDX_BUILT_YES;
    for (size_t i = 0; i < n; i++)
        if (rtv_built_rank(v[i].built) < rtv_built_rank(best)) best = v[i].built;
    return best;
}

CrErr rtv_defs_built_first(IdxStore *st, RtvDef *defs, size_t n, const char *near_path,
                           uint32_t near_line, ErrInfo *e)
{
    if (n < 2) return CR_OK;
    int *rank = xcalloc(n, sizeof *rank);
    CrErr rc = CR_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        RtvVariant *v = NULL;
        size_t nv = 0;
        rc = rtv_def_variants(st, &defs[i], &v, &nv, e);
        int here = near_path && near_line && !strcmp(defs[i].head.path, near_path) &&
                   near_line >= defs[i].start_line && near_line <= defs[i].end_line;
        rank[i] = here ? -1 : rtv_built_rank(rtv_variants_built(v, nv));
        rtv_variants_free(v, nv);
    }
    if (!rc) {
        RtvDef *w = xmalloc(n * sizeof *w);
        size_t k = 0;
        for (int r = -1; r <= 2; r++)
            for (size_t i = 0; i < n; i++)
                if (rank[i] == r) w[k++] = defs[i];
        memcpy(defs, w, n * sizeof *w);
        free(w);
    }
    free(rank);
    return rc;
}
