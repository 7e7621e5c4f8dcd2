"""Writes retrieve/rerank_model.c from a re-ranker model file.

    export_ranker.py MODEL_JSON OUT_C

The model file (models/ranker-v1.json) is {"name", "features": [names in
rtv_feature_names order], "bias", "weights": [...], "training": {...}}; the
C table carries its weights and the file's sha256, and tests/unit/test_rerank.c
checks that the two agree.
"""
import hashlib
import json
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    raw = open(src, "rb").read()
    m = json.loads(raw)
    sha = hashlib.sha256(raw).hexdigest()
    w = "\n".join("        %r, /* %s */" % (float(x), n)
                   for x, n in zip(m["weights"], m["features"]))
    text = """/* Written by scripts/train/export_ranker.py from models/%(file)s: do not
 * edit (scripts/train-ranker.sh rewrites both). */
#include "rtv_int.h"

const RtvRanker rtv_ranker = {
    .name = "%(name)s",
    .sha256 = "%(sha)s",
    .bias = %(bias)r,
    .w = {
%(w)s
    },
};
""" % {"file": src.split("/")[-1], "name": m["name"], "sha": sha, "bias": float(m["bias"]),
       "w": w}
    open(out, "w").write(text)


if __name__ == "__main__":
    main()
