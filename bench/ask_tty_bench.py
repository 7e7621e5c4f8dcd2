#!/usr/bin/env python3
"""`coderag ask` on a terminal with a slow LLM (issue 24's target): the time
from the LLM's first token to its appearance on the terminal (target
<= 100 ms). The program runs under a pseudo-terminal against a loopback fake
LLM (tests/fake_openai.py) that sends its first token, notes the time, and
holds the rest of its answer until the figure is taken:

    bench/ask_tty_bench.py CODERAG_BIN CORPUS_DIR [--index-dir DIR] [--rounds N] [--question Q]

The figure per round: the moment the first token's text is read from the
terminal minus the moment the fake finished sending it (both time.time() on
this machine). CORPUS_DIR is indexed by the first round (ask updates it);
the index update is not part of the figure. Prints the median and the max.
"""
import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lsp"))
from lsp_client import fake_llm  # noqa: E402

FIRST = "Streamed "  # the first event's content (chunk 9)
ANSWER = FIRST + "answer citing [{ctx0}] and **more** text.\n"


def control(port, what, body):
    req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (port, what),
                                 data=json.dumps(body).encode(), method="POST")
    return json.load(urllib.request.urlopen(req, timeout=600))


def one_round(bin_path, corpus, index_dir, question, port, name):
    control(port, "reset", {"actions": {"chat": [{"content": ANSWER, "chunk": len(FIRST),
                                                  "hold_after": name}]}})
    env = dict(os.environ, CODERAG_LLM_URL="http://127.0.0.1:%d" % port, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    master, slave = pty.openpty()
    args = [bin_path, "ask", "--root", corpus] + (["--index-dir", index_dir] if index_dir else [])
    proc = subprocess.Popen(args + [question], env=env, stdin=slave,
                            stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    screen, seen_at = b"", None
    while seen_at is None:
        r, _, _ = select.select([master], [], [], 600)
        if not r:
            break
        try:
            d = os.read(master, 65536)
        except OSError:
            break
        if not d:
            break
        screen += d
        if FIRST.encode() in screen:
            seen_at = time.time()
    ev = control(port, "wait", {"kind": "first", "count": 1, "timeout_s": 60})
    control(port, "release", {"name": name})
    while True:  # the rest, to the end
        try:
            if not os.read(master, 65536):
                break
        except OSError:
            break
    os.close(master)
    code = proc.wait()
    firsts = [e["t"] for e in ev["events"] if e["kind"] == "first"]
    if seen_at is None or not firsts or code != 0:
        sys.exit("round %s failed (exit %d): %r" % (name, code, screen[-500:]))
    return (seen_at - firsts[0]) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("corpus")
    ap.add_argument("--index-dir", help="where the index lives (default: CORPUS_DIR/.coderag)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--question", default="How is tax applied to an order?")
    a = ap.parse_args()
    corpus = os.path.abspath(a.corpus)
    figures = []
    with fake_llm({}) as port:
        for i in range(a.rounds + 1):
            ms = one_round(a.bin, corpus, a.index_dir, a.question, port, "round%d" % i)
            if i:  # the first round also builds the index: a warm-up
                figures.append(ms)
    print("first token -> terminal: median %.1f ms, max %.1f ms over %d rounds (target <= 100 ms)"
          % (statistics.median(figures), max(figures), len(figures)))


if __name__ == "__main__":
    main()
