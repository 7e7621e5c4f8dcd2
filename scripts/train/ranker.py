"""Learns the re-ranker (a linear model over retrieve/rerank.c's features)
from labelled candidate lists, and measures a model on them.

    ranker.py label DUMP QUESTIONS CORPUS_ROOT OUT      label dev dumps (score.py's gold)
    ranker.py train OUT_JSON LABELLED... --names NAMES_JSON [--seed N] [--epochs N] [--l2 X]
                    [--drop a,b] [--anchor X] [--kinds doc,test,refs,...] [--seeds N]
    ranker.py eval MODEL_JSON LABELLED...               identity vs model, per file

A labelled file has one JSON line per question: {"id", "n_gold", "cands":
[{"f": [...], "y": 0|1, "g": gold index or -1}]} in the first ranking's
order. Training is pairwise logistic (RankNet) with plain SGD over a seeded
shuffle: standard library only, deterministic for a seed.
"""
import json
import math
import os
import random
import sys


def overlaps(c, start, end):
    return c["start"] <= end and start <= c["end"]


def label_dump(dump, questions, root, out):
    sys.path.insert(0, os.environ.get("SHARED_BENCH", "/work/shared/bench"))
    import score  # the benchmark's own gold resolution
    qs = {}
    for line in open(questions):
        if line.strip():
            q = json.loads(line)
            qs[q["id"]] = q
    cache = score.FileCache(root)
    warnings = []
    with open(out, "w") as w:
        for line in open(dump):
            d = json.loads(line)
            q = qs[d["id"]]
            golds = []
            for g in q["gold"]:
                r = score.resolve_gold(cache, q["corpus"], g, warnings)
                if r:
                    golds.append((score.norm_path(g["path"]), r[0], r[1]))
            cands = []
            for c in d["cands"]:
                hit = -1
                for k, (p, a, b) in enumerate(golds):
                    if c["path"] == p and overlaps(c, a, b):
                        hit = k
                        break
                cands.append({"f": c["f"], "y": 1 if hit >= 0 else 0, "g": hit,
                              "n": c["end"] - c["start"] + 1})
            w.write(json.dumps({"id": d["id"], "kind": q.get("kind", ""), "n_gold": len(golds),
                                "cands": cands}) + "\n")


def load(paths, kinds=None):
    """The labelled questions of the files, only those of the given kinds
    (mine_ranker.py's: doc, test, refs, calls, module, section) if any."""
    groups = []
    for p in paths:
        for line in open(p):
            if line.strip():
                g = json.loads(line)
                if not kinds or g.get("kind", "") in kinds:
                    groups.append(g)
    return groups


def score_of(w, b, f):
    return b + sum(x * y for x, y in zip(w, f))


def order_of(g, w, b, keep):
    """The candidates' order under a model (None: the first ranking's),
    the first `keep` left in place as rtv_rerank leaves them."""
    order = list(range(len(g["cands"])))
    if w is not None:
        s = [score_of(w, b, c["f"]) for c in g["cands"]]
        order = order[:keep] + sorted(order[keep:], key=lambda i: (-s[i], i))
    return order


def metrics(groups, w=None, b=0.0, k=10, keep=2):
    """MRR of the first gold candidate, share of gold definitions in the first k,
    and questions with a gold candidate first."""
    mrr = rec = top1 = 0.0
    n = 0
    for g in groups:
        if not g["n_gold"]:
            continue
        n += 1
        order = order_of(g, w, b, keep)
        seen = set()
        for r, i in enumerate(order):
            c = g["cands"][i]
            if c["y"]:
                if not seen:
                    mrr += 1.0 / (r + 1)
                    top1 += r == 0
                if r < k:
                    seen.add(c["g"])
                else:
                    seen.add(None)
        rec += len(seen - {None}) / g["n_gold"]
    n = max(n, 1)
    return {"MRR": mrr / n, "Recall@%d" % k: rec / n, "Top1": top1 / n, "n": n}


def packed_recall(groups, w=None, b=0.0, budget_lines=300, window=20, keep=2):
    """Share of gold definitions packed when candidates are taken in order
    while their lines (at most `window` each, as the trim leaves them) fit
    in budget_lines: about what 12,000 characters hold."""
    rec, n = 0.0, 0
    for g in groups:
        if not g["n_gold"] or not g["cands"] or "n" not in g["cands"][0]:
            continue
        n += 1
        order = order_of(g, w, b, keep)
        left, seen = budget_lines, set()
        for i in order:
            c = g["cands"][i]
            cost = min(c["n"], window)
            if cost > left:
                continue
            left -= cost
            if c["y"]:
                seen.add(c["g"])
        rec += len(seen) / g["n_gold"]
    return rec / max(n, 1)


def train(groups, n_feat, seed=1, epochs=8, l2=1e-4, lr=0.05, drop=()):
    rng = random.Random(seed)
    pairs = []
    for gi, g in enumerate(groups):
        pos = [i for i, c in enumerate(g["cands"]) if c["y"]]
        neg = [i for i, c in enumerate(g["cands"]) if not c["y"]]
        if not pos or not neg:
            continue
        # every positive against at most 30 negatives, the first-ranked ones
        # (the hard ones) and a seeded sample of the rest
        for p in pos:
            ns = neg[:15] + rng.sample(neg[15:], min(15, len(neg[15:])))
            for q in ns:
                pairs.append((gi, p, q))
    w = [0.0] * n_feat
    # start from the first ranking's order: the rank feature
    w[1] = 1.0
    mask = [0.0 if k in drop else 1.0 for k in range(n_feat)]
    for ep in range(epochs):
        rng.shuffle(pairs)
        rate = lr / (1 + ep)
        loss = 0.0
        for gi, p, q in pairs:
            fp = groups[gi]["cands"][p]["f"]
            fq = groups[gi]["cands"][q]["f"]
            d = [a - b for a, b in zip(fp, fq)]
            z = sum(x * y for x, y in zip(w, d))
            if z > 30:
                sig = 0.0
            else:
                sig = 1.0 / (1.0 + math.exp(z))  # d loss / d z = -sig
            loss += math.log1p(math.exp(-z)) if z > -30 else -z
            for k in range(n_feat):
                w[k] += rate * mask[k] * (sig * d[k] - l2 * w[k])
        print("epoch %d: %d pairs, loss %.4f" % (ep + 1, len(pairs), loss / max(len(pairs), 1)),
              file=sys.stderr)
    return w


def parse_opts(args, opts):
    """Fills opts (name -> default) from "--name value" pairs in args; returns the rest."""
    rest = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    return rest


def main():
    cmd = sys.argv[1]
    if cmd == "label":
        label_dump(*sys.argv[2:6])
    elif cmd == "train":
        out = sys.argv[2]
        args = sys.argv[3:]
        opts = {"--seed": "1", "--epochs": "8", "--l2": "1e-4", "--drop": "", "--names": "",
                "--anchor": "0", "--kinds": "", "--seeds": "1"}
        files = parse_opts(args, opts)
        groups = load(files, {k for k in opts["--kinds"].split(",") if k})
        names = json.load(open(opts["--names"]))  # rank_features's list, or a model's
        names = names["features"] if isinstance(names, dict) else names
        drop = {names.index(x) for x in opts["--drop"].split(",") if x}
        # the mean of --seeds runs (seeds seed, seed+1, ...): a linear model
        # learnt by SGD from a few thousand questions moves with its seed as
        # much as with its data; the mean moves less
        runs = [train(groups, len(names), int(opts["--seed"]) + k, int(opts["--epochs"]),
                      float(opts["--l2"]), drop=drop) for k in range(int(opts["--seeds"]))]
        w = [sum(x) / len(runs) for x in zip(*runs)]
        # the anchor: how much of the first ranking's score the model keeps on
        # top of what it learnt (0: none), so that the learnt part corrects it
        anchor = float(opts["--anchor"])
        w[names.index("score")] += anchor
        print("train: identity %s" % metrics(groups), file=sys.stderr)
        print("train: model    %s" % metrics(groups, w), file=sys.stderr)
        json.dump({"name": "ranker-v1", "features": names, "bias": 0.0,
                   "weights": [round(x, 6) for x in w],
                   "training": {"questions": len(groups), "seed": int(opts["--seed"]),
                                "seeds": int(opts["--seeds"]),
                                "epochs": int(opts["--epochs"]), "l2": float(opts["--l2"]),
                                "anchor": anchor,
                                "kinds": opts["--kinds"] or "all",
                                "dropped": sorted(names[k] for k in drop)}},
                  open(out, "w"), indent=1)
    elif cmd == "eval":
        m = json.load(open(sys.argv[2]))
        for p in sys.argv[3:]:
            groups = load([p])
            a, b = metrics(groups), metrics(groups, m["weights"], m["bias"])
            pa, pb = packed_recall(groups), packed_recall(groups, m["weights"], m["bias"])
            print("%-18s identity MRR %.3f R@10 %.3f packed %.3f | model MRR %.3f R@10 %.3f "
                  "packed %.3f (n=%d)" % (os.path.basename(p).split(".")[0], a["MRR"],
                                           a["Recall@10"], pa, b["MRR"], b["Recall@10"], pb,
                                           a["n"]))


if __name__ == "__main__":
    main()
