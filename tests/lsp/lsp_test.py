#!/usr/bin/env python3
"""Protocol tests of `coderag lsp` against the real binary, through pipes.

    lsp_test.py CODERAG_BIN FIXTURE_DIR GROUP...

Groups: transcripts (every tests/lsp/*.txt), progress, save, watch, storm,
eof, llm, multiroot, nav, bench. Each test runs a fresh server on a copy of a
fixture repository. Python 3 standard library only. The harness is
lsp_client.py's; save, watch, storm and multiroot are lsp_index_test.py's,
nav lsp_nav_test.py's.

Transcript files (curl's tests/data in spirit): one directive per line,
`#` comments, ${ROOT}, ${ROOT_URI} and ${WS} substituted:
  > JSON            send one framed message (the text after "> " verbatim)
  >raw TEXT         send bytes as they are, with \\r, \\n and \\\\ escapes
  < PATTERN         the next message that is not a server notification or
                    request must match PATTERN (JSON): objects match when
                    every key of the pattern matches, "*" matches anything,
                    "~REGEX" a string the regex finds, other values exactly
  <method PATTERN   the next server notification or request matching
                    PATTERN arrives (others on the way are skipped)
  wait-ready        poll coderag/status until it says ready
  close             close the server's stdin
  <exit N           the server exits with code N
Server requests are answered automatically (null, as editors do).
"""
import json
import os
import re
import subprocess
import sys
import time
from lsp_client import (
    Failure, HERE, TIMEOUT, check, check_sanitizers, context_symbols, fake_llm, file_uri, frame,
    match, run_case, run_groups)
import lsp_index_test
import lsp_nav_test


# ---------------------------------------------------------------- transcripts

def unescape(text):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            out.append({"r": "\r", "n": "\n", "\\": "\\"}.get(n, "\\" + n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def run_transcript(env, path):
    s = env.server()
    subst = {"${ROOT}": env.root, "${ROOT_URI}": file_uri(env.root), "${WS}": env.dir}
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        for k, v in subst.items():
            line = line.replace(k, v)
        if not line.strip() or line.startswith("#"):
            continue
        where = "%s:%d" % (os.path.basename(path), no)
        try:
            if line.startswith(">raw "):
                s.send_raw(unescape(line[5:]).encode("utf-8"))
            elif line.startswith("> "):
                s.send_raw(frame(line[2:]))
            elif line.startswith("<method "):
                s.wait_method(json.loads(line[8:]))
            elif line.startswith("<exit "):
                code = s.wait_exit()
                check(code == int(line[6:]), "exit code %s, expected %s" % (code, line[6:]))
            elif line.startswith("< "):
                pattern = json.loads(line[2:])
                got = s.next_response()
                check(match(pattern, got), "got %s" % json.dumps(got)[:1500])
            elif line == "wait-ready":
                s.wait_ready()
            elif line == "close":
                s.close_input()
            else:
                raise Failure("bad directive")
        except Failure as e:
            raise Failure("%s: %s" % (where, e)) from None
    check_sanitizers(s)


def t_transcripts(env_factory):
    files = sorted(f for f in os.listdir(HERE) if f.endswith(".txt"))
    check(files, "no transcripts found")
    for name in files:
        run_case("transcript " + name, env_factory,
                 lambda env, n=name: run_transcript(env, os.path.join(HERE, n)))


# ---------------------------------------------------------------- scenarios

def t_progress(env):
    """Work-done progress around the first build, and asks while indexing."""
    # A workspace big enough that the first build takes a while.
    for p in range(8):
        for m in range(150):
            env.write("pkg%d/m%d.py" % (p, m),
                      '"""Module %d."""\nimport os\n\n\nclass Widget%d_%d:\n    """A widget."""\n\n'
                      '    def grow(self, n):\n        return n + %d\n\n\ndef helper_%d_%d(x):\n'
                      '    return Widget%d_%d().grow(x)\n' % (m, p, m, m, p, m, p, m))
    s = env.server()
    s.initialize(env.root, capabilities={"window": {"workDoneProgress": True}})
    rid = s.request("coderag/ask", {"question": "How does a widget grow?"})
    early = s.wait_response(rid)
    check("result" in early, "ask during the first build: %r" % early)
    early = early["result"]
    # An ask during the first build waits for it (docs/protocol.md, "Asking
    # during the first index"): answered from the whole index, after the
    # build's progress ended.
    ended_first = any(m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end"
                      for m in s.server_msgs)
    check(early.get("indexing") is False and ended_first and early["citations"],
          "an ask during the first build waits for it: %r" % early.get("indexing"))
    create = s.wait_method({"method": "window/workDoneProgress/create"})
    token = create["params"]["token"]
    begin = s.wait_method({"method": "$/progress", "params": {"token": token, "value": {"kind": "begin"}}})
    title = begin["params"]["value"]["title"]
    check("Indexing" in title and "index" in title.lower(), "begin title %r" % title)
    end = s.wait_method({"method": "$/progress", "params": {"token": token, "value": {"kind": "end"}}})
    reports = [m for m in s.server_msgs if m.get("method") == "$/progress"
               and m["params"]["value"]["kind"] == "report"]
    for r in reports:
        v = r["params"]["value"]
        check(0 <= v["percentage"] <= 100 and re.match(r"\d+/\d+ files", v["message"]),
              "report %r" % v)
    pcts = [r["params"]["value"]["percentage"] for r in reports]
    check(pcts == sorted(pcts), "percentages go up: %r" % pcts)
    st = s.wait_ready()
    check(st["files"] == 1200 + 5 and st["indexed"] == st["total"] == st["files"], "status %r" % st)
    late = s.ask("How does a widget grow?")
    check(late["indexing"] is False and late["citations"], "ask after the build: %r" % late.get("indexing"))
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    print("  progress: %d reports, end message %r" % (len(reports), end["params"]["value"].get("message")))
    # Reopened, the index is whole: the pass checks it and says so, never
    # "Indexing" (issue 27: Neovim said "Indexing ..." on every open).
    s = env.server()
    s.initialize(env.root, capabilities={"window": {"workDoneProgress": True}})
    begin = s.wait_method({"method": "$/progress", "params": {"value": {"kind": "begin"}}})
    title = begin["params"]["value"]["title"]
    check(title.startswith("Checking the index of") and "Indexing" not in title, "title %r" % title)
    end = s.wait_method({"method": "$/progress", "params": {"value": {"kind": "end"}}})
    check(end["params"]["value"]["message"].startswith("up to date: 1205 files"), "end %r" % end)
    for r in [m for m in s.server_msgs if m.get("method") == "$/progress"]:
        v = r["params"]["value"]
        check(v["kind"] != "report" or re.match(r"checking \d+/\d+ files", v["message"]),
              "report %r" % v)
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_no_progress(env):
    """Without the client capability: no create request, status still works."""
    s = env.server()
    s.initialize(env.root)
    st = s.wait_ready()
    check(st["files"] == 5 and st["chunks"] > 0, "status %r" % st)
    check(not any(m.get("method") in ("window/workDoneProgress/create", "$/progress",
                                      "client/registerCapability") for m in s.server_msgs),
          "no progress or registration without the capabilities")
    check(s.shutdown_exit() == 0, "exit code")


def t_eof(env):
    """A client that goes away: clean exits, also with work in flight."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    for i in range(20):
        s.request("coderag/ask", {"question": "tax order total %d" % i})
        s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/models.py")}})
    s.close_input()
    check(s.wait_exit() == 1, "EOF without shutdown exits with 1")
    check_sanitizers(s)

    s = env.server()
    s.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
    s.close_input()
    check(s.wait_exit() == 1, "header without body, then EOF")
    check_sanitizers(s)

    # A client that stops reading: its end of our output closes.
    env_vars = {k: v for k, v in os.environ.items() if not k.startswith("CODERAG_")}
    p = subprocess.Popen([env.bin, "lsp"], cwd=env.dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env_vars)
    p.stdin.write(frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"rootUri": file_uri(env.root), "capabilities": {}}})))
    p.stdin.flush()
    p.stdout.readline()
    p.stdout.close()
    # Requests keep coming (their input stays open) until the server, whose
    # replies cannot be written, exits; it must not wait for the input's end.
    deadline = time.monotonic() + TIMEOUT
    rid = 2
    try:
        while p.poll() is None and time.monotonic() < deadline:
            p.stdin.write(frame(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "coderag/status"})))
            p.stdin.flush()
            rid += 1
            time.sleep(0.01)
    except OSError:  # it exited and its input closed
        pass
    try:
        code = p.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        try:
            p.stdin.close()
        except OSError:
            pass
    check(code is not None, "no exit after the output closed")
    err = p.stderr.read().decode("utf-8", "replace")
    check(code in (1, 2), "output closed: exit %s" % code)
    check("AddressSanitizer" not in err and "runtime error" not in err, "sanitizers: " + err[-2000:])


def t_llm(env):
    """Cancellation of an LLM ask in flight, and endpoint trouble shown once
    (tests/fake_openai.py stands in for the LLM: a slow answer, then errors)."""
    script = {"actions": {"chat": [{"delay_ms": 3600 * 1000}, {"status": 400, "times": 100}]}}
    with fake_llm(script) as port:
        s = env.server()
        s.initialize(env.root, options={"llm": {"url": "http://127.0.0.1:%d" % port}})
        s.wait_ready()
        rid = s.request("coderag/ask", {"question": "How is tax applied?", "mode": "llm"})
        import urllib.request  # the fake says when the LLM request arrived (no sleep)
        w = json.load(urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/_control/wait" % port, method="POST",
            data=json.dumps({"kind": "start", "count": 1, "timeout_s": TIMEOUT}).encode()), timeout=TIMEOUT + 5))
        check(w["ok"], "the LLM request started")
        t0 = time.monotonic()
        s.notify("$/cancelRequest", {"id": rid})
        r = s.wait_response(rid)
        took = time.monotonic() - t0
        print("  llm: cancelled ask answered after %.2f s (cancel sent once the LLM request arrived)" % took)
        check(r.get("error", {}).get("code") == -32800, "cancelled: %r" % r)
        w = json.load(urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%d/_control/wait" % port, method="POST",
            data=json.dumps({"kind": "closed", "count": 1, "timeout_s": TIMEOUT}).encode()), timeout=TIMEOUT + 5))
        check(w["ok"], "the LLM connection was closed by the cancel (not answered after 20 s)")
        check(s.call("coderag/status")["result"]["state"] == "ready", "alive after the cancel")

        # The LLM now fails: auto falls back to extractive, llm is an error,
        # and the user hears about it once.
        for _ in range(3):
            r = s.ask("How is tax applied?")
            check(r["mode"] == "extractive" and r["citations"], "fallback answer")
        r = s.call("coderag/ask", {"question": "How is tax applied?", "mode": "llm"})
        check(r.get("error", {}).get("code") == -32803, "mode llm fails: %r" % r)
        s.call("coderag/status")
        shown = [m for m in s.server_msgs if m.get("method") == "window/showMessage"]
        check(len(shown) == 1, "one showMessage, got %d" % len(shown))
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_bench(env):
    """The benchmark client end to end: ../shared/bench/lsp_ask.py."""
    repo = os.path.abspath(os.path.join(HERE, "..", ".."))
    script = os.path.join(repo, "..", "shared", "bench", "lsp_ask.py")
    if not os.path.exists(script):
        print("  SKIP bench: %s not found (CI has ../shared beside the repository)" % script)
        return
    qs = os.path.join(env.dir, "q.jsonl")
    with open(qs, "w") as f:
        for i, q in enumerate(["How is tax applied to an order total?",
                               "Which error does a declined card raise?",
                               "How does the gateway charge an order?"]):
            f.write(json.dumps({"id": "shop-%d" % i, "corpus": "shop", "question": q}) + "\n")
    out = os.path.join(env.dir, "results.jsonl")
    meta = os.path.join(env.dir, "meta.json")
    p = subprocess.run([sys.executable, script, "--server", "%s lsp" % env.bin, "--root", env.root, qs,
                        "--corpus", "shop", "-o", out, "--meta", meta, "--ready-timeout", "600",
                        "--ask-timeout", "600"], capture_output=True, text=True, cwd=env.dir)
    check(p.returncode == 0, "lsp_ask.py exit %d: %s" % (p.returncode, p.stderr))
    with open(meta) as f:
        m = json.load(f)
    check(m["exit_code"] == 0 and m["errors"] == 0 and m["asked"] == 3, "meta %r" % m)
    with open(out) as f:
        rows = [json.loads(line) for line in f]
    check(all(r["result"]["citations"] and r["result"]["context"] for r in rows), "results cite")
    check("apply_tax" in context_symbols(rows[0]["result"]), "first answer")
    print("  bench: ready via %s in %.0f ms, median ask %.1f ms" % (m["ready_via"], m["ready_ms"], m["wall_p50_ms"]))


# ---------------------------------------------------------------- main

GROUPS = {
    "transcripts": t_transcripts,
    "progress": [t_progress, t_no_progress],
    "eof": [t_eof],
    "llm": [t_llm],  # explanations: lsp_stream_test.py
    "bench": [t_bench],
}
GROUPS.update(lsp_index_test.GROUPS)
GROUPS.update(lsp_nav_test.GROUPS)


def main(argv):
    return run_groups(argv, GROUPS, __doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
