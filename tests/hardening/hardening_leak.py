#!/usr/bin/env python3
"""Hardening tests of the real binary for issue 25 (groups leak and avail of
hardening.py, which runs them):

  leak   symlinks swapped between a real file or folder and a link out of the
         root while the CLI indexes, the language server saves and answers,
         and MCP reads and finds definitions: nothing of the outside ever
         appears; a symlinked .coderag, an --index-dir holding foreign files,
         equal to the root or holding it: refused, nothing written there;
         credentials in llm.url never shown (CLI status, MCP status).
  avail  FIFOs in every role (.gitignore in the root and a subfolder, a source
         file, coderag's files in the index folder): nothing blocks; every
         mapped-before file (postings.bin, vectors.faiss, the model) cut short
         under a live language server: every ask answered; every other file of
         the index folder cut or deleted under a live language server and MCP
         server: every request answered.
Operation counts, never durations, bound every loop; timeouts are last-resort
bounds on a hang.
"""
import json
import os
import queue
import shutil
import subprocess
import threading
from hardening_util import check, clean_env, index, run, sanitizer_clean
import lsp_client  # on sys.path through hardening_util

MARK = "OUTSIDE_MARK_Zq7"
HANG = 300  # seconds: only a hang reaches it


class Mcp:
    """`coderag mcp` over pipes: one JSON object a line."""

    def __init__(self, bin_path, root, args=(), env=None):
        self.proc = subprocess.Popen([bin_path, "mcp", "--root", root] + list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env or clean_env())
        self.q = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._reader, daemon=True).start()
        self.err = []
        threading.Thread(target=lambda: self.err.append(self.proc.stderr.read()), daemon=True).start()
        r = self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "hardening", "version": "1"}})
        check("result" in r, "mcp initialize: %r" % r)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _reader(self):
        for line in self.proc.stdout:
            self.q.put(json.loads(line))
        self.q.put(None)

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = self.q.get(timeout=HANG)
            check(m is not None, "mcp server exited")
            if m.get("id") == rid:
                return m

    def tool(self, name, args):
        r = self.call("tools/call", {"name": name, "arguments": args})
        check("result" in r, "mcp %s: %r" % (name, r))
        return r["result"]

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=HANG)
        return code, b"".join(self.err).decode(errors="replace") if self.err else ""


def shop(fixtures, work, name="ws"):
    ws = os.path.join(work, name)
    shutil.copytree(os.path.join(fixtures, "shop"), ws)
    return ws


def listing(path):
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = fh.read()
    return out


# ---------------------------------------------------------------- symlink races


class Swapper:
    """Turns ws/pkg/swap.py and ws/swapdir into links out of the root and
    back, as fast as it can, until stopped; counts the swaps."""

    def __init__(self, ws, outside):
        self.ws, self.outside, self.n, self.stop = ws, outside, 0, threading.Event()
        self.file = os.path.join(ws, "pkg", "swap.py")
        self.dir = os.path.join(ws, "swapdir")
        os.makedirs(os.path.dirname(self.file), exist_ok=True)
        with open(self.file, "w") as f:
            f.write("def inside_swap():\n    return 1\n")
        shutil.copy(self.file, self.file + ".real")
        os.symlink(os.path.join(outside, "secret.py"), self.file + ".link")
        os.makedirs(self.dir)
        with open(os.path.join(self.dir, "mod.py"), "w") as f:
            f.write("def inside_dir():\n    return 2\n")
        self.t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        hold = self.dir + ".hold"
        while not self.stop.is_set():
            tmp = self.file + ".tmp"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            if self.n % 2 == 0:
                os.symlink(os.readlink(self.file + ".link"), tmp)
                os.replace(tmp, self.file)
                os.rename(self.dir, hold)
                os.symlink(os.path.join(self.outside, "dir"), self.dir)
            else:
                shutil.copy(self.file + ".real", tmp)
                os.replace(tmp, self.file)
                os.unlink(self.dir)
                os.rename(hold, self.dir)
            self.n += 1

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop.set()
        self.t.join()


def outside_tree(work):
    outside = os.path.join(work, "outside")
    os.makedirs(os.path.join(outside, "dir"))
    with open(os.path.join(outside, "secret.py"), "w") as f:
        f.write("def %s_fn():\n    return '%s'\n" % (MARK, MARK))
    with open(os.path.join(outside, "dir", "mod.py"), "w") as f:
        f.write("def %s_dir():\n    return '%s'\n" % (MARK, MARK))
    return outside


def index_bytes_clean(ix):
    for name in os.listdir(ix):
        with open(os.path.join(ix, name), "rb") as f:
            if MARK.encode() in f.read():
                return name
    return None


def t_symlink_race(bin_path, fixtures, work):
    ws = shop(fixtures, work)
    outside = outside_tree(work)
    ix = os.path.join(work, "ix")
    runs = int(os.environ.get("HARDENING_RACE_RUNS", "40"))
    with Swapper(ws, outside) as sw:
        for i in range(runs):
            r = index(bin_path, ws, ix, timeout=HANG)
            check(r.returncode == 0 and sanitizer_clean(r.stderr), "index %d: %s" % (i, r.stderr))
            check(index_bytes_clean(ix) is None, "outside content in the index (%s) after run %d"
                  % (index_bytes_clean(ix), i))
        cli_swaps = sw.n
        # the language server: saves and asks while the swaps go on
        s = lsp_client.Server(bin_path, work, args=("--index-dir", ix))
        replies = []
        try:
            s.initialize(ws)
            s.wait_ready()
            for i in range(runs * 3):
                for rel in ("pkg/swap.py", "swapdir/mod.py"):
                    s.notify("textDocument/didSave",
                             {"textDocument": {"uri": lsp_client.file_uri(os.path.join(ws, rel))}})
                # the words of the mark, not the mark: the "cited for" lens repeats the question
                r = s.call("coderag/ask", {"question": "%s fn inside_swap inside_dir"
                                           % MARK.replace("_", " ")})
                replies.append(json.dumps(r))
                for rel in ("pkg/swap.py", "swapdir/mod.py"):
                    doc = {"uri": lsp_client.file_uri(os.path.join(ws, rel))}
                    r = s.call("textDocument/hover", {"textDocument": doc,
                                                      "position": {"line": 0, "character": 6}})
                    replies.append(json.dumps(r))
                    replies.append(json.dumps(s.call("textDocument/codeLens", {"textDocument": doc})))
            check(s.shutdown_exit() == 0, "lsp exit")
            check(sanitizer_clean(s.stderr()), "lsp sanitizer report")
        finally:
            s.kill()
        lsp_swaps = sw.n - cli_swaps
        check(not any(MARK in r for r in replies), "outside content in an LSP reply: %s"
              % [r for r in replies if MARK in r][:1])
        # MCP: reads and definitions
        m = Mcp(bin_path, ws, ("--index-dir", ix))
        out = []
        for i in range(runs * 5):
            out.append(json.dumps(m.tool("read", {"path": "pkg/swap.py"})))
            out.append(json.dumps(m.tool("read", {"path": "swapdir/mod.py"})))
            out.append(json.dumps(m.tool("definition", {"symbol": "inside_swap"})))
            out.append(json.dumps(m.tool("callers", {"path": "pkg/swap.py", "line": 1})))
        code, err = m.close()
        check(code == 0 and sanitizer_clean(err), "mcp exit %s: %s" % (code, err[-300:]))
        check(not any(MARK in o for o in out), "outside content in an MCP result")
    print("  %d CLI indexes (%d swaps), %d LSP saves+asks+hovers+lenses, %d MCP reads+definitions"
          "+callers (%d swaps in all): nothing from outside" % (runs, cli_swaps, runs * 3, runs * 20,
                                                               sw.n))


# ---------------------------------------------------------------- index folder


def t_index_dir(bin_path, fixtures, work):
    ws = shop(fixtures, work)
    before_ws = listing(ws)
    # someone's index.db and postings.bin: never replaced
    foreign = os.path.join(work, "foreign")
    os.makedirs(foreign)
    for name in ("index.db", "postings.bin"):
        with open(os.path.join(foreign, name), "wb") as f:
            f.write(os.urandom(4096))
    want = listing(foreign)
    r = index(bin_path, ws, foreign)
    check(r.returncode == 1 and "did not create" in r.stderr, "foreign index dir: exit %d %s"
          % (r.returncode, r.stderr))
    check(listing(foreign) == want, "the foreign folder was changed")
    # a folder with other files
    other = os.path.join(work, "other")
    os.makedirs(other)
    with open(os.path.join(other, "notes.txt"), "w") as f:
        f.write("mine\n")
    r = index(bin_path, ws, other)
    check(r.returncode == 1 and listing(other) == {"notes.txt": b"mine\n"},
          "folder with notes.txt: exit %d" % r.returncode)
    # the root itself, and a folder holding it
    for d in (ws, work, ws + "/."):
        r = index(bin_path, ws, d)
        check(r.returncode == 1 and "workspace root" in r.stderr, "--index-dir %s: exit %d %s"
              % (d, r.returncode, r.stderr))
    check(listing(ws) == before_ws, "files written into the root")
    # a symlinked .coderag: refused by the CLI and the language server
    target = os.path.join(work, "target")
    os.makedirs(target)
    with open(os.path.join(target, "index.db"), "wb") as f:
        f.write(b"someone else's database")
    want = listing(target)
    os.symlink(target, os.path.join(ws, ".coderag"))
    r = run([bin_path, "index", "--root", ws])
    check(r.returncode == 2 and "symbolic link" in r.stderr, "symlinked .coderag: exit %d %s"
          % (r.returncode, r.stderr))
    r = run([bin_path, "status", "--root", ws])
    check(r.returncode == 2, "status with a symlinked .coderag: exit %d" % r.returncode)
    s = lsp_client.Server(bin_path, work)
    try:
        s.initialize(ws)
        state = None
        for _ in range(100000):
            state = s.call("coderag/status", {}).get("result", {}).get("state")
            if state in ("error", "ready"):
                break
        check(state == "error", "lsp with a symlinked .coderag: state %r" % state)
        check(s.shutdown_exit() == 0 and sanitizer_clean(s.stderr()), "lsp exit")
    finally:
        s.kill()
    check(listing(target) == want, "the link's target was written: %s" % sorted(listing(target)))
    os.unlink(os.path.join(ws, ".coderag"))
    # an older coderag's folder (its .gitignore of "*", no mark) is still used
    r = run([bin_path, "index", "--root", ws])
    check(r.returncode == 0, "default index: %s" % r.stderr)
    os.unlink(os.path.join(ws, ".coderag", ".coderag-index"))
    r = run([bin_path, "index", "--root", ws])
    check(r.returncode == 0, "older coderag's folder: %s" % r.stderr)
    print("  foreign index.db/postings.bin, notes.txt: exit 1, untouched; root, its parent: exit 1,"
          " nothing written; symlinked .coderag: CLI exit 2, LSP error, target untouched")


def t_url_secrets(bin_path, fixtures, work):
    ws = shop(fixtures, work)
    ix = os.path.join(work, "ix")
    url = "http://bob:PASSWORD@127.0.0.1:9/v1?api_key=TOKEN1&model=m&access_token=TOKEN2"
    env = clean_env({"CODERAG_LLM_URL": url})
    outs = []
    r = run([bin_path, "status", "--root", ws, "--index-dir", ix, "--json"], env=env)
    outs.append(r.stdout + r.stderr)
    check(r.returncode == 0 and json.loads(r.stdout)["state"] == "missing", "status missing")
    check(index(bin_path, ws, ix).returncode == 0, "index")
    for extra in ([], ["--json"]):
        r = run([bin_path, "status", "--root", ws, "--index-dir", ix] + extra, env=env)
        check(r.returncode == 0, "status: %s" % r.stderr)
        outs.append(r.stdout + r.stderr)
    check("http://***@127.0.0.1:9/v1?api_key=***&model=m&access_token=***" in outs[-2],
          "status shows the URL masked: %s" % outs[-2])
    # the endpoint is dead: its error messages and the debug logs name it, masked
    env["CODERAG_LOG"] = "debug"
    r = run([bin_path, "ask", "--root", ws, "--index-dir", ix, "--mode", "llm", "--llm-model", "m",
             "order total"], env=env)
    check(r.returncode == 3 and "http://***@127.0.0.1:9" in r.stderr, "ask: %s" % r.stderr)
    outs.append(r.stdout + r.stderr)
    m = Mcp(bin_path, ws, ("--index-dir", ix), env)
    outs.append(json.dumps(m.tool("status", {})))
    outs.append(json.dumps(m.tool("ask", {"question": "order total", "mode": "llm"})))
    code, err = m.close()
    outs.append(err)
    s = lsp_client.Server(bin_path, work, args=("--index-dir", ix),
                          env_extra={k: v for k, v in env.items() if k.startswith("CODERAG_")})
    try:
        s.initialize(ws)
        outs.append(json.dumps(s.wait_ready()))
        outs.append(json.dumps(s.call("coderag/ask", {"question": "order total"})))
        check(s.shutdown_exit() == 0, "lsp exit")
    finally:
        s.kill()
    outs += [json.dumps(s.server_msgs), s.stderr()]
    check("http://***@127.0.0.1:9" in outs[-1], "the LSP log names the endpoint masked")
    for secret in ("PASSWORD", "TOKEN1", "TOKEN2", "bob"):
        check(not any(secret in o for o in outs), "%s shown: %s" % (secret, outs))
    print("  status (text, --json, missing), MCP status and ask, LSP status, ask and notices, an "
          "unreachable endpoint's errors, debug logs: userinfo, api_key and access_token masked")


# ---------------------------------------------------------------- availability


def t_fifo(bin_path, fixtures, work):
    ws = shop(fixtures, work)
    os.makedirs(os.path.join(ws, "sub"))
    with open(os.path.join(ws, "sub", "ok.py"), "w") as f:
        f.write("def in_sub():\n    return 1\n")
    for rel in (".gitignore", "sub/.gitignore", "sub/fifo.py"):
        if os.path.exists(os.path.join(ws, rel)):
            os.unlink(os.path.join(ws, rel))
        os.mkfifo(os.path.join(ws, rel))
    ix = os.path.join(work, "ix")
    r = index(bin_path, ws, ix, timeout=HANG)
    check(r.returncode == 0 and sanitizer_clean(r.stderr), "index with FIFOs: %s" % r.stderr)
    st = json.loads(run([bin_path, "status", "--root", ws, "--index-dir", ix, "--json"],
                        timeout=HANG).stdout)
    check(st["files"] >= 6, "files indexed: %s" % st)
    s = lsp_client.Server(bin_path, work)
    try:
        s.initialize(ws)
        s.wait_ready(timeout=HANG)
        check("result" in s.call("coderag/ask", {"question": "in_sub"}, timeout=HANG), "lsp ask")
        check(s.shutdown_exit() == 0 and sanitizer_clean(s.stderr()), "lsp exit")
    finally:
        s.kill()
    m = Mcp(bin_path, ws, ("--index-dir", ix))
    check("content" in m.tool("status", {}), "mcp status")
    check(m.close()[0] == 0, "mcp exit")
    # coderag's own files turned into FIFOs: a clear error or a rebuild, never a hang
    seen = []
    for name in ("index.db", "postings.bin", "vectors.faiss", "update.lock", ".gitignore"):
        d = os.path.join(work, "ix-" + name)
        check(index(bin_path, ws, d).returncode == 0, "index")
        if os.path.exists(os.path.join(d, name)):
            os.unlink(os.path.join(d, name))
        os.mkfifo(os.path.join(d, name))
        r = index(bin_path, ws, d, timeout=HANG)
        check(sanitizer_clean(r.stderr) and (r.returncode == 0 or r.stderr.strip()),
              "FIFO %s in the index folder: exit %d %s" % (name, r.returncode, r.stderr))
        r2 = run([bin_path, "status", "--root", ws, "--index-dir", d], timeout=HANG)
        seen.append("%s: index exit %d, status exit %d" % (name, r.returncode, r2.returncode))
    print("  FIFO .gitignore (root, subfolder) and source: index, LSP, MCP answer; in the index "
          "folder: %s" % "; ".join(seen))


def t_truncate_live(bin_path, fixtures, work):
    ws = shop(fixtures, work)
    ix = os.path.join(work, "ix")
    model = os.path.join(work, "model.crm")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    src = [os.path.join(repo, "models", f) for f in os.listdir(os.path.join(repo, "models"))
           if f.endswith(".crm")]
    check(src, "no model file in models/")
    shutil.copy(src[0], model)
    env = {"CODERAG_EMBED_MODEL": model}
    check(index(bin_path, ws, ix, clean_env(env)).returncode == 0, "index")
    answered, asked = 0, 0
    s = lsp_client.Server(bin_path, work, args=("--index-dir", ix), env_extra=env)
    try:
        s.initialize(ws)
        s.wait_ready()
        s.ask("order total")
        for victim in (os.path.join(ix, "postings.bin"), os.path.join(ix, "vectors.faiss"), model):
            size = os.path.getsize(victim)
            os.truncate(victim, max(size // 3, 1))
            for q in ("how is the order total computed", "discount rules", "inventory stock"):
                asked += 1
                r = s.call("coderag/ask", {"question": q})
                answered += "result" in r
            s.notify("textDocument/didSave",
                     {"textDocument": {"uri": lsp_client.file_uri(os.path.join(ws, "shop", "models.py"))}})
            s.wait_ready()
        check(s.shutdown_exit() == 0, "lsp exit")
        check(sanitizer_clean(s.stderr()), "sanitizer report")
    finally:
        s.kill()
    check(answered == asked, "%d of %d asks answered" % (answered, asked))
    print("  postings.bin, vectors.faiss, the model cut short under a live server: %d of %d asks "
          "answered, clean exit" % (answered, asked))


# index.db: the damaged-database repair's (docs/hardening.md); index.db-shm: SQLite's own mapping,
# whose truncation under a live server is a SIGBUS (docs/hardening.md, what remains)
CUT_FILES = (".coderag-index", ".gitignore", "postings.bin", "update.lock", "vectors.faiss",
             "vectors.lock", "index.db-wal")


def cut(path, how):
    if how == "delete":
        os.unlink(path)
    else:
        os.truncate(path, os.path.getsize(path) // 3 if how == "third" else 0)


def t_cut_index_dir(bin_path, fixtures, work):
    """Every other file of the index folder cut to a third, emptied or deleted under a live
    language server and a live MCP server: every request answered, updates go on, a clean exit,
    and `status --check` passes after `coderag index`."""
    ws = shop(fixtures, work)
    saved = lsp_client.file_uri(os.path.join(ws, "shop", "models.py"))
    n = 0
    for door in ("lsp", "mcp"):
        for name in CUT_FILES:
            for how in ("third", "zero", "delete"):
                ix = os.path.join(work, "ix-%s-%s-%s" % (door, name, how))
                check(index(bin_path, ws, ix).returncode == 0, "index")
                what = "%s, %s cut (%s)" % (door, name, how)
                if door == "lsp":
                    s = lsp_client.Server(bin_path, work, args=("--index-dir", ix))
                    try:
                        s.initialize(ws)
                        s.wait_ready()
                        s.ask("order total")
                        if os.path.exists(os.path.join(ix, name)):
                            cut(os.path.join(ix, name), how)
                        for q in ("how is the order total computed", "discount rules"):
                            s.ask(q)
                            s.notify("textDocument/didSave", {"textDocument": {"uri": saved}})
                            st = s.wait_ready()
                            check(st["state"] == "ready", "%s: %r" % (what, st))
                        check(s.shutdown_exit() == 0 and sanitizer_clean(s.stderr()),
                              "%s: exit %s" % (what, s.stderr()[-300:]))
                    finally:
                        s.kill()
                else:
                    m = Mcp(bin_path, ws, ("--index-dir", ix))
                    m.tool("search", {"query": "order total"})
                    if os.path.exists(os.path.join(ix, name)):
                        cut(os.path.join(ix, name), how)
                    for tool, args in (("search", {"query": "order total"}),
                                       ("ask", {"question": "discount rules"}),
                                       ("definition", {"symbol": "Order"}), ("status", {})):
                        os.utime(os.path.join(ws, "shop", "models.py"))
                        r = m.tool(tool, args)
                        check(not r.get("isError"), "%s: %s %r" % (what, tool, r))
                    code, err = m.close()
                    check(code == 0 and sanitizer_clean(err), "%s: exit %s %s" % (what, code, err))
                check(index(bin_path, ws, ix).returncode == 0, "%s: index after" % what)
                r = run([bin_path, "status", "--check", "--root", ws, "--index-dir", ix])
                check(r.returncode == 0, "%s: status --check %s" % (what, r.stdout + r.stderr))
                n += 1
    print("  %d cuts (%s; a third, empty, deleted) under a live language server and MCP server: "
          "every request answered, clean exits, status --check clean after index"
          % (n, ", ".join(CUT_FILES)))


GROUPS = {"leak": [t_symlink_race, t_index_dir, t_url_secrets],
          "avail": [t_fifo, t_truncate_live, t_cut_index_dir]}
