#!/usr/bin/env python3
"""Memory of `coderag lsp` with many workspace folders (not a test; numbers
for docs/benchmarks.md).

    roots_memory.py CODERAG_BIN [N_ROOTS=200] [MODULES=3] [--asks]

Writes N small Python projects (MODULES modules each) into a temporary folder,
starts `coderag lsp` with all of them as workspaceFolders, waits until
coderag/status says ready (every root indexed), optionally asks one question
(every root searched: postings and the model in use), and prints the
server's VmRSS, RssAnon and RssFile from /proc (MB), then shuts it down.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lsp"))
from lsp_client import Server  # noqa: E402

MODULE = '''"""Orders of shop {i}."""


def total_{m}(items, tax=0.2):
    """Sum of the items' prices with tax applied."""
    s = sum(it.price for it in items)
    return s * (1 + tax)


class Cart{m}:
    """A cart holding items."""

    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return total_{m}(self.items)
'''


def mem(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[k] = int(v.split()[0]) // 1024
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    bin_path = os.path.abspath(args[0])
    n = int(args[1]) if len(args) > 1 else 200
    modules = int(args[2]) if len(args) > 2 else 3
    top = tempfile.mkdtemp(prefix="coderag-roots-")
    try:
        roots = []
        for i in range(n):
            r = os.path.join(top, "p%03d" % i)
            os.makedirs(os.path.join(r, "pkg"))
            open(os.path.join(r, "pkg", "__init__.py"), "w").close()
            for m in range(modules):
                with open(os.path.join(r, "pkg", "m%d.py" % m), "w") as f:
                    f.write(MODULE.format(i=i, m=m))
            roots.append(r)
        s = Server(bin_path, top, env_extra={"CODERAG_LOG": "warn"})
        s.initialize(roots[0], folders=roots)
        st = s.wait_ready()
        m = mem(s.proc.pid)
        print("roots %d ready: files %s; VmRSS %d MB, RssAnon %d MB, RssFile %d MB, VmHWM %d MB"
              % (n, st.get("files"), m["VmRSS"], m["RssAnon"], m["RssFile"], m["VmHWM"]))
        if "--asks" in argv:
            s.ask("How is the total with tax computed?")
            m = mem(s.proc.pid)
            print("after one ask: VmRSS %d MB, RssAnon %d MB, RssFile %d MB, VmHWM %d MB"
                  % (m["VmRSS"], m["RssAnon"], m["RssFile"], m["VmHWM"]))
        s.shutdown_exit()
        s.kill()
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
