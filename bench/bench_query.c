/* What compiling each language row's tree-sitter query costs: CPU time
 * (the process's clock), the best of N compiles, per row, and in all. Every
 * process that parses a file of a row pays its compile once
 * (idx_queries_get), a cold `coderag index` of a project included.
 *
 *   bench_query [N]
 */
#include "index/chunk/lang/lang.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 1) n = 1;
    idx_process_init();
    double all = 0;
    for (size_t i = 0; i < idx_lang_count(); i++) {
        const IdxLang *lang = idx_lang_at(i);
        if (!lang->grammar || !lang->query) continue;
        double best = -1;
        for (int k = 0; k < n; k++) {
            double t0 = cpu_ms();
            TSQuery *q = idx_chunk_query_compile(lang);
            double t = cpu_ms() - t0;
            if (!q) return 2;
            ts_query_delete(q);
            if (best < 0 || t < best) best = t;
        }
        printf("%-12s %8.1f ms\n", lang->name, best);
        all += best;
    }
    printf("%-12s %8.1f ms\n", "all", all);
    return 0;
}
