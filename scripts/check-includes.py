#!/usr/bin/python3
"""A folder is a library that exports one public header: a source that
reaches into another top-level folder by a relative path
(`#include "../index/store/store_int.h"`) defeats that, so it fails the build
(CMake runs this before compiling anything). Includes inside one folder's
own subfolders (index/chunk/lang -> index/) are fine; tests and benchmarks name
a folder's internals from the project root instead (`#include
"index/store/store_int.h"`), which is not a relative path.

    scripts/check-includes.py [SOURCE_DIR]     (default: this checkout)
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = {".git", "build", "node_modules"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

bad = []
for dirpath, dirnames, filenames in os.walk(root):
    rel_dir = os.path.relpath(dirpath, root)
    dirnames[:] = [d for d in dirnames if d not in SKIP and not d.startswith("build")
                   and not d.startswith(".")]
    for name in filenames:
        if not name.endswith((".c", ".h", ".cpp")):
            continue
        path = os.path.join(dirpath, name)
        top = rel_dir.split(os.sep)[0]
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or ".." not in m.group(1).split("/"):
                    continue
                target = os.path.relpath(os.path.normpath(os.path.join(dirpath, m.group(1))), root)
                if target.startswith("..") or target.split(os.sep)[0] != top:
                    bad.append(f"{os.path.relpath(path, root)}:{lineno}: #include \"{m.group(1)}\" "
                               f"reaches into another folder; include its public header")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
