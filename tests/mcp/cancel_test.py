#!/usr/bin/env python3
"""MCP cancellation (notifications/cancelled) against the real `coderag mcp`
with a fake LLM (tests/fake_openai.py) that holds its answer:

  - a running `ask` is stopped (the fake sees its connection close) and gets
    no answer;
  - a call queued behind it and cancelled is never started (no progress)
    nor answered;
  - the next call is answered as usual, and the server exits 0.

    cancel_test.py CODERAG_BIN FIXTURES_DIR

Deterministic: the queued call is cancelled before the running one, and the
running one cannot end before its own cancellation closes the LLM request.
"""
import json
import os
import shutil
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lsp"))
from transcript import Failure, Server, check  # noqa: E402
from lsp_client import fake_llm  # noqa: E402


def control(port, what, body):
    req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (port, what),
                                 data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=300) as f:
        return json.load(f)


def wait_event(port, kind):
    r = control(port, "wait", {"kind": kind, "count": 1, "timeout_s": 240})
    check(r["ok"], "fake LLM: no %r event, saw %r" % (kind, r["events"]))


def send(s, msg):
    s.send(json.dumps(dict(msg, jsonrpc="2.0")).encode() + b"\n")


def call(s, rid, name, args, token=None):
    params = {"name": name, "arguments": args}
    if token:
        params["_meta"] = {"progressToken": token}
    send(s, {"id": rid, "method": "tools/call", "params": params})


def main(argv):
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="coderag-mcp-cancel.")
    root = os.path.join(tmp, "ws")
    shutil.copytree(os.path.join(fixtures, "longdef"), root)
    errpath = os.path.join(tmp, "stderr")
    ok = False
    s = None
    try:
        with fake_llm({"actions": {"chat": [{"hold": "never"}]}}) as port:
            s = Server(bin_path, root, errpath, ["--llm-url", "http://127.0.0.1:%d" % port])
            send(s, {"id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}}})
            check(s.next(s.responses, "initialize")["id"] == 1, "initialize answered")
            send(s, {"method": "notifications/initialized"})
            call(s, 2, "ask", {"question": "How does the application dispatch a request?",
                               "mode": "llm"})
            wait_event(port, "start")  # call 2 is running, held by the fake
            call(s, 3, "status", {}, "t3")  # queued behind it
            send(s, {"method": "notifications/cancelled", "params": {"requestId": 3}})
            send(s, {"method": "notifications/cancelled", "params": {"requestId": 2}})
            wait_event(port, "closed")  # the LLM request was abandoned
            call(s, 4, "status", {})
            r = s.next(s.responses, "the status call's answer")
            check(r.get("id") == 4 and "result" in r, "next answer is call 4's: %r" % r)
            s.proc.stdin.close()
            check(s.proc.wait(timeout=120) == 0, "exit code 0")
            while True:
                m = s.responses.get(timeout=60)
                if "_eof" in m:
                    break
                raise Failure("unexpected message after the cancels: %r" % m)
            while not s.progress.empty():  # a skipped call is not started: no "index ready"
                m = s.progress.get()
                check(m["params"]["progressToken"] != "t3", "progress for the cancelled call: %r" % m)
            ok = True
    except Failure as e:
        print("FAIL: %s" % e)
    finally:
        if s:
            if s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait()
            s.err.close()
            err = open(errpath, encoding="utf-8", errors="replace").read()
            if "AddressSanitizer" in err or "runtime error" in err or "LeakSanitizer" in err:
                ok = False
                print("sanitizer report")
            if not ok:
                sys.stderr.write("---- server stderr\n%s\n" % err[-4000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s mcp cancel" % ("ok  " if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
