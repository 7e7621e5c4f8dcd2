#!/usr/bin/python3
"""Cycles between the files of each library (issue 15's "no cycle between
files of one library"): from a build's object files, file A depends on file
B when A uses a symbol B defines. Prints each strongly connected group of
two or more files and the symbols of each edge inside it.

    scripts/file-cycles.py [BUILD_DIR]     (default: build)
"""
import collections
import glob
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
LIBS = ["base", "index", "verify", "retrieve", "rpc", "mcp", "lsp"]


def symbols(obj):
    defined, used = set(), set()
    for line in subprocess.check_output(["nm", obj], text=True).splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDRB":
            defined.add(p[2])
        elif len(p) == 2 and p[0] == "U":
            used.add(p[1])
    return defined, used


def groups(graph):
    """Tarjan's strongly connected components of two or more nodes."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


found = 0
for lib in LIBS:
    objs = glob.glob(f"{build}/CMakeFiles/coderag_{lib}.dir/**/*.o", recursive=True)
    objdir = f"{build}/CMakeFiles/coderag_{lib}.dir"
    # objects of sources that still exist (an incremental build keeps stale ones)
    files = {os.path.relpath(o, objdir)[:-4]: symbols(o) for o in objs
             if os.path.exists(os.path.join(root, os.path.relpath(o, objdir)[:-2]))}
    graph = collections.defaultdict(set)
    for a, (_, used) in files.items():
        graph[a]
        for b, (defined, _) in files.items():
            if a != b and used & defined:
                graph[a].add(b)
    for comp in groups(graph):
        found += 1
        print(f"{lib}: cycle among {', '.join(comp)}")
        for a in comp:
            for b in comp:
                if b in graph[a]:
                    shared = sorted(files[a][1] & files[b][0])
                    print(f"    {a} -> {b}: {', '.join(shared[:5])}{' ...' if len(shared) > 5 else ''}")
print(f"{found} cycle(s)")
sys.exit(1 if found else 0)
