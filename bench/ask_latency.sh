#!/usr/bin/env bash
# What a person or a script calling the CLI waits for: wall time of one-shot
# `coderag ask --no-update --json` processes (process start, index open,
# search, packing, verification), and of the language server's first and
# later `coderag/ask` requests after it starts on an indexed root.
#
#   bench/ask_latency.sh ROOT QUESTIONS.jsonl [CORPUS] [BUILD_DIR]
#
# ROOT is indexed first (not timed; bench/corpus.sh builds the corpora).
# QUESTIONS is a question file (../shared/bench/dev-questions.jsonl, or one of
# bench/; only the questions of CORPUS when given). Prints p50,
# p95 and max for the CLI (each question once, then again: the second pass
# has the files in the page cache, as a developer's machine does) and the
# server's first request and the median of the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:?usage: bench/ask_latency.sh ROOT QUESTIONS.jsonl [CORPUS] [BUILD_DIR]}
questions=${2:?questions file}
corpus=${3:-}
build=${4:-build}
bin=$PWD/$build/coderag
[ -x "$bin" ] || scripts/setup.sh "$build"
"$bin" index --root "$root" 2>/dev/null

/usr/bin/python3 - "$bin" "$root" "$questions" "$corpus" <<'PY'
import json, os, statistics, subprocess, sys, time
bin_, root, qfile, corpus = sys.argv[1:5]
qs = [json.loads(l) for l in open(qfile) if l.strip()]
qs = [q["question"] for q in qs if not corpus or q.get("corpus") == corpus] or ["How is the index opened?"]

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]

walls = []
for rnd in range(2):
    for q in qs:
        t0 = time.perf_counter()
        subprocess.run([bin_, "ask", "--root", root, "--no-update", "--json", q],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if rnd:
            walls.append((time.perf_counter() - t0) * 1000)
print("cli one-shot ask --no-update (%d questions): p50 %.1f ms, p95 %.1f ms, max %.1f ms"
      % (len(walls), pct(walls, .5), pct(walls, .95), max(walls)))

# The language server: initialize, wait until the index is ready, then ask.
p = subprocess.Popen([bin_, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
def send(msg):
    b = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
    p.stdin.flush()
def recv():
    n = 0
    while True:
        line = p.stdout.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return json.loads(p.stdout.read(n))
def request(i, method, params):
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    while True:
        m = recv()
        if m.get("id") == i and "method" not in m:
            return m
        if "method" in m and "id" in m:  # a request from the server: answer it
            send({"jsonrpc": "2.0", "id": m["id"], "result": None})
uri = "file://" + os.path.realpath(root)
request(1, "initialize", {"processId": None, "rootUri": uri, "capabilities": {},
                          "workspaceFolders": [{"uri": uri, "name": "ws"}]})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
i = 2
while request(i, "coderag/status", {})["result"].get("state") != "ready":
    i += 1
    time.sleep(0.05)
times = []
for q in qs[:20]:
    i += 1
    t0 = time.perf_counter()
    r = request(i, "coderag/ask", {"question": q, "mode": "extractive"})
    times.append((time.perf_counter() - t0) * 1000)
    assert "result" in r, r
i += 1
request(i, "shutdown", None)
send({"jsonrpc": "2.0", "method": "exit"})
p.wait(timeout=60)
print("server coderag/ask: first %.1f ms, median of the next %d %.1f ms"
      % (times[0], len(times) - 1, statistics.median(times[1:]) if len(times) > 1 else 0))
PY
