/* Written by scripts/train/export_ranker.py from models/ranker-v1.json: do not
 * edit (scripts/train-ranker.sh rewrites both). */
#include "rtv_int.h"

const RtvRanker rtv_ranker = {
    .name = "ranker-v1",
    .sha256 = "0bf1d04540b772429735f4388db481cd1314acfb1313c204cd780bd7f35e6f08",
    .bias = 0.0,
    .w =
        {
            12.347253, /* score */
            1.937789,  /* rank */
            0.153499,  /* bm25 */
            -0.234359, /* dense */
            -0.012804, /* via_bm25 */
            0.251282,  /* via_dense */
            0.302776,  /* via_graph */
            0.059984,  /* graph_only */
            0.251272,  /* graph_out */
            0.282452,  /* graph_in */
            0.298461,  /* agree */
            0.502901,  /* function */
            1.835716,  /* class */
            -2.338617, /* module */
            0.0,       /* section */
            -3.320774, /* test */
            0.0,       /* name */
            0.0,       /* name_cover */
            0.0,       /* path */
            0.0,       /* ident */
            0.0,       /* doc */
            0.0,       /* has_doc */
            -0.469967, /* lines */
            0.690479,  /* window */
            1.470603,  /* file_rank */
            0.668167,  /* file_hits */
        },
};
