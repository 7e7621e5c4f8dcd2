#!/usr/bin/env python3
"""MCP progress at a human pace (issue 24) against the real `coderag mcp`
with a fake LLM (tests/fake_openai.py), on a workspace of 300 generated
files and one that is skipped:

  - an index pass over 300 files is told in at most WS_PACE_STEPS + 1
    notifications (a step per 2%), to the call that runs it too, never one
    per file;
  - "index ready: N files" says status's count, also after a restart on an
    index that needs no work (it said 0);
  - while the LLM writes, a call with a progressToken hears its tokens (at
    most one per WS_PACE_UNITS of them); a call without one hears nothing;
  - each token's progress values strictly increase.

    progress_test.py CODERAG_BIN FIXTURES_DIR

Deterministic: the LLM holds its answer until the calls behind it are
queued (a ping answered after them) and the files are rewritten (inotify
queues the events at write time); the time floor only ever drops reports,
so every bound below holds however fast the machine.
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lsp"))
from transcript import Failure, Server, check  # noqa: E402
from lsp_client import fake_llm  # noqa: E402
from cancel_test import call, control, send, wait_event  # noqa: E402

N_FILES = 300
STEPS = 50  # WS_PACE_STEPS
UNITS = 16  # WS_PACE_UNITS
ANSWER = "The application dispatches a request through its router. " * 4  # one token per char


def write_files(root, bump):
    gen = os.path.join(root, "gen")
    os.makedirs(gen, exist_ok=True)
    for i in range(N_FILES):
        with open(os.path.join(gen, "f%03d.c" % i), "w") as f:
            f.write("int gen_%d(int x)\n{\n    return x + %d;\n}\n" % (i, i + bump))
    with open(os.path.join(gen, "latin1.c"), "wb") as f:  # not UTF-8: skipped
        f.write(b"/* caf\xe9 */\nint latin(void) { return 1; }\n")


def start(bin_path, root, errpath, port):
    s = Server(bin_path, root, errpath, ["--llm-url", "http://127.0.0.1:%d" % port])
    send(s, {"id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}})
    check(s.next(s.responses, "initialize")["id"] == 1, "initialize answered")
    send(s, {"method": "notifications/initialized"})
    return s


def answer(s, rid):
    r = s.next(s.responses, "the answer of call %d" % rid)
    check(r.get("id") == rid and "result" in r, "answer of call %d: %r" % (rid, r))
    check(not r["result"].get("isError"), "call %d failed: %r" % (rid, r["result"]))
    return r["result"]


def drain(s):
    """Progress notifications so far, by token (they precede the answers)."""
    by = {}
    while not s.progress.empty():
        p = s.progress.get()["params"]
        by.setdefault(p["progressToken"], []).append(p)
    return by


def check_increasing(by):
    for tok, ps in by.items():
        vals = [p["progress"] for p in ps]
        check(all(a < b for a, b in zip(vals, vals[1:])), "%s: progress not increasing: %r" % (tok, vals))


def kinds(ps, word):
    return [p for p in ps if p["message"].startswith(word)]


def ready_count(ps, tok):
    r = kinds(ps, "index ready")
    check(len(r) == 1, "%s: one 'index ready', got %r" % (tok, [p["message"] for p in ps]))
    return int(r[0]["message"].split()[2])


def scenario(bin_path, fixtures, tmp, port):
    root = os.path.join(tmp, "ws")
    shutil.copytree(os.path.join(fixtures, "longdef"), root)
    write_files(root, 0)
    s = start(bin_path, root, os.path.join(tmp, "stderr1"), port)
    try:
        # the first call: at most the first notification, a pass, the ready one
        call(s, 2, "status", {}, "t0")
        files = answer(s, 2)["structuredContent"]["files"]
        check(files > N_FILES, "the generated files are indexed: %d" % files)
        first = drain(s).get("t0", [])
        check(1 <= len(first) <= STEPS + 3, "t0: %d notifications: %r" % (len(first), first[:5]))
        check(ready_count(first, "t0") == files, "t0: ready says %r, status %d" % (first[-1], files))

        # a running ask, held by the LLM; two calls queued behind it
        call(s, 3, "ask", {"question": "How does the application dispatch a request?",
                           "mode": "llm"}, "ta")
        wait_event(port, "start")
        call(s, 4, "status", {}, "tb")
        call(s, 5, "status", {}, "tc")
        call(s, 6, "search", {"query": "dispatch"})  # no token: hears nothing
        send(s, {"id": 7, "method": "ping"})
        check(s.next(s.responses, "ping")["id"] == 7, "ping answered after calls 4-6 were queued")
        write_files(root, 1)  # 300 changed files for call 4's update pass
        control(port, "release", {"name": "go"})
        answer(s, 3)
        files_b = answer(s, 4)["structuredContent"]["files"]
        answer(s, 5)
        answer(s, 6)
        by = drain(s)
        check(set(by) <= {"ta", "tb", "tc"}, "notifications only for tokens sent: %r" % sorted(by))
        check_increasing(by)
        check(files_b == files, "the same files after the rewrite: %d, %d" % (files_b, files))

        ta = by.get("ta", [])
        writing = kinds(ta, "writing the answer")
        check(writing, "ta: no progress while the LLM wrote: %r" % [p["message"] for p in ta])
        check(len(writing) <= len(ANSWER) // UNITS + 1, "ta: %d token reports" % len(writing))
        check(ready_count(ta, "ta") == files, "ta: ready count")

        for tok in ("tb", "tc"):  # tb runs the pass, tc waits behind it
            ps = by.get(tok, [])
            idx = kinds(ps, "indexing")
            check(1 <= len(idx) <= STEPS + 1,
                  "%s: %d notifications for a %d-file pass" % (tok, len(idx), N_FILES))
            check(ready_count(ps, tok) == files, "%s: ready says %s, status %d" %
                  (tok, [p["message"] for p in kinds(ps, "index ready")], files))
            check(ps[-1]["message"].startswith("index ready"), "%s: ready comes last" % tok)
        s.proc.stdin.close()
        check(s.proc.wait(timeout=120) == 0, "exit code 0")
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        s.err.close()

    # a restart on an index that needs no work
    s = start(bin_path, root, os.path.join(tmp, "stderr2"), port)
    try:
        call(s, 2, "status", {}, "td")
        check(answer(s, 2)["structuredContent"]["files"] == files, "the same index")
        td = drain(s).get("td", [])
        check(ready_count(td, "td") == files, "td: ready says %r, status %d" % (td, files))
        s.proc.stdin.close()
        check(s.proc.wait(timeout=120) == 0, "exit code 0")
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        s.err.close()


def main(argv):
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="coderag-mcp-progress.")
    ok = False
    try:
        script = {"actions": {"chat": [{"hold": "go", "content": ANSWER, "chunk": 1}]}}
        with fake_llm(script) as port:
            scenario(bin_path, fixtures, tmp, port)
        ok = True
    except Failure as e:
        print("FAIL: %s" % e)
    finally:
        for name in ("stderr1", "stderr2"):
            path = os.path.join(tmp, name)
            if not os.path.exists(path):
                continue
            err = open(path, encoding="utf-8", errors="replace").read()
            if "AddressSanitizer" in err or "runtime error" in err or "LeakSanitizer" in err:
                ok = False
                print("sanitizer report in %s" % name)
            if not ok:
                sys.stderr.write("---- server %s\n%s\n" % (name, err[-3000:]))
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s mcp progress" % ("ok  " if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
