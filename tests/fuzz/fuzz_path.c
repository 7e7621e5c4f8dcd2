/*
 * fuzz_path.c - the workspace-path resolver. The input (cut at its first NUL)
 * is a path as a client or an LLM may write it. vfy_normalize_path must give
 * a clean relative path (no ".", "..", empty components, no leading '/') or
 * an error. idx_update_file on a real temporary workspace (a.py, pkg/b.py,
 * a symlink "out" to a directory outside holding secret.py, a symlink loop)
 * must never index anything outside the root: after every call the index
 * holds at most the two workspace files and nothing of secret.py. The path
 * module under both (base/path.c) keeps its invariants: a normalised path
 * is normal and normalising it again changes nothing, a file URI of the
 * input made of the root resolves inside it or fails, and path_to_uri /
 * path_from_uri round-trip.
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
    if (idx_open(&cfg, 0, &st, &e) != CR_OK || idx_update(st, NULL, NULL, NULL, &e) != CR_OK) {
        fprintf(stderr, "fuzz_path setup: %s\n", e.msg);
        abort();
    }
    atexit(cleanup);
}

/* The invariants of base/path.c on one input (no NUL byte in it). */
static void check_path_module(const char *path)
{
    StrBuf n1, n2;
    sb_init(&n1);
    sb_init(&n2);
    if (path_normalize(path, &n1)) {
        const char *rel = n1.buf[0] == '/' ? n1.buf + 1 : n1.buf;
        if (*rel && !path_is_normal_rel(rel)) abort();
        if (!path_normalize(n1.buf, &n2) || strcmp(n1.buf, n2.buf) != 0) abort();
    } else if (path[0] == '/' || n1.len) {
        abort(); /* only a relative path climbs, and then out is empty */
    }

    /* the input as the tail of a file URI of the root, as a client may send it */
    sb_reset(&n1);
    sb_addf(&n1, "file://%s/%s", root, path);
    char *rel = NULL, *abs = NULL;
    CrErr rc = path_relative(root, n1.buf, &rel);
    if (rc == CR_OK) {
        if (!path_is_normal_rel(rel)) abort();
        if (path_from_uri(n1.buf, &abs) != CR_OK || !path_normalize(abs, &n2)) abort();
        const char *under = path_under(root, n2.buf);
        if (!under || strcmp(under, rel) != 0) abort();
    } else if (rc != CR_EOUTSIDE && rc != CR_EINVAL) {
        abort();
    }
    free(rel);
    free(abs);

    char *uri = path_to_uri(root, path), *back = NULL;
    if (path_from_uri(uri, &back) != CR_OK) abort();
    sb_reset(&n1);
    sb_addf(&n1, "%s%s%s", root, *path ? "/" : "", path);
    if (strcmp(back, n1.buf) != 0) abort();
    free(uri);
    free(back);
    sb_release(&n1);
    sb_release(&n2);
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
    if (rc == CR_OK && !path_is_normal_rel(rel)) abort();
    if (rc != CR_OK && rc != CR_EOUTSIDE && rc != CR_EINVAL) abort();
    free(rel);
    check_path_module(path);

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
