#!/usr/bin/env python3
"""Benchmarks `coderag mcp` as an agent uses it (Debian's /usr/bin/python3,
standard library only).

latency ROOT INDEX_DIR [QUESTIONS.jsonl]
    Starts `coderag mcp --root ROOT --index-dir INDEX_DIR`, waits for the
    index (a status call), then alternates `search` (limit 10) over the
    questions and `callers` of each search's top definition (path + line).
    Reports the time inside the server (the result's _meta "coderag/ms":
    from dequeuing the call to its result, freshness check included) and the
    client's round trip: p50, p90, max, and the first call against the tenth.

same-ranking QUESTIONS.jsonl CORPUS_DIR INDEX_BASE
    For every question whose corpus is under CORPUS_DIR: the context of
    `coderag ask --json --mode extractive` and the results of the MCP
    `search` tool (limit 50) must be the same list, in the same order.
    Index directories go under INDEX_BASE/<corpus> (never into the corpus).

Environment: CODERAG_BIN (default build/coderag).
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CODERAG_BIN", os.path.join(HERE, "..", "build", "coderag"))


class Mcp:
    def __init__(self, root, index_dir):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODERAG_")}
        env["CODERAG_LOG"] = "warn"
        os.makedirs(index_dir, exist_ok=True)
        self.p = subprocess.Popen([BIN, "mcp", "--root", root, "--index-dir", index_dir],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "mcp_bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the server exited")
            msg = json.loads(line)
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise SystemExit("error: %s" % msg["error"])
                return msg["result"]

    def tool(self, name, args):
        t0 = time.perf_counter()
        r = self.request("tools/call", {"name": name, "arguments": args})
        rtt = (time.perf_counter() - t0) * 1000
        if r.get("isError"):
            raise SystemExit("%s %s: %s" % (name, args, r["content"][0]["text"]))
        return r, r["_meta"]["coderag/ms"], rtt

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def questions(path, corpus=None):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                if corpus is None or q["corpus"] == corpus:
                    yield q


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def latency(root, index_dir, qpath=None):
    qpath = qpath or os.path.join(HERE, "..", "..", "shared", "bench", "dev-questions.jsonl")
    qs = [q["question"] for q in questions(qpath)]
    t0 = time.perf_counter()
    m = Mcp(root, index_dir)
    st, _, _ = m.tool("status", {})
    ready = (time.perf_counter() - t0) * 1000
    s = st["structuredContent"]
    print("root %s: %d files, %d chunks, %d edges; ready (index opened or built) in %.0f ms"
          % (root, s["files"], s["chunks"], s["edges"], ready))
    search, callers, order = [], [], []
    for q in qs:
        r, ms, rtt = m.tool("search", {"query": q, "limit": 10})
        search.append((ms, rtt))
        order.append(("search", ms))
        res = r["structuredContent"]["results"]
        if res:
            _, ms, rtt = m.tool("callers", {"path": res[0]["path"], "line": res[0]["startLine"]})
            callers.append((ms, rtt))
            order.append(("callers", ms))
    m.close()
    for name, v in (("search", search), ("callers", callers)):
        inside = [x[0] for x in v]
        rtt = [x[1] for x in v]
        print("%-8s n=%d  inside the server: p50 %.2f ms, p90 %.2f, max %.2f  |  round trip: p50 %.2f ms, p90 %.2f"
              % (name, len(v), statistics.median(inside), pct(inside, 90), max(inside),
                 statistics.median(rtt), pct(rtt, 90)))
    first_vs_tenth(root, index_dir, qs)


def first_vs_tenth(root, index_dir, qs, n=5):
    """Each of n queries as the first call of a fresh server, and as the
    tenth call of another (after nine other searches): the same work, so
    the difference is what a server pays for being new."""
    first, tenth = [], []
    for i in range(n):
        m = Mcp(root, index_dir)
        m.tool("status", {})
        first.append(m.tool("search", {"query": qs[i], "limit": 10})[1])
        m.close()
        m = Mcp(root, index_dir)
        m.tool("status", {})
        for q in qs[n + 9 * i:n + 9 * i + 9]:
            m.tool("search", {"query": q, "limit": 10})
        tenth.append(m.tool("search", {"query": qs[i], "limit": 10})[1])
        m.close()
    print("the same search as a fresh server's first call: median %.2f ms (%s); as its tenth call: "
          "median %.2f ms (%s)" % (statistics.median(first), ", ".join("%.1f" % x for x in first),
                                    statistics.median(tenth), ", ".join("%.1f" % x for x in tenth)))


def same_ranking(qpath, corpus_dir, index_base):
    key = lambda x: (x["path"], x["startLine"], x["endLine"], x["symbol"])  # noqa: E731
    total = same = 0
    by_corpus = {}
    for q in questions(qpath):
        if os.path.isdir(os.path.join(corpus_dir, q["corpus"])):
            by_corpus.setdefault(q["corpus"], []).append(q)
    for corpus, qs in sorted(by_corpus.items()):
        root = os.path.join(corpus_dir, corpus)
        idx = os.path.join(index_base, corpus)
        m = Mcp(root, idx)
        m.tool("status", {})  # waits for the index
        for q in qs:
            r, _, _ = m.tool("search", {"query": q["question"], "limit": 50})
            got = [key(x) for x in r["structuredContent"]["results"]]
            out = subprocess.run([BIN, "ask", "--json", "--mode", "extractive", "--no-update",
                                  "--root", root, "--index-dir", idx, q["question"]],
                                 capture_output=True, check=True).stdout
            ctx = json.loads(out)["context"]
            want = [(c["path"], c["startLine"], c["endLine"], c["symbol"]) for c in ctx]
            total += 1
            if got == want:
                same += 1
            else:
                print("DIFFERENT %s: search %s... ask %s..." % (q["id"], got[:3], want[:3]))
        m.close()
    print("same ranking as `coderag ask`'s context: %d of %d questions" % (same, total))
    return same == total


def main(argv):
    if len(argv) >= 3 and argv[0] == "latency":
        latency(*argv[1:4])
        return 0
    if len(argv) == 4 and argv[0] == "same-ranking":
        return 0 if same_ranking(*argv[1:]) else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
