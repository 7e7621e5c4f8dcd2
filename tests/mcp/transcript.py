#!/usr/bin/env python3
"""Replays MCP transcripts (tests/mcp/transcripts/*.txt) against the real
`coderag mcp` over pipes, on a copy of tests/fixtures/longdef.

    transcript.py CODERAG_BIN FIXTURES_DIR

Transcript lines:
  > JSON            sent as one line ("\\n" appended)
  >raw TEXT         sent as is, with \\r \\n \\t \\xNN escapes
  >long N ID        a tools/call line (id ID) padded to N bytes with spaces
  >question N ID    a tools/call of ask (id ID) whose question is N bytes
  < JSON            the next response (progress notifications aside) matches:
                    objects by the keys given, "*" anything, "~re" a regex
  <progress JSON    a notifications/progress has arrived matching JSON
  close             closes the server's stdin
  <exit N           the server exits with status N
Every line the server writes must be one JSON-RPC 2.0 object, and nothing
but protocol may reach stdout.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import queue

HERE = os.path.dirname(os.path.abspath(__file__))


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def match(pattern, actual):
    if pattern == "*":
        return True
    if isinstance(pattern, str) and pattern.startswith("~"):
        return isinstance(actual, str) and re.search(pattern[1:], actual) is not None
    if isinstance(pattern, dict):
        return isinstance(actual, dict) and all(k in actual and match(v, actual[k]) for k, v in pattern.items())
    if isinstance(pattern, list):
        return (isinstance(actual, list) and len(pattern) == len(actual)
                and all(match(p, a) for p, a in zip(pattern, actual)))
    return type(pattern) is type(actual) and pattern == actual


def unescape(s):
    return re.sub(r"\\(r|n|t|x[0-9a-fA-F]{2}|\\)",
                  lambda m: {"r": "\r", "n": "\n", "t": "\t", "\\": "\\"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)),
                  s).encode("latin-1")


class Server:
    def __init__(self, bin_path, root, errpath, extra=()):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODERAG_")}
        env["CODERAG_LOG"] = "info"
        self.err = open(errpath, "wb")
        self.proc = subprocess.Popen([bin_path, "mcp", "--root", root, *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, env=env)
        self.responses = queue.Queue()
        self.progress = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        try:
            for line in self.proc.stdout:
                check(line.endswith(b"\n"), "a message without its newline: %r" % line[:200])
                msg = json.loads(line.decode("utf-8"))
                check(isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", "not JSON-RPC 2.0: %r" % line[:200])
                if msg.get("method") == "notifications/progress":
                    self.progress.put(msg)
                else:
                    check("id" in msg and ("result" in msg) != ("error" in msg), "not a response: %r" % msg)
                    self.responses.put(msg)
        except Exception as e:  # noqa: BLE001 - reported by the next wait
            self.responses.put({"_broken": "%s: %s" % (type(e).__name__, e)})
        self.responses.put({"_eof": True})

    def send(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next(self, q, what):
        try:
            msg = q.get(timeout=120)
        except queue.Empty:
            raise Failure("no %s within 120 s" % what) from None
        check("_broken" not in msg, "bad output: %s" % msg.get("_broken"))
        check("_eof" not in msg, "the server closed stdout, expecting %s" % what)
        return msg


def run(bin_path, fixtures, path):
    tmp = tempfile.mkdtemp(prefix="coderag-mcp-tr.")
    root = os.path.join(tmp, "ws")
    shutil.copytree(os.path.join(fixtures, "longdef"), root)
    errpath = os.path.join(tmp, "stderr")
    s = Server(bin_path, root, errpath)
    ok = False
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for no, line in enumerate(lines, 1):
            line = line.replace("${ROOT}", root)
            if not line.strip() or line.startswith("#"):
                continue
            try:
                if line.startswith(">raw "):
                    s.send(unescape(line[5:]))
                elif line.startswith(">long "):
                    n, rid = (int(x) for x in line[6:].split())
                    head = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"status"}' % rid
                    s.send(head.encode() + b" " * (n - len(head) - 1) + b"}\n")
                elif line.startswith(">question "):
                    n, rid = (int(x) for x in line[10:].split())
                    msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                           "params": {"name": "ask", "arguments": {"question": "q" * n}}}
                    s.send(json.dumps(msg).encode() + b"\n")
                elif line.startswith("> "):
                    s.send(line[2:].encode("utf-8") + b"\n")
                elif line.startswith("<progress "):
                    got = s.next(s.progress, "progress")
                    check(match(json.loads(line[10:]), got), "got %s" % json.dumps(got)[:600])
                elif line.startswith("< "):
                    got = s.next(s.responses, "a response")
                    check(match(json.loads(line[2:]), got), "got %s" % json.dumps(got)[:1500])
                elif line == "close":
                    s.proc.stdin.close()
                elif line.startswith("<exit "):
                    code = s.proc.wait(timeout=120)
                    check(code == int(line[6:]), "exit code %s, expected %s" % (code, line[6:]))
                else:
                    raise Failure("bad directive")
            except Failure as e:
                raise Failure("%s:%d: %s" % (os.path.basename(path), no, e)) from None
        ok = True
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        s.err.close()
        err = open(errpath, encoding="utf-8", errors="replace").read()
        if "AddressSanitizer" in err or "runtime error" in err or "LeakSanitizer" in err:
            ok = False
            print("sanitizer report in %s" % path)
        if not ok:
            sys.stderr.write("---- server stderr\n%s\n" % err[-4000:])
        shutil.rmtree(tmp, ignore_errors=True)
    return ok


def main(argv):
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    tdir = os.path.join(HERE, "transcripts")
    passed = failed = 0
    for name in sorted(f for f in os.listdir(tdir) if f.endswith(".txt")):
        try:
            ok = run(bin_path, fixtures, os.path.join(tdir, name))
        except Failure as e:
            print("FAIL %s: %s" % (name, e))
            ok = False
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
