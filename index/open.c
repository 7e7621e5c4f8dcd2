/*
 * open.c - a store assembled from the rooms: its index folder claimed
 * (store/index_dir.c), what it borrows from IdxShared, the dense leg
 * (dense/), the database checked, repaired or made (store/store.c); and
 * taken apart again.
 */
#include "store/store_int.h"
#include "dense/vec_int.h"
#include "pp/pp_int.h"
#include "chunk/lang/lang.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

void idx_process_init(void)
{
    idx_ts_process_init();
    /* SQLite counts its allocations for sqlite3_memory_used and a soft heap
     * limit, neither of which is used: each malloc and free of every
     * connection then takes a process-wide mutex (over a million times in a
     * cold build of Django, 3% of the writer's instructions). Before any
     * connection: later, SQLite refuses the setting and keeps counting. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

CrErr idx_open(const IdxConfig *cfg, unsigned flags, IdxStore **out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    IdxStore *st = NULL;
    char real[PATH_MAX];
    *out = NULL;
    if (!cfg || !cfg->root) return err_set(e, CR_EINVAL, "no workspace root given");
    struct stat sb;
    if (!realpath(cfg->root, real) || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return err_set(e, CR_ENOENT, "workspace root %s is not a readable directory", cfg->root);

    st = xcalloc(1, sizeof *st);
    st->index_fd = -1;
    st->root = xstrdup(real);
    int existing = (flags & (IDX_OPEN_READONLY | IDX_OPEN_EXISTING)) != 0;
    {
        /* index_dir.c: never a symlinked .coderag, the root or a folder of
         * someone else's files */
        StrBuf d;
        sb_init(&d);
        if (cfg->index_dir)
            sb_adds(&d, cfg->index_dir);
        else
            sb_addf(&d, "%s/" IDX_DIR_NAME, st->root);
        rc = idx_dir_claim(st->root, d.buf, !cfg->index_dir, !existing,
                           !(flags & IDX_OPEN_READONLY), &st->index_real, &st->index_fd, e);
        sb_release(&d);
        if (rc) goto out;
        st->index_dir = idx_dir_access(st->index_fd, st->index_real);
    }
    if ((rc = idx_vfs_new(&st->vfs, e))) goto out;
    {
        StrBuf p;
        sb_init(&p);
        sb_addf(&p, "%s/index.db", st->index_dir);
        st->db_path = sb_detach(&p, NULL);
    }
    st->exclude = xcalloc(cfg->n_exclude + 1, sizeof(char *));
    for (size_t i = 0; i < cfg->n_exclude; i++)
        st->exclude[i] = xstrdup(cfg->exclude[i]);
    st->n_exclude = cfg->n_exclude;
    st->max_file_bytes = cfg->max_file_bytes ? cfg->max_file_bytes : (size_t)1 << 20;
    st->post_budget = cfg->postings_budget ? cfg->postings_budget : (size_t)64 << 20;
    st->readonly = (flags & IDX_OPEN_READONLY) != 0;
    st->threads = cfg->threads > 0 ? cfg->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (st->threads < 1) st->threads = 1;
    if (st->threads > 16) st->threads = 16;

    /* what is read-only (the model, compiled queries) comes from here */
    st->shared = cfg->shared ? idx_shared_ref(cfg->shared) : idx_shared_new();
    st->queries = idx_shared_queries(st->shared);
    st->models = idx_shared_models(st->shared);
    if ((rc = idx_dense_open(st, cfg, e))) goto out;
    rc = idx_store_db_open(st, flags, e);
out:
    if (rc) {
        st->readonly = 1; /* a store that failed to open leaves no marks behind */
        idx_close(st);
        return rc;
    }
    *out = st;
    return CR_OK;
}

void idx_close(IdxStore *st)
{
    if (!st) return;
    idx_store_postings_invalidate(st);
    idx_store_file_cache_release(&st->files);
    idx_dense_close(st);
    idx_chunker_free(st->save_ch); /* before the queries it borrows */
    idx_save_memo_free(st->save_memo);
    idx_stemmer_free(st->save_stem);
    idx_store_rows_cache_free(st->rows_cache);
    idx_store_save_facts_drop(st);
    free(st->save_facts);
    idx_shared_unref(st->shared);
    idx_store_db_close(st);
    for (size_t i = 0; i < st->n_reread; i++)
        free(st->reread[i]);
    free(st->reread);
    free(st->post_stale);
    for (size_t i = 0; i < st->n_exclude; i++)
        free(st->exclude[i]);
    free(st->exclude);
    idx_pp_config_free(st->pp_config);
    idx_fanin_forget(st);
    i64map_release(&st->refs_kept);
    free(st->root);
    idx_vfs_free(st->vfs);
    if (st->index_fd >= 0) close(st->index_fd);
    free(st->index_dir);
    free(st->index_real);
    free(st->db_path);
    free(st);
}
