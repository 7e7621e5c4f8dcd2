#!/usr/bin/env python3
"""Measures `coderag lsp` through the protocol (not a test; numbers for notes).

    measure.py CODERAG_BIN ROOT [QUESTIONS.jsonl CORPUS] [--index-dir DIR]

Reports: time to ready after initialized; ask latency (median, p90) over
the corpus's questions (or a few generic ones); save-to-queryable for a new
1,000-line module (client: didSave sent -> an ask that finds the new
function answered, minus that ask's usual latency; server: its own log of
notification -> committed); idle CPU of the server over 5 s after all that.
The 1,000-line module is written into ROOT/coderag_measure_tmp.py and
removed afterwards (the server re-indexes the removal).
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Server, file_uri  # noqa: E402


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    index_dir = None
    if "--index-dir" in argv:
        index_dir = argv[argv.index("--index-dir") + 1]
        args.remove(index_dir)
    bin_path, root = os.path.abspath(args[0]), os.path.abspath(args[1])
    questions = ["How is tax applied to an order total?", "Which error is raised when a payment fails?",
                 "How are requests routed to views?", "Where is the configuration loaded?"]
    if len(args) >= 4:
        with open(args[2]) as f:
            questions = [json.loads(line)["question"] for line in f
                         if line.strip() and json.loads(line).get("corpus") == args[3]]
    work = os.path.join("/tmp", "coderag-measure.%d" % os.getpid())
    os.makedirs(work, exist_ok=True)
    s = Server(bin_path, work, stderr_path=os.path.join(work, "stderr.log"))
    opts = {"indexDir": index_dir} if index_dir else None
    t0 = time.perf_counter()
    s.initialize(root, capabilities={"window": {"workDoneProgress": True}}, options=opts)
    st = s.wait_ready(timeout=3600)
    print("ready after %.0f ms: %d files, %d chunks" % ((time.perf_counter() - t0) * 1000, st["files"], st["chunks"]))

    walls = []
    for q in questions:
        t1 = time.perf_counter()
        s.ask(q)
        walls.append((time.perf_counter() - t1) * 1000)
    walls.sort()
    print("ask through the protocol: %d questions, median %.1f ms, p90 %.1f ms, max %.1f ms" % (
        len(walls), statistics.median(walls), walls[int(len(walls) * 0.9) - 1 if len(walls) > 1 else 0],
        walls[-1]))

    rel = "coderag_measure_tmp.py"
    path = os.path.join(root, rel)
    lines = ['"""A module of 1,000 lines."""', ""]
    n = 0
    while len(lines) < 995:
        lines += ["def measure_function_%d(a, b):" % n, '    """Adds %d."""' % n,
                  "    total = a + b + %d" % n, "    return total", "", ""]
        n += 1
    lats = []
    base_ask = []
    try:
        for i in range(5):
            body = "\n".join(lines) + "\n\ndef quokka_marker_%d(x):\n    return x\n" % i
            with open(path, "w") as f:
                f.write(body)
            t1 = time.perf_counter()
            s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
            r = s.ask("quokka_marker_%d" % i)
            lats.append((time.perf_counter() - t1) * 1000)
            assert r["context"][0]["symbol"] == "quokka_marker_%d" % i, r["context"][:1]
            t1 = time.perf_counter()
            s.ask("quokka_marker_%d" % i)
            base_ask.append((time.perf_counter() - t1) * 1000)
    finally:
        os.remove(path)
        s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
        s.call("coderag/status")
    s.ask(questions[0])
    print("save -> answer with the new function (1,000-line file): median %.1f ms; the same ask "
          "without a save: %.1f ms" % (statistics.median(lats), statistics.median(base_ask)))

    time.sleep(1.0)
    c0 = cpu_ticks(s.proc.pid)
    time.sleep(5.0)
    c1 = cpu_ticks(s.proc.pid)
    hz = os.sysconf("SC_CLK_TCK")
    print("idle CPU over 5 s: %d ticks (%.3f s of CPU)" % (c1 - c0, (c1 - c0) / hz))
    code = s.shutdown_exit()
    server_lat = []
    for line in open(os.path.join(work, "stderr.log")):
        if "re-indexed %s" % rel in line and "after the notification" in line:
            server_lat.append(line.split("re-indexed %s in " % rel)[1].split(" ms")[0] + " ms / " +
                              line.split("(")[1].split(" ms")[0] + " ms")
    print("server log, re-index / notification-to-committed: %s" % ", ".join(server_lat))
    print("exit code %d" % code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
