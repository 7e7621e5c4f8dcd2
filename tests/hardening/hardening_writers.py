#!/usr/bin/env python3
"""Writers that meet (issue 40): a write that meets another writer waits its
turn and says so, never fails with SQLite's "database is locked", never
drops a save; readers go on meanwhile (groups writers and stress of
hardening.py, which runs them).

The other writer is held deterministically: a sqlite3 connection of this
test takes index.db's write lock (BEGIN IMMEDIATE) and keeps it until the
process under test reports that it waits (or ends): no delay decides
anything. Every wait is bounded by HANG, which only a hang reaches.
"""
import json
import os
import re
import sqlite3
import subprocess
import threading
import time
from hardening_util import check, clean_env, digest, index, row_diff, run, sanitizer_clean, status
from hardening_fs import gen_workspace
from hardening_leak import Mcp
import lsp_client  # on sys.path through hardening_util

HANG = 300  # seconds: only a hang reaches it
WAITS = "waiting for another writer"
LOCKED = "database is locked"


class Holder:
    """Holds index.db's write lock (another writer, deterministically)."""

    def __init__(self, index_dir):
        self.con = sqlite3.connect(os.path.join(index_dir, "index.db"), timeout=HANG,
                                   isolation_level=None)
        self.con.execute("BEGIN IMMEDIATE")

    def release(self):
        self.con.execute("COMMIT")
        self.con.close()


class Proc:
    """A CLI process whose stderr is collected as it comes."""

    def __init__(self, args, env=None):
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env or clean_env())
        self.err, self.out = [], []
        self.t = [threading.Thread(target=self._pump, args=(self.p.stderr, self.err), daemon=True),
                  threading.Thread(target=self._pump, args=(self.p.stdout, self.out), daemon=True)]
        for t in self.t:
            t.start()

    @staticmethod
    def _pump(f, into):
        for line in iter(f.readline, b""):
            into.append(line.decode(errors="replace"))

    def stderr(self):
        return "".join(self.err)

    def wait(self):
        code = self.p.wait(timeout=HANG)
        for t in self.t:
            t.join(HANG)
        return code


def wait_until(cond, what):
    deadline = time.monotonic() + HANG
    while not cond():
        check(time.monotonic() < deadline, "hang: %s" % what)
        time.sleep(0.01)


def symbols(index_dir, like):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(index_dir, "index.db"), uri=True,
                         timeout=HANG)
    try:
        return sorted(r[0] for r in db.execute("SELECT name FROM symbols WHERE name LIKE ?",
                                               (like,)))
    finally:
        db.close()


def append_def(ws, rel, name):
    with open(os.path.join(ws, rel), "a") as f:
        f.write("\n\ndef %s(x):\n    return x\n" % name)


def equal_fresh(bin_path, ws, index_dir, work, what):
    r = run([bin_path, "status", "--root", ws, "--index-dir", index_dir, "--check"])
    check(r.returncode == 0, "%s: status --check: %s" % (what, r.stderr))
    fresh = os.path.join(work, "fresh-%d" % time.monotonic_ns())
    check(index(bin_path, ws, fresh).returncode == 0, "fresh index")
    got, want = status(bin_path, ws, index_dir)[0], status(bin_path, ws, fresh)[0]
    gd, wd = digest(index_dir), digest(fresh)
    check(got == want and gd == wd, "%s: index differs from a fresh build: %s %s vs %s %s; %s"
          % (what, got, gd, want, wd, row_diff(index_dir, fresh)))


# ---------------------------------------------------------------- writers


def t_cli_waits(bin_path, fixtures, work):
    """`coderag index` meeting a writer that holds index.db: waits, says so,
    finishes once it is released (before: exit 2 "database is locked")."""
    ws, ix = os.path.join(work, "ws"), os.path.join(work, "ix")
    gen_workspace(ws, 20)
    check(index(bin_path, ws, ix).returncode == 0, "first index")
    append_def(ws, "pkg0/m3.py", "held_cli_new")
    h = Holder(ix)
    p = Proc([bin_path, "index", "--root", ws, "--index-dir", ix])
    wait_until(lambda: WAITS in p.stderr() or p.p.poll() is not None, "index never waits")
    said = WAITS in p.stderr()
    h.release()
    code = p.wait()
    check(said, "index did not say that it waits: exit %s, %s" % (code, p.stderr()[-300:]))
    check(code == 0 and LOCKED not in p.stderr(), "index: exit %d %s" % (code, p.stderr()[-300:]))
    check(symbols(ix, "held_cli_new") == ["held_cli_new"], "the change is indexed")
    print("  index waits for a held index.db, says so, then indexes: %s"
          % p.stderr().strip().splitlines()[0][:120])


def t_two_cold(bin_path, fixtures, work):
    """Two cold `coderag index` on one root, while a third writer holds the
    index: both wait (and say so), both succeed, the index equals a fresh
    one (before: one exited 2 with "database is locked")."""
    ws, ix = os.path.join(work, "ws"), os.path.join(work, "ix")
    os.makedirs(ws)
    check(index(bin_path, ws, ix).returncode == 0, "index of the empty root")
    gen_workspace(ws, 60)  # no file indexed yet: the next build is cold
    h = Holder(ix)
    ps = [Proc([bin_path, "index", "--root", ws, "--index-dir", ix]) for _ in range(2)]
    wait_until(lambda: all(WAITS in p.stderr() or p.p.poll() is not None for p in ps),
               "the indexers never wait")
    said = [WAITS in p.stderr() for p in ps]
    h.release()
    codes = [p.wait() for p in ps]
    errs = [p.stderr() for p in ps]
    check(all(sanitizer_clean(e) for e in errs), "sanitizer report")
    check(said == [True, True], "both say that they wait: %s %s" % (said, [e[-200:] for e in errs]))
    check(codes == [0, 0] and not any(LOCKED in e for e in errs),
          "both succeed: %s %s" % (codes, [e[-200:] for e in errs]))
    equal_fresh(bin_path, ws, ix, work, "two cold indexers")
    print("  two cold indexers behind a held index: both wait, both exit 0, equal to fresh")


def t_two_race(bin_path, fixtures, work):
    """Two cold `coderag index` at once on 400 files: both exit 0."""
    ws, ix = os.path.join(work, "ws"), os.path.join(work, "ix")
    gen_workspace(ws, 400)
    ps = [Proc([bin_path, "index", "--root", ws, "--index-dir", ix]) for _ in range(2)]
    codes = [p.wait() for p in ps]
    errs = [p.stderr() for p in ps]
    check(codes == [0, 0] and not any(LOCKED in e for e in errs),
          "two cold indexers: %s %s" % (codes, [e[-200:] for e in errs]))
    equal_fresh(bin_path, ws, ix, work, "two racing indexers")
    print("  two cold indexers at once: exit codes %s" % codes)


def t_lsp_save_waits(bin_path, fixtures, work):
    """A save meeting a writer that holds the index: not failed, not shown
    as an error; an ask is answered meanwhile; the save lands once the
    writer is done (before: "re-indexing ... failed: database is locked",
    never retried)."""
    ws, ix = os.path.join(work, "ws"), os.path.join(work, "ix")
    gen_workspace(ws, 20)
    s = lsp_client.Server(bin_path, work, args=("--index-dir", ix))
    try:
        s.initialize(ws)
        s.wait_ready(timeout=HANG)
        h = Holder(ix)
        append_def(ws, "pkg0/m5.py", "held_save_new")
        s.notify("textDocument/didSave", {"textDocument": {"uri": lsp_client.file_uri(
            os.path.join(ws, "pkg0/m5.py"))}})
        wait_until(lambda: re.search(r"handed to a full pass|re-indexing .* failed", s.stderr()),
                   "the save neither waits nor fails")
        failed = re.search(r"re-indexing .* failed.*", s.stderr())
        # a reader is answered while the writer holds the index
        r = s.ask("helper_3", mode="extractive") if not failed else {}
        h.release()
        check(not failed, "the save failed: %s" % (failed.group(0) if failed else ""))
        check("context" in r, "an ask while the index is held: %r" % r)
        wait_until(lambda: symbols(ix, "held_save_new") == ["held_save_new"],
                   "the save never lands")
        s.wait_ready(timeout=HANG)
        shown = [m for m in s.server_msgs if m.get("method") == "window/showMessage"]
        check(not any(LOCKED in json.dumps(m) or "cannot be updated" in json.dumps(m)
                      for m in shown), "an error was shown: %s" % shown)
        check(LOCKED not in s.stderr(), "SQLite's words in the log")
        check(s.shutdown_exit() == 0, "clean exit")
    finally:
        s.kill()
    equal_fresh(bin_path, ws, ix, work, "a save behind a held index")
    print("  a save behind a held index: handed to a full pass, an ask answered meanwhile,"
          " landed after")


def t_mcp_ask_held(bin_path, fixtures, work):
    """An MCP call whose refresh meets a writer that holds the index is
    answered from the index as last committed, marked stale, instead of
    waiting behind the writer; once the writer is done the change lands and
    the next call sees it (before: every call waited for the writer)."""
    ws, ix = os.path.join(work, "mws"), os.path.join(work, "mix")
    gen_workspace(ws, 20)
    mcp = Mcp(bin_path, ws, args=("--index-dir", ix))
    h = None
    try:
        first = mcp.tool("search", {"query": "helper_3"})
        check(not first.get("isError"), "first call: %r" % first)
        h = Holder(ix)
        append_def(ws, "pkg0/m5.py", "held_mcp_new")
        r = mcp.tool("search", {"query": "held_mcp_new"})
        check(not r.get("isError"), "a call while the index is held: %r" % r)
        check(r.get("structuredContent", {}).get("staleIndex") is True,
              "not marked stale: %r" % r.get("structuredContent"))
        check(LOCKED not in json.dumps(r), "SQLite's words in the result")
        h.release()
        h = None
        # the pass that waited takes its turn: a call is stale no more
        got = []
        wait_until(lambda: got.append(mcp.tool("search", {"query": "held_mcp_new"})) or
                   "staleIndex" not in got[-1].get("structuredContent", {}),
                   "calls stay stale after the writer")
        sc = got[-1].get("structuredContent", {})
        check(symbols(ix, "held_mcp_new") == ["held_mcp_new"], "the change never lands")
        check(any(x.get("symbol", "").endswith("held_mcp_new") for x in sc.get("results", [])),
              "the change is not found: %r" % sc)
        code, err = mcp.close()
        mcp = None
        check(code == 0, "mcp exit %s" % code)
        check(LOCKED not in err, "SQLite's words in the log")
    finally:
        if h:
            h.release()
        if mcp:
            mcp.proc.kill()
    print("  an MCP call behind a held index: answered from the committed index, marked stale;"
          " the change seen after")


# ---------------------------------------------------------------- stress


def t_stress(bin_path, fixtures, work):
    """CLI (index, ask --no-update) + two language servers + one MCP server
    editing and asking on one root, bounded by counts (STRESS_ROUNDS saves
    per server, default 12): no save lost, no "database is locked"
    anywhere, every ask answered, every CLI ask's stdout JSON, the index
    equal to a fresh build after (without another `coderag index`)."""
    rounds = int(os.environ.get("STRESS_ROUNDS", "12"))
    ws, ix = os.path.join(work, "ws"), os.path.join(work, "ix")
    gen_workspace(ws, 60)
    env = clean_env()
    servers = [lsp_client.Server(bin_path, work, args=("--index-dir", ix),
                                 stderr_path=os.path.join(work, "lsp%d.stderr" % k))
               for k in range(2)]
    mcp = None
    problems = []
    cli_out = []
    try:
        for s in servers:
            s.initialize(ws)
        mcp = Mcp(bin_path, ws, args=("--index-dir", ix), env=env)

        def cli():
            for k in range(max(2, rounds // 4)):
                r = run([bin_path, "index", "--root", ws, "--index-dir", ix], env=env,
                        timeout=HANG)
                cli_out.append(("index", r.returncode, r.stdout, r.stderr))
                r = run([bin_path, "ask", "--root", ws, "--index-dir", ix, "--json",
                         "--no-update", "--mode", "extractive", "helper_%d" % k], env=env,
                        timeout=HANG)
                cli_out.append(("ask", r.returncode, r.stdout, r.stderr))

        def mcp_asks():
            for k in range(max(2, rounds // 2)):
                for tool, args in (("search", {"query": "helper_%d" % k}),
                                   ("ask", {"question": "what does helper_%d do" % k,
                                            "mode": "extractive"})):
                    r = mcp.call("tools/call", {"name": tool, "arguments": args})
                    if "result" not in r or r["result"].get("isError"):
                        text = json.dumps(r)
                        # an index not built yet is an answer too; a lock is not
                        if LOCKED in text or "not indexed yet" not in text:
                            problems.append("mcp %s: %s" % (tool, text[:300]))

        threads = [threading.Thread(target=cli), threading.Thread(target=mcp_asks)]
        for t in threads:
            t.start()
        asks = []
        for rnd in range(rounds):
            held = None
            if rnd == rounds // 2:
                # a writer that holds the index longer than any timeout:
                # released once both servers have handed their saves over
                # (both past their first open, which waits its turn too)
                for s in servers:
                    s.wait_ready(timeout=HANG)
                held = Holder(ix)
            for k, s in enumerate(servers):
                # both servers edit the same files: rows read before the
                # other wrote must never overwrite its newer ones
                rel = "pkg%d/m%d.py" % (rnd % 2, (rnd % 2) * 50 + rnd % 7)
                append_def(ws, rel, "stress_%d_%d" % (k, rnd))
                s.notify("textDocument/didSave", {"textDocument": {"uri": lsp_client.file_uri(
                    os.path.join(ws, rel))}})
                if rnd % 3 == 0:
                    asks.append((s, s.request("coderag/ask", {"question": "stress_%d_%d" % (k, rnd),
                                                              "mode": "extractive"})))
            if held:
                wait_until(lambda: all(re.search(r"handed to a full pass|re-indexing .* failed",
                                                 s.stderr()) for s in servers),
                           "the servers' saves neither wait nor fail")
                held.release()
        for t in threads:
            t.join(HANG)
        for s, rid in asks:
            r = s.wait_response(rid, timeout=HANG)
            if "result" not in r:
                problems.append("lsp ask: %s" % json.dumps(r)[:300])
        for s in servers:
            s.wait_ready(timeout=HANG)
        # every save handled: the last one of each server is searchable
        for k, s in enumerate(servers):
            wait_until(lambda k=k: symbols(ix, "stress_%d_%d" % (k, rounds - 1)),
                       "server %d's last save never lands" % k)
        for s in servers:
            s.wait_ready(timeout=HANG)
        codes = [s.shutdown_exit() for s in servers]
        check(codes == [0, 0], "server exit codes %s" % codes)
        code, err = mcp.close()
        mcp = None
        check(code == 0, "mcp exit %s" % code)
        texts = [s.stderr() for s in servers] + [err] + [o + e for _, _, o, e in cli_out]
        texts += [json.dumps(m) for s in servers for m in s.server_msgs]
        check(not any(LOCKED in t for t in texts), "\"database is locked\" shown: %s"
              % [t[t.find(LOCKED) - 200:t.find(LOCKED) + 50] for t in texts if LOCKED in t][:2])
        check(all(sanitizer_clean(t) for t in texts), "sanitizer report")
        for what, code, out, errtext in cli_out:
            if code != 0:
                problems.append("cli %s: exit %d %s" % (what, code, errtext[-200:]))
            if what == "ask" and code == 0:
                try:
                    json.loads(out)
                except ValueError:
                    problems.append("cli ask stdout is not JSON: %r" % out[:200])
        check(not problems, "problems: %s" % problems[:5])
    finally:
        for s in servers:
            s.kill()
        if mcp:
            mcp.proc.kill()
    # every save is in the index: equal to a fresh build of the files as they are
    equal_fresh(bin_path, ws, ix, work, "stress")
    print("  stress: %d saves x 2 servers, %d CLI runs, MCP asks; no lock shown, every ask"
          " answered, equal to a fresh build" % (rounds, len(cli_out)))


GROUPS = {"writers": [t_cli_waits, t_two_cold, t_two_race, t_lsp_save_waits, t_mcp_ask_held],
          "stress": [t_stress]}
