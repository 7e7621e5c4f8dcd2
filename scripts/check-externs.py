#!/usr/bin/python3
"""An extern symbol of ours that no other file uses should be static: from a
build's object files, every global symbol (function or data) that one of the
folders' libraries defines and no other object file of the build (the
libraries, the program, the tests, the benchmarks) names, nor the sources
of the fuzz targets (tests/fuzz: built only with clang, -DFUZZ=ON). Names the
compiler makes (`__odr_asan.*` under AddressSanitizer) are not ours. Symbols a module
hands out by name (the FAISS module's C API, found with dlsym) are not the
libraries' and are not read. Prints `file: symbol` for each and exits 1 if
there is one.

    scripts/check-externs.py [BUILD_DIR]     (default: build)
"""
import collections
import glob
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))
LIBS = ["base", "index", "verify", "retrieve", "workspace", "rpc", "mcp", "lsp", "cli"]

objs = [o for o in glob.glob(os.path.join(build, "**", "*.o"), recursive=True)
        if "/_deps/" not in o and "CompilerId" not in o]
lib_dirs = tuple(os.path.join(build, "CMakeFiles", f"coderag_{lib}.dir") + os.sep for lib in LIBS)
defined = {}
users = collections.defaultdict(set)
for obj in objs:
    for line in subprocess.check_output(["nm", obj], text=True).splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRB" and obj.startswith(lib_dirs) and not p[2].startswith("__"):
            defined.setdefault(p[2], obj)
        elif len(p) == 2 and p[0] == "U":
            users[p[1]].add(obj)
fuzz_words = set()
for src in glob.glob(os.path.join(root, "tests", "fuzz", "*.c")):
    with open(src, encoding="utf-8", errors="replace") as f:
        fuzz_words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
if not any(o.startswith(lib_dirs) for o in objs):
    sys.exit(f"check-externs: no object file of the libraries under {build}: build first")
bad = sorted((os.path.relpath(obj, build).split(".dir" + os.sep, 1)[-1][:-2], sym)
             for sym, obj in defined.items() if not users[sym] - {obj} and sym not in fuzz_words)
for src, sym in bad:
    print(f"{src}: {sym} is used in its own file only: make it static (or remove it)", file=sys.stderr)
print(f"check-externs: {len(bad)} extern symbol(s) used in their own file only")
sys.exit(1 if bad else 0)
