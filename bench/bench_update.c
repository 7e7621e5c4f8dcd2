/* Times single-file updates the way the language server does them: one
 * open store, a file rewritten on disk, idx_update_file. Prints the median
 * and worst of N runs in milliseconds.
 *
 *   bench_update ROOT INDEX_DIR RELPATH [N]
 */
#include "idx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_update ROOT INDEX_DIR RELPATH [N]\n");
        return 1;
    }
    int n = argc > 4 ? atoi(argv[4]) : 20;
    if (n < 1) n = 1;
    /* the embedder as the CLI takes it from the environment */
    IdxConfig cfg = {
        .root = argv[1], .index_dir = argv[2], .embed_provider = getenv("CODERAG_EMBED_PROVIDER")};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e)) {
        fprintf(stderr, "bench_update: %s\n", e.msg);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", idx_root(st), argv[3]);
    StrBuf orig;
    sb_init(&orig);
    if (sb_read_file(&orig, path, 0, &e)) {
        fprintf(stderr, "bench_update: %s\n", e.msg);
        return 2;
    }
    double *ms = calloc((size_t)n, sizeof *ms);
    for (int i = 0; i < n; i++) {
        /* A real edit: a new function at the end, different each time. */
        FILE *f = fopen(path, "wb");
        fwrite(orig.buf, 1, orig.len, f);
        fprintf(f, "\n\ndef bench_added_%d(x):\n    return x + %d\n", i, i);
        fclose(f);
        double t0 = now_ms();
        if (idx_update_file(st, argv[3], &e)) {
            fprintf(stderr, "bench_update: %s\n", e.msg);
            return 2;
        }
        ms[i] = now_ms() - t0;
    }
    FILE *f = fopen(path, "wb");
    fwrite(orig.buf, 1, orig.len, f);
    fclose(f);
    idx_update_file(st, argv[3], NULL);
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    printf("%.2f %.2f\n", ms[n / 2], ms[n - 1]);
    free(ms);
    sb_release(&orig);
    idx_close(st);
    return 0;
}
