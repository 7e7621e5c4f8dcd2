#!/usr/bin/env python3
"""coderag's call graph against a language's own server (issue 37): gopls on
Go, typescript-language-server on TypeScript, with the measure of
callgraph_clangd.py (clangd on C and C++ stays there):

    bench/callgraph_lsp.py CODERAG_BIN --server gopls|tsserver --corpus DIR
        [--n 60] [--seeds 1,2,3] [--sites 40] [--work DIR] [--show 15]
        [--ts-path NAME=FILE]... [--js] [--all-callers]

The corpus is copied into the work folder (never written in place) with
what the server needs to see one project:
- gopls (Debian's `gopls`): GOPATH mode (GO111MODULE=off), the copy laid at
  GOPATH/src/<import path>, the import path read from the corpus's own
  imports of its subfolders ("github.com/gin-gonic/gin/internal/json"
  names the folder internal/json); imports of other modules stay unresolved
  (no module proxy): their types are unknown to gopls too.
- tsserver (`npm i -g typescript@5.9.3 typescript-language-server@4.4.1`):
  a tsconfig.json at the copy's root including every .ts file, no lib check.

Per seed, N functions and methods (documentSymbol kinds 12 and 6, with a
body) that the server says are called are sampled; callers, callees and
definition from a call site are compared as callgraph_clangd.py does
(callers as (file, last name component of the enclosing function)).
coderag's `definition` is asked at the call site (path, line, column).

The servers' own errors and naming, and what the script does with them:
- gopls and tsserver list a function passed as a value among incoming
  calls: a caller whose every fromRange is not followed by `(` is dropped
  from the truth ("values" column), as with clangd.
- gopls names a call made in a function literal (`defer func() {…}()`)
  `F.func()`, tsserver one in an anonymous function `<function>`: such a
  caller is named by the named function around it (coderag's unit), and
  so is a named function declared inside another one.
- tsserver names a caller that is an arrow function or a callback by the
  variable or property it is assigned to: where the names still differ it
  counts as a miss and an extra (listed).
- tsserver names a call in a file's top-level code (and in the anonymous
  callbacks there: `describe(() => { it(() => f()) })`) by the file:
  "<module>", as coderag's module code; a constructor by its class.
- a project's tests that import it by its package name
  ('@tanstack/query-core') are unresolved for tsserver without a path
  mapping (--ts-path NAME=FILE), and their calls invisible to it.
- tsserver's incoming calls of a method hold the calls of every
  declaration of its name up and down the class chain and of every
  implementation of one interface member (Subscriber.next and
  ConsumerObserver.next, both Observer<T>'s, get the same 77 callers): a
  caller whose every call the server defines as a method with a body in a
  class neither overriding nor overridden by the sampled one is left out
  (counted; --all-callers keeps them), and a definition site whose server
  definition is another declaration of the name is not scored (counted):
  this, not the copy's tsconfig, made its own definitions 71 of 120 on rxjs.
- tsserver lists anonymous functions and functions declared in functions
  as symbols: they are not sampled (coderag's unit is the function around).
- tsserver answers a class called (`new C(…)`) with the class (kind 5);
  `new C<T>(…)` is a call (type arguments before the parenthesis).
- --js: the corpus's JavaScript read with allowJs and checkJs; tsserver
  names `module.exports = function f(…)` f where coderag's unit is
  `module.exports`, and lists few JavaScript calls (markdown-it: 13
  functions). It names the caller of a call in a file's top-level code a
  variable named as the file (kind 13, "utils.js"), and so it names a call
  in a function assigned to a property there (`exports.normalizeType =
  function (type) {…}`): each such call is named by the outermost function
  its documentSymbol places around it (starting on an earlier line), or
  "<module>". A function inside an anonymous one (`Route.prototype[method]
  = function () {…}` in a `forEach` callback) is not sampled. tsserver
  types `this` in a function that is no method as nothing: a call on it
  (`this.error(404)` in a listener `send`'s SendStream runs) is in its
  answer nowhere; coderag leaves it unresolved too (the row's
  prototype_word: only a constructor function's `this` is typed).
- gopls (Debian's v0.11) dies on the incoming calls of some interface
  methods (a nil pointer in source.interfaceReferences): it is started
  again and the function is not sampled (the count is printed).
- gopls lists the standard library's calls of a workspace method (io's
  ReadAll calling a test's Read through io.Reader): callers outside the
  copy are dropped from the truth (coderag reads the workspace only).
- gopls lists a call through an interface under some implementations
  (`b.Name()`, b a Binding, under formBinding.Name) while its definition
  there is the interface's method: a site whose server definition is an
  interface method the sampled one implements is left out of the
  definition sites (counted), as "such a call is no definition site".
- gopls in GOPATH mode without the project's dependencies types a value
  of another module's type as invalid: calls on it are in neither answer.
Stdlib only.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgraph_clangd as cg  # noqa: E402


def source_files(root, exts):
    return sorted(os.path.join(d, f) for d, ds, fs in os.walk(root) for f in fs
                  if f.endswith(exts) and ".git" not in d.split(os.sep) and
                  "node_modules" not in d.split(os.sep))


def go_import_path(root):
    """The import path of the corpus, from its imports of its own folders."""
    votes = collections.Counter()
    dirs = {os.path.relpath(d, root) for d, _, fs in os.walk(root) if any(
        f.endswith(".go") for f in fs)}
    for f in source_files(root, (".go",)):
        with open(f, encoding="utf-8", errors="replace") as fh:
            for m in re.finditer(r'"([\w.\-/]+)"', fh.read()):
                p = m.group(1)
                for d in dirs:
                    if d != "." and p.endswith("/" + d):
                        votes[p[:-len(d) - 1]] += 1
    if not votes:
        return "example.com/" + os.path.basename(root)
    return votes.most_common(1)[0][0]


class Server(cg.Clangd):
    """An LSP server on a copy of the corpus (the Clangd client's requests)."""

    def __init__(self, kind, work, corpus_copy, env, js=False):
        self.corpus = corpus_copy
        self.kind = kind
        exts = (".go",) if kind == "gopls" else (".ts", ".tsx")
        if js:
            exts = (".js", ".mjs", ".cjs")
        self.c_files = [f for f in source_files(corpus_copy, exts) if not f.endswith(".d.ts")]
        self.language = "go" if kind == "gopls" else "javascript" if js else "typescript"
        self.env = env
        self.crashes = 0
        self.all_callers = False
        self.span_cache = {}
        self.impl_cache = {}
        self.start()

    def start(self):
        corpus_copy = self.corpus
        argv = ["gopls"] if self.kind == "gopls" else ["typescript-language-server", "--stdio"]
        self.rpc = cg.Rpc(argv, lsp=True, cwd=corpus_copy, env=self.env)
        self.rpc.on_request = lambda msg: [None] * len(msg["params"].get("items", [])) \
            if msg.get("method") == "workspace/configuration" else None
        self.rpc.call("initialize", {
            "processId": os.getpid(), "rootUri": cg.uri(corpus_copy),
            "workspaceFolders": [{"uri": cg.uri(corpus_copy), "name": "corpus"}],
            "capabilities": {"window": {"workDoneProgress": True},
                             "workspace": {"configuration": True},
                             "textDocument": {"callHierarchy": {}, "documentSymbol": {
                                 "hierarchicalDocumentSymbolSupport": True}}}})
        self.rpc.notify("initialized", {})
        self.opened = set()
        self.text = {}

    # a file the build leaves out (a build tag, `//go:build nomsgpack`) has
    # no package for gopls: an error reply, taken as no answer
    def prepare(self, path, line0, col0):
        try:
            return super().prepare(path, line0, col0)
        except RuntimeError:
            return [], 0.0

    # gopls (Debian's, v0.11) dies on some interface methods' incoming
    # calls (a nil pointer in source.interfaceReferences): the server is
    # started again and the function taken as not called (not sampled)
    def incoming(self, item):
        try:
            calls, dt = super().incoming(item)
            if self.kind == "gopls":
                calls = calls + self.through_interfaces(item)
                # the standard library's calls of a workspace method (through
                # io.Reader, json.Marshaler): outside the workspace coderag reads
                calls = [c for c in calls
                         if cg.path_of(c["from"]["uri"]).startswith(self.corpus + os.sep)]
            calls = [d for c in calls for d in self.by_function(c)]
            for c in calls:
                self.named(c["from"])
            return calls, dt
        except RuntimeError:
            self.crashes += 1
            self.rpc.close()
            self.start()
            return [], 0.0

    # gopls (v0.11) lists a call through an interface among a method's
    # incoming calls for some of the interface's implementations and not
    # others (in gin, over LSP, formBinding.Bind lacks testBodyBinding's
    # b.Bind(); responseWriter.Status, the only implementation of
    # ResponseWriter.Status, lacks context_test.go's c.Writer.Status()): a
    # method's callers are its own and the callers of each interface method
    # it implements. Both directions are asked of gopls, which errs each
    # way: textDocument/implementation on a method names interface methods
    # by name (uriBinding.Name "implements" Binding.Name, uriBinding has no
    # Bind), so an interface method counts only when implementation on it
    # lists the method back; the interface method's incoming calls hold
    # calls of its implementations (`r.WriteContentType(w)` on a JSON in
    # JSON.Render), so a call counts only where gopls's definition of it is
    # the interface method.
    def through_interfaces(self, item):
        sel = item.get("selectionRange") or item["range"]
        path = cg.path_of(item["uri"])
        out = []
        for lpath, line0, col0 in self.implementations(path, sel["start"]["line"],
                                                       sel["start"]["character"]):
            lines = self.source(lpath)
            if not 0 <= line0 < len(lines) or lines[line0].lstrip().startswith("func") or \
                    path not in {p for p, l, _ in self.implementations(lpath, line0, col0)
                                 if l == sel["start"]["line"]}:
                continue
            items, _ = super().prepare(lpath, line0, col0)
            for it in items or []:
                calls, _ = super().incoming(it)
                for c in calls or []:
                    fp = cg.path_of(c["from"]["uri"])
                    for r in c["fromRanges"]:
                        locs, _ = super().definition(fp, r["start"]["line"],
                                                     r["start"]["character"])
                        d = locs[0] if locs else {}
                        dr = d.get("range") or d.get("targetSelectionRange") or {}
                        if cg.path_of(d.get("uri") or d.get("targetUri") or "") == lpath and \
                                dr.get("start", {}).get("line") == line0:
                            out.append({"from": c["from"], "fromRanges": [r], "via": lpath})
        return out

    def implementations(self, path, line0, col0):
        """(path, line, column) of what gopls's textDocument/implementation
        gives at a position, in the corpus."""
        key = (path, line0, col0)
        if key not in self.impl_cache:
            try:
                locs, _ = self.rpc.call("textDocument/implementation", {
                    "textDocument": {"uri": cg.uri(path)},
                    "position": {"line": line0, "character": col0}})
            except RuntimeError as ex:
                if "no reply" in str(ex):
                    raise
                locs = []  # an error reply ("not a type name or method"): none
            out = []
            for loc in locs or []:
                lpath = cg.path_of(loc.get("uri") or loc.get("targetUri") or "")
                rng = loc.get("range") or loc.get("targetSelectionRange") or {}
                if lpath.startswith(self.corpus) and "start" in rng:
                    out.append((lpath, rng["start"]["line"], rng["start"]["character"]))
            self.impl_cache[key] = out
        return self.impl_cache[key]

    def definition(self, path, line0, col0):
        try:
            return super().definition(path, line0, col0)
        except RuntimeError:
            return [], 0.0

    # tsserver's incoming calls of a method hold the calls of its bases'
    # and overrides' declarations of the name (`subscription.unsubscribe()`
    # among Subject.unsubscribe's, an interface's `destination.error(e)`
    # among Subscriber.error's), whose own definition is that other
    # declaration: such a site is not a call of the sampled method, and is
    # left out of the definition sites (counted) rather than scored against
    # it; a site where the server answers nothing or elsewhere stays
    def site_kept(self, fp, l0, c0, dpath, dline0, name):
        if self.kind == "gopls":
            return self.not_through_interface(fp, l0, c0, dpath, dline0)
        if self.kind != "tsserver":
            return True
        locs, _ = self.definition(fp, l0, c0)
        loc = locs[0] if locs else {}
        lpath = cg.path_of(loc.get("uri") or loc.get("targetUri") or "")
        rng = loc.get("targetSelectionRange") or loc.get("range") or {}
        if not lpath or "start" not in rng:
            return True
        if lpath == dpath and rng["start"]["line"] <= dline0 <= rng["end"]["line"] + 1:
            return True
        lines = self.source(lpath)
        ln, col = rng["start"]["line"], rng["start"]["character"]
        text = lines[ln][col:] if 0 <= ln < len(lines) else ""
        return not re.match(r"%s\b" % re.escape(name), text)

    # gopls lists a call through an interface among the incoming calls of
    # some implementations (`b.Name()` with b a Binding under formBinding's
    # Name) while its definition there is the interface's method: such a
    # site is no call of the sampled method, and is left out of the
    # definition sites (counted) where the server's definition is an
    # interface method the sampled one implements
    def not_through_interface(self, fp, l0, c0, dpath, dline0):
        locs, _ = self.definition(fp, l0, c0)
        loc = locs[0] if locs else {}
        lpath = cg.path_of(loc.get("uri") or loc.get("targetUri") or "")
        rng = loc.get("targetSelectionRange") or loc.get("range") or {}
        if not lpath or "start" not in rng or (lpath == dpath and rng["start"]["line"] == dline0):
            return True
        return (dpath, dline0) not in {(p, l) for p, l, _ in self.implementations(
            lpath, rng["start"]["line"], rng["start"]["character"])}

    # tsserver lists among a method's incoming calls the calls of every
    # method implementing the same interface member (Subscriber.next and
    # ConsumerObserver.next, both Observer<T>'s `next`, get the same 77
    # callers): a call whose server definition is a method with a body
    # other than the sampled one, neither overriding it nor overridden by
    # it (textDocument/implementation either way), is that other class's
    # call and left out of the callers (counted); a call the server defines
    # as an interface's or abstract member (no body), or as nothing, stays
    # (--all-callers keeps every one)
    def call_kept(self, fp, rng, dpath, dline0, name):
        if self.kind != "tsserver" or self.all_callers:
            return True
        locs, _ = self.definition(fp, rng["start"]["line"], rng["start"]["character"])
        loc = locs[0] if locs else {}
        lpath = cg.path_of(loc.get("uri") or loc.get("targetUri") or "")
        sel = loc.get("targetSelectionRange") or loc.get("range") or {}
        full = loc.get("targetRange") or sel
        if not lpath or "start" not in sel:
            return True
        lline = sel["start"]["line"]
        if lpath == dpath and lline == dline0:
            return True
        lines = self.source(lpath)
        body = "\n".join(lines[full["start"]["line"]:full["end"]["line"] + 1])
        if "{" not in body or not re.match(r"%s\b" % re.escape(name),
                                           lines[lline][sel["start"]["character"]:]):
            return True
        if (dpath, dline0) in {(p, l) for p, l, _ in self.implementations(lpath, lline,
                                                                            sel["start"]["character"])}:
            return True  # an override of the sampled method's base
        col = self.source(dpath)[dline0].find(name)
        return (lpath, lline) in {(p, l) for p, l, _ in self.implementations(dpath, dline0,
                                                                           max(col, 0))}

    # tsserver lists anonymous functions (`<function>`, `schedule()
    # callback`) and functions declared inside a function among a file's
    # symbols; coderag keeps both in the named function around them (its
    # unit), so their callers and callees are not comparable and they are
    # not sampled
    def functions(self, path):
        try:
            out = super().functions(path)
        except RuntimeError:
            return []
        if self.kind != "tsserver":
            return out
        spans = self.spans(path)
        anon = self.spans(path, anonymous=True) if self.language == "javascript" else []
        return [(n, l0, c0) for n, l0, c0 in out
                if not n.startswith("<") and not re.search(r"[\s(]", n) and
                not any(a < l0 <= b and m != n for m, a, b in spans) and
                not any(a <= l0 <= b for _, a, b in anon)]

    # tsserver names the caller of a call in a JavaScript file's top-level
    # code a variable named as the file (kind 13, "utils.js"), and so it
    # names a call in a function assigned to a property there
    # (`exports.normalizeType = function (type) {…}`, `res.sendfile =
    # function (…) {…}`), which its documentSymbol lists as a function
    # (normalizeType): each such call is named by the outermost function
    # the file's symbols place around it (starting on an earlier line: one
    # starting on the call's is its argument, `defineGetter(req, 'ip',
    # function ip() {…})`), or "<module>"
    def by_function(self, call):
        item = call["from"]
        path = cg.path_of(item["uri"])
        if self.kind != "tsserver" or item.get("kind") != 13 or \
                item.get("name") != os.path.basename(path):
            return [call]
        out = []
        for r in call["fromRanges"]:
            line = r["start"]["line"]
            best = None
            for n, a, b in self.spans(path):  # one starting on the call's line is its argument
                if a < line <= b and (best is None or a < best[1]):
                    best = (n, a)
            named = dict(item, kind=12 if best else 2, name=best[0] if best else "<module>")
            if best:
                named["selectionRange"] = {"start": {"line": best[1], "character": 0},
                                           "end": {"line": best[1], "character": 0}}
            out.append(dict(call, **{"from": named, "fromRanges": [r]}))
        return out

    def named(self, item):
        """A caller that is a function literal (gopls: `func()`) or an
        anonymous function is named by the named function around it, the
        unit coderag answers with."""
        name = item.get("name") or ""
        if item.get("kind") in (1, 2):  # a file, a module: its top-level code
            item["name"] = "<module>"
            return
        if re.search(r"\.func\d*\(", name):  # gopls: "TestX.func()", "(*T).M.func2()"
            item["name"] = re.split(r"\.func\d*\(", name)[0]
            return
        anon = not name or name.startswith(("func", "<")) or "=>" in name
        path = cg.path_of(item["uri"])
        line = item["range"]["start"]["line"]
        # the outermost named function around it: a function declared in
        # a function (`const reducer = (s) => …` in a method) is part of
        # it for coderag, as an anonymous one is
        best = None
        for n, a, b in self.spans(path):
            if (a < line or (anon and a == line)) and line <= b and (best is None or a < best[1]):
                best = (n, a)
        if best:
            item["name"] = best[0]

    def spans(self, path, anonymous=False):
        """(name, first line, last line) of every named function in path
        (anonymous: of every anonymous one, `methods.forEach() callback`,
        whose functions coderag's unit holds too in JavaScript,
        `Route.prototype[method] = function () {…}` in it: not sampled)."""
        if path not in self.span_cache:
            out, anon = [], []
            try:
                self.open(path)
                syms, _ = self.rpc.call("textDocument/documentSymbol",
                                        {"textDocument": {"uri": cg.uri(path)}})
            except RuntimeError:
                syms = []

            def walk(v):
                for s in v or []:
                    if s.get("kind") in (12, 6, 9) and "range" in s and \
                            not s["name"].startswith(("func", "<")) and \
                            not re.search(r"[\s(]", s["name"]):  # "describe('x') callback"
                        out.append((cg.short(s["name"].replace("::", ".")),
                                    s["range"]["start"]["line"], s["range"]["end"]["line"]))
                    elif s.get("kind") == 12 and "range" in s:
                        anon.append((s["name"], s["range"]["start"]["line"],
                                     s["range"]["end"]["line"]))
                    walk(s.get("children"))
            walk(syms)
            self.span_cache[path] = (out, anon)
        return self.span_cache[path][1 if anonymous else 0]

    def wait_index(self, timeout=600):
        # the first request waits for the workspace's load
        self.functions(self.c_files[0])


def setup(kind, corpus, work, paths=(), js=False):
    env = dict(os.environ)
    if kind == "gopls":
        gopath = os.path.join(work, "gopath")
        dest = os.path.join(gopath, "src", go_import_path(corpus))
        env.update(GOPATH=gopath, GO111MODULE="off", GOFLAGS="", GOPROXY="off",
                   GOCACHE=os.path.join(work, "gocache"))
    else:
        dest = os.path.join(work, "src")
    if not os.path.isdir(dest):
        shutil.copytree(corpus, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", ".coderag", "node_modules"))
        if kind == "tsserver":
            with open(os.path.join(dest, "tsconfig.json"), "w") as fh:
                json.dump({"compilerOptions": {
                    "target": "es2020", "module": "esnext", "moduleResolution": "node",
                    "strict": False, "noEmit": True, "skipLibCheck": True, "jsx": "react",
                    "downlevelIteration": True, "experimentalDecorators": True,
                    "baseUrl": ".", "paths": {k: [v] for k, v in paths},
                    # JavaScript (--js): read and checked as TypeScript reads it
                    "allowJs": js, "checkJs": js, "maxNodeModuleJsDepth": 0},
                    "include": ["**/*.js", "**/*.mjs", "**/*.cjs"] if js else
                    ["**/*.ts", "**/*.tsx"]}, fh)
    return dest, env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("coderag")
    ap.add_argument("--server", choices=("gopls", "tsserver"), required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sites", type=int, default=40)
    ap.add_argument("--ts-path", action="append", default=[], metavar="NAME=FILE",
                    help="tsserver: a package name the corpus imports itself by "
                         "(its tests: @tanstack/query-core=src/index.ts)")
    ap.add_argument("--by-name", action="store_true",
                    help="ask coderag's definition by name, path and line (no column)")
    ap.add_argument("--js", action="store_true",
                    help="tsserver: the corpus's JavaScript (allowJs, checkJs) instead of "
                         "its TypeScript")
    ap.add_argument("--all-callers", action="store_true",
                    help="tsserver: keep the calls of unrelated classes' methods it lists "
                         "with an interface member's implementation")
    ap.add_argument("--work", help="folder for the copy and coderag's index (default: a temp)")
    ap.add_argument("--show", type=int, default=15, help="errors listed per seed")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="callgraph-lsp-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    paths = [p.split("=", 1) for p in args.ts_path]
    src, env = setup(args.server, os.path.abspath(args.corpus), work, paths, args.js)
    args.corpus = src
    cl = Server(args.server, work, src, env, args.js)
    cl.all_callers = args.all_callers
    cl.wait_index()
    cr = cg.Coderag(os.path.abspath(args.coderag), src, os.path.join(work, "coderag"))
    print("# %s and coderag ready in %.0f s (work folder %s)" % (args.server, time.time() - t0,
                                                                 work))
    funcs = []
    for f in cl.c_files:
        for name, l0, c0 in cl.functions(f):
            funcs.append((f, name, l0, c0))
    funcs.sort()
    cg.main_loop(args, cl, cr, funcs)
    if cl.crashes:
        print("# %s died %d times (restarted; those functions not sampled)" % (
            args.server, cl.crashes))
    cr.rpc.close()
    cl.rpc.close()
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
