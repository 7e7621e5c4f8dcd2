/* Written by scripts/train/export_ranker.py from models/ranker-v1.json: do not
 * edit (scripts/train-ranker.sh rewrites both). */
#include "rtv_int.h"

const RtvRanker rtv_ranker = {
    .name = "ranker-v1",
    .sha256 = "943cd26c58e8a4a4c84e79082a1d65c09d3c30e1bd4be9238dfd0cd3e97d84b5",
    .bias = 0.0,
    .w =
        {
            16.647702, /* score */
            1.202117,  /* rank */
            0.065888,  /* bm25 */
            -2.673304, /* dense */
            0.001848,  /* via_bm25 */
            0.530253,  /* via_dense */
            0.324261,  /* via_graph */
            0.022709,  /* graph_only */
            0.409908,  /* graph_out */
            -0.233175, /* graph_in */
            0.55481,   /* agree */
            -0.066623, /* function */
            0.882666,  /* class */
            -0.816043, /* module */
            0.0,       /* section */
            -0.972455, /* test */
            0.0,       /* name */
            0.0,       /* name_cover */
            0.0,       /* path */
            0.0,       /* ident */
            0.0,       /* doc */
            0.0,       /* has_doc */
            -0.573219, /* lines */
            0.86861,   /* window */
            0.748431,  /* file_rank */
            -0.715037, /* file_hits */
        },
};
