"""Harvests (question, code) pairs from installed Debian Python packages.

    harvest.py PACKAGES_TXT OUT_JSONL [FIRST:END]

FIRST:END harvests only those packages of the list (0-based, END
exclusive), so that parts can run in parallel; train.py dedups across parts.

For every package of PACKAGES_TXT (pkg=version lines) it reads the .py files
the package installed (dpkg -L), parses them with ast, and writes one JSON
line per pair: {"pkg", "q": [tokens], "c": [tokens], "kind"}. The question
side is a docstring's first paragraph ("doc") or, for functions without a
docstring, the words of their name ("name"); the code side is the
definition's dotted path and its source without the docstring. Tokens are
tok_code's (toks.py), as the index makes them.

No leakage: code from the projects used to evaluate retrieval, from the
Python standard library and from any vendored copy is refused, whichever
package installed it.
"""
import ast
import hashlib
import json
import os
import re
import subprocess
import sys

import toks
from excluded import EXCLUDED_DIRS, EXCLUDED_MODULES

SITE = "/usr/lib/python3/dist-packages/"
MAX_CODE_TOKENS = 256
MAX_QUERY_TOKENS = 64


def excluded(path):
    if not path.startswith(SITE):
        return "outside dist-packages (standard library or other)"
    rel = path[len(SITE):]
    parts = rel.split("/")
    top = parts[0].split(".")[0] if parts[0].endswith(".py") else parts[0]
    if top.lower() in EXCLUDED_MODULES:
        return "evaluation project " + top
    if any(p in EXCLUDED_DIRS for p in parts[:-1]):
        return "vendored copy"
    return None


def first_paragraph(doc):
    para = []
    for line in doc.strip().splitlines():
        line = line.strip()
        if not line:
            if para:
                break
            continue
        if re.match(r"^(:param|:return|:rtype|:raises|@param|@return|Args:|Returns:|Parameters)", line):
            break
        para.append(line)
    return " ".join(para)


def strip_docstring(lines, node):
    body = getattr(node, "body", None)
    if not body or not isinstance(body[0], ast.Expr):
        return lines
    v = body[0].value
    if not (isinstance(v, ast.Constant) and isinstance(v.value, str)):
        return lines
    a, b = body[0].lineno, body[0].end_lineno
    return [l for k, l in lines if not a <= k <= b]


def definitions(tree, prefix):
    stack = [(tree, prefix)]
    while stack:
        node, qual = stack.pop()
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = qual + "." + ch.name
                yield ch, q
                stack.append((ch, q))


def harvest_file(path, module, src, out, pkg, seen):
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return 0
    lines = src.splitlines()
    n = 0
    for node, qual in definitions(tree, module):
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        end = node.end_lineno
        numbered = [(k, lines[k - 1]) for k in range(start, min(end, start + 400) + 1) if k - 1 < len(lines)]
        doc = ast.get_docstring(node, clean=True)
        code_lines = strip_docstring(numbered, node) if doc else [l for _, l in numbered]
        code = qual + "\n" + "\n".join(code_lines)
        ctoks = toks.tok_code(code)[:MAX_CODE_TOKENS]
        if len(ctoks) < 8:
            continue
        if doc:
            q = first_paragraph(doc)
            qtoks = toks.tok_code(q)[:MAX_QUERY_TOKENS]
            if len(qtoks) < 3:
                continue
            kind = "doc"
        else:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            qtoks = toks.tok_code(node.name)
            if len(qtoks) < 3 or node.name.startswith("test"):
                continue
            qtoks = qtoks[1:]  # the words, not the whole name
            body = [l for k, l in numbered if k > node.lineno]
            ctoks = toks.tok_code(module + "\n" + "\n".join(body))[:MAX_CODE_TOKENS]
            if len(ctoks) < 8:
                continue
            kind = "name"
        key = hashlib.sha1(b" ".join(ctoks)).digest()
        if key in seen:
            continue
        seen.add(key)
        out.write(json.dumps({"pkg": pkg, "kind": kind,
                              "q": [t.decode("utf-8", "replace") for t in qtoks],
                              "c": [t.decode("utf-8", "replace") for t in ctoks]}) + "\n")
        n += 1
    return n


def main():
    pkgs = [l.split("=")[0].strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
    if len(sys.argv) > 3:
        first, end = (int(x) if x else None for x in sys.argv[3].split(":"))
        pkgs = pkgs[first:end]
    seen, files_seen = set(), set()
    refused = {}
    used = []
    with open(sys.argv[2], "w") as out:
        for pkg in pkgs:
            r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
            if r.returncode != 0:
                print("  not installed: %s" % pkg, file=sys.stderr)
                continue
            n_pairs = n_files = 0
            for path in sorted(r.stdout.split()):
                if not path.endswith(".py") or not os.path.isfile(path):
                    continue
                why = excluded(path)
                if why:
                    refused[why] = refused.get(why, 0) + 1
                    continue
                with open(path, "rb") as f:
                    data = f.read()
                h = hashlib.sha1(data).digest()
                if h in files_seen:
                    continue
                files_seen.add(h)
                module = path[len(SITE):-3].replace("/", ".")
                n_files += 1
                n_pairs += harvest_file(path, module, data.decode("utf-8", "replace"), out, pkg, seen)
            version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                     capture_output=True, text=True).stdout
            used.append((pkg, version, n_files, n_pairs))
    print("used %d packages:" % len(used))
    for pkg, version, nf, npairs in used:
        print("  %s %s: %d files, %d pairs" % (pkg, version, nf, npairs))
    for why, n in sorted(refused.items()):
        print("  refused %d files: %s" % (n, why))
    print("pairs: %d" % sum(u[3] for u in used))


if __name__ == "__main__":
    main()
