#!/usr/bin/env python3
"""Process-level hardening tests of the real binary (issue 7).

    hardening.py CODERAG_BIN FIXTURE_DIR GROUP...

Groups:
  crash      `coderag index` on a real corpus (stdlib; see find_corpus) with a
             fake embeddings endpoint, SIGKILLed at HARDENING_KILLS (5) random
             moments; the index opens after each kill, the next run finishes it,
             and it equals an uninterrupted build (files, chunks, symbols,
             edges, vectors, and a digest of every row that matters).
  lspkill    `coderag lsp` SIGKILLed during a didSave storm (HARDENING_LSP_KILLS,
             3 times), restarted; `status --check` passes and the index equals a
             fresh build of the files as they are.
  fs         read-only workspace, full disk (tiny tmpfs, RLIMIT_FSIZE).
  two        two indexers, and two language servers, on one workspace at once.
  secrets    the API key never appears in logs (CODERAG_LOG=debug), results or
             error messages; citations never read outside the workspace.

Random moments come from HARDENING_SEED (printed). HARDENING_KEEP=1 keeps the work
directory of a failed case; HARDENING_EARLY_SAVES=1 makes lspkill storm right after
initialize (shows the aliased-import edge loss of docs/hardening.md). Python standard
library only.
"""
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "lsp"))
import lsp_test  # noqa: E402  (Server, file_uri, frame)

RESULTS = {"passed": 0, "failed": 0, "skipped": 0}
SEED = int(os.environ.get("HARDENING_SEED", str(int(time.time()) % 100000)))
RNG = random.Random(SEED)
KEY = "sk-hardening-MARKER-7c1f3e9a5b"


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODERAG_")}
    env.update(extra or {})
    return env


def run(args, env=None, **kw):
    return subprocess.run(args, capture_output=True, text=True, env=env or clean_env(), **kw)


def find_corpus(name="stdlib"):
    """A real corpus: $HARDENING_CORPUS, or /tmp/coderag-corpus/NAME (the
    benchmarks' default), built there with ../shared/bench/make-corpus.sh
    when missing (needs root and apt, as on CI)."""
    if os.environ.get("HARDENING_CORPUS"):
        return os.environ["HARDENING_CORPUS"]
    if os.path.isdir(os.path.join("/tmp/coderag-corpus", name)):
        return os.path.join("/tmp/coderag-corpus", name)
    script = os.path.join(os.path.dirname(REPO), "shared", "bench", "make-corpus.sh")
    if not os.path.exists(script) or os.geteuid() != 0:
        raise Skip("no corpus (set HARDENING_CORPUS or provide ../shared/bench/make-corpus.sh)")
    r = subprocess.run(["bash", script, "/tmp/coderag-corpus", name], capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip("make-corpus.sh %s failed: %s" % (name, r.stderr[-300:]))
    return os.path.join("/tmp/coderag-corpus", name)


class FakeOpenAI:
    def __init__(self, script=None):
        args = [sys.executable, os.path.join(REPO, "tests", "fake_openai.py"), "--dim", "32"]
        if script:
            args += ["--script", json.dumps(script)]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.proc.stdout.readline())
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def control(self, what, body=None):
        import urllib.request
        req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (self.port, what),
                                     data=json.dumps(body or {}).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=lsp_test.TIMEOUT) as f:
            return json.loads(f.read() or b"{}")

    def close(self):
        self.proc.kill()
        self.proc.wait()


def embed_env(fake):
    return {"CODERAG_EMBED_PROVIDER": "openai", "CODERAG_EMBED_URL": fake.url,
            "CODERAG_EMBED_MODEL": "fake-embed", "CODERAG_EMBED_APIKEYENV": "HARDENING_KEY",
            "HARDENING_KEY": KEY}


def status(bin_path, root, index_dir, env=None):
    """Counts of a checked index, or (None, why): never indexed (exit 0 with
    state "missing", or exit 2 with "run `coderag index`" before issue 10)
    or an error."""
    r = run([bin_path, "status", "--root", root, "--index-dir", index_dir, "--json", "--check"], env=env)
    if r.returncode != 0:
        return None, r.stderr.strip()
    j = json.loads(r.stdout)
    if j.get("state") == "missing":
        return None, "not indexed yet: run `coderag index` (state missing)"
    return {k: j[k] for k in ("files", "chunks", "symbols", "edges", "vectors")}, ""


def digest(index_dir):
    """A hash of the rows that make the index: files by path and content hash,
    chunks by place and symbol, symbols, edges by their ends (ids differ
    between builds)."""
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(index_dir, "index.db"), uri=True)
    rows = []
    rows += sorted("F %s %s" % r for r in db.execute("SELECT path, hash FROM files"))
    ck = ("(SELECT f.path || ':' || c.start_line || ':' || c.win FROM chunks c JOIN files f"
          " ON f.id = c.file_id WHERE c.id = %s)")
    rows += sorted("C %s %s %s %s %s %s" % r for r in db.execute(
        "SELECT f.path, c.start_line, c.end_line, c.win, c.kind, c.symbol FROM chunks c"
        " JOIN files f ON f.id = c.file_id"))
    rows += sorted("S %s %s %s" % r for r in db.execute(
        "SELECT s.qualname, s.name, %s FROM symbols s" % (ck % "s.chunk_id")))
    rows += sorted("E %s %s %s" % r for r in db.execute(
        "SELECT %s, %s, e.kind FROM edges e" % (ck % "e.src", ck % "e.dst")))
    db.close()
    LAST_ROWS[index_dir] = rows
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16], len(rows)


LAST_ROWS = {}


def row_diff(a_dir, b_dir, n=8):
    a, b = set(LAST_ROWS.get(a_dir, [])), set(LAST_ROWS.get(b_dir, []))
    return "only in %s: %s; only in %s: %s" % (os.path.basename(a_dir), sorted(a - b)[:n],
                                               os.path.basename(b_dir), sorted(b - a)[:n])


def index(bin_path, root, index_dir, env=None, timeout=3600):
    return run([bin_path, "index", "--root", root, "--index-dir", index_dir], env=env, timeout=timeout)


def sanitizer_clean(text):
    return not any(s in text for s in ("AddressSanitizer", "LeakSanitizer", "runtime error:"))


# ---------------------------------------------------------------- crash


def t_crash(bin_path, fixtures, work):
    corpus = find_corpus(os.environ.get("HARDENING_CORPUS_NAME", "stdlib"))
    fake = FakeOpenAI()
    try:
        env = clean_env(embed_env(fake))
        fake.control("reset", {"dim": 32})
        t0 = time.monotonic()
        r = index(bin_path, corpus, os.path.join(work, "clean"), env)
        t_clean = time.monotonic() - t0
        check(r.returncode == 0, "clean index: %s" % r.stderr[-500:])
        want, err = status(bin_path, corpus, os.path.join(work, "clean"), env)
        check(want and want["vectors"] > 0, "clean status: %s %s" % (want, err))
        want_digest = digest(os.path.join(work, "clean"))
        kills = int(os.environ.get("HARDENING_KILLS", "5"))
        killed_dir = os.path.join(work, "killed")
        # Kill points are states of the build, never delays: once the database
        # exists; once the next batch of files is committed; once every file
        # is committed (the vectors step begins); then after a random number
        # of embeddings requests answered by the fake (inside the vectors
        # step). Each restart resumes where the last one stopped.
        total = want["files"]
        embeds = len([q for q in fake.control("log")["requests"] if q.get("endpoint") == "embeddings"])
        points = (["db", "commit", "files"] + ["embeds"] * kills)[:kills]
        moments, landed = [], 0
        for k, point in enumerate(points):
            if point == "commit":
                target = max(committed_files(killed_dir), 0) + 1
            elif point == "files":
                target = total
            elif point == "embeds":
                target = RNG.randint(1, max(1, embeds // 2))
            else:
                target = None
            fake.control("reset", {"dim": 32})  # clears the request log
            p = subprocess.Popen([bin_path, "index", "--root", corpus, "--index-dir", killed_dir],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            if point == "embeds":
                reached = lambda n=target: len(fake.control("log")["requests"]) >= n  # noqa: E731
            elif point == "db":
                reached = lambda: os.path.exists(os.path.join(killed_dir, "index.db"))  # noqa: E731
            else:
                reached = lambda n=target: committed_files(killed_dir) >= n  # noqa: E731
            hit = kill_when(p, reached)
            landed += hit
            moments.append("%s%s%s" % (point, "" if target is None else " %d" % target,
                                       "" if hit else " (ended first)"))
            errtext = p.stderr.read()
            p.stderr.close()
            check(sanitizer_clean(errtext.decode(errors="replace")), "sanitizer report before kill")
            got, err = status(bin_path, corpus, killed_dir, env)
            check(got is not None or (point == "db" and "run `coderag index`" in err),
                  "status after kill %d at %s: %s" % (k, point, err))
            check(got is None or point not in ("commit", "files") or got["files"] >= target,
                  "status after kill %d at %s %s: %s" % (k, point, target, got))
        r = index(bin_path, corpus, killed_dir, env)
        check(r.returncode == 0, "finishing run: %s" % r.stderr[-500:])
        got, err = status(bin_path, corpus, killed_dir, env)
        got_digest = digest(killed_dir)
        print("  crash: corpus %s, clean build %.1fs, %d kills (%d landed) at %s; clean %s %s;"
              " after kills %s %s" % (corpus, t_clean, kills, landed, moments, want, want_digest, got,
                                      got_digest))
        check(got == want, "interrupted index differs: %s vs %s" % (got, want))
        check(got_digest == want_digest, "interrupted index rows differ: %s"
              % row_diff(killed_dir, os.path.join(work, "clean")))
    finally:
        fake.close()


def committed_files(index_dir):
    """Files in the last committed transaction of index_dir (read-only), or -1."""
    db = os.path.join(index_dir, "index.db")
    if not os.path.exists(db):
        return -1
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        try:
            return con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:  # not created yet, no schema yet, or busy
        return -1


def kill_when(p, reached):
    """SIGKILLs p once reached() is true; 1 when the kill landed, 0 when p
    ended first. Polls observable state: no delay decides the moment."""
    while p.poll() is None:
        if reached():
            p.send_signal(signal.SIGKILL)
            p.wait()
            return 1
        time.sleep(0.005)
    return 0


def wait_log(s, pattern, n):
    """Waits until the server's stderr has n lines matching pattern."""
    deadline = time.monotonic() + lsp_test.TIMEOUT
    while len(re.findall(pattern, s.stderr())) < n:
        check(s.proc.poll() is None, "server exited: %s" % s.stderr()[-500:])
        check(time.monotonic() < deadline, "no %d %r in the server log" % (n, pattern))
        time.sleep(0.02)


def copy_corpus(corpus, dest, limit_files=None):
    shutil.copytree(corpus, dest, symlinks=True)


def t_lspkill(bin_path, fixtures, work):
    corpus = find_corpus(os.environ.get("HARDENING_CORPUS_NAME", "stdlib"))
    ws = os.path.join(work, "ws")
    copy_corpus(corpus, ws)
    index_dir = os.path.join(work, "index")
    targets = sorted(os.path.relpath(os.path.join(d, f), ws) for d, _, fs in os.walk(ws)
                     for f in fs if f.endswith(".py"))[:400:10]
    kills = int(os.environ.get("HARDENING_LSP_KILLS", "3"))
    notes = []
    for k in range(kills + 1):
        s = lsp_test.Server(bin_path, work, args=("--index-dir", index_dir),
                            stderr_path=os.path.join(work, "server%d.stderr" % k))
        try:
            early = os.environ.get("HARDENING_EARLY_SAVES")
            s.initialize(ws, capabilities={} if early else {"window": {"workDoneProgress": True}})
            if k == 0 and not early:
                # Saves wait until the first build has begun: a save handled
                # before it, on the empty index, loses edges through aliased
                # imports (known issue, docs/hardening.md); HARDENING_EARLY_SAVES=1
                # storms at once and shows it.
                s.wait_method({"method": "$/progress", "params": {"value": {"kind": "begin"}}})
            if k == kills:
                s.wait_ready(timeout=2 * lsp_test.TIMEOUT)
                check(s.shutdown_exit() == 0, "clean exit after the kills")
                break
            # Storm: rewrite files and announce each save several times; kill
            # at a random point of it, chosen by what the server reports
            # (before ready, the first time).
            if k > 0:
                s.wait_ready(timeout=2 * lsp_test.TIMEOUT)
            stop_after = RNG.randint(5, 60)
            sent = 0
            for rnd in range(1000):
                rel = targets[rnd % len(targets)]
                with open(os.path.join(ws, rel), "a", encoding="utf-8", errors="surrogateescape") as f:
                    f.write("\n\ndef hardening_storm_%d_%d(x):\n    return x\n" % (k, rnd))
                for _ in range(3):
                    s.notify("textDocument/didSave", {"textDocument": {"uri": lsp_test.file_uri(
                        os.path.join(ws, rel))}})
                    sent += 1
                if sent >= stop_after:
                    break
            point = "at once"
            if k == 0 and not early:
                # during the first build: after a progress report past a
                # random percentage (or its end, on a build that got there)
                pct = RNG.randint(1, 99)
                s.wait_method({"method": "$/progress", "params": {"value": lambda v: v.get("kind") == "end" or (
                    v.get("kind") == "report" and v.get("percentage", 0) >= pct)}})
                point = "build %d%%" % pct
            elif not early:
                # after a random number of the saved files were re-indexed
                reindexed = RNG.randint(1, (sent + 2) // 3)
                wait_log(s, r"re-indexed .* in [\d.]+ ms", reindexed)
                point = "%d re-indexed" % reindexed
            s.proc.send_signal(signal.SIGKILL)
            s.proc.wait()
            notes.append("%d saves, %s" % (sent, point))
            check(sanitizer_clean(s.stderr()), "sanitizer report")
        finally:
            s.kill()
    r = run([bin_path, "status", "--root", ws, "--index-dir", index_dir, "--check"])
    check(r.returncode == 0, "status --check after the kills: %s" % r.stderr)
    fresh = os.path.join(work, "fresh")
    check(index(bin_path, ws, fresh).returncode == 0, "fresh index")
    got, want = status(bin_path, ws, index_dir)[0], status(bin_path, ws, fresh)[0]
    gd, wd = digest(index_dir), digest(fresh)
    print("  lspkill: %d kills (storm sizes and kill points %s); restarted index %s %s,"
          " fresh build %s %s" % (kills, notes, got, gd, want, wd))
    check(got == want and gd == wd, "index after LSP kills differs from a fresh build: %s"
          % row_diff(index_dir, fresh))


# ---------------------------------------------------------------- file systems


def try_mount(args):
    return subprocess.run(["mount"] + args, capture_output=True).returncode == 0


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


def t_readonly(bin_path, fixtures, work):
    ws = os.path.join(work, "ro")
    os.makedirs(ws)
    how = "tmpfs remounted read-only"
    mounted = try_mount(["-t", "tmpfs", "-o", "size=4m", "tmpfs", ws])
    shutil.copytree(os.path.join(fixtures, "shop"), ws, dirs_exist_ok=True)
    if mounted and not try_mount(["-o", "remount,ro", ws]):
        umount(ws)
        mounted = False
    if not mounted:
        # Simulation: the default index dir cannot be created (a file is in
        # its way), which is the error a read-only workspace gives.
        how = "simulated (.coderag is a file: mount not permitted)"
        shutil.copytree(os.path.join(fixtures, "shop"), ws, dirs_exist_ok=True)
        open(os.path.join(ws, ".coderag"), "w").close()
    try:
        # index dir elsewhere: works
        r = index(bin_path, ws, os.path.join(work, "ro-index"))
        check(r.returncode == 0, "read-only workspace, index dir elsewhere: %s" % r.stderr)
        st, err = status(bin_path, ws, os.path.join(work, "ro-index"))
        check(st and st["files"] > 0, "status: %s" % err)
        # default index dir: a clear error, exit 2, no crash
        r = run([bin_path, "index", "--root", ws])
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode == 2 and lines and sanitizer_clean(r.stderr),
              "read-only workspace, default index dir: exit %d: %s" % (r.returncode, r.stderr))
        # The language server stays up and says why
        s = lsp_test.Server(bin_path, work)
        try:
            s.initialize(ws)
            deadline = time.monotonic() + lsp_test.TIMEOUT
            state = None
            while time.monotonic() < deadline:
                res = s.call("coderag/status", {}).get("result", {})
                state = res.get("state")
                if state in ("error", "ready"):
                    break
                time.sleep(0.05)
            check(state == "error", "lsp on a read-only workspace: state %r" % state)
            check(s.shutdown_exit() == 0, "lsp exits cleanly")
            check(sanitizer_clean(s.stderr()), "sanitizer report")
        finally:
            s.kill()
        print("  readonly (%s): index elsewhere ok; default: exit 2, %r; lsp state error"
              % (how, lines[-1][:160]))
    finally:
        if mounted:
            umount(ws)


def t_fulldisk(bin_path, fixtures, work):
    corpus = os.path.join(work, "ws")
    gen_workspace(corpus, 300)
    ix = os.path.join(work, "tiny")
    os.makedirs(ix)
    if try_mount(["-t", "tmpfs", "-o", "size=512k", "tmpfs", ix]):
        try:
            r = index(bin_path, corpus, os.path.join(ix, "idx"))
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            check(r.returncode == 2 and sanitizer_clean(r.stderr),
                  "full tmpfs: exit %d %s" % (r.returncode, r.stderr[-300:]))
            st, err = status(bin_path, corpus, os.path.join(ix, "idx"))
            check(st is not None or err, "status on the full disk")
            # room again: the same index dir finishes and checks
            try_mount(["-o", "remount,size=64m", ix])
            r = index(bin_path, corpus, os.path.join(ix, "idx"))
            check(r.returncode == 0, "after freeing space: %s" % r.stderr[-300:])
            st, err = status(bin_path, corpus, os.path.join(ix, "idx"))
            check(st is not None, "status --check after freeing space: %s" % err)
            print("  fulldisk tmpfs 512k: exit 2, %r; after remount 64m: %s" % (lines[-1][:160], st))
        finally:
            umount(ix)
    else:
        print("  fulldisk: tmpfs mount not permitted; RLIMIT_FSIZE only")
    # RLIMIT_FSIZE: 300 KiB of files at most
    ix2 = os.path.join(work, "fsize")
    p = subprocess.run(["bash", "-c", 'ulimit -f 300; exec "$@"', "x", bin_path, "index", "--root",
                        corpus, "--index-dir", ix2], capture_output=True, text=True, env=clean_env())
    outcome = ("killed by signal %d" % -p.returncode) if p.returncode < 0 else "exit %d" % p.returncode
    check(p.returncode != 0 and sanitizer_clean(p.stderr), "RLIMIT_FSIZE: %s" % outcome)
    st, err = status(bin_path, corpus, ix2)
    check(st is not None or "run `coderag index`" in err or err, "status after RLIMIT_FSIZE")
    r = index(bin_path, corpus, ix2)
    check(r.returncode == 0, "after lifting RLIMIT_FSIZE: %s" % r.stderr[-300:])
    st, err = status(bin_path, corpus, ix2)
    clean = os.path.join(work, "clean")
    check(index(bin_path, corpus, clean).returncode == 0, "clean index")
    check(st == status(bin_path, corpus, clean)[0] and digest(ix2) == digest(clean),
          "index after RLIMIT_FSIZE differs from a clean one")
    print("  fulldisk RLIMIT_FSIZE=300k: %s (%s); rerun without limit: %s, equal to a clean build"
          % (outcome, (p.stderr.strip().splitlines() or [""])[-1][:160], st))


def gen_workspace(root, n):
    os.makedirs(root, exist_ok=True)
    for m in range(n):
        d = os.path.join(root, "pkg%d" % (m // 50))
        os.makedirs(d, exist_ok=True)
        body = ['"""Module %d."""' % m, "import os", ""]
        if m % 50:
            body.append("from .m%d import helper_%d" % (m - 1, m - 1))
        for k in range(12):
            body += ["def f%d_%d(a, b):" % (m, k), "    if a > b:",
                     "        return os.path.join(str(a), str(b))", "    return a", ""]
        body += ["def helper_%d(x):" % m, "    return f%d_0(x, x)" % m, ""]
        with open(os.path.join(d, "m%d.py" % m), "w") as f:
            f.write("\n".join(body))


# ---------------------------------------------------------------- two at once


def t_two(bin_path, fixtures, work):
    ws = os.path.join(work, "ws")
    gen_workspace(ws, 600)
    shared = os.path.join(work, "shared")
    procs = [subprocess.Popen([bin_path, "index", "--root", ws, "--index-dir", shared],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
             for _ in range(2)]
    outs = [(p.wait(timeout=3600), p.stderr.read().decode(errors="replace")) for p in procs]
    codes = [c for c, _ in outs]
    check(all(sanitizer_clean(e) for _, e in outs), "sanitizer report")
    check(0 in codes, "neither indexer succeeded: %s" % outs)
    for c, e in outs:
        check(c == 0 or (c == 2 and e.strip()), "second indexer: exit %d without a clear error" % c)
    r = index(bin_path, ws, shared)
    check(r.returncode == 0, "rerun: %s" % r.stderr)
    clean = os.path.join(work, "clean")
    check(index(bin_path, ws, clean).returncode == 0, "clean")
    st, err = status(bin_path, ws, shared)
    check(st is not None, "status --check after two indexers: %s" % err)
    check(st == status(bin_path, ws, clean)[0] and digest(shared) == digest(clean), "differs")
    print("  two indexers at once: exit codes %s%s; index equals a clean build"
          % (codes, "" if codes == [0, 0] else " (%s)" % [e.strip()[-120:] for c, e in outs if c]))

    # Two language servers, same workspace and index dir, both storming didSave.
    servers = [lsp_test.Server(bin_path, work, args=("--index-dir", shared)) for _ in range(2)]
    try:
        for s in servers:
            s.initialize(ws)
        for s in servers:
            s.wait_ready()
        for rnd in range(40):
            rel = "pkg%d/m%d.py" % (rnd % 12, (rnd % 12) * 50 + rnd)
            with open(os.path.join(ws, rel), "a") as f:
                f.write("\n\ndef two_servers_%d(x):\n    return x\n" % rnd)
            for s in servers:
                s.notify("textDocument/didSave", {"textDocument": {"uri": lsp_test.file_uri(
                    os.path.join(ws, rel))}})
            if rnd % 10 == 0:
                for s in servers:
                    s.request("coderag/ask", {"question": "two_servers_%d" % rnd})
        for s in servers:
            s.wait_ready()
        # Each server sees its own writes; one whose rows were written by the
        # other keeps its in-memory search postings until it writes itself
        # (known issue, docs/hardening.md): recorded, not failed.
        seen = []
        for s in servers:
            r = s.ask("two_servers_39")
            seen.append("two_servers_39" in [c.get("symbol") for c in r.get("context", [])][:3])
        r = run([bin_path, "ask", "--root", ws, "--index-dir", shared, "--json", "--no-update",
                 "--mode", "extractive", "two_servers_39"])
        check(r.returncode == 0 and "two_servers_39" in
              [c.get("symbol") for c in json.loads(r.stdout).get("context", [])][:3],
              "the database holds the last save: %s" % r.stderr[-300:])
        codes = [s.shutdown_exit() for s in servers]
        check(codes == [0, 0], "exit codes %s" % codes)
        check(all(sanitizer_clean(s.stderr()) for s in servers), "sanitizer report")
    finally:
        for s in servers:
            s.kill()
    r = run([bin_path, "status", "--root", ws, "--index-dir", shared, "--check"])
    check(r.returncode == 0, "status --check after two servers: %s" % r.stderr)
    fresh = os.path.join(work, "fresh")
    check(index(bin_path, ws, fresh).returncode == 0, "fresh")
    check(status(bin_path, ws, shared)[0] == status(bin_path, ws, fresh)[0] and
          digest(shared) == digest(fresh), "two servers' index differs from a fresh build")
    print("  two servers at once: 40 saves x 2 servers; status --check ok; equals a fresh build;"
          " each server's own search sees the last save: %s" % seen)


# ---------------------------------------------------------------- secrets


def t_secrets(bin_path, fixtures, work):
    ws = os.path.join(work, "ws")
    shutil.copytree(os.path.join(fixtures, "shop"), ws)
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.py"), "w") as f:
        f.write("OUTSIDE_SECRET_CONTENT = 1\n")
    os.symlink(outside, os.path.join(ws, "out"))
    # The model cites files outside the workspace in every way it can.
    answer = ("See {ctx0} and [/etc/passwd:1] and [../outside/secret.py:1] and [out/secret.py:1]"
              " and file:///etc/passwd:1 and `%s/secret.py:1`." % outside)
    fake = FakeOpenAI({"actions": {"chat": [{"content": answer, "times": 100}]}})
    outputs = []
    try:
        env = clean_env(embed_env(fake))
        env.update({"CODERAG_LLM_URL": fake.url, "CODERAG_LLM_MODEL": "fake-chat",
                    "CODERAG_LLM_APIKEYENV": "HARDENING_KEY", "CODERAG_LOG": "debug"})
        r = index(bin_path, ws, os.path.join(work, "ix"), env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 0, "index: %s" % r.stderr[-300:])
        r = run([bin_path, "ask", "--root", ws, "--index-dir", os.path.join(work, "ix"), "--json",
                 "--mode", "llm", "how is the order total computed"], env=env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 0, "ask: %s" % r.stderr[-300:])
        res = json.loads(r.stdout)
        reasons = sorted({x["reason"] for x in res["rejected"]})
        check("OUTSIDE_SECRET_CONTENT" not in r.stdout and "root:x:0" not in r.stdout,
              "outside content in the result")
        check(all(c["path"] and not c["path"].startswith(("/", "..")) and not c["path"].startswith("out/")
                  for c in res["citations"]), "a citation outside the workspace was kept: %s" % res["citations"])
        check(len(res["rejected"]) >= 5, "outside citations rejected: %s" % res["rejected"])
        # endpoint errors that echo the Authorization header back
        fake.control("reset", {"actions": {"chat": [{"status": 401, "echo_auth": True, "times": 10}],
                                           "embeddings": [{"status": 401, "echo_auth": True, "times": 10}]}})
        r = run([bin_path, "ask", "--root", ws, "--index-dir", os.path.join(work, "ix"), "--json",
                 "--mode", "llm", "order total"], env=env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 3, "ask with a 401: exit %d" % r.returncode)
        with open(os.path.join(ws, "shop", "new_mod.py"), "w") as f:
            f.write("def brand_new():\n    return 1\n")
        r = index(bin_path, ws, os.path.join(work, "ix"), env)
        outputs += [r.stdout, r.stderr]
        # the language server, with the same errors and then a working endpoint
        s = lsp_test.Server(bin_path, work, args=("--index-dir", os.path.join(work, "ix")),
                            env_extra={k: v for k, v in env.items() if k.startswith("CODERAG_")
                                       or k == "HARDENING_KEY"})
        s.errf.flush()
        try:
            s.initialize(ws)
            s.wait_ready()
            r1 = s.call("coderag/ask", {"question": "order total", "mode": "llm"})
            fake.control("reset", {"actions": {"chat": [{"content": answer, "times": 100}]}})
            r2 = s.call("coderag/ask", {"question": "order total", "mode": "llm"})
            r3 = s.call("coderag/status", {})
            outputs += [json.dumps(x) for x in (r1, r2, r3)]
            outputs += [json.dumps(m) for m in s.server_msgs]
            check("result" in r2, "lsp ask: %r" % r2)
            check("OUTSIDE_SECRET_CONTENT" not in json.dumps(r2), "outside content over LSP")
            s.shutdown_exit()
        finally:
            s.kill()
        outputs.append(s.stderr())
        log = fake.control("log")
        auth_ok = all((q.get("auth") in (None, "Bearer " + KEY)) and KEY not in json.dumps(q.get("rest"))
                      for q in log.get("requests", []))
        check(auth_ok, "the key was sent somewhere else than the Authorization header")
        # what the model was sent is only packed context: no excluded or outside file
        sent = json.dumps([q.get("json") for q in log.get("requests", []) if q.get("json")])
        check("OUTSIDE_SECRET_CONTENT" not in sent, "outside file sent to the LLM")
    finally:
        fake.close()
    leaks = [i for i, o in enumerate(outputs) if KEY in (o or "") or KEY[8:] in (o or "")]
    check(not leaks, "the API key appears in output #%s" % leaks)
    print("  secrets: %d outputs (CLI stdout/stderr at debug, LSP messages and stderr) free of the key;"
          " outside citations rejected as %s" % (len(outputs), reasons))


GROUPS = {"crash": [t_crash], "lspkill": [t_lspkill], "fs": [t_readonly, t_fulldisk],
          "two": [t_two], "secrets": [t_secrets]}


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    print("seed %d (HARDENING_SEED)" % SEED)
    for group in argv[2:]:
        for fn in GROUPS[group]:
            work = tempfile.mkdtemp(prefix="coderag-hardening.")
            t0 = time.monotonic()
            status_word = "ok  "
            try:
                fn(bin_path, fixtures, work)
                RESULTS["passed"] += 1
            except Skip as e:
                status_word = "skip"
                RESULTS["skipped"] += 1
                print("  %s" % e)
            except (Failure, Exception) as e:  # noqa: B902
                status_word = "FAIL"
                RESULTS["failed"] += 1
                print("  %s: %s" % (type(e).__name__, e))
            finally:
                subprocess.run(["umount", "-l"] + [os.path.join(work, d) for d in ("ro", "tiny")],
                               capture_output=True)
                if status_word == "FAIL" and os.environ.get("HARDENING_KEEP"):
                    print("  kept %s" % work)
                else:
                    shutil.rmtree(work, ignore_errors=True)
            print("%s %s (%.1f s)" % (status_word, fn.__name__[2:], time.monotonic() - t0))
            sys.stdout.flush()
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
