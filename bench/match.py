#!/usr/bin/env python3
"""Relevance labels (`match`) over question sets: the share of dev questions
labelled strong and of off-topic questions labelled weak or none.

    bench/match.py CODERAG_BIN CORPUS_DIR INDEX_PREFIX QUESTIONS.jsonl... [--tsv OUT]

Each question goes through `coderag ask --json --mode extractive --no-update`
over CORPUS_DIR/<corpus> with the index in INDEX_PREFIX<corpus>; a file whose
name contains "offtopic" counts as off-topic. Questions of corpora without
an index are skipped (and counted).
"""
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SIG = re.compile(r"match (\w+) \(coverage ([0-9.]+), identifiers (\d+)/(\d+), terms (\d+)"
                 r"(?:, context (-?[0-9.]+))?\)")


def ask(binary, corpus_dir, prefix, q):
    root = os.path.join(corpus_dir, q["corpus"])
    env = dict(os.environ, CODERAG_LOG="debug")
    p = subprocess.run([binary, "ask", "--root", root, "--index-dir", prefix + q["corpus"],
                        "--no-update", "--json", "--mode", "extractive", q["question"]],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return None
    r = json.loads(p.stdout)
    m = SIG.search(p.stderr)
    return {"match": r["match"], "reason": r.get("matchReason", ""),
            "coverage": float(m.group(2)) if m else -1, "idents_hit": int(m.group(3)) if m else -1,
            "idents": int(m.group(4)) if m else -1, "terms": int(m.group(5)) if m else -1,
            "context": float(m.group(6)) if m and m.group(6) else -1,
            "first": r["answer"].split("\n", 1)[0][:120]}


def main(argv):
    tsv = None
    if "--tsv" in argv:
        i = argv.index("--tsv")
        tsv = argv[i + 1]
        del argv[i:i + 2]
    binary, corpus_dir, prefix, files = argv[0], argv[1], argv[2], argv[3:]
    rows = []
    for f in files:
        off = "offtopic" in os.path.basename(f)
        qs = [json.loads(line) for line in open(f) if line.strip()]
        have = [q for q in qs if os.path.isdir(prefix + q["corpus"])]
        with ThreadPoolExecutor(2) as ex:
            res = list(ex.map(lambda q: ask(binary, corpus_dir, prefix, q), have))
        counts = {"strong": 0, "weak": 0, "none": 0}
        for q, r in zip(have, res):
            if r is None:
                continue
            counts[r["match"]] += 1
            rows.append((os.path.basename(f), q["id"], q["corpus"], r))
        n = sum(counts.values())
        good = counts["weak"] + counts["none"] if off else counts["strong"]
        print("%-28s %3d asked (%d skipped: no index)  strong %3d  weak %3d  none %3d  -> %s %.1f%%"
              % (os.path.basename(f), n, len(qs) - len(have), counts["strong"], counts["weak"],
                 counts["none"], "weak/none" if off else "strong", 100.0 * good / max(n, 1)))
    if tsv:
        with open(tsv, "w") as w:
            for f, qid, c, r in rows:
                w.write("\t".join([f, qid, c, r["match"], "%.3f" % r["coverage"], str(r["idents"]),
                                   str(r["idents_hit"]), str(r["terms"]), "%.2f" % r["context"], r["reason"],
                                   r["first"]]) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
