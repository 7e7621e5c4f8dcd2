"""Per-set and per-question differences between two eval_sets.py runs, in
questions: gold definitions hit (SymbolRecall's numerator), strictly hit,
complete questions, and the questions that changed.

    compare_runs.py TAG_A TAG_B [--sets dev,lang,...] [--corpus-root DIR]
"""
import json
import os
import sys

sys.path.insert(0, os.environ.get("SHARED_BENCH", "/work/shared/bench"))
import score  # noqa: E402
from eval_sets import SETS  # noqa: E402


def rows(qfile, results, root):
    recs = {}
    for line in open(results):
        r = json.loads(line)
        recs[r["id"]] = r
    cache = score.FileCache(root)
    out = {}
    for line in open(qfile):
        if line.strip():
            q = json.loads(line)
            if q["id"] in recs:
                out[q["id"]] = score.score_question(q, recs[q["id"]], cache, [])
    return out


def main():
    a, b = sys.argv[1], sys.argv[2]
    sets, root = ["dev", "lang", "lang2", "lang3"], "/tmp/rank2/corpus"
    args = sys.argv[3:]
    for i in range(0, len(args), 2):
        if args[i] == "--sets":
            sets = args[i + 1].split(",")
        elif args[i] == "--corpus-root":
            root = args[i + 1]
    tot = [0, 0, 0]
    for s in sets:
        ra = rows(SETS[s], "/tmp/coderag-eval/%s-%s.jsonl" % (a, s), root)
        rb = rows(SETS[s], "/tmp/coderag-eval/%s-%s.jsonl" % (b, s), root)
        d = [0, 0, 0]
        changed = []
        for k in ra:
            if k not in rb:
                continue
            x = (rb[k]["hits"] - ra[k]["hits"], rb[k]["strict_hits"] - ra[k]["strict_hits"],
                 int(rb[k]["complete"]) - int(ra[k]["complete"]))
            d = [u + v for u, v in zip(d, x)]
            if any(x):
                changed.append("%s %+d/%+d/%+d" % ((k,) + x))
        tot = [u + v for u, v in zip(tot, d)]
        print("%-6s hits %+d strict %+d complete %+d  %s" % (s, d[0], d[1], d[2], " ".join(changed)))
    print("sum    hits %+d strict %+d complete %+d" % tuple(tot))


if __name__ == "__main__":
    main()
