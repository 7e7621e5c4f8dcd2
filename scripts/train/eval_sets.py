"""Asks every dev question through `coderag ask --json` and scores each set.

    eval_sets.py BINARY TAG [--corpus-root DIR] [--sets a,b] [--out DIR] [-- extra ask options]

Indexes are read from CORPUS_ROOT/.idx-NAME (built beforehand with
`coderag index`), never updated. Results go to OUT/TAG-SET.jsonl (OUT:
/tmp/coderag-eval unless given; runs at the same time need their own TAG or
OUT, or they write over each other); one line of metrics per set (score.py
--json) and their sum are printed.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("SHARED_BENCH", "/work/shared/bench")
SETS = {
    "dev": SHARED + "/dev-questions.jsonl",
    "dev2": SHARED + "/dev2-questions.jsonl",
    "lang": SHARED + "/dev-lang-questions.jsonl",
    "lang2": ROOT + "/bench/lang2-questions.jsonl",
    "lang3": ROOT + "/bench/lang3-questions.jsonl",
    # c-linux: a corpus root holding c-linux and .idx-c-linux (links to a
    # built index will do: asks never update it)
    "kernel": ROOT + "/bench/kernel-questions.jsonl",
    "kernel2": ROOT + "/bench/kernel2-questions.jsonl",
    # c-postgres: PostgreSQL 15.18's backend as bench/bigc_bench.sh extracts it
    "pg": ROOT + "/bench/pg-questions.jsonl",
}
KEYS = ["SymbolRecall", "StrictRecall", "Complete", "MRR", "FileAcc@1", "FileAcc@5"]


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    binary, tag = args[0], args[1]
    root = "/tmp/rank2/corpus"
    sets = ["dev", "lang", "lang2", "lang3"]
    outdir = "/tmp/coderag-eval"
    i = 2
    while i < len(args):
        if args[i] == "--corpus-root":
            root = args[i + 1]
        elif args[i] == "--sets":
            sets = args[i + 1].split(",")
        elif args[i] == "--out":
            outdir = args[i + 1]
        i += 2
    os.makedirs(outdir, exist_ok=True)
    for name in sets:
        qfile = SETS[name]
        out = "%s/%s-%s.jsonl" % (outdir, tag, name)
        asked = "%s/%s-%s.questions.jsonl" % (outdir, tag, name)
        with open(qfile) as f, open(out, "w") as w, open(asked, "w") as wq:
            for line in f:
                if not line.strip():
                    continue
                q = json.loads(line)
                if not os.path.isdir("%s/.idx-%s" % (root, q["corpus"])):
                    continue  # a corpus not built: its questions are left out
                wq.write(line)
                p = subprocess.run([binary, "ask", "--root", "%s/%s" % (root, q["corpus"]),
                                    "--index-dir", "%s/.idx-%s" % (root, q["corpus"]),
                                    "--no-update", "--json", *extra, q["question"]],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print("%s: exit %d: %s" % (q["id"], p.returncode, p.stderr.strip()),
                          file=sys.stderr)
                    continue
                w.write(json.dumps({"id": q["id"], "result": json.loads(p.stdout)}) + "\n")
        p = subprocess.run(["/usr/bin/python3", SHARED + "/score.py", asked, out,
                            "--corpus-root", root, "--json"], capture_output=True, text=True)
        try:
            m = json.loads(p.stdout)
        except ValueError:
            print(name, "score failed:", p.stderr.strip()[-300:])
            continue
        m = m.get("overall", m)
        print("%-6s %s" % (name, " ".join("%s=%.3f" % (k, m[k]) for k in KEYS if k in m)),
              flush=True)


if __name__ == "__main__":
    main()
