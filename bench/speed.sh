#!/usr/bin/env bash
# Issue 41's table: two coderag binaries side by side, on what a person feels
# on an ordinary project and on the kernel. Builds nothing.
#
#   bench/speed.sh OLD_BIN NEW_BIN [CORPUS_DIR] [SCRATCH]
#
# The binaries run alternately (the order swaps each round: A B, B A, ...)
# and each figure is the median of RUNS rounds (default 5), printed for both
# with its ratio NEW / OLD:
#   - cold `coderag index` of Django, Flask+Werkzeug and stdlib+SymPy (a tree
#     of hard links to CORPUS_DIR/stdlib and sympy, made in SCRATCH): wall, CPU
#     (user + sys, the figure to compare on a shared machine), peak RSS;
#   - the language server on Flask+Werkzeug (a copy in SCRATCH, indexed
#     beforehand): `coderag/ask` p50 over 10 questions asked 3 times each, and
#     didSave -> the saved function queryable (a function appended to
#     flask/app.py, saved, then `workspace/symbol` asked until it is there;
#     5 saves per round), both wall from the client, with the server's CPU
#     per request (/proc/PID/stat before and after) beside them;
#   - one-shot `coderag ask --no-update` on stdlib+SymPy against
#     `grep -rlw` of one word of the question (wall and CPU, ratio to grep);
#   - with KERNEL=1 (about 20 min per binary on a loaded 2-core machine): the
#     kernel (CORPUS_DIR/c-linux) cold index wall / CPU / peak RSS, index
#     size, one-shot ask p50 (bench/kernel-questions.jsonl) and `coderag
#     index` after one file changed; one round (KERNEL_RUNS).
# Env: RUNS, KERNEL, KERNEL_RUNS (default 1), ONLY (space-separated subset of
# "cold lsp grep kernel"; default all but kernel unless KERNEL=1), COLD (the
# cold-index corpora, comma-separated; default "Django,Flask+Werkzeug,stdlib+SymPy").
# Uses python3's standard library, grep and tests/lsp/lsp_client.py.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,29p "$0" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${3:-/work/corpus}
scratch=${4:-/tmp/coderag-speed}
mkdir -p "$scratch"
exec /usr/bin/python3 - "$1" "$2" "$corpus" "$scratch" "$here" <<'PY'
import json, os, re, shutil, statistics, subprocess, sys, time

old_bin, new_bin, corpus, scratch, here = sys.argv[1:6]
sys.path.insert(0, os.path.join(here, "tests", "lsp"))
from lsp_client import Server, file_uri

# copies: a rebuild during the run changes nothing measured
bins = {}
for tag, b in (("old", old_bin), ("new", new_bin)):
    os.makedirs(os.path.join(scratch, tag), exist_ok=True)
    dst = os.path.join(scratch, tag, "coderag")
    shutil.copy2(b, dst)
    so = os.path.join(os.path.dirname(os.path.abspath(b)), "coderag-faiss.so")
    if os.path.exists(so):
        shutil.copy2(so, os.path.join(scratch, tag, "coderag-faiss.so"))
    bins[tag] = dst
runs = int(os.environ.get("RUNS", "5"))
kernel = os.environ.get("KERNEL", "0") == "1"
only = set(os.environ.get("ONLY", "cold lsp grep" + (" kernel" if kernel else "")).split())
med = statistics.median


def rounds(n):
    """(round, binary) in alternating order: old new, new old, ..."""
    for r in range(n):
        for b in (("old", "new") if r % 2 == 0 else ("new", "old")):
            yield r, b


def timed(argv, **kw):
    """(exit status, wall s, CPU s (user + sys), peak RSS MB) of one process."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, time.monotonic() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def row(name, unit, o, n, fmt="%.2f"):
    ratio = n / o if o else float("nan")
    print(("| %s | " + fmt + " %s | " + fmt + " %s | %.2f× |") % (name, o, unit, n, unit, ratio), flush=True)


def header(title):
    print("\n%s (median of %d rounds, alternating; load %.1f)\n" % (title, runs, os.getloadavg()[0]))
    print("| figure | old | new | new / old |\n|---|---|---|---|", flush=True)


def linked_tree(dst, parts):
    """A tree of hard links (a copy on another file system) of CORPUS/parts."""
    if os.path.isdir(dst):
        return dst
    os.makedirs(dst)
    for p in parts:
        src = os.path.join(corpus, p)
        if not os.path.isdir(src):
            sys.exit("no corpus %s (bench/corpus.sh %s %s builds it)" % (src, corpus, p))
        if subprocess.run(["cp", "-al", src + "/.", dst + "/"], stderr=subprocess.DEVNULL).returncode:
            subprocess.run(["cp", "-R", src + "/.", dst + "/"], check=True)
    return dst


s1m = linked_tree(os.path.join(scratch, "stdlib-sympy"), ["stdlib", "sympy"])
roots = {"Django": os.path.join(corpus, "django"), "Flask+Werkzeug": os.path.join(corpus, "flask-werkzeug"),
         "stdlib+SymPy": s1m}


def cold(root, runs_, tag_idx):
    """{binary: {wall, cpu, rss: [...], size}} of cold indexes of root."""
    out = {b: {"wall": [], "cpu": [], "rss": [], "size": 0} for b in bins}
    for r, b in rounds(runs_):
        d = os.path.join(scratch, b, "idx-" + tag_idx)
        shutil.rmtree(d, ignore_errors=True)
        rc, w, c, m = timed([bins[b], "index", "--root", root, "--index-dir", d])
        if rc:
            sys.exit("%s index %s: exit %d" % (b, root, rc))
        for k, v in (("wall", w), ("cpu", c), ("rss", m)):
            out[b][k].append(v)
        out[b]["size"] = du(d)
    return out


if "cold" in only:
    header("Cold `coderag index`")
    for name in os.environ.get("COLD", ",".join(roots)).split(","):
        root = roots[name]
        f = cold(root, runs, name.lower().replace("+", "-"))
        o, n = f["old"], f["new"]
        row(name + " cold index, wall", "s", med(o["wall"]), med(n["wall"]))
        row(name + " cold index, CPU", "s", med(o["cpu"]), med(n["cpu"]))
        row(name + " cold index, peak RSS", "MB", med(o["rss"]), med(n["rss"]), "%.0f")
        row(name + " index size", "MB", o["size"] / 1e6, n["size"] / 1e6, "%.1f")

LSP_QUESTIONS = [
    "How does the application dispatch a request to a view function?",
    "How are session cookies signed and loaded?",
    "How does url routing match a path to an endpoint?",
    "How are blueprints registered on the app?",
    "Where is the request context pushed and popped?",
    "How does the development server reload on code changes?",
    "How are template rendering and context processors done?",
    "How does the test client build a request environment?",
    "How are HTTP exceptions turned into responses?",
    "How does url_for build a URL for an endpoint?",
]


def proc_cpu(pid):
    """CPU seconds (user + sys) a process has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def lsp_round(b, root, idx, log):
    """ask walls, save -> queryable walls, server CPU per ask and per save."""
    s = Server(bins[b], scratch, args=("--index-dir", idx), stderr_path=log)
    asks, saves = [], []
    try:
        s.initialize(root, folders=[root])
        s.wait_ready(600)
        s.ask(LSP_QUESTIONS[0], mode="extractive")  # the first ask maps the index
        c0 = proc_cpu(s.proc.pid)
        for _ in range(3):
            for q in LSP_QUESTIONS:
                t0 = time.perf_counter()
                s.ask(q, mode="extractive")
                asks.append(time.perf_counter() - t0)
        c1 = proc_cpu(s.proc.pid)
        path = os.path.join(root, "flask", "app.py")
        orig = open(path).read()
        for i in range(5):
            # the same letters for both binaries: a word of the name ("new", "old") has
            # postings of its own, and a common one made every save of one side cost more
            name = "speed_probe_%s_%d_%d" % ("xa" if b == "old" else "xb", os.getpid(), i)
            with open(path, "w") as f:
                f.write(orig + "\n\ndef %s():\n    return %d\n" % (name, i))
            t0 = time.perf_counter()
            s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
            while True:
                r = s.call("workspace/symbol", {"query": name})
                if any(x.get("name") == name for x in (r.get("result") or [])):
                    break
                if time.perf_counter() - t0 > 60:
                    sys.exit("%s: %s never queryable" % (b, name))
            saves.append(time.perf_counter() - t0)
        c2 = proc_cpu(s.proc.pid)
        with open(path, "w") as f:
            f.write(orig)
        s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
        s.call("workspace/symbol", {"query": "Flask"})
        s.shutdown_exit()
    finally:
        s.kill()
    return asks, saves, (c1 - c0) / len(asks), (c2 - c1) / len(saves)


if "lsp" in only:
    root = os.path.join(scratch, "flask-werkzeug")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(corpus, "flask-werkzeug"), root)
    f = {b: {"ask": [], "save": [], "askcpu": [], "savecpu": []} for b in bins}
    for b in bins:
        idx = os.path.join(scratch, b, "idx-lsp")
        shutil.rmtree(idx, ignore_errors=True)
        subprocess.run([bins[b], "index", "--root", root, "--index-dir", idx], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for r, b in rounds(runs):
        a, sv, ac, sc = lsp_round(b, root, os.path.join(scratch, b, "idx-lsp"),
                                  os.path.join(scratch, b, "lsp.stderr"))
        f[b]["ask"].append(med(a)); f[b]["save"].append(med(sv))
        f[b]["askcpu"].append(ac); f[b]["savecpu"].append(sc)
    header("Language server on Flask+Werkzeug (10 questions × 3 and 5 saves per round)")
    o, n = f["old"], f["new"]
    row("`coderag/ask` p50, wall", "ms", 1000 * med(o["ask"]), 1000 * med(n["ask"]))
    row("`coderag/ask`, server CPU per ask", "ms", 1000 * med(o["askcpu"]), 1000 * med(n["askcpu"]))
    row("didSave → queryable p50, wall", "ms", 1000 * med(o["save"]), 1000 * med(n["save"]))
    row("didSave → queryable, server CPU per save", "ms", 1000 * med(o["savecpu"]), 1000 * med(n["savecpu"]))

GREP_PAIRS = [("How does the tokenizer split source lines into tokens?", "generate_tokens"),
              ("How are symbolic expressions simplified?", "simplify"),
              ("How does json decode a string?", "JSONDecoder")]

if "grep" in only:
    for b in bins:
        idx = os.path.join(scratch, b, "idx-1m")
        if not os.path.exists(os.path.join(idx, "index.db")):
            subprocess.run([bins[b], "index", "--root", s1m, "--index-dir", idx], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    f = {k: {"wall": [], "cpu": []} for k in ("old", "new", "grep")}
    for r, b in rounds(runs):
        for q, word in GREP_PAIRS:
            rc, w, c, _ = timed([bins[b], "ask", "--root", s1m, "--index-dir",
                                 os.path.join(scratch, b, "idx-1m"), "--no-update", "--json", q])
            f[b]["wall"].append(w); f[b]["cpu"].append(c)
            if b == "new":
                rc, w, c, _ = timed(["grep", "-rlw", word, s1m])
                f["grep"]["wall"].append(w); f["grep"]["cpu"].append(c)
    header("One-shot `coderag ask --no-update` on stdlib+SymPy (3 questions per round) against `grep -rlw`")
    o, n, g = f["old"], f["new"], f["grep"]
    row("one-shot ask, wall", "ms", 1000 * med(o["wall"]), 1000 * med(n["wall"]))
    row("one-shot ask, CPU", "ms", 1000 * med(o["cpu"]), 1000 * med(n["cpu"]))
    print("| `grep -rlw WORD`, wall / CPU | %.1f / %.1f ms | | |" % (1000 * med(g["wall"]), 1000 * med(g["cpu"])))
    print("| ask / grep, wall | %.2f× | %.2f× | |" % (med(o["wall"]) / med(g["wall"]), med(n["wall"]) / med(g["wall"])))
    print("| ask / grep, CPU | %.2f× | %.2f× | |" % (med(o["cpu"]) / med(g["cpu"]), med(n["cpu"]) / med(g["cpu"])), flush=True)

if "kernel" in only:
    kr = int(os.environ.get("KERNEL_RUNS", "1"))
    root = linked_tree(os.path.join(scratch, "c-linux"), ["c-linux"])
    qs = [json.loads(l)["question"] for l in open(os.path.join(here, "bench", "kernel-questions.jsonl")) if l.strip()]
    f = cold(root, kr, "kernel")
    a = {b: {"wall": [], "cpu": []} for b in bins}
    for i, q in enumerate(qs):
        for b in (("old", "new") if i % 2 == 0 else ("new", "old")):
            _, w, c, _ = timed([bins[b], "ask", "--root", root, "--index-dir",
                                os.path.join(scratch, b, "idx-kernel"), "--no-update", "--json", q])
            a[b]["wall"].append(w); a[b]["cpu"].append(c)
    # one file changed: unlinked and copied first, so the corpus is never written
    rel = os.path.join("kernel", "sched", "core.c")
    path = os.path.join(root, rel)
    orig = open(path).read()
    os.unlink(path)
    with open(path, "w") as w_:
        w_.write(orig)
    u = {b: {"wall": [], "cpu": []} for b in bins}
    for r, b in rounds(3):
        time.sleep(3)  # a file modified in the last 2 s is read again by the next pass
        with open(path, "w") as w_:
            w_.write(orig + "\n/* speed %d %s */\n" % (r, b))
        time.sleep(3)
        _, w, c, _ = timed([bins[b], "index", "--root", root, "--index-dir", os.path.join(scratch, b, "idx-kernel")])
        u[b]["wall"].append(w); u[b]["cpu"].append(c)
    with open(path, "w") as w_:
        w_.write(orig)
    header("The kernel (cold index: %d round(s); asks: %d questions; one file changed: 3 rounds)" % (kr, len(qs)))
    o, n = f["old"], f["new"]
    row("kernel cold index, wall", "s", med(o["wall"]), med(n["wall"]), "%.1f")
    row("kernel cold index, CPU", "s", med(o["cpu"]), med(n["cpu"]), "%.1f")
    row("kernel cold index, peak RSS", "MB", med(o["rss"]), med(n["rss"]), "%.0f")
    row("kernel index size", "MB", o["size"] / 1e6, n["size"] / 1e6, "%.0f")
    row("kernel one-shot ask p50, wall", "s", med(a["old"]["wall"]), med(a["new"]["wall"]), "%.3f")
    row("kernel one-shot ask p50, CPU", "s", med(a["old"]["cpu"]), med(a["new"]["cpu"]), "%.3f")
    row("kernel one file changed, wall", "s", med(u["old"]["wall"]), med(u["new"]["wall"]), "%.3f")
    row("kernel one file changed, CPU", "s", med(u["old"]["cpu"]), med(u["new"]["cpu"]), "%.3f")
print("\nold: %s\nnew: %s\nload average at the end: %.1f %.1f %.1f" % ((old_bin, new_bin) + os.getloadavg()))
PY
