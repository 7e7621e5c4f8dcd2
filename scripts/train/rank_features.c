/* Dumps the re-ranker's features: for every question of a JSONL file
 * ({"id", "question", ...}; with CORPUS, only lines whose "corpus" is it),
 * the first ranking's candidates (at most RTV_RERANK_DEPTH) with their
 * path, lines and features, one JSON line per question:
 *   {"id", "names": [...], "cands": [{"path", "start", "end", "f": [...]}]}
 * What scripts/train/ranker.py labels and learns from.
 *
 *   rank_features [--candidates N] [--keep N] [--depth N] ROOT INDEX_DIR QUESTIONS.jsonl [CORPUS]
 *
 * The options rank as rank.c would with other constants, so that a model
 * can be trained on the candidates it would re-rank with them: BM25
 * candidates (RtvTuning.bm25_candidates), candidates kept after the file
 * blend (.keep), candidates dumped (RTV_RERANK_DEPTH).
 */
#include "retrieve/rtv_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dump(IdxStore *st, const RtvTuning *t, size_t depth, const char *id,
                const char *question, ErrInfo *e)
{
    RtvQuery q;
    RtvRequest req;
    RtvCand *v = NULL;
    size_t n = 0;
    RtvTimings tm = {0};
    RtvRankInfo info;
    rtv_request_init(&req);
    req.question = question;
    CrErr rc = rtv_query_read(st, question, &q, e);
    if (rc) return rc;
    if ((rc = rtv_rank(st, &req, &q, t, &v, &n, &tm, &info, e))) goto out;
    if (n > depth) n = depth;
    double *f = calloc(n * RTV_N_FEATURES + 1, sizeof *f);
    if ((rc = rtv_features(st, &q, v, n, f, e))) {
        free(f);
        goto out;
    }
    json_t *cands = json_array();
    for (size_t i = 0; i < n; i++) {
        IdxChunk ch;
        if (idx_chunk_get(st, v[i].chunk_id, &ch, NULL)) continue;
        json_t *fv = json_array();
        for (size_t k = 0; k < RTV_N_FEATURES; k++)
            json_array_append_new(fv, json_real(f[i * RTV_N_FEATURES + k]));
        json_array_append_new(cands,
                              json_pack("{s:s, s:i, s:i, s:s, s:o}", "path", ch.path, "start",
                                        (json_int_t)ch.start_line, "end", (json_int_t)ch.end_line,
                                        "symbol", ch.symbol, "f", fv));
        idx_chunk_release(&ch);
    }
    json_t *out = json_pack("{s:s, s:o}", "id", id, "cands", cands);
    char *s = json_dumps(out, JSON_COMPACT);
    puts(s);
    free(s);
    json_decref(out);
    free(f);
out:
    free(v);
    rtv_query_release(&q);
    return rc;
}

/* A positive count option's value, or 0. */
static size_t count_arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v <= 0 ? 0 : (size_t)v;
}

int main(int argc, char **argv)
{
    RtvTuning t = rtv_tuning;
    size_t depth = RTV_RERANK_DEPTH;
    while (argc > 2 && !strncmp(argv[1], "--", 2)) {
        size_t v = count_arg(argv[2]);
        if (!v) break;
        if (!strcmp(argv[1], "--candidates"))
            t.bm25_candidates = v;
        else if (!strcmp(argv[1], "--keep"))
            t.keep = v;
        else if (!strcmp(argv[1], "--depth"))
            depth = v;
        else
            break;
        argc -= 2;
        argv += 2;
    }
    if (argc < 4 || !strncmp(argv[1], "--", 2)) {
        fprintf(stderr, "usage: rank_features [--candidates N] [--keep N] [--depth N] ROOT "
                        "INDEX_DIR QUESTIONS.jsonl [CORPUS]\n");
        return 1;
    }
    IdxConfig cfg = {.root = argv[1], .index_dir = argv[2]};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e) || idx_warm(st, &e)) {
        fprintf(stderr, "rank_features: %s\n", e.msg);
        return 2;
    }
    FILE *f = fopen(argv[3], "r");
    if (!f) {
        perror(argv[3]);
        return 2;
    }
    json_t *names = json_array();
    for (size_t k = 0; k < RTV_N_FEATURES; k++)
        json_array_append_new(names, json_string(rtv_feature_names[k]));
    char *hdr = json_dumps(names, JSON_COMPACT);
    fprintf(stderr, "features: %s\n", hdr);
    free(hdr);
    json_decref(names);
    static char line[1 << 20];
    int status = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *q = json_loads(line, 0, NULL);
        const char *id = NULL, *question = NULL, *corpus = NULL;
        if (!q || json_unpack(q, "{s:s, s:s}", "id", &id, "question", &question)) {
            json_decref(q);
            continue;
        }
        json_unpack(q, "{s?:s}", "corpus", &corpus);
        if (argc > 4 && (!corpus || strcmp(corpus, argv[4]) != 0)) {
            json_decref(q);
            continue;
        }
        if (dump(st, &t, depth, id, question, &e)) {
            fprintf(stderr, "%s: %s\n", id, e.msg);
            status = 2;
        }
        json_decref(q);
    }
    fclose(f);
    idx_close(st);
    return status;
}
