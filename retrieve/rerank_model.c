/* Written by scripts/train/export_ranker.py from models/ranker-v1.json: do not
 * edit (scripts/train-ranker.sh rewrites both). */
#include "rtv_int.h"

const RtvRanker rtv_ranker = {
    .name = "ranker-v1",
    .sha256 = "dd9dc5c19ce2f05dd1480c8c6c8081cb7834561d6e56c112ee0b06f52146df39",
    .bias = 0.0,
    .w =
        {
            16.688102, /* score */
            1.125632,  /* rank */
            0.087976,  /* bm25 */
            -2.737734, /* dense */
            0.079711,  /* via_bm25 */
            0.523003,  /* via_dense */
            0.512213,  /* via_graph */
            -0.048196, /* graph_only */
            0.359076,  /* graph_out */
            -0.3209,   /* graph_in */
            0.554518,  /* agree */
            -0.099241, /* function */
            0.824755,  /* class */
            -0.725514, /* module */
            0.0,       /* section */
            -0.382518, /* test */
            0.0,       /* name */
            0.0,       /* name_cover */
            0.0,       /* path */
            0.0,       /* ident */
            0.0,       /* doc */
            0.0,       /* has_doc */
            -0.80211,  /* lines */
            0.921808,  /* window */
            0.705562,  /* file_rank */
            -0.893953, /* file_hits */
        },
};
