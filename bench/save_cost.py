#!/usr/bin/env python3
"""Server-side cost of a save in `coderag lsp` (not a test; numbers for
docs/benchmarks.md): copies tests/fixtures/lang/LANG, waits until ready,
then appends a line to FILE and saves it 6 times (an ask after each), and
prints the server's "re-indexed FILE in N ms" figures.

    save_cost.py CODERAG_BIN LANG FILE      (e.g. cpp shape.cc, ts index.ts)
"""
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lsp"))
from lsp_client import Server, file_uri
bin_path = os.path.abspath(sys.argv[1])
top = tempfile.mkdtemp(prefix="savecost-")
root = os.path.join(top, "p")
shutil.copytree(os.path.join(HERE, "..", "tests", "fixtures", "lang", sys.argv[2]), root)
s = Server(bin_path, top, env_extra={"CODERAG_LOG": "info"})
s.initialize(root, folders=[root])
s.wait_ready()
path = os.path.join(root, sys.argv[3])
for i in range(6):
    with open(path, "a") as f:
        f.write("\n// edit %d\n" % i)
    s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(path)}})
    s.call("coderag/ask", {"question": "shape area"})
s.shutdown_exit()
s.kill()
print(sys.argv[1], re.findall(r"re-indexed \S+ in ([\d.]+) ms", s.stderr()))
shutil.rmtree(top)
