/*
 * models.c - IdxModels: the builtin embedding models a process has loaded,
 * one per model file (by path, device, inode, size and mtime: a file
 * rebuilt on disk is a new model), lent to every store that asks for the
 * same file instead of each reading its own 9 MB copy.
 */
#include "embed_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MODELS__SLOTS 4

typedef struct Model {
    char *path; /* NULL: empty slot */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    Embedder *em; /* the slot's reference */
} Model;

struct IdxModels {
    pthread_mutex_t mu;
    Model slot[MODELS__SLOTS];
    unsigned next; /* slot replaced when all are taken */
};

IdxModels *idx_models_new(void)
{
    IdxModels *ms = xcalloc(1, sizeof *ms);
    pthread_mutex_init(&ms->mu, NULL);
    return ms;
}

static void models__drop(Model *m)
{
    free(m->path);
    idx_embedder_free(m->em);
    memset(m, 0, sizeof *m);
}

void idx_models_free(IdxModels *ms)
{
    if (!ms) return;
    for (size_t i = 0; i < MODELS__SLOTS; i++)
        models__drop(&ms->slot[i]);
    pthread_mutex_destroy(&ms->mu);
    free(ms);
}

static int models__same(const Model *m, const char *path, const struct stat *sb)
{
    return m->path && !strcmp(m->path, path) && m->dev == sb->st_dev && m->ino == sb->st_ino &&
           m->size == sb->st_size && m->mtime.tv_sec == sb->st_mtim.tv_sec &&
           m->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

CrErr idx_models_embedder(IdxModels *ms, const EmbedConfig *cfg, Embedder **out, ErrInfo *e)
{
    const char *p = cfg->provider;
    if (!ms || (p && *p && strcmp(p, "builtin"))) return idx_embedder_new(cfg, out, e);
    const char *path = idx_embedder_builtin_path(cfg);
    struct stat sb;
    /* what the loader will report (missing, not a file) */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return idx_embedder_new(cfg, out, e);
    *out = NULL;
    CrErr rc = CR_OK;
    /* loading under the lock: the stores opened meanwhile wait for this
     * model instead of each reading its own copy */
    pthread_mutex_lock(&ms->mu);
    Model *m = NULL;
    for (size_t i = 0; i < MODELS__SLOTS && !m; i++)
        if (models__same(&ms->slot[i], path, &sb)) m = &ms->slot[i];
    if (!m) {
        Embedder *em = NULL;
        rc = idx_embedder_new(cfg, &em, e);
        if (!rc) {
            for (size_t i = 0; i < MODELS__SLOTS && !m; i++)
                if (ms->slot[i].path && !strcmp(ms->slot[i].path, path)) m = &ms->slot[i];
            for (size_t i = 0; i < MODELS__SLOTS && !m; i++)
                if (!ms->slot[i].path) m = &ms->slot[i];
            if (!m) m = &ms->slot[ms->next++ % MODELS__SLOTS];
            models__drop(m); /* a store using the old model keeps its reference */
            m->path = xstrdup(path);
            m->dev = sb.st_dev;
            m->ino = sb.st_ino;
            m->size = sb.st_size;
            m->mtime = sb.st_mtim;
            m->em = em;
        }
    }
    if (m) *out = idx_embedder_ref(m->em);
    pthread_mutex_unlock(&ms->mu);
    return rc;
}
