#!/usr/bin/env bash
# Two coderag binaries on one question set: same answers? same speed?
#
#   bench/compare.sh OLD_BIN NEW_BIN QUESTIONS CORPUS_DIR [WORK_DIR]
#
# Indexes every corpus the questions name (CORPUS_DIR/NAME) with each binary
# into its own empty folder (WORK_DIR/{old,new}/NAME), then asks every
# question with both (`ask --json --mode extractive --no-update`, old and new
# alternating) and reports:
#   - per corpus: questions whose answer text, citations or context list
#     (path, lines, symbol, legs) differ, and the largest score drift;
#   - the first SHOW differences (default 5), old vs new;
#   - cold index wall and CPU time (user + sys) and index size, and the
#     median one-shot ask wall and CPU time, for both binaries.
# Env: INDEX_RUNS (cold indexes per binary and corpus, default 1; the median is
# reported), RUNS (asks per question and binary, default 1), SHOW, and
# ASK_ARGS (extra `ask` options for both, e.g. "--budget 8000").
# CPU time is the figure to compare on a loaded machine; wall time is printed
# beside it. Every result is kept in WORK_DIR/{old,new}.jsonl.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,19p "$0" >&2; exit 1; }
work=${5:-$(mktemp -d /tmp/coderag-compare.XXXXXX)}
mkdir -p "$work"
exec /usr/bin/python3 - "$1" "$2" "$3" "$4" "$work" <<'PY'
import json, os, resource, shlex, statistics, subprocess, sys, time

old_bin, new_bin, questions, corpus, work = sys.argv[1:6]
bins = {"old": os.path.abspath(old_bin), "new": os.path.abspath(new_bin)}
index_runs = int(os.environ.get("INDEX_RUNS", "1"))
runs = int(os.environ.get("RUNS", "1"))
show = int(os.environ.get("SHOW", "5"))
ask_args = shlex.split(os.environ.get("ASK_ARGS", ""))
qs = [json.loads(l) for l in open(questions) if l.strip()]
corpora = sorted({q["corpus"] for q in qs})


def timed(argv):
    """(exit status, stdout, stderr, wall s, CPU s: user + sys) of one process."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    wall, r1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.returncode, p.stdout, p.stderr, wall, cpu


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


# Cold indexes, the binaries alternating (which goes first swaps each run).
idx = {}
for c in corpora:
    root = os.path.join(corpus, c)
    if not os.path.isdir(root):
        sys.exit("no corpus %s (bench/corpus.sh %s %s builds it)" % (root, corpus, c))
    for r in range(index_runs):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for b in order:
            d = os.path.join(work, b, c)
            subprocess.run(["rm", "-rf", d], check=True)
            os.makedirs(d)
            rc, _, err, wall, cpu = timed([bins[b], "index", "--root", root, "--index-dir", d])
            if rc != 0:
                sys.exit("%s index %s: exit %d: %s" % (b, c, rc, err.strip()))
            e = idx.setdefault((b, c), {"wall": [], "cpu": []})
            e["wall"].append(wall)
            e["cpu"].append(cpu)
            e["size"] = du(d)

# Every question with both binaries, alternating.
res = {"old": {}, "new": {}}
asks = {(b, c): {"wall": [], "cpu": []} for b in bins for c in corpora}
for i, q in enumerate(qs):
    root = os.path.join(corpus, q["corpus"])
    for r in range(runs):
        order = ["old", "new"] if (i + r) % 2 == 0 else ["new", "old"]
        for b in order:
            argv = [bins[b], "ask", "--root", root, "--index-dir", os.path.join(work, b, q["corpus"]),
                    "--no-update", "--json", "--mode", "extractive", *ask_args, q["question"]]
            rc, out, err, wall, cpu = timed(argv)
            asks[(b, q["corpus"])]["wall"].append(wall)
            asks[(b, q["corpus"])]["cpu"].append(cpu)
            if r == 0:
                res[b][q["id"]] = json.loads(out) if rc == 0 else {"exit": rc, "stderr": err.strip()}
for b in bins:
    with open(os.path.join(work, b + ".jsonl"), "w") as w:
        for q in qs:
            w.write(json.dumps({"id": q["id"], "result": res[b][q["id"]]}) + "\n")


def ctx(r):
    return [(x.get("path"), x.get("startLine"), x.get("endLine"), x.get("symbol"), tuple(x.get("via", [])))
            for x in r.get("context", [])]


def cites(r):
    return r.get("citations", [])


def answer(r):
    return {k: v for k, v in r.items() if k not in ("context", "timings", "citations")}


def first_diff(a, b):
    for n, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return n, x, y
    n = min(len(a), len(b))
    return n, (a[n] if n < len(a) else None), (b[n] if n < len(b) else None)


print("old: %s\nnew: %s\nquestions: %s (%d), corpus dir: %s, results: %s\n"
      % (bins["old"], bins["new"], questions, len(qs), corpus, work))
print("| corpus | questions | answer differs | citations differ | context differs | max score drift |")
print("|---|---|---|---|---|---|")
diffs = []
tot = [0, 0, 0, 0]
for c in corpora:
    n = da = dc = dx = 0
    drift = 0.0
    for q in (q for q in qs if q["corpus"] == c):
        o, w = res["old"][q["id"]], res["new"][q["id"]]
        n += 1
        what = []
        if answer(o) != answer(w):
            da += 1
            what.append("answer")
        if cites(o) != cites(w):
            dc += 1
            what.append("citations")
        if ctx(o) != ctx(w):
            dx += 1
            what.append("context")
        else:
            for x, y in zip(o.get("context", []), w.get("context", [])):
                drift = max(drift, abs(x.get("score", 0) - y.get("score", 0)))
        if what:
            diffs.append((q, what, o, w))
    tot = [tot[0] + n, tot[1] + da, tot[2] + dc, tot[3] + dx]
    print("| %s | %d | %d | %d | %d | %.2g |" % (c, n, da, dc, dx, drift))
print("| all | %d | %d | %d | %d | |\n" % tuple(tot))

for q, what, o, w in diffs[:show]:
    print("%s (%s): %s differ%s" % (q["id"], q["corpus"], ", ".join(what), "s" if len(what) == 1 else ""))
    if "context" in what:
        a, b = ctx(o), ctx(w)
        n, x, y = first_diff(a, b)
        print("  context: %d -> %d entries; first difference at #%d:\n    old %s\n    new %s" % (len(a), len(b), n, x, y))
    elif "citations" in what:
        n, x, y = first_diff(cites(o), cites(w))
        print("  citation #%d:\n    old %s\n    new %s" % (n, x, y))
    else:
        for k in sorted(set(answer(o)) | set(answer(w))):
            if o.get(k) != w.get(k):
                print("  %s:\n    old %r\n    new %r" % (k, str(o.get(k))[:300], str(w.get(k))[:300]))
                break
if len(diffs) > show:
    print("... %d more (SHOW=N for more)" % (len(diffs) - show))

print("\nThe all row: index figures summed over the corpora, ask figures the median of every ask.")
print("| corpus | cold index wall (s) old → new | CPU (s) old → new | index size (MB) old → new "
      "| ask wall (ms, median) old → new | ask CPU (ms, median) old → new |")
print("|---|---|---|---|---|---|")
allw = {"old": [], "new": []}
allc = {"old": [], "new": []}
for c in corpora:
    o, w = idx[("old", c)], idx[("new", c)]
    ao, aw = asks[("old", c)], asks[("new", c)]
    allw["old"] += ao["wall"]; allw["new"] += aw["wall"]
    allc["old"] += ao["cpu"]; allc["new"] += aw["cpu"]
    print("| %s | %.2f → %.2f | %.2f → %.2f | %.1f → %.1f | %.0f → %.0f | %.0f → %.0f |"
          % (c, med(o["wall"]), med(w["wall"]), med(o["cpu"]), med(w["cpu"]), o["size"] / 1e6,
             w["size"] / 1e6, 1000 * med(ao["wall"]), 1000 * med(aw["wall"]), 1000 * med(ao["cpu"]),
             1000 * med(aw["cpu"])))
tot = {k: sum(med(idx[("old", c)][k]) for c in corpora) for k in ("wall", "cpu")}
totn = {k: sum(med(idx[("new", c)][k]) for c in corpora) for k in ("wall", "cpu")}
size = [sum(idx[(b, c)]["size"] for c in corpora) / 1e6 for b in ("old", "new")]
print("| all | %.2f → %.2f | %.2f → %.2f | %.1f → %.1f | %.0f → %.0f | %.0f → %.0f |"
      % (tot["wall"], totn["wall"], tot["cpu"], totn["cpu"], size[0], size[1], 1000 * med(allw["old"]),
         1000 * med(allw["new"]), 1000 * med(allc["old"]), 1000 * med(allc["new"])))
print("\nload average at the end: %.1f %.1f %.1f" % os.getloadavg())
PY
