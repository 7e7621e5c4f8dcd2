#include "embed_int.h"
#include "../chunk/lang/lang.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CODERAG_MODEL_FILE
#define CODERAG_MODEL_FILE "code-nbow-py-v1.crm"
#endif

CrErr idx_embedder_new(const EmbedConfig *cfg, Embedder **out, ErrInfo *e)
{
    *out = NULL;
    static const EmbedConfig defaults = {0};
    if (!cfg) cfg = &defaults;
    const char *p = cfg->provider;
    /* The offline default: the model trained by scripts/train-embedder.sh,
     * at cfg->model or the path fixed at build time. */
    if (!p || !*p || !strcmp(p, "builtin"))
        return idx_embedder_builtin_new(idx_embedder_builtin_path(cfg), out, e);
    if (!strcmp(p, "openai")) return idx_embedder_openai_new(cfg, out, e);
    return err_set(e, CR_EINVAL, "unknown embedding provider \"%.64s\" (builtin or openai)", p);
}

/* The default model file, found once: beside the running executable (the
 * server a VS Code extension carries: server/coderag and the model side by
 * side), then where an install puts it relative to the executable
 * (<prefix>/bin/coderag, <prefix>/share/coderag/models/), then the path fixed
 * at build time (a build tree, or a packager's -DCODERAG_MODEL_PATH). The
 * last is kept when none is readable, so that the error names it. */
static pthread_once_t model__once = PTHREAD_ONCE_INIT;
static char model__path[PATH_MAX];

static int model__near(const char *exe, const char *rel)
{
    const char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    int n = snprintf(model__path, sizeof model__path, "%.*s/%s", (int)(slash - exe), exe, rel);
    return n > 0 && (size_t)n < sizeof model__path && access(model__path, R_OK) == 0;
}

static void model__find(void)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        if (model__near(exe, CODERAG_MODEL_FILE) ||
            model__near(exe, "../share/coderag/models/" CODERAG_MODEL_FILE))
            return;
    }
    snprintf(model__path, sizeof model__path, "%s", CODERAG_MODEL_PATH);
}

const char *idx_embedder_builtin_path(const EmbedConfig *cfg)
{
    if (cfg->model && *cfg->model) return cfg->model;
    pthread_once(&model__once, model__find);
    return model__path;
}

Embedder *idx_embedder_ref(Embedder *em)
{
    atomic_fetch_add(&em->refs, 1);
    return em;
}

void idx_embedder_free(Embedder *em)
{
    if (!em || atomic_fetch_sub(&em->refs, 1) != 1) return;
    em->ops->free(em->state);
    free(em);
}

const char *idx_embedder_id(const Embedder *em)
{
    return em->ops->id(em->state);
}

int idx_embedder_covers(const Embedder *em, const char *relpath)
{
    if (!em->ops->rows_flagged) return 1;
    const IdxLang *l = idx_lang_for_path(relpath);
    return l && l->builtin_embed;
}

void idx_embedder_describe(const Embedder *em, char *out, size_t size)
{
    StrBuf sb;
    sb_init(&sb);
    sb_adds(&sb, idx_embedder_id(em));
    size_t named = 0;
    for (size_t i = 0; em->ops->rows_flagged && i < idx_lang_count(); i++) {
        if (!idx_lang_at(i)->builtin_embed) continue;
        sb_adds(&sb, named++ ? ", " : " (embeds ");
        sb_adds(&sb, idx_lang_at(i)->name);
    }
    if (named) sb_adds(&sb, " files only)");
    snprintf(out, size, "%s", sb.buf ? sb.buf : "");
    sb_release(&sb);
}

int idx_embedder_parallel(const Embedder *em)
{
    return em && em->ops->parallel;
}

int idx_embedder_dim(const Embedder *em)
{
    return em->ops->dim(em->state);
}

CrErr idx_embedder_embed(Embedder *em, const char *const *texts, size_t n, float **out,
                         int *out_dim, ErrInfo *e)
{
    *out = NULL;
    *out_dim = em->ops->dim(em->state);
    if (n == 0) return CR_OK;
    if (!texts) return err_set(e, CR_EINVAL, "idx_embedder_embed: no texts");
    for (size_t i = 0; i < n; i++)
        if (!texts[i]) return err_set(e, CR_EINVAL, "idx_embedder_embed: text %zu is NULL", i);
    return em->ops->embed(em->state, texts, n, out, out_dim, e);
}

CrErr idx_embedder_embed_query(Embedder *em, const char *question, float **out, int *out_dim,
                               ErrInfo *e)
{
    *out = NULL;
    *out_dim = em->ops->dim(em->state);
    if (!question) return err_set(e, CR_EINVAL, "idx_embedder_embed_query: no question");
    if (!em->ops->embed_query) return em->ops->embed(em->state, &question, 1, out, out_dim, e);
    return em->ops->embed_query(em->state, &question, 1, out, out_dim, e);
}
