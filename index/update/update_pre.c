#include "update_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The files rows idx_update plans with, read while the scan walks the tree. */

static CrErr load_old_files(IdxStore *st, StrMap *by_path, UpdOldFile **out, size_t *n_out,
                            ErrInfo *e)
{
    UpdOldFile *v = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *s = idx_store_stmt(st, STMT_FILE_ALL, e);
    if (!s) return CR_EDB;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ARRAY_GROW(v, n + 1, cap);
        UpdOldFile *f = &v[n];
        f->id = sqlite3_column_int64(s, 0);
        /* copied by hand: a snprintf per row was a fifth of this read (55,000 files) */
        const char *h = (const char *)sqlite3_column_text(s, 2);
        size_t hn = h ? strnlen(h, sizeof f->hash - 1) : 0;
        memcpy(f->hash, h ? h : "", hn);
        f->hash[hn] = '\0';
        f->size = sqlite3_column_int64(s, 3);
        f->mtime_ns = sqlite3_column_int64(s, 4);
        const unsigned char *status = sqlite3_column_text(s, 5);
        f->ok = status && !strcmp((const char *)status, "ok");
        f->crashed = status && !strcmp((const char *)status, IDX_SKIP_PARSER_CRASHED);
        f->seen = 0;
        strmap_put(by_path, (const char *)sqlite3_column_text(s, 1), (int64_t)n);
        n++;
    }
    sqlite3_reset(s);
    *out = v;
    *n_out = n;
    if (rc != SQLITE_DONE) return idx_store_err(st, e, "files");
    return CR_OK;
}

void *idx_update_prefetch(void *arg)
{
    UpdPrefetch *p = arg;
    p->rc = load_old_files(p->st, p->by_path, &p->old, &p->n_old, &p->e);
    return NULL;
}
