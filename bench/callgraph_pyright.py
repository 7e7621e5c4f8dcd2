#!/usr/bin/python3
"""Callers, callees and go-to-definition of coderag against pyright on a Python corpus.

usage: callgraph_pyright.py --corpus DIR [--coderag BIN] [-n 60] [--sites 40] [--seed 1]
                            [--cache DIR] [--pyright-version 1.1.414] [--show-misses]

pyright (npm, the exact version pinned, installed once into --cache, default
~/.cache/coderag-bench, never into the repository) and `coderag lsp` are both
driven over LSP stdio. With a fixed seed, N functions with at least one caller
(pyright's callHierarchy/incomingCalls) are sampled from the corpus's
definitions; for each, both servers are asked prepareCallHierarchy at the
definition's name, then incoming and outgoing calls. Call items are compared as
(file, enclosing definition) -- the innermost def/class of the item's line in
Python's own `ast`, "<module>" outside any -- so that a module item and a chunk
of module code compare equal; a function's inner functions count as the
function (neither tool's item for them is sampled), and `@overload` stubs and
their implementation share one name, so they are one function; a property with a
setter or deleter is not compared on callees (pyright answers them for its last
accessor wherever asked, never the getter's). Then --sites call sites (pyright's fromRanges)
are asked textDocument/definition at the callee's name: the first answer is
right when it lands in the definition pyright names.

Printed: callers recall and precision (reference: pyright), callees precision
(edges into the workspace only: pyright lists library calls too), definition
first-answer accuracy, p50 latencies per request and server. coderag's index
lives in a temporary folder (CODERAG_INDEXDIR), not in the corpus.

Where pyright itself errs (see docs in --show-misses output): it resolves one
branch of version-dependent code (`if sys.version_info >= ...`), counts no call
through an untyped receiver, and a decorated function's callers can go to the
decorator's wrapper. A miss is listed with both answers to judge by eye.
Stdlib only.
"""
import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import quote, unquote


class Lsp:
    """A minimal LSP client over a child's stdio (server requests answered)."""

    def __init__(self, cmd, env=None, settings=None):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env)
        self.next = 0
        self.lock = threading.Condition()
        self.resp = {}
        self.notes = []
        self.settings = settings or {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        while True:
            n = 0
            while True:
                line = f.readline()
                if not line:
                    with self.lock:
                        self.resp[None] = "eof"
                        self.lock.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":")[1])
            msg = json.loads(f.read(n))
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "method" in msg:
                with self.lock:
                    self.notes.append(msg)
                    self.lock.notify_all()
            else:
                with self.lock:
                    self.resp[msg.get("id")] = msg
                    self.lock.notify_all()

    def _answer(self, msg):
        m = msg["method"]
        res = None
        if m == "workspace/configuration":
            res = [self.settings.get(i.get("section", ""), None)
                   for i in msg["params"].get("items", [])]
        self._send({"jsonrpc": "2.0", "id": msg["id"], "result": res})

    def _send(self, obj):
        b = json.dumps(obj).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)
        self.p.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=120):
        self.next += 1
        rid = self.next
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        with self.lock:
            while rid not in self.resp:
                if None in self.resp or not self.lock.wait(timeout):
                    raise RuntimeError("%s: no answer" % method)
            msg = self.resp.pop(rid)
        return msg.get("result"), (time.perf_counter() - t0) * 1000.0

    def close(self):
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.p.wait(10)
        except Exception:
            self.p.kill()


def uri(path):
    return "file://" + quote(path)


def path_of(u):
    return unquote(u[len("file://"):]) if u.startswith("file://") else u


class Defs:
    """Each corpus file's definitions by line, from Python's ast."""

    def __init__(self, root):
        self.root = root
        self.cache = {}

    def spans(self, rel):
        if rel not in self.cache:
            out = []
            try:
                tree = ast.parse(open(os.path.join(self.root, rel), encoding="utf-8").read())
            except (OSError, SyntaxError, ValueError):
                tree = None

            def walk(node, prefix):
                for ch in ast.iter_child_nodes(node):
                    if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        q = prefix + ch.name
                        first = min([ch.lineno] + [d.lineno for d in ch.decorator_list])
                        out.append((first, ch.end_lineno, q, ch))
                        # a function's inner definitions are part of it (as an
                        # index of definitions names them): not descended into
                        if isinstance(ch, ast.ClassDef):
                            walk(ch, q + ".")
                    else:
                        walk(ch, prefix)
            if tree:
                walk(tree, "")
            self.cache[rel] = out
        return self.cache[rel]

    def at(self, rel, line, functions=False):
        """The innermost definition holding a 1-based line, as 'rel:qual'
        (functions: the innermost function, a class body being the code
        around the class, as pyright's callers place it)."""
        best = None
        for a, b, q, node in self.spans(rel):
            if functions and isinstance(node, ast.ClassDef):
                continue
            if a <= line <= b and (best is None or a >= best[0]):
                best = (a, q)
        return "%s:%s" % (rel, best[1] if best else "<module>")


def accessors(defs, rel, q):
    """Whether q in rel is a property with another accessor (a def of its
    name decorated `@q.setter` or `@q.deleter`): pyright answers the
    outgoing calls of such a property for its last accessor wherever it is
    asked (the getter's own calls are not listed), so its callees are not
    compared."""
    name = q.rsplit(".", 1)[-1]
    for a, b, qq, node in defs.spans(rel):
        if qq != q or isinstance(node, ast.ClassDef):
            continue
        for d in node.decorator_list:
            if (isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter")
                    and isinstance(d.value, ast.Name) and d.value.id == name):
                return True
    return False


def item_key(defs, root, item, caller=False):
    """A call item as 'rel:qual'; a caller in a class body (coderag's class
    chunk) is the code around the class: pyright's callers never name a
    class, it places calls in a class body in the module (or function)."""
    p = path_of(item["uri"])
    if not p.startswith(root + "/"):
        return None
    rel = p[len(root) + 1:]
    return defs.at(rel, item["selectionRange"]["start"]["line"] + 1, caller)


def loc_key(defs, root, loc):
    if not loc:
        return None
    if isinstance(loc, list):
        loc = loc[0] if loc else None
    if not loc:
        return None
    u = loc.get("uri") or loc.get("targetUri")
    r = loc.get("range") or loc.get("targetSelectionRange")
    p = path_of(u)
    if not p.startswith(root + "/"):
        return "(outside) " + p
    return defs.at(p[len(root) + 1:], r["start"]["line"] + 1)


def start(kind, root, args, idx_dir):
    init = {"processId": os.getpid(), "rootUri": uri(root),
            "workspaceFolders": [{"uri": uri(root), "name": "corpus"}],
            "capabilities": {"textDocument": {"callHierarchy": {}, "definition": {
                "linkSupport": False}}, "window": {"workDoneProgress": True},
                "workspace": {"configuration": True}}}
    if kind == "pyright":
        exe = os.path.join(args.cache, "pyright-" + args.pyright_version, "node_modules", ".bin",
                           "pyright-langserver")
        s = Lsp([exe, "--stdio"], settings={"python": {}, "python.analysis": {
            "diagnosticMode": "openFilesOnly", "typeCheckingMode": "off"}})
    else:
        env = dict(os.environ, CODERAG_INDEXDIR=idx_dir, CODERAG_EMBED_PROVIDER="builtin")
        s = Lsp([args.coderag, "lsp"], env=env)
    s.request("initialize", init, timeout=600)
    s.notify("initialized", {})
    if kind == "coderag":
        for _ in range(3000):
            st, _ = s.request("coderag/status", {}, timeout=600)
            if isinstance(st, dict) and st.get("state") == "ready":
                break
            time.sleep(0.2)
    return s


def ensure_pyright(args):
    d = os.path.join(args.cache, "pyright-" + args.pyright_version)
    if not os.path.exists(os.path.join(d, "node_modules", ".bin", "pyright-langserver")):
        os.makedirs(d, exist_ok=True)
        subprocess.check_call(["npm", "install", "--no-audit", "--no-fund", "--prefix", d,
                               "pyright@" + args.pyright_version], stdout=sys.stderr)


def opened(server, path, seen):
    if path in seen:
        return
    seen.add(path)
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri(path), "languageId": "python", "version": 1,
        "text": open(path, encoding="utf-8", errors="replace").read()}})


def hierarchy(server, path, line, col, seen, lat):
    opened(server, path, seen)
    pos = {"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": col}}
    items, ms = server.request("textDocument/prepareCallHierarchy", pos)
    lat.setdefault("prepare", []).append(ms)
    if not items:
        return None, None
    inc, ms = server.request("callHierarchy/incomingCalls", {"item": items[0]})
    lat.setdefault("callers", []).append(ms)
    out, ms = server.request("callHierarchy/outgoingCalls", {"item": items[0]})
    lat.setdefault("callees", []).append(ms)
    return inc or [], out or []


def p50(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--coderag", default=os.path.join(os.path.dirname(__file__), "..",
                                                      "build", "coderag"))
    ap.add_argument("-n", type=int, default=60)
    ap.add_argument("--sites", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/coderag-bench"))
    ap.add_argument("--pyright-version", default="1.1.414")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    root = os.path.realpath(args.corpus)
    args.coderag = os.path.realpath(args.coderag)
    ensure_pyright(args)
    defs = Defs(root)
    cands = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), root)
                for a, b, q, node in defs.spans(rel):
                    if isinstance(node, ast.ClassDef):
                        continue
                    cands.append((rel, node.lineno - 1, q, node))
    random.Random(args.seed).shuffle(cands)
    idx_dir = tempfile.mkdtemp(prefix="cg-pyright-")
    py = start("pyright", root, args, idx_dir)
    cr = start("coderag", root, args, idx_dir)
    seen_py, seen_cr = set(), set()
    lat = {"pyright": {}, "coderag": {}}
    tp = fn = fp = 0
    ctp = cfp = 0
    n_accessors = 0
    sites = []
    sampled = 0
    misses = []
    for rel, line0, q, node in cands:
        if sampled >= args.n:
            break
        path = os.path.join(root, rel)
        text = open(path, encoding="utf-8", errors="replace").read().split("\n")[line0]
        col = text.find(node.name, text.find("def "))
        py_in, py_out = hierarchy(py, path, line0, col, seen_py, lat["pyright"])
        if not py_in:
            continue
        gold = {item_key(defs, root, c["from"], True) for c in py_in} - {None}
        if not gold:
            continue
        sampled += 1
        cr_in, cr_out = hierarchy(cr, path, line0, col, seen_cr, lat["coderag"])
        got = {item_key(defs, root, c["from"], True) for c in (cr_in or [])} - {None}
        tp += len(gold & got)
        fn += len(gold - got)
        fp += len(got - gold)
        gold_out = {item_key(defs, root, c["to"]) for c in (py_out or [])} - {None}
        got_out = {item_key(defs, root, c["to"]) for c in (cr_out or [])} - {None}
        if accessors(defs, rel, q):
            n_accessors += 1
            gold_out = got_out = set()
        ctp += len(got_out & gold_out)
        cfp += len(got_out - gold_out)
        if gold != got or got_out - gold_out:
            misses.append((rel + ":" + q, sorted(gold - got), sorted(got - gold),
                           sorted(got_out - gold_out)))
        for c in py_in:
            for r in c.get("fromRanges", []):
                sites.append((path_of(c["from"]["uri"]), r["start"], rel + ":" + q))
    random.Random(args.seed + 1).shuffle(sites)
    right = asked = 0
    wrong = []
    for p, pos, target in sites[:args.sites]:
        asked += 1
        answers = {}
        for name, s, seen in (("pyright", py, seen_py), ("coderag", cr, seen_cr)):
            opened(s, p, seen)
            res, ms = s.request("textDocument/definition", {
                "textDocument": {"uri": uri(p)}, "position": pos})
            lat[name].setdefault("definition", []).append(ms)
            answers[name] = loc_key(defs, root, res)
        if answers["coderag"] == answers["pyright"]:
            right += 1
        else:
            wrong.append((os.path.relpath(p, root), pos["line"] + 1, answers))
    py.close()
    cr.close()
    shutil.rmtree(idx_dir, ignore_errors=True)
    print("corpus %s: %d functions sampled (seed %d), %d call sites" % (
        os.path.basename(root), sampled, args.seed, asked))
    print("callers recall %.3f  precision %.3f  (%d found, %d missed, %d extra)" % (
        tp / max(1, tp + fn), tp / max(1, tp + fp), tp, fn, fp))
    print("callees precision %.3f  (%d agree, %d pyright does not list; %d properties with a "
          "setter or deleter not compared)" % (ctp / max(1, ctp + cfp), ctp, cfp, n_accessors))
    print("definition first answer right %d / %d" % (right, asked))
    for k in ("callers", "callees", "definition"):
        print("p50 %-10s coderag %.2f ms  pyright %.2f ms" % (
            k, p50(lat["coderag"].get(k, [])), p50(lat["pyright"].get(k, []))))
    if args.show_misses:
        for name, missed, extra, extra_out in misses:
            print("\n%s\n  missed callers: %s\n  extra callers: %s\n  extra callees: %s" % (
                name, missed, extra, extra_out))
        for p, line, ans in wrong:
            print("\ndefinition at %s:%d: %s" % (p, line, ans))


if __name__ == "__main__":
    main()
