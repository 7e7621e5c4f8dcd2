#!/usr/bin/env python3
"""Editor latency with a slow LLM (issue 11's targets), through `coderag lsp`
over pipes against a loopback fake LLM (tests/fake_openai.py) whose first
token comes after 2 s:

    bench/lsp_stream_bench.py CODERAG_BIN CORPUS_DIR [--index-dir DIR] [--rounds N]

1. extractive ask with three hovers and three LLM asks in flight (target < 200 ms);
2. first streamed text: client receipt of the first partial result minus the
   fake's sending of its first token (target < 100 ms);
3. cancel: the fake seeing the LLM connection close minus the client sending
   $/cancelRequest (target < 300 ms).
Prints one line per figure (median and max over the rounds).
"""
import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lsp"))
import lsp_client as L  # noqa: E402

QUESTION = "How does Werkzeug reject a request whose HTTP method a route does not allow?"


def control(port, what, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (port, what),
                                 data=json.dumps(body or {}).encode(), method="POST")
    return json.load(urllib.request.urlopen(req, timeout=120))


def events(port, kind, count):
    r = control(port, "wait", {"kind": kind, "count": count, "timeout_s": 60})
    if not r["ok"]:
        raise SystemExit("fake LLM: no %d %s events" % (count, kind))
    return [e for e in r["events"] if e["kind"] == kind]


def count(port, kind):
    return len([e for e in control(port, "wait", {"kind": kind, "count": 0})["events"]
                if e["kind"] == kind])


def summary(name, xs, target):
    print("%-44s median %7.1f ms  max %7.1f ms  (n=%d, target < %d ms)"
          % (name, statistics.median(xs), max(xs), len(xs), target))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("corpus")
    ap.add_argument("--index-dir")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    script = {"actions": {"chat": [{"delay_ms": 2000, "content": "The map adapter raises "
                                    "MethodNotAllowed {ctx0}. " * 20, "chunk": 12,
                                    "times": 100000}]}}
    work = os.path.join("/tmp", "coderag-stream-bench.%d" % os.getpid())
    os.makedirs(work, exist_ok=True)
    with L.fake_llm(script) as port:
        s = L.Server(os.path.abspath(a.binary), work, env_extra={"CODERAG_LOG": "warn"})
        opts = {"llm": {"url": "http://127.0.0.1:%d" % port}}
        if a.index_dir:
            opts["indexDir"] = a.index_dir
        t0 = time.monotonic()
        s.initialize(os.path.abspath(a.corpus), options=opts)
        s.wait_ready(timeout=1800)
        print("ready after %.1f s" % (time.monotonic() - t0))
        app = "file://" + os.path.abspath(os.path.join(a.corpus, "flask", "src", "flask", "app.py"))
        if not os.path.exists(app[7:]):
            app = "file://" + os.path.abspath(os.path.join(a.corpus, "flask", "app.py"))
        n_start = 0

        # 1. extractive ask behind hovers and LLM asks
        lat = []
        for _ in range(a.rounds):
            llm = [s.request("coderag/ask", {"question": QUESTION, "mode": "llm"}) for _ in range(3)]
            hov = [s.request("textDocument/hover", {"textDocument": {"uri": app},
                                                    "position": {"line": 60 + k, "character": 8}})
                   for k in range(3)]
            n_start += 2
            events(port, "start", n_start)  # two LLM requests are in flight
            t = time.monotonic()
            r = s.call("coderag/ask", {"question": QUESTION, "mode": "extractive"})
            lat.append((time.monotonic() - t) * 1000)
            assert "result" in r, r
            for rid in llm + hov:
                s.wait_response(rid, 120)
            n_start += 1
        summary("extractive ask, 3 hovers + 3 LLM asks in flight", lat, 200)

        # 2. first streamed text after the fake's first token
        gaps = []
        n_first = count(port, "first")
        for i in range(a.rounds):
            tok = "pr-%d" % i
            rid = s.request("coderag/ask", {"question": QUESTION, "partialResultToken": tok})
            m = s.wait_method({"method": "$/progress", "params": {"token": tok,
                                                                  "value": {"stage": "writing"}}}, 120)
            got = time.time()
            n_start += 1
            first = events(port, "first", n_first + i + 1)[n_first + i]["t"]
            gaps.append((got - first) * 1000)
            s.wait_response(rid, 120)
            assert m
        summary("first streamed text after the first token", gaps, 100)

        # 3. cancel
        stops = []
        n_closed = count(port, "closed")
        for i in range(a.rounds):
            rid = s.request("coderag/ask", {"question": QUESTION})
            n_start += 1
            events(port, "start", n_start)
            t = time.time()
            s.notify("$/cancelRequest", {"id": rid})
            r = s.wait_response(rid, 120)
            assert r.get("error", {}).get("code") == -32800, r
            closed = events(port, "closed", n_closed + i + 1)[n_closed + i]["t"]
            stops.append((closed - t) * 1000)
        summary("cancel to LLM connection closed", stops, 300)
        s.call("shutdown")
        s.notify("exit")
        s.wait_exit()


if __name__ == "__main__":
    main()
