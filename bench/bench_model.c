/* Load and embedding cost of the builtin model:
 *   build/bench_model [MODEL] [REPEAT]
 * prints the median and worst load time over REPEAT loads (default 20),
 * and the time to embed a 2,000-character chunk and a question. */
#include "index/dense/embed_int.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : CODERAG_MODEL_PATH;
    int repeat = argc > 2 ? atoi(argv[2]) : 20;
    if (repeat < 1) repeat = 1;
    double *ms = calloc((size_t)repeat, sizeof *ms);
    Embedder *em = NULL;
    ErrInfo e = {0};
    for (int i = 0; i < repeat; i++) {
        double t0 = now_ms();
        if (idx_embedder_builtin_new(path, &em, &e)) {
            fprintf(stderr, "bench_model: %s\n", e.msg);
            return 1;
        }
        ms[i] = now_ms() - t0;
        if (i + 1 < repeat) idx_embedder_free(em);
    }
    qsort(ms, (size_t)repeat, sizeof *ms, cmp);
    printf("%s (%s): load median %.2f ms, worst %.2f ms over %d\n", path, idx_embedder_id(em),
           ms[repeat / 2], ms[repeat - 1], repeat);
    StrBuf chunk;
    sb_init(&chunk);
    while (chunk.len < 2000)
        sb_adds(&chunk, "def resolve_request(self, request_path, allowed_methods=None):\n"
                        "    if request.method not in allowed_methods: raise MethodNotAllowed()\n");
    const char *text = chunk.buf;
    float *v = NULL;
    int dim = 0;
    double t0 = now_ms();
    for (int i = 0; i < 1000; i++) {
        idx_embedder_embed(em, &text, 1, &v, &dim, &e);
        free(v);
    }
    double t1 = now_ms();
    for (int i = 0; i < 1000; i++) {
        idx_embedder_embed_query(
            em, "How does the router reject a request whose method is not allowed?", &v, &dim, &e);
        free(v);
    }
    double t2 = now_ms();
    printf("embed: %.1f us per 2,000-character chunk, %.1f us per question\n", t1 - t0, t2 - t1);
    sb_release(&chunk);
    idx_embedder_free(em);
    free(ms);
    return 0;
}
