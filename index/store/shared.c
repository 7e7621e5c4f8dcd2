/*
 * shared.c - IdxShared: read-only data lent to every store of a process:
 * the builtin model, one per model file (by path, device, inode, size and
 * mtime: a file rebuilt on disk is a new model), and the language table's
 * compiled tree-sitter queries.
 */
#include "../dense/embed_int.h"
#include "../chunk/lang/lang.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SHARED__MODELS 4
#define SHARED__LANGS 32

typedef struct SharedModel {
    char *path; /* NULL: empty slot */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    Embedder *em; /* the handle's reference */
} SharedModel;

struct IdxShared {
    atomic_int refs;
    pthread_mutex_t mu; /* guards models */
    SharedModel models[SHARED__MODELS];
    unsigned next;                   /* slot replaced when all are taken */
    pthread_mutex_t qmu;             /* guards queries: a compile never waits for a model read */
    TSQuery *queries[SHARED__LANGS]; /* by row of the language table */
    signed char query_state[SHARED__LANGS]; /* 0 not compiled yet, 1 done, -1 failed */
};

IdxShared *idx_shared_new(void)
{
    IdxShared *sh = xcalloc(1, sizeof *sh);
    atomic_init(&sh->refs, 1);
    pthread_mutex_init(&sh->mu, NULL);
    pthread_mutex_init(&sh->qmu, NULL);
    return sh;
}

IdxShared *idx_shared_ref(IdxShared *sh)
{
    atomic_fetch_add(&sh->refs, 1);
    return sh;
}

static void shared__drop(SharedModel *m)
{
    free(m->path);
    idx_embedder_free(m->em);
    memset(m, 0, sizeof *m);
}

void idx_shared_unref(IdxShared *sh)
{
    if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1) return;
    for (size_t i = 0; i < SHARED__MODELS; i++)
        shared__drop(&sh->models[i]);
    for (size_t i = 0; i < SHARED__LANGS; i++)
        if (sh->queries[i]) ts_query_delete(sh->queries[i]);
    pthread_mutex_destroy(&sh->mu);
    pthread_mutex_destroy(&sh->qmu);
    free(sh);
}

static int shared__same(const SharedModel *m, const char *path, const struct stat *sb)
{
    return m->path && !strcmp(m->path, path) && m->dev == sb->st_dev && m->ino == sb->st_ino &&
           m->size == sb->st_size && m->mtime.tv_sec == sb->st_mtim.tv_sec &&
           m->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

CrErr idx_shared_embedder(IdxShared *sh, const EmbedConfig *cfg, Embedder **out, ErrInfo *e)
{
    const char *p = cfg->provider;
    if (!sh || (p && *p && strcmp(p, "builtin"))) return idx_embedder_new(cfg, out, e);
    const char *path = idx_embedder_builtin_path(cfg);
    struct stat sb;
    /* what the loader will report (missing, not a file) */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return idx_embedder_new(cfg, out, e);
    *out = NULL;
    CrErr rc = CR_OK;
    /* loading under the lock: the stores opened meanwhile wait for this
     * model instead of each reading its own copy */
    pthread_mutex_lock(&sh->mu);
    SharedModel *m = NULL;
    for (size_t i = 0; i < SHARED__MODELS && !m; i++)
        if (shared__same(&sh->models[i], path, &sb)) m = &sh->models[i];
    if (!m) {
        Embedder *em = NULL;
        rc = idx_embedder_new(cfg, &em, e);
        if (!rc) {
            for (size_t i = 0; i < SHARED__MODELS && !m; i++)
                if (sh->models[i].path && !strcmp(sh->models[i].path, path)) m = &sh->models[i];
            for (size_t i = 0; i < SHARED__MODELS && !m; i++)
                if (!sh->models[i].path) m = &sh->models[i];
            if (!m) m = &sh->models[sh->next++ % SHARED__MODELS];
            shared__drop(m); /* a store using the old model keeps its reference */
            m->path = xstrdup(path);
            m->dev = sb.st_dev;
            m->ino = sb.st_ino;
            m->size = sb.st_size;
            m->mtime = sb.st_mtim;
            m->em = em;
        }
    }
    if (m) *out = idx_embedder_ref(m->em);
    pthread_mutex_unlock(&sh->mu);
    return rc;
}

const TSQuery *idx_shared_query(IdxShared *sh, const IdxLang *lang)
{
    size_t i = 0, n = idx_lang_count();
    while (i < n && idx_lang_at(i) != lang)
        i++;
    if (i >= n || i >= SHARED__LANGS || !lang->grammar || !lang->query) return NULL;
    pthread_mutex_lock(&sh->qmu);
    if (!sh->query_state[i]) {
        sh->queries[i] = idx_chunk_query_compile(lang);
        sh->query_state[i] = sh->queries[i] ? 1 : -1;
    }
    const TSQuery *q = sh->queries[i];
    pthread_mutex_unlock(&sh->qmu);
    return q;
}
