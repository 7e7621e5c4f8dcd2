#!/usr/bin/env python3
"""The language server's own CPU per save and per ask (not a test; numbers
for docs/benchmarks.md): on a copy of Flask+Werkzeug indexed beforehand, N
saves of flask/app.py (a function appended), each followed by a pause and
one `workspace/symbol` for it (so that no polling is counted), then 100
rounds of 3 `coderag/ask` questions. Prints user and system CPU (from
/proc/PID/stat, in 10 ms ticks: use N >= 20) per save and per ask. ROOT is
written to (flask/app.py is restored at the end): pass a copy.

    lsp_cpu.py CODERAG_BIN ROOT INDEX_DIR [N]
"""
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lsp"))
from lsp_client import Server, file_uri  # noqa: E402

QUESTIONS = ["How does url routing match a path to an endpoint?",
             "How are session cookies signed and loaded?",
             "How does url_for build a URL for an endpoint?"]


def cpu(pid):
    """(user, system) CPU seconds a process has used so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, root, idx = (os.path.abspath(a) for a in sys.argv[1:4])
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    work = tempfile.mkdtemp(prefix="lsp-cpu-")
    s = Server(binary, work, args=("--index-dir", idx))
    path = os.path.join(root, "flask", "app.py")
    orig = open(path).read()
    try:
        s.initialize(root, folders=[root])
        s.wait_ready(600)
        s.ask(QUESTIONS[0], mode="extractive")  # the first ask maps the index
        u0, k0 = cpu(s.proc.pid)
        for i in range(n):
            name = "cpu_probe_%d_%d" % (os.getpid(), i)
            with open(path, "w") as f:
                f.write(orig + "\n\ndef %s():\n    return %d\n" % (name, i))
            s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
            time.sleep(0.4)
            while not any(x.get("name") == name
                          for x in (s.call("workspace/symbol", {"query": name}).get("result") or [])):
                time.sleep(0.2)
        u1, k1 = cpu(s.proc.pid)
        with open(path, "w") as f:
            f.write(orig)
        s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
        s.call("workspace/symbol", {"query": "Flask"})
        u2, k2 = cpu(s.proc.pid)
        for _ in range(100):
            for q in QUESTIONS:
                s.ask(q, mode="extractive")
        u3, k3 = cpu(s.proc.pid)
        s.shutdown_exit()
    finally:
        s.kill()
        with open(path, "w") as f:
            f.write(orig)
        shutil.rmtree(work, ignore_errors=True)
    asks = 100 * len(QUESTIONS)
    print("%s: per save %.1f ms user + %.1f ms sys; per ask %.2f ms user + %.2f ms sys"
          % (binary, 1000 * (u1 - u0) / n, 1000 * (k1 - k0) / n,
             1000 * (u3 - u2) / asks, 1000 * (k3 - k2) / asks))


main()
