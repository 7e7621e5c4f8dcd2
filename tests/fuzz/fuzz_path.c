/*
 * fuzz_path.c - the workspace-path resolver. The input (cut at its first NUL)
 * is a path as a client or an LLM may write it. vfy_normalize_path must give
 * a clean relative path (no ".", "..", empty components, no leading '/') or
 * an error. idx_update_file on a real temporary workspace (a.py, pkg/b.py,
 * a symlink "out" to a directory outside holding secret.py, a symlink loop)
 * must never index anything outside the root: after every call the index
 * holds at most the two workspace files and nothing of secret.py.
 */
#include "idx.h"
#include "vfy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base_dir[64];
static char root[128];
static IdxStore *st;

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void cleanup(void)
{
    char cmd[128];
    idx_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base_dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_path: could not remove %s\n", base_dir);
}

static void setup(void)
{
    char p[256];
    strcpy(base_dir, "/tmp/fuzz_path.XXXXXX");
    if (!mkdtemp(base_dir)) abort();
    snprintf(root, sizeof root, "%s/ws", base_dir);
    mkdir(root, 0755);
    snprintf(p, sizeof p, "%s/outside", base_dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/outside/secret.py", base_dir);
    put(p, "SECRET = 'do not index'\n");
    snprintf(p, sizeof p, "%s/a.py", root);
    put(p, "def f():\n    return 1\n");
    snprintf(p, sizeof p, "%s/pkg", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/pkg/b.py", root);
    put(p, "from a import f\n\ndef g():\n    return f()\n");
    snprintf(p, sizeof p, "%s/out", root);
    if (symlink("../outside", p) != 0) abort();
    snprintf(p, sizeof p, "%s/pkg/loop", root);
    if (symlink("..", p) != 0) abort();

    IdxConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.root = root;
    cfg.threads = 1;
    snprintf(p, sizeof p, "%s/index", base_dir);
    static char index_dir[256];
    strcpy(index_dir, p);
    cfg.index_dir = index_dir;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e) != CR_OK) abort();
    if (idx_update(st, NULL, NULL, NULL, &e) != CR_OK) abort();
    atexit(cleanup);
}

static int clean_relative(const char *p)
{
    if (!*p || p[0] == '/') return 0;
    for (const char *s = p; s;) {
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
        s = slash ? slash + 1 : NULL;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!st) setup();
    if (size > 4096) return 0;
    char *path = malloc(size + 1);
    memcpy(path, data, size);
    path[size] = '\0';

    char *rel = NULL;
    CrErr rc = vfy_normalize_path(root, path, &rel);
    if (rc == CR_OK && !clean_relative(rel)) abort();
    if (rc != CR_OK && rc != CR_EOUTSIDE && rc != CR_EINVAL) abort();
    free(rel);

    ErrInfo e = {0};
    idx_update_file(st, path, &e);
    IdxStatus s;
    if (idx_status(st, &s, &e) != CR_OK) abort();
    if (s.files > 2) abort();
    IdxChunk *chunks = NULL;
    size_t n = 0;
    if (idx_file_chunks(st, "out/secret.py", &chunks, &n, &e) == CR_OK && n) abort();
    idx_chunks_free(chunks, n);
    /* Put back what a path like "a.py" may have removed (it cannot, but a
     * crafted one could make the file look gone): keep the workspace whole. */
    if (s.files < 2) idx_update(st, NULL, NULL, NULL, &e);
    free(path);
    return 0;
}
