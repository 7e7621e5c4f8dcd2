/*
 * faiss_load.c - FAISS, loaded when the first vector store opens.
 *
 * FAISS brings OpenBLAS, OpenMP and the C++ runtime: linked into the
 * binary, the dynamic loader's relocations and OpenBLAS's start-up (CPU
 * detection, a thread pool) cost ~10 ms of every `coderag` process, while
 * many never touch a vector (a workspace without Python has none, an
 * index with nothing to embed writes none). So FAISS lives in a
 * module of its own (coderag-faiss.so: the C API shim over Debian's
 * libfaiss.a, or the system's libfaiss_c) opened with dlopen on first use.
 *
 * The module is looked for beside the running executable (a build tree),
 * then where an install puts it relative to the executable
 * (<prefix>/bin/coderag, <prefix>/<libdir>/coderag/coderag-faiss.so), then
 * at the build tree's path fixed at build time. The table is filled once
 * under pthread_once and read-only after.
 */
#include "vec_int.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef CODERAG_FAISS_MODULE
#define CODERAG_FAISS_MODULE "coderag-faiss.so"
#endif
#ifndef CODERAG_FAISS_INSTALLED
#define CODERAG_FAISS_INSTALLED "lib/coderag/coderag-faiss.so"
#endif

static pthread_once_t faiss__once = PTHREAD_ONCE_INIT;
static FaissApi faiss__api;

/* dlopen of <exe's folder>/<rel>; NULL when absent. */
static void *faiss__open_near(const char *exe, const char *rel)
{
    const char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - exe), exe, rel);
    if (n < 0 || (size_t)n >= sizeof path || access(path, R_OK) != 0) return NULL;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void faiss__load(void)
{
    static const DlSym fns[] = {
#define FAISS_ROW(fn) {"faiss_" #fn, offsetof(FaissApi, fn)},
        FAISS_API_FNS(FAISS_ROW)
#undef FAISS_ROW
    };
    FaissApi *a = &faiss__api;
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    void *lib = NULL;
    if (len > 0) {
        exe[len] = '\0';
        const char *base = strrchr(CODERAG_FAISS_MODULE, '/');
        lib = faiss__open_near(exe, base ? base + 1 : CODERAG_FAISS_MODULE);
        if (!lib) lib = faiss__open_near(exe, "../" CODERAG_FAISS_INSTALLED);
    }
    if (!lib) lib = dlopen(CODERAG_FAISS_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(a->error, sizeof a->error, "cannot load FAISS (%s): %s", CODERAG_FAISS_MODULE,
                 why ? why : "not found");
        return;
    }
    if (!dl_bind(lib, fns, sizeof fns / sizeof fns[0], a, "the FAISS module", a->error,
                 sizeof a->error))
        return;
    a->loaded = 1;
}

const FaissApi *idx_faiss_api(ErrInfo *e)
{
    pthread_once(&faiss__once, faiss__load);
    if (!faiss__api.loaded) {
        err_set(e, CR_EVECTOR, "vectors: %s", faiss__api.error);
        return NULL;
    }
    return &faiss__api;
}
