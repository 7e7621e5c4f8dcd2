/* Times coderag/ask as the language server runs it: one open, warmed store,
 * every question of a corpus asked N times in extractive mode. Prints p50
 * and p95 of total_ms and the median of each stage.
 *
 *   bench_ask ROOT INDEX_DIR QUESTIONS.jsonl CORPUS [N]
 */
#include "rtv.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n ? v[(size_t)((double)(n - 1) * p)] : 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_ask ROOT INDEX_DIR QUESTIONS.jsonl CORPUS [N]\n");
        return 1;
    }
    int reps = argc > 5 ? atoi(argv[5]) : 5;
    /* the embedder as the CLI takes it from the environment */
    IdxConfig cfg = {
        .root = argv[1], .index_dir = argv[2], .embed_provider = getenv("CODERAG_EMBED_PROVIDER")};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e) || idx_warm(st, &e)) {
        fprintf(stderr, "bench_ask: %s\n", e.msg);
        return 2;
    }
    FILE *f = fopen(argv[3], "r");
    if (!f) {
        perror(argv[3]);
        return 2;
    }
    char line[65536];
    size_t cap = 4096, n = 0;
    double *total = calloc(cap, sizeof *total), *stage[5];
    for (int k = 0; k < 5; k++)
        stage[k] = calloc(cap, sizeof(double));
    while (fgets(line, sizeof line, f)) {
        json_t *q = json_loads(line, 0, NULL);
        const char *corpus = NULL, *question = NULL;
        if (!q || json_unpack(q, "{s:s, s:s}", "corpus", &corpus, "question", &question) ||
            strcmp(corpus, argv[4]) != 0) {
            json_decref(q);
            continue;
        }
        for (int r = 0; r < reps && n < cap; r++) {
            RtvRequest req;
            RtvAnswer a;
            rtv_request_init(&req);
            req.question = question;
            req.mode = RTV_MODE_EXTRACTIVE;
            if (rtv_ask(st, &req, &a, &e)) {
                fprintf(stderr, "bench_ask: %s\n", e.msg);
                return 2;
            }
            total[n] = a.timings.total_ms;
            stage[0][n] = a.timings.bm25_ms;
            stage[1][n] = a.timings.dense_ms;
            stage[2][n] = a.timings.graph_ms;
            stage[3][n] = a.timings.pack_ms;
            stage[4][n] = a.timings.verify_ms;
            n++;
            rtv_answer_release(&a);
        }
        json_decref(q);
    }
    fclose(f);
    static const char *const names[] = {"bm25", "dense", "graph", "pack", "verify"};
    printf("asks %zu  p50 %.2f ms  p95 %.2f ms ", n, pct(total, n, 0.5), pct(total, n, 0.95));
    for (int k = 0; k < 5; k++)
        printf(" %s %.2f", names[k], pct(stage[k], n, 0.5));
    printf("\n");
    for (int k = 0; k < 5; k++)
        free(stage[k]);
    free(total);
    idx_close(st);
    return 0;
}
