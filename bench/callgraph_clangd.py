#!/usr/bin/env python3
"""coderag's call graph against clangd's (issue 28), on a C corpus:

    bench/callgraph_clangd.py CODERAG_BIN [--corpus /work/corpus/c-lua] [--n 60]
        [--seeds 1,2,3] [--sites 40] [--clangd clangd-14] [--define X ...] [--work DIR]

clangd is the reference: it is given a compile_commands.json written in a
temporary folder (never in the corpus; each .c file compiled with -D of
--define, `-DLUA_USE_LINUX` by default) and builds its background index
there. Per seed, N functions defined in .c files that clangd says are
called (incomingCalls not empty) are sampled; for each:

- callers: clangd's callHierarchy/incomingCalls against coderag's `callers`
  (MCP, kinds ["call"]), both as (file, enclosing function name):
  recall and precision over the sample;
- callees: coderag's `callees` (MCP, kinds ["call"]); an edge is right when
  clangd lists the function among the callers of the callee (prepared at
  the callee's definition). A type, a prototype or a macro cannot be
  prepared as a function with that caller, so they count false;
- definition from a call site: up to --sites call sites of the sampled
  functions (a direct call, the function's name written before `(`);
  clangd's textDocument/definition and coderag's `definition` (MCP, the
  call site: file, line and column; --by-name: the name, the calling file
  and line) must land on the sampled definition:
  the first answer is counted.
- p50 latency of each request, coderag's and clangd's (the same pipes).

clangd's own errors, and what the script does with them:
- a function passed as a value (`{"abs", math_abs}`, `lua_pushcfunction(L,
  f)`) is a reference clangd 14 lists among incoming calls. Not a call: a
  clangd caller whose every fromRange is not followed by `(` is dropped from
  the truth (counted in the "values" column).
- two programs' `main` (lua.c, luac.c) share one symbol (USR c:@F@main) in
  clangd's index, so their callers and callees merge: functions named
  `main` are never sampled, and a caller named `main` is matched by its
  name alone (clangd names it in whichever file it picks, or drops it).
- a destructor caller is named `~Name` on both sides.
- a method defined in two files (ninja's lexer.cc and lexer.in.cc, a build
  variant each) is one symbol to clangd: the calls made in either are
  listed under the one definition it picked, and `definition` answers that
  one. Files sharing two or more qualified method names are taken as such
  twins (printed as "# twins"): their methods' callers are compared as
  (group, name), and a definition in the twin counts right (--no-twins:
  file by file).
- a function a macro writes (`TEST_F(Suite, Name) {…}`'s `Run`) is placed
  by clangd where the macro spells it (test.h's `void y::Run()`, for every
  use; documentSymbol's position is the macro's use, or inside a string):
  never sampled (its name is not written at its position, and
  prepareCallHierarchy there answers another symbol), and as a caller it is
  "<macro>" (its calls' file is not in clangd's answer: fromRanges are in
  the using file, which the item does not name, so they may fail the `(`
  check and be dropped as values).
- a call written in a macro's body is attributed by clangd to the macro's
  use (the caller is the function that uses the macro), which is what
  coderag's callers give too (`via` the macro).
- a function a macro writes (ninja's `TEST_F(Suite, Name) {…}` makes
  `RegisterSuiteName()` and `Suite_Name::Run()`) is named by clangd with
  its generated name, nowhere in the file; coderag names that code by the
  macro written (`TEST_F`): both are "<macro>" (an all-caps name on
  coderag's side, a name the file does not hold on clangd's). clangd 14's
  incoming calls leave out the calls such code makes, which its
  references list (ninja's state_test.cc:34, `state.bindings_.AddRule(…)`
  in `TEST(State, Basic)`: a reference of BindingEnv::AddRule, not among
  its incoming calls, ParseRule's and State's): callers in code a macro
  writes are left out on both sides (--macro-callers keeps them).
- code in #if branches the configuration does not build is invisible to
  clangd. coderag is given the same compile_commands.json (the corpus is
  copied into the work folder with it at its root; --no-config: not given)
  and marks what the configuration does not build (`built: false`); those
  references are not counted as its answer (without the configuration, a
  branch is marked not built only when its macros are defined nowhere).

C++ (--lang cpp, or auto when the corpus holds more C++ than C files):
every .cc/.cpp file compiled as C++17 with -I for the root, include/ and
src/; functions and methods (documentSymbol kinds 12 and 6) are sampled,
matched by their last name component.
In C++, every use clangd lists of a constructor or an operator is a call,
as callers and as callees (`Foo f;`, `Foo{a}`, `std::make_unique<Foo>(a)`,
`a == b`, `x[i]` have no `(` after the name), and none is a `definition`
site (clangd's definition at a class's name is the class); --constructors
samples constructors (documentSymbol kind 9) too, not only functions and
methods.
RPC_STDERR=FILE appends the servers' stderr to FILE (a crash's trace).
Stdlib only.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse


# ---------------------------------------------------------------- JSON-RPC over stdio

class Rpc:
    """A JSON-RPC peer over a child's stdin/stdout: Content-Length framing
    (lsp=True) or one JSON object per line (MCP)."""

    def __init__(self, argv, lsp, cwd=None, env=None):
        self.lsp = lsp
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.environ["RPC_STDERR"], "ab") if os.environ.get("RPC_STDERR") else subprocess.DEVNULL, cwd=cwd, env=env)
        self.next_id = 1
        self.replies = {}
        self.notes = []
        self.cv = threading.Condition()
        self.on_request = None
        threading.Thread(target=self._reader, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        if not self.lsp:
            line = f.readline()
            return json.loads(line) if line else None
        length = None
        while True:
            line = f.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        return json.loads(f.read(length))

    def _reader(self):
        while True:
            msg = self._read()
            if msg is None:
                with self.cv:
                    self.replies[None] = True
                    self.cv.notify_all()
                return
            if "method" in msg and "id" in msg:  # a request from the server
                result = self.on_request(msg) if self.on_request else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                continue
            with self.cv:
                if "id" in msg:
                    self.replies[msg["id"]] = msg
                else:
                    self.notes.append(msg)
                self.cv.notify_all()

    def _send(self, msg):
        data = json.dumps(msg).encode()
        if self.lsp:
            data = b"Content-Length: %d\r\n\r\n" % len(data) + data
        else:
            data += b"\n"
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def call(self, method, params, timeout=600):
        """(result, seconds); raises on an error reply."""
        i = self.next_id
        self.next_id += 1
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        with self.cv:
            while i not in self.replies:
                if None in self.replies or not self.cv.wait(timeout):
                    raise RuntimeError("%s: no reply" % method)
            msg = self.replies.pop(i)
        dt = time.perf_counter() - t0
        if "error" in msg:
            raise RuntimeError("%s: %s" % (method, msg["error"]))
        return msg.get("result"), dt

    def wait_note(self, pred, timeout):
        end = time.time() + timeout
        with self.cv:
            while True:
                for n in self.notes:
                    if pred(n):
                        return n
                left = end - time.time()
                if left <= 0 or None in self.replies:
                    return None
                self.cv.wait(left)

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def uri(path):
    return "file://" + urllib.parse.quote(os.path.abspath(path))


def path_of(u):
    return urllib.parse.unquote(urllib.parse.urlparse(u).path)


# ---------------------------------------------------------------- clangd

C_EXTS = (".c",)
CPP_EXTS = (".cc", ".cpp", ".cxx")


def source_files(corpus, exts):
    return sorted(os.path.join(d, f) for d, ds, fs in os.walk(corpus) for f in fs
                  if f.endswith(exts) and ".git" not in d.split(os.sep))


class Clangd:
    def __init__(self, exe, corpus, work, defines, cpp, cdb_dir):
        files = source_files(corpus, CPP_EXTS if cpp else C_EXTS)
        self.corpus = corpus
        self.c_files = files
        self.language = "cpp" if cpp else "c"
        head = ["clang++", "-c", "-std=c++17"] if cpp else ["clang", "-c", "-std=gnu99"]
        incs = ["-I" + os.path.join(corpus, d) for d in ("", "include", "src")
                if os.path.isdir(os.path.join(corpus, d))]
        cc = [{"directory": os.path.dirname(f), "file": f,
               "arguments": head + incs + ["-D" + d for d in defines if d] + [f]}
              for f in files]
        with open(os.path.join(cdb_dir, "compile_commands.json"), "w") as fh:
            json.dump(cc, fh)
        self.rpc = Rpc([exe, "--compile-commands-dir=" + cdb_dir, "--background-index",
                        "-j=2", "--log=error", "--pch-storage=memory"], lsp=True, cwd=work)
        self.rpc.on_request = lambda msg: None  # workDoneProgress/create and the like
        self.rpc.call("initialize", {
            "processId": os.getpid(), "rootUri": uri(corpus),
            "capabilities": {"window": {"workDoneProgress": True},
                             "textDocument": {"callHierarchy": {}, "documentSymbol": {
                                 "hierarchicalDocumentSymbolSupport": True}}}})
        self.rpc.notify("initialized", {})
        self.opened = set()
        self.text = {}

    def wait_index(self, timeout=1800):
        # open one file so that the background index starts, then wait for its end
        self.open(self.c_files[0])
        done = self.rpc.wait_note(
            lambda n: n.get("method") == "$/progress" and
            n["params"].get("token") == "backgroundIndexProgress" and
            n["params"]["value"].get("kind") == "end", timeout)
        if not done:
            print("warning: clangd's background index did not report its end", file=sys.stderr)

    def source(self, path):
        if path not in self.text:
            with open(path, encoding="utf-8", errors="replace") as fh:
                self.text[path] = fh.read().split("\n")
        return self.text[path]

    def open(self, path):
        if path in self.opened:
            return
        self.opened.add(path)
        self.rpc.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri(path), "languageId": self.language, "version": 1,
            "text": "\n".join(self.source(path))}})

    def functions(self, path, qualified=None, kinds=(12, 6)):
        """(name, line0, col0) of every function defined in path whose name
        is written at its position (not one a macro writes: clangd puts
        `TEST_F(…) {…}`'s `Run` at the macro's use, or inside a string, where
        prepareCallHierarchy answers another symbol); qualified, when given,
        gets the qualified names ("Lexer::PeekToken", a class's methods
        under it)."""
        self.open(path)
        syms, _ = self.rpc.call("textDocument/documentSymbol",
                                {"textDocument": {"uri": uri(path)}})
        out = []

        def walk(v, outer):
            for s in v or []:
                q = outer + [s["name"]]
                if s.get("kind") in kinds and "range" in s:
                    r = s["range"]
                    lines = self.source(path)[r["start"]["line"]:r["end"]["line"] + 1]
                    sel = s["selectionRange"]["start"]
                    name = short(s["name"].replace("::", "."))
                    at = self.source(path)[sel["line"]][sel["character"]:]
                    written = re.match(r"(?:[\w~]+(?:<[^<>]*>)?::)*" + re.escape(name), at)
                    if "{" in "\n".join(lines) and written:  # a definition
                        out.append((name, sel["line"], sel["character"]))
                        if qualified is not None:
                            qualified.append("::".join(q))
                walk(s.get("children"), q if s.get("kind") in (5, 23, 3) else outer)
        walk(syms, [])
        return out

    def prepare(self, path, line0, col0):
        self.open(path)
        items, dt = self.rpc.call("textDocument/prepareCallHierarchy", {
            "textDocument": {"uri": uri(path)}, "position": {"line": line0, "character": col0}})
        return (items or []), dt

    def incoming(self, item):
        calls, dt = self.rpc.call("callHierarchy/incomingCalls", {"item": item})
        return (calls or []), dt

    def definition(self, path, line0, col0):
        self.open(path)
        locs, dt = self.rpc.call("textDocument/definition", {
            "textDocument": {"uri": uri(path)}, "position": {"line": line0, "character": col0}})
        if isinstance(locs, dict):
            locs = [locs]
        return (locs or []), dt


# ---------------------------------------------------------------- coderag (MCP)

class Coderag:
    def __init__(self, exe, corpus, index_dir):
        # built afresh: another binary's index of the same files would be
        # taken as up to date
        shutil.rmtree(index_dir, ignore_errors=True)
        subprocess.run([exe, "index", "--root", corpus, "--index-dir", index_dir],
                       check=True, stdout=subprocess.DEVNULL)
        self.rpc = Rpc([exe, "mcp", "--root", corpus, "--index-dir", index_dir], lsp=False)
        self.rpc.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "callgraph_clangd", "version": "1"}})
        self.rpc.notify("notifications/initialized", {})

    def tool(self, name, args):
        res, dt = self.rpc.call("tools/call", {"name": name, "arguments": args})
        return res.get("structuredContent") or {}, dt

    def refs(self, tool, rel, line1):
        s, dt = self.tool(tool, {"path": rel, "line": line1, "kinds": ["call"], "limit": 500})
        defs = s.get("definitions") or []
        return (defs[0].get("references") or []) if defs else [], dt

    def definition(self, name, rel, line1, col1=None):
        # the call site (path, line, column), or the name, the calling file
        # and line (--by-name): the definition that use reaches first
        args = {"path": rel, "line": line1, "limit": 3}
        if col1 is not None:
            args["column"] = col1
        else:
            args["symbol"] = name
        s, dt = self.tool("definition", args)
        return s.get("definitions") or [], dt


# ---------------------------------------------------------------- the measure

def cname(name):
    """clangd's name of a function or method, its last component."""
    return short(name.replace("::", "."))


def short(sym):
    return sym.rsplit(".", 1)[-1]


MACRO_NAME = re.compile(r"^[A-Z][A-Z0-9_]{2,}$")


def in_define(lines, line0):
    """Whether 0-based line0 is part of a `#define` (its first line or one
    its backslashes continue)."""
    k = line0
    while k > 0 and lines[k - 1].rstrip().endswith("\\"):
        k -= 1
    return 0 <= k < len(lines) and lines[k].lstrip().startswith("#") and \
        "define" in lines[k].split("(")[0]


def caller_name(cl, fp, name, line0=None):
    """A server's caller as coderag names it: a function a macro writes
    (gtest-style `TEST_F(Suite, Name) {…}`: clangd's `RegisterSuiteName`,
    `Run`), whose name is nowhere in its file, is "<macro>", as is
    coderag's definition named by the macro written (`TEST_F`); so is one
    clangd places inside the macro's `#define` (line0: its position), as
    it places the `Run` of every `TEST_F` use (test.h, where `void y::Run()`
    is spelt; the calls' file is not in its answer). A name the script gave
    ("<module>": a file's top-level code) stays."""
    n = cname(name)
    if n.startswith("<"):
        return n
    if line0 is not None and in_define(cl.source(fp), line0):
        return "<macro>"
    text = "\n".join(cl.source(fp))
    if n and not re.search(r"(?<!\w)%s(?!\w)" % re.escape(n), text):  # `~Name` too
        return "<macro>"
    return n


# file -> (its twins' group name, the names they share): build variants
# (lexer.cc and lexer.in.cc) whose methods clangd takes for one symbol each
TWINS = {}


def find_twins(quals):
    """quals: file -> the qualified names it defines. Files sharing at
    least two qualified method names (`Lexer::PeekToken` in lexer.cc and
    lexer.in.cc, `SubprocessSet::DoWork` in subprocess-posix.cc and
    -win32.cc) are build variants of one another: clangd indexes each such
    method as one symbol (one USR), lists the calls made in either under
    the one definition it picked, and answers `definition` with that one.
    Their callers are compared as one (the group and the name)."""
    files = sorted(quals)
    group = {f: {f} for f in files}
    shared = {}
    for i, a in enumerate(files):
        for b in files[i + 1:]:
            common = {q for q in quals[a] & quals[b] if "::" in q}
            if len(common) >= 2:
                g = group[a] | group[b]
                for f in g:
                    group[f] = g
                shared.setdefault(a, set()).update(cname(q) for q in common)
                shared.setdefault(b, set()).update(cname(q) for q in common)
    for f, g in group.items():
        if len(g) > 1:
            TWINS[f] = ("|".join(sorted(g)), shared.get(f, set()))


def caller_key(rel, name):
    """A caller as compared: every program's `main` is one symbol to clangd
    (USR c:@F@main), named in whichever file it picks, so a caller named
    main is matched by its name alone; a method of build variants
    (TWINS) by its group."""
    if name == "main":
        return ("*", name)
    t = TWINS.get(rel)
    return (t[0], name) if t and name in t[1] else (rel, name)


def same_definition(rel, start, end, symbol, dpath_rel, dline0, name):
    """Whether a definition answer (rel, lines start-end, its symbol or None)
    is the sampled one (dpath_rel, 0-based line dline0), or its twin's
    (TWINS: clangd answers either)."""
    if rel == dpath_rel and (start is None or start <= dline0 + 1 <= end):
        return True
    t = TWINS.get(dpath_rel)
    return bool(t and name in t[1] and rel in t[0].split("|") and
                (symbol is None or short(symbol) == name))


def ref_name(x, macros=True):
    """A coderag reference's caller as the servers name it: a constructor
    by its class, module code "<module>"; in C and C++ (macros), a name in
    capitals is a macro's (a Go function may be named POST)."""
    if x.get("kind") == "module":
        return "<module>"
    parts = (x.get("symbol") or "").split(".")
    if len(parts) > 1 and parts[-1] in ("constructor", "__init__"):
        return parts[-2]
    if macros and MACRO_NAME.match(parts[-1]):
        return "<macro>"
    return parts[-1]


def is_call_at(lines, rng, generic=False):
    """Whether the name at rng is followed by `(` (a call, not a value);
    generic: type arguments may come between (TypeScript's `new C<T>(…)`,
    `f<T>(…)`)."""
    ln = rng["end"]["line"]
    rest = lines[ln][rng["end"]["character"]:] if ln < len(lines) else ""
    k = ln
    while not rest.strip() and k + 1 < len(lines):
        k += 1
        rest = lines[k]
    rest = rest.lstrip()
    if generic and rest.startswith("<"):
        depth = 0
        for i, ch in enumerate(rest):
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if depth == 0:
                rest = rest[i + 1:].lstrip()
                break
    return rest.startswith("(")


def use_is_call(cl, kind, name):
    """Whether every use clangd lists of a C++ function is a call: a
    constructor's (`Foo f;`, `Foo{a}`, `std::make_unique<Foo>(a)`), an
    operator's (`a == b`, `x[i]`: no `(` after a name)."""
    return getattr(cl, "language", "") == "cpp" and (kind == 9 or name.startswith("operator"))


def generic_calls(cl):
    return getattr(cl, "language", "") in ("typescript", "javascript")


def p50(v):
    return statistics.median(v) * 1000 if v else float("nan")


def run_seed(seed, args, cl, cr, funcs, callers_cache, prep_cache):
    rng = random.Random(seed)
    order = funcs[:]
    rng.shuffle(order)
    corpus = args.corpus
    st = dict(truth=0, found=0, reported=0, right=0, values=0, callees=0, callees_right=0,
              sites=0, cl_def_right=0, cr_def_right=0)
    lat = {k: [] for k in ("cl_in", "cl_def", "cr_callers", "cr_callees", "cr_def")}
    wrong = []
    sample = []
    sites = []
    for path, name, line0, col0 in order:
        if len(sample) >= args.n:
            break
        if name == "main":
            continue
        items, _ = cl.prepare(path, line0, col0)
        if not items:
            continue
        calls, dt = cl.incoming(items[0])
        lat["cl_in"].append(dt)
        if not calls:
            continue
        every = use_is_call(cl, items[0].get("kind"), name)
        sample.append((path, name, line0, col0, items[0], calls, every))
    for path, name, line0, col0, item, calls, every in sample:
        rel = os.path.relpath(path, corpus)
        truth = set()
        for c in calls:
            fp = path_of(c["from"]["uri"])
            lines = cl.source(fp)
            real = [r for r in c["fromRanges"]
                    if every or is_call_at(lines, r, generic_calls(cl))]
            if not real:
                st["values"] += 1
                continue
            # a server may say a call is another function's it lists with
            # the sampled one (tsserver: implementations of one interface
            # method in classes unrelated by inheritance)
            if hasattr(cl, "call_kept"):
                kept = [r for r in real if cl.call_kept(fp, r, path, line0, name)]
                if not kept:
                    st["other_callers"] = st.get("other_callers", 0) + 1
                    continue
                real = kept
            truth.add(caller_key(os.path.relpath(fp, corpus), caller_name(
                cl, fp, c["from"]["name"], c["from"]["selectionRange"]["start"]["line"])))
            for r in real:
                text = lines[r["start"]["line"]][r["start"]["character"]:r["end"]["character"]]
                # via: another declaration's call; a constructor's use names its class
                if text == name and not c.get("via") and not every:
                    sites.append((fp, r["start"]["line"], r["start"]["character"], path, line0,
                                  name))
        refs, dt = cr.refs("callers", rel, line0 + 1)
        lat["cr_callers"].append(dt)
        macros = getattr(cl, "language", "c") in ("c", "cpp")
        got = {caller_key(x["path"], ref_name(x, macros)) for x in refs
               if x.get("built") is not False}
        if not getattr(args, "macro_callers", True):
            truth = {t for t in truth if t[1] != "<macro>"}
            got = {g for g in got if g[1] != "<macro>"}
        st["truth"] += len(truth)
        st["found"] += len(truth & got)
        st["reported"] += len(got)
        st["right"] += len(got & truth)
        for miss in sorted(truth - got):
            wrong.append("missed caller %s:%s -> %s:%s" % (miss[0], miss[1], rel, name))
        for extra in sorted(got - truth):
            wrong.append("extra caller %s:%s -> %s:%s" % (extra[0], extra[1], rel, name))
        # callees: each must have this function among clangd's callers
        outs, dt = cr.refs("callees", rel, line0 + 1)
        lat["cr_callees"].append(dt)
        for x in outs:
            if x.get("built") is False:
                continue
            st["callees"] += 1
            key = (x["path"], x.get("startLine"), short(x.get("symbol") or ""))
            if key not in callers_cache:
                callers_cache[key] = callee_callers(cl, corpus, key, prep_cache)
            if caller_key(rel, name) in callers_cache[key]:
                st["callees_right"] += 1
            else:
                wrong.append("wrong callee %s -> %s:%s" % (name, key[0], key[2]))
    rng.shuffle(sites)
    # a server may say a site is not a call of the sampled function (its
    # definition there is another declaration of the name: tsserver lists
    # the calls of a base's or an override's method among a method's)
    kept = getattr(cl, "site_kept", None)
    taken = 0
    for fp, l0, c0, dpath, dline0, name in sites:
        if taken >= args.sites:
            break
        if kept and not kept(fp, l0, c0, dpath, dline0, name):
            st["other_sites"] = st.get("other_sites", 0) + 1
            continue
        taken += 1
        st["sites"] += 1
        locs, dt = cl.definition(fp, l0, c0)
        lat["cl_def"].append(dt)
        if locs and same_definition(
                os.path.relpath(path_of(locs[0].get("uri") or locs[0].get("targetUri")), corpus),
                None, None, None, os.path.relpath(dpath, corpus), dline0, name):
            st["cl_def_right"] += 1
        else:
            loc = locs[0] if locs else {}
            rng = loc.get("range") or loc.get("targetSelectionRange") or {}
            wrong.append("server's definition of %s from %s:%d -> %s:%s (sampled %s:%d)" % (
                name, os.path.relpath(fp, corpus), l0 + 1,
                os.path.relpath(path_of(loc.get("uri") or loc.get("targetUri") or ""), corpus)
                if loc else None, rng.get("start", {}).get("line", -1) + 1 if loc else None,
                os.path.relpath(dpath, corpus), dline0 + 1))
        defs, dt = cr.definition(name, os.path.relpath(fp, corpus), l0 + 1,
                                 None if args.by_name else c0 + 1)
        lat["cr_def"].append(dt)
        d = defs[0] if defs else {}
        if same_definition(d.get("path"), d.get("startLine", 0), d.get("endLine", 0),
                           d.get("symbol"), os.path.relpath(dpath, corpus), dline0, name):
            st["cr_def_right"] += 1
        else:
            wrong.append("definition of %s from %s:%d -> %s:%s" % (
                name, os.path.relpath(fp, corpus), l0 + 1, d.get("path"), d.get("startLine")))
    return st, lat, wrong


def callee_callers(cl, corpus, key, prep_cache):
    """The (file, name) clangd lists as calling the definition at key."""
    rel, line1, name = key
    path = os.path.join(corpus, rel)
    lines = cl.source(path)
    pos = None
    # the name before `(`, generic parameters (TS, Go) between, maybe over lines
    first = (line1 or 1) - 1
    text = "\n".join(lines[first:first + 8])
    m = re.search(r"\b%s\s*(<[^()]*>|\[[^()]*\])?\s*\(" % re.escape(name), text)
    if m:
        before = text[:m.start()]
        pos = (first + before.count("\n"), m.start() - (before.rfind("\n") + 1))
    else:
        # a class called (`new Mutation(…)`): its constructor's callers
        for ln in range(first, min(len(lines), first + 80)):
            k = lines[ln].find("constructor(")
            if k >= 0:
                pos = (ln, k)
                break
    kinds = (12, 6, 9)
    if getattr(cl, "language", "") == "typescript":
        # tsserver answers a constructor, or a class without one, with the
        # class (kind 5), whose incoming calls are its `new X(…)`
        kinds = (12, 6, 9, 5)
        m = re.search(r"\bclass\s+%s\b" % re.escape(name), text)
        if pos is None and m:
            before = text[:m.end() - len(name)]
            pos = (first + before.count("\n"), len(before) - (before.rfind("\n") + 1))
    if pos is None:
        return set()
    items, _ = cl.prepare(path, *pos)
    if not items or items[0].get("kind") not in kinds:
        return set()
    calls, _ = cl.incoming(items[0])
    out = set()
    every = use_is_call(cl, items[0].get("kind"), name)
    for c in calls:
        fp = path_of(c["from"]["uri"])
        if every or any(is_call_at(cl.source(fp), r, generic_calls(cl)) for r in c["fromRanges"]):
            out.add(caller_key(os.path.relpath(fp, corpus), caller_name(
                cl, fp, c["from"]["name"], c["from"]["selectionRange"]["start"]["line"])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("coderag")
    ap.add_argument("--corpus", default="/work/corpus/c-lua")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sites", type=int, default=40)
    ap.add_argument("--clangd", default=shutil.which("clangd-14") or "clangd")
    ap.add_argument("--define", action="append", default=None)
    ap.add_argument("--lang", choices=("auto", "c", "cpp"), default="auto")
    ap.add_argument("--by-name", action="store_true",
                    help="ask coderag's definition by name, path and line (no column)")
    ap.add_argument("--no-config", action="store_true",
                    help="do not give coderag the compile_commands.json")
    ap.add_argument("--work", help="folder for clangd's and coderag's indexes (default: a temp)")
    ap.add_argument("--show", type=int, default=15, help="errors listed per seed")
    ap.add_argument("--no-twins", action="store_true",
                    help="compare the methods of build variants (lexer.cc, lexer.in.cc) "
                    "file by file, not as the one symbol clangd takes them for")
    ap.add_argument("--constructors", action="store_true",
                    help="C++: sample constructors too (documentSymbol kind 9)")
    ap.add_argument("--macro-callers", action="store_true",
                    help="keep callers in code a macro writes (`TEST_F(…) {…}`), left out on "
                    "both sides by default: clangd 14's incoming calls leave out their calls")
    args = ap.parse_args()
    args.corpus = os.path.abspath(args.corpus)
    defines = args.define if args.define is not None else ["LUA_USE_LINUX"]
    work = args.work or tempfile.mkdtemp(prefix="callgraph-clangd-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    # the corpus copied, with the configuration at its root for coderag
    src = os.path.join(work, "src")
    if not os.path.isdir(src):
        shutil.copytree(args.corpus, src, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", ".coderag"))
    args.corpus = src
    cpp = args.lang == "cpp" or (args.lang == "auto" and len(source_files(src, CPP_EXTS)) >
                                 len(source_files(src, C_EXTS)))
    cdb = os.path.join(work, "cdb")
    os.makedirs(cdb, exist_ok=True)
    cl = Clangd(args.clangd, args.corpus, work, defines, cpp, cdb)
    if not args.no_config:
        shutil.copy(os.path.join(cdb, "compile_commands.json"), src)
    cl.wait_index()
    cr = Coderag(os.path.abspath(args.coderag), args.corpus, os.path.join(work, "coderag"))
    print("# clangd and coderag ready in %.0f s (work folder %s)" % (time.time() - t0, work))
    funcs = []
    quals = {}
    for f in cl.c_files:
        q = []
        for name, l0, c0 in cl.functions(f, q, (12, 6, 9) if args.constructors else (12, 6)):
            funcs.append((f, name, l0, c0))
        quals[os.path.relpath(f, args.corpus)] = set(q)
    funcs.sort()
    if not args.no_twins:
        find_twins(quals)
        for f, (g, names) in sorted(TWINS.items()):
            print("# twins %s: %d methods" % (g, len(names)))
    main_loop(args, cl, cr, funcs)
    cr.rpc.close()
    cl.rpc.close()
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


def main_loop(args, cl, cr, funcs):
    """The seeds' measures, printed, and their sum."""
    callers_cache, prep_cache = {}, {}
    tot = {}
    lats = {}
    print("seed  callers(recall precision)  callees(precision)  definition(server coderag)  values")
    for seed in [int(s) for s in args.seeds.split(",")]:
        st, lat, wrong = run_seed(seed, args, cl, cr, funcs, callers_cache, prep_cache)
        for k, v in st.items():
            tot[k] = tot.get(k, 0) + v
        for k, v in lat.items():
            lats.setdefault(k, []).extend(v)
        print("%4d  %.3f %.3f (%d/%d, %d/%d)  %.3f (%d/%d)  %d/%d %d/%d  %d" % (
            seed, st["found"] / max(1, st["truth"]), st["right"] / max(1, st["reported"]),
            st["found"], st["truth"], st["right"], st["reported"],
            st["callees_right"] / max(1, st["callees"]), st["callees_right"], st["callees"],
            st["cl_def_right"], st["sites"], st["cr_def_right"], st["sites"], st["values"]))
        for w in wrong[:args.show]:
            print("      " + w)
        if len(wrong) > args.show:
            print("      ... %d more" % (len(wrong) - args.show))
    print("all   callers recall %.3f precision %.3f; callees precision %.3f; "
          "definition first right: server %d/%d, coderag %d/%d" % (
              tot["found"] / max(1, tot["truth"]), tot["right"] / max(1, tot["reported"]),
              tot["callees_right"] / max(1, tot["callees"]), tot["cl_def_right"], tot["sites"],
              tot["cr_def_right"], tot["sites"]))
    if tot.get("other_callers"):
        print("# callers left out, calls of an unrelated class's method by the server's "
              "definition: %d" % tot["other_callers"])
    if tot.get("other_sites"):
        print("# sites left out, another declaration's calls by the server's definition: %d" %
              tot["other_sites"])
    print("p50 ms: coderag callers %.2f callees %.2f definition %.2f; "
          "clangd incomingCalls %.2f definition %.2f" % (
              p50(lats["cr_callers"]), p50(lats["cr_callees"]), p50(lats["cr_def"]),
              p50(lats["cl_in"]), p50(lats["cl_def"])))


if __name__ == "__main__":
    main()
