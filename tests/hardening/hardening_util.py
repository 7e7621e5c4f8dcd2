#!/usr/bin/env python3
"""What the hardening tests (hardening.py, hardening_fs.py,
hardening_secrets.py) share: running the binary with a clean environment,
a real corpus, the fake OpenAI server, an index's counts and a digest of
its rows, the random moments (HARDENING_SEED) and the runner. Python
standard library only.
"""
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "lsp"))
import lsp_client  # noqa: E402  (Server, file_uri, TIMEOUT)

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
    benchmarks' default), built there with bench/corpus.sh when missing
    (needs root and apt, as on CI)."""
    if os.environ.get("HARDENING_CORPUS"):
        return os.environ["HARDENING_CORPUS"]
    if os.path.isdir(os.path.join("/tmp/coderag-corpus", name)):
        return os.path.join("/tmp/coderag-corpus", name)
    script = os.path.join(REPO, "bench", "corpus.sh")
    if os.geteuid() != 0:
        raise Skip("no corpus (set HARDENING_CORPUS, or run as root: bench/corpus.sh builds it)")
    r = subprocess.run(["bash", script, "/tmp/coderag-corpus", name], capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip("bench/corpus.sh %s failed: %s" % (name, r.stderr[-300:]))
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
        with urllib.request.urlopen(req, timeout=lsp_client.TIMEOUT) as f:
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


def run_groups(argv, groups, usage):
    """The command line: BIN FIXTURE_DIR GROUP...; each test gets a fresh work
    folder (kept after a failure with HARDENING_KEEP=1). Prints "N passed, N
    failed" and returns the exit code."""
    if len(argv) < 3:
        print(usage)
        return 2
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    print("seed %d (HARDENING_SEED)" % SEED)
    for group in argv[2:]:
        for fn in groups[group]:
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

