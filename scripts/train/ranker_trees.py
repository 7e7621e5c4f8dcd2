"""An experiment beside ranker.py: gradient-boosted trees (Debian's
python3-xgboost, run with /usr/bin/python3) on the same labelled candidate
lists, compared offline with the first ranking on labelled dev dumps. Not
part of train-ranker.sh: no tree model was better (docs/ranker.md), so none
is exported to C.

    ranker_trees.py TRAIN_GLOB DEV_LABELLED... [--drop a,b] [--objective rank:pairwise]
                    [--rounds N] [--names MODEL_JSON]
"""
import glob
import json
import os
import sys

import numpy as np
import xgboost as xgb

import ranker


def main():
    args = sys.argv[1:]
    opts = {"--drop": "doc,has_doc,name,name_cover,path,ident", "--objective": "rank:pairwise",
            "--rounds": "100", "--names": os.path.join(os.path.dirname(__file__),
                                                        "../../models/ranker-v1.json")}
    files = ranker.parse_opts(args, opts)
    names = json.load(open(opts["--names"]))["features"]
    drop = set(x for x in opts["--drop"].split(",") if x)
    keep = [k for k, n in enumerate(names) if n not in drop]

    def rows(groups):
        x, y, g = [], [], []
        for grp in groups:
            if grp["cands"]:
                x += [[c["f"][k] for k in keep] for c in grp["cands"]]
                y += [c["y"] for c in grp["cands"]]
                g.append(len(grp["cands"]))
        return np.array(x), np.array(y), g

    x, y, g = rows(ranker.load(sorted(glob.glob(files[0]))))
    d = xgb.DMatrix(x, label=y)
    d.set_group(g)
    params = {"objective": opts["--objective"], "eta": 0.1, "max_depth": 4, "min_child_weight": 5,
              "subsample": 0.8, "seed": 1, "nthread": 1}
    bst = xgb.train(params, d, num_boost_round=int(opts["--rounds"]))
    for path in files[1:]:
        groups = ranker.load([path])
        moved = []
        for grp in groups:  # the lexical head (two) stays, as rtv_rerank keeps it
            c = grp["cands"]
            if not c:
                moved.append(grp)
                continue
            p = bst.predict(xgb.DMatrix(np.array([[v["f"][k] for k in keep] for v in c])))
            rest = sorted(range(2, len(c)), key=lambda k: (-p[k], k))
            moved.append(dict(grp, cands=[c[k] for k in list(range(min(2, len(c)))) + rest]))
        a, b = ranker.packed_recall(groups), ranker.packed_recall(moved)
        print("%-18s packed %.3f -> %.3f (%+.3f)  MRR %.3f -> %.3f" % (
            os.path.basename(path).split(".")[0], a, b, b - a, ranker.metrics(groups)["MRR"],
            ranker.metrics(moved)["MRR"]))


if __name__ == "__main__":
    main()
