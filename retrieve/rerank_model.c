/* Written by scripts/train/export_ranker.py from models/ranker-v1.json: do not
 * edit (scripts/train-ranker.sh rewrites both). */
#include "rtv_int.h"

const RtvRanker rtv_ranker = {
    .name = "ranker-v0-identity",
    .sha256 = "cc7115b09859732c129f61ad3b1dc1862e232d5359cff471a42bb48d83a0343b",
    .bias = 0.0,
    .w = {
        0.0, /* score */
        1.0, /* rank */
        0.0, /* bm25 */
        0.0, /* dense */
        0.0, /* via_bm25 */
        0.0, /* via_dense */
        0.0, /* via_graph */
        0.0, /* graph_only */
        0.0, /* graph_out */
        0.0, /* graph_in */
        0.0, /* agree */
        0.0, /* function */
        0.0, /* class */
        0.0, /* module */
        0.0, /* section */
        0.0, /* test */
        0.0, /* name */
        0.0, /* name_cover */
        0.0, /* path */
        0.0, /* ident */
        0.0, /* doc */
        0.0, /* has_doc */
        0.0, /* lines */
        0.0, /* window */
        0.0, /* file_rank */
        0.0, /* file_hits */
    },
};
