#!/usr/bin/env python3
"""Protocol tests of `coderag lsp` against the real binary, through pipes.

    lsp_test.py CODERAG_BIN FIXTURE_DIR GROUP...

Groups: transcripts (every tests/lsp/*.txt), progress, save, watch, storm,
eof, llm, multiroot, nav, bench. Each test runs a fresh server on a copy of a
fixture repository. Python 3 standard library only.

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
import contextlib
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from urllib.parse import quote

# A last-resort bound on any single wait (a hung server fails instead of
# blocking the suite); never a pass condition: every wait ends as soon as the
# state it waits for is observed.
TIMEOUT = float(os.environ.get("LSP_TEST_TIMEOUT", "300"))
HERE = os.path.dirname(os.path.abspath(__file__))


class Failure(Exception):
    pass


def file_uri(path):
    return "file://" + quote(os.path.abspath(path))


def frame(body):
    if isinstance(body, str):
        body = body.encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def match(pattern, actual):
    if callable(pattern):
        return pattern(actual)
    if pattern == "*":
        return True
    if isinstance(pattern, str) and pattern.startswith("~"):
        return isinstance(actual, str) and re.search(pattern[1:], actual) is not None
    if isinstance(pattern, dict):
        return isinstance(actual, dict) and all(k in actual and match(v, actual[k])
                                                for k, v in pattern.items())
    if isinstance(pattern, list):
        return (isinstance(actual, list) and len(pattern) == len(actual)
                and all(match(p, a) for p, a in zip(pattern, actual)))
    return type(pattern) is type(actual) and pattern == actual


class Server:
    """A coderag lsp child with a reader thread; server requests are
    answered with null and recorded, like notifications."""

    def __init__(self, bin_path, cwd, args=(), env_extra=None, stderr_path=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODERAG_")}
        env["CODERAG_LOG"] = os.environ.get("LSP_TEST_LOG", "info")
        env.update(env_extra or {})
        self.stderr_path = stderr_path or os.path.join(cwd, "server.stderr")
        self.errf = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen([bin_path, "lsp", *args], cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errf, env=env)
        self.inbox = queue.Queue()
        self.server_msgs = []   # notifications and requests from the server, in order
        self.responses = {}
        self.next_id = 1000
        self.answer_requests = True
        self.lock = threading.Lock()
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        raise EOFError
                    if not line.endswith(b"\r\n"):
                        raise ValueError("header line without CRLF: %r" % line)
                    line = line[:-2]
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() != "content-length":
                        raise ValueError("unexpected header %r" % line)
                    length = int(value)
                if length is None:
                    raise ValueError("no Content-Length from the server")
                body = out.read(length)
                if len(body) != length:
                    raise EOFError
                msg = json.loads(body.decode("utf-8"))
                if msg.get("jsonrpc") != "2.0":
                    raise ValueError("message without jsonrpc 2.0: %r" % msg)
                if "method" in msg and "id" in msg and self.answer_requests:
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                self.inbox.put(msg)
        except Exception as e:  # noqa: BLE001 - the reader reports whatever ended it
            self.inbox.put({"_eof": "%s: %s" % (type(e).__name__, e)})

    # ---- sending
    def send_raw(self, data):
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(frame(json.dumps(msg)))

    def request(self, method, params=None, rid=None):
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        m = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        return rid

    def notify(self, method, params=None):
        m = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)

    def close_input(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    # ---- receiving
    def _get(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure("timed out waiting for the server")
        try:
            msg = self.inbox.get(timeout=left)
        except queue.Empty:
            raise Failure("timed out waiting for the server") from None
        if "_eof" in msg:
            self.inbox.put(msg)
            raise Failure("server output ended (%s), exit code %s" % (msg["_eof"], self.proc.poll()))
        return msg

    def next_response(self, timeout=TIMEOUT):
        """The next message that is a response (server messages recorded)."""
        if self.responses:
            return self.responses.pop(next(iter(self.responses)))
        deadline = time.monotonic() + timeout
        while True:
            msg = self._get(deadline)
            if "method" in msg:
                self.server_msgs.append(msg)
                continue
            return msg

    def wait_response(self, rid, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while rid not in self.responses:
            msg = self._get(deadline)
            if "method" in msg:
                self.server_msgs.append(msg)
            else:
                self.responses[msg.get("id")] = msg
        return self.responses.pop(rid)

    def wait_method(self, pattern, timeout=TIMEOUT):
        """A server message matching pattern, looking at recorded ones first."""
        for i, m in enumerate(self.server_msgs):
            if match(pattern, m):
                del self.server_msgs[i]
                return m
        deadline = time.monotonic() + timeout
        while True:
            msg = self._get(deadline)
            if "method" not in msg:
                self.responses[msg.get("id")] = msg
            elif match(pattern, msg):
                return msg
            else:
                self.server_msgs.append(msg)

    def call(self, method, params=None, timeout=TIMEOUT):
        return self.wait_response(self.request(method, params), timeout)

    def wait_exit(self, timeout=TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure("server did not exit within %.0f s" % timeout) from None

    def stderr(self):
        if not self.errf.closed:
            self.errf.flush()
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.errf.close()

    # ---- LSP conveniences
    def initialize(self, root, capabilities=None, options=None, folders=None):
        params = {"processId": os.getpid(), "rootUri": file_uri(root),
                  "capabilities": capabilities if capabilities is not None else {}}
        if options is not None:
            params["initializationOptions"] = options
        if folders is not None:
            params["workspaceFolders"] = [{"uri": file_uri(f), "name": os.path.basename(f)}
                                          for f in folders]
        r = self.call("initialize", params)
        if "result" not in r:
            raise Failure("initialize failed: %r" % r)
        self.notify("initialized", {})
        return r["result"]

    def wait_ready(self, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = self.call("coderag/status", {})
            st = r.get("result", {}).get("state")
            if st == "ready":
                return r["result"]
            if st == "error":
                raise Failure("indexing failed: %r" % r)
            time.sleep(0.02)
        raise Failure("not ready after %.0f s" % timeout)

    def ask(self, question, **params):
        params["question"] = question
        r = self.call("coderag/ask", params)
        if "result" not in r:
            raise Failure("ask %r failed: %r" % (question, r))
        return r["result"]

    def shutdown_exit(self):
        r = self.call("shutdown")
        if r.get("result", "missing") is not None:
            raise Failure("shutdown: %r" % r)
        self.notify("exit")
        return self.wait_exit()


class Env:
    """A temporary folder with a copy of a fixture repository."""

    def __init__(self, bin_path, fixtures, name="shop"):
        self.bin = bin_path
        self.fixtures = fixtures
        self.dir = tempfile.mkdtemp(prefix="coderag-lsp.")
        self.root = os.path.join(self.dir, name)
        if name in os.listdir(fixtures):
            shutil.copytree(os.path.join(fixtures, name), self.root)
        else:
            os.makedirs(self.root)
        self.servers = []

    def server(self, **kw):
        s = Server(self.bin, self.dir, **kw)
        self.servers.append(s)
        return s

    def write(self, rel, text, mode="w"):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, mode, encoding="utf-8") as f:
            f.write(text)
        return path

    def uri(self, rel):
        return file_uri(os.path.join(self.root, rel))

    def close(self, ok):
        for s in self.servers:
            s.kill()
            err = s.stderr()
            if not ok or "AddressSanitizer" in err or "runtime error" in err:
                sys.stderr.write("---- server stderr (%s)\n%s\n" % (s.stderr_path, err[-6000:]))
        shutil.rmtree(self.dir, ignore_errors=True)


def check(cond, what):
    if not cond:
        raise Failure(what)


def check_sanitizers(s):
    err = s.stderr()
    check("AddressSanitizer" not in err and "LeakSanitizer" not in err
          and "runtime error" not in err, "sanitizer report in server stderr")


def context_symbols(result):
    return [c["symbol"] for c in result["context"]]


def context_paths(result):
    return {c["path"] for c in result["context"]}


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
    # The build ends (state ready) before its progress "end" is written, so
    # an answer that arrives before the "end" was computed during the build
    # and must say so. (An answer after the "end" -- a build faster than one
    # message, which no machine manages for 1,200 files -- proves nothing.)
    ended_first = any(m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end"
                      for m in s.server_msgs)
    check(early.get("indexing") is True or ended_first,
          "an ask during the first build says indexing: %r" % early.get("indexing"))
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


def t_save(env):
    """didSave: a function added and saved is found by the next ask."""
    s = env.server()
    caps = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    s.initialize(env.root, capabilities=caps)
    reg = s.wait_method({"method": "client/registerCapability"})
    watchers = reg["params"]["registrations"][0]
    check(watchers["method"] == "workspace/didChangeWatchedFiles" and
          watchers["registerOptions"]["watchers"][0]["globPattern"] == "**/*.py", "registration %r" % reg)
    s.wait_ready()
    uri = env.uri("shop/models.py")
    with open(os.path.join(env.root, "shop/models.py"), encoding="utf-8") as f:
        text = f.read()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                       "version": 1, "text": text}})
    r = s.ask("frobnicate widgets count")
    check("frobnicate_widgets" not in context_symbols(r), "not there before the save")
    text += '\n\ndef frobnicate_widgets(count):\n    """Frobnicates widgets."""\n    return count * 2\n'
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"text": text}]})
    env.write("shop/models.py", text)
    t0 = time.perf_counter()
    s.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    r = s.ask("frobnicate widgets count")
    ms = (time.perf_counter() - t0) * 1000
    check(context_symbols(r)[:1] == ["frobnicate_widgets"], "found after the save: %r" % context_symbols(r))
    check(any(c["symbol"] == "frobnicate_widgets" and c["path"] == "shop/models.py"
              for c in r["citations"]), "cited")

    # A 1,000-line module: save-to-queryable.
    lines = ['"""A big module."""', ""]
    n = 0
    while len(lines) < 995:
        lines += ["def function_%d(a, b):" % n, '    """Adds %d."""' % n,
                  "    total = a + b + %d" % n, "    return total", "", ""]
        n += 1
    env.write("shop/big.py", "\n".join(lines) + "\n")
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/big.py")}})
    s.ask("function_3 adds")
    env.write("shop/big.py", "\n".join(lines) + "\n\ndef zanzibar_quokka(x):\n    return x\n")
    t0 = time.perf_counter()
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/big.py")}})
    r = s.ask("zanzibar quokka")
    big_ms = (time.perf_counter() - t0) * 1000
    check(context_symbols(r)[:1] == ["zanzibar_quokka"], "big file update found: %r" % context_symbols(r))
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    took = re.findall(r"re-indexed shop/big.py in ([\d.]+) ms", s.stderr())
    print("  save: small file save->answer %.1f ms; 1,000-line file save->answer %.1f ms "
          "(server: re-indexed in %s ms)" % (ms, big_ms, took[-1] if took else "?"))


def t_save_outside(env):
    """didSave, watched-file events and hover with URIs that leave the
    workspace (a percent-encoded "..", "%2F" separators, a symlink to a file
    outside): nothing outside is read or indexed."""
    outside = os.path.join(env.dir, "outside")
    os.makedirs(outside)
    secret = os.path.join(outside, "secret.py")
    with open(secret, "w", encoding="utf-8") as f:
        # line 0 names an indexed symbol: a hover that read this file answers
        f.write('apply_tax = "outside the workspace"\n\n\n'
                'def exfiltrate_secret_token(vault):\n    """Leaks the secret token."""\n'
                '    return vault\n')
    os.symlink(secret, os.path.join(env.root, "shop", "leak.py"))
    s = env.server()
    s.initialize(env.root)
    files = s.wait_ready()["files"]
    root = quote(os.path.abspath(env.root))
    uris = ["file://" + root + "/shop/%2e%2e/%2e%2e/outside/secret.py",
            "file://" + root + "/shop/%2E%2E/%2E%2E/outside/secret.py",
            "file://" + root + "/shop/.%2e/%2e./outside/secret.py",
            "file://" + root + "/shop%2F..%2F..%2Foutside/secret.py",
            "file://" + root + "/shop%2f%2e%2e%2f%2e%2e%2foutside%2fsecret.py",
            "file://" + root + "/shop/../../outside/secret.py",
            "file://localhost" + root + "/shop/%2e%2e/%2e%2e/outside/secret.py",
            "file://" + root + "/%2e%2e/outside/secret.py",
            env.uri("shop/leak.py")]
    for uri in uris:
        s.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": t} for t in (1, 2)]})
        h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}})
        check("result" in h and h["result"] is None, "hover read %s: %r" % (uri, h))
    # A save inside, after them: the ask below waits for every queued update.
    env.write("shop/fresh.py", 'def polish_the_brass(cloth):\n    """Polishes brass."""\n    return cloth\n')
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/fresh.py")}})
    r = s.ask("polish the brass")
    check(context_symbols(r)[:1] == ["polish_the_brass"], "the save inside counts: %r" % context_symbols(r))
    r = s.ask("exfiltrate the secret token from the vault")
    check("exfiltrate_secret_token" not in context_symbols(r) and
          not any("outside" in p or "secret" in p or "leak" in p for p in context_paths(r)),
          "nothing outside indexed: %r" % context_paths(r))
    # counted when the worker is idle: every update above is in the count it shows first
    st = wait_status(s, lambda st: st["files"] > files, "fresh.py counted")
    check(st["files"] == files + 1, "one file more (fresh.py): %d -> %d" % (files, st["files"]))
    check("re-indexed shop/fresh.py" in s.stderr(), "the save was applied")
    # (shop/leak.py is re-indexed as what it is to the indexer: a link out, so no file)
    check(not re.search(r"re-index\w* \S*(outside|secret)", s.stderr()), "no re-index outside")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def wait_status(s, cond, what):
    """Polls coderag/status (its counts follow updates when the server is idle)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        st = s.call("coderag/status")["result"]
        if cond(st):
            return st
        check(time.monotonic() < deadline, "%s: %r" % (what, st))
        time.sleep(0.02)


def t_watch(env):
    """didChangeWatchedFiles: deletions, creations and a folder removed."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    r = s.ask("Which error does a declined card raise?")
    check("shop/errors.py" in context_paths(r), "errors.py answers first: %r" % context_paths(r))
    os.remove(os.path.join(env.root, "shop/errors.py"))
    s.notify("workspace/didChangeWatchedFiles",
             {"changes": [{"uri": env.uri("shop/errors.py"), "type": 3}]})
    r = s.ask("Which error does a declined card raise?")
    check("shop/errors.py" not in context_paths(r), "deleted file gone: %r" % context_paths(r))
    wait_status(s, lambda st: st["files"] == 4, "4 files left")

    env.write("shop/coupons.py", 'def redeem_coupon(code):\n    """Redeems a coupon code."""\n    return code\n')
    s.notify("workspace/didChangeWatchedFiles",
             {"changes": [{"uri": env.uri("shop/coupons.py"), "type": 1}]})
    r = s.ask("redeem a coupon code")
    check(context_symbols(r)[:1] == ["redeem_coupon"], "created file found: %r" % context_symbols(r))

    # A folder removed: one event for the folder, which is not a .py file.
    shutil.rmtree(os.path.join(env.root, "shop/payments"))
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": env.uri("shop/payments"), "type": 3}]})
    wait_status(s, lambda st: st["state"] == "ready" and st["files"] == 3, "folder removal rescanned")
    r = s.ask("charge the gateway")
    check(not any(p.startswith("shop/payments/") for p in context_paths(r)), "folder gone")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_storm(env):
    """A storm of didSave notifications while asks run: every ask answers,
    the last version wins, and the index passes its own check."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    base = {}
    for rel in ("shop/models.py", "shop/errors.py", "shop/payments/gateway.py"):
        with open(os.path.join(env.root, rel), encoding="utf-8") as f:
            base[rel] = f.read()
    ids = []
    for round_no in range(40):
        for rel in base:
            env.write(rel, base[rel] + "\n\ndef storm_round_%d_%s(x):\n    return x\n"
                      % (round_no, rel.split("/")[-1][:-3]))
            for _ in range(5):
                s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri(rel)}})
        ids.append(s.request("coderag/ask", {"question": "storm round %d" % round_no}))
    for rid in ids:
        r = s.wait_response(rid)
        check("result" in r and r["result"]["answer"], "ask during the storm: %r" % r)
    r = s.ask("storm_round_39_models")
    check(context_symbols(r)[:1] == ["storm_round_39_models"], "last version: %r" % context_symbols(r)[:3])
    check(not any(sym.startswith("storm_round_38") for sym in context_symbols(r)), "old versions gone")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    chk = subprocess.run([env.bin, "status", "--root", env.root, "--check"], capture_output=True, text=True)
    check(chk.returncode == 0, "index check after the storm: %s" % chk.stderr)


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


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@contextlib.contextmanager
def fake_llm(script):
    """tests/fake_openai.py on a free loopback port, scripted; yields the port."""
    fake = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "fake_openai.py"), "--watch-stdin",
                             "--script", json.dumps(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        yield int(fake.stdout.readline())
    finally:
        fake.stdin.close()
        fake.wait()


def fake_log(port):
    """The requests tests/fake_openai.py saw since its last script."""
    req = urllib.request.Request("http://127.0.0.1:%d/_control/log" % port, data=b"{}", method="POST")
    with urllib.request.urlopen(req, timeout=TIMEOUT) as f:
        return json.load(f)["requests"]


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


def t_multiroot(env):
    """Two workspace folders, one index each; asks go to the document's root."""
    other = os.path.join(env.dir, "other")
    os.makedirs(os.path.join(other, "zoo"))
    with open(os.path.join(other, "zoo", "animals.py"), "w") as f:
        f.write('def feed_the_penguins(fish):\n    """Feeds penguins."""\n    return fish\n')
    link = os.path.join(env.dir, "other-link")  # the client names it through a symbolic link
    os.symlink(other, link)
    s = env.server()
    s.initialize(env.root, folders=[env.root, link],
                 options={"indexDir": os.path.join(env.dir, "idx-first")})
    st = s.wait_ready()
    check(len(st["roots"]) == 2 and st["files"] == 6, "two roots: %r" % st)
    check(os.path.exists(os.path.join(env.dir, "idx-first", "index.db")), "indexDir used")
    check(os.path.exists(os.path.join(other, ".coderag", "index.db")), "second root's own index")
    r = s.ask("feed the penguins", textDocument={"uri": file_uri(os.path.join(link, "zoo/animals.py"))},
              position={"line": 0, "character": 0})
    check(context_symbols(r)[:1] == ["feed_the_penguins"], "second root answered: %r" % context_symbols(r))
    check(r["citations"][0]["uri"].startswith(file_uri(other)), "uri in the second root")
    with open(os.path.join(other, "zoo", "animals.py"), "a") as f:
        f.write('\n\ndef groom_the_otters(brush):\n    return brush\n')
    s.notify("textDocument/didSave", {"textDocument": {"uri": file_uri(os.path.join(link, "zoo/animals.py"))}})
    r = s.ask("groom the otters", textDocument={"uri": file_uri(os.path.join(link, "zoo/animals.py"))})
    check(context_symbols(r)[:1] == ["groom_the_otters"], "save through the link: %r" % context_symbols(r))
    r = s.call("workspace/executeCommand", {"command": "coderag.ask", "arguments": ["How is tax applied?"]})
    check("shop/models.py" in context_paths(r["result"]), "command ask: first root")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_nav(env):
    """Code lenses (reference counts, Ask CodeRAG, last answer's citations)
    and hover (definition, docstring, callers as links)."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    uri = env.uri("shop/models.py")
    with open(os.path.join(env.root, "shop/models.py"), encoding="utf-8") as f:
        text = f.read()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                       "version": 1, "text": text}})
    lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    at = {}
    for lens in lenses:
        at.setdefault(lens["range"]["start"]["line"], []).append(lens["command"])
    check(38 in at and 33 in at and 19 in at, "lenses on apply_tax, Order.total, Order: %r" % sorted(at))
    titles = [c["title"] for c in at[38]]
    check("1 caller, 0 references" in titles, "apply_tax has one caller: %r" % titles)
    ask = [c for c in at[38] if c["command"] == "coderag.ask"]
    check(ask and "apply_tax" in ask[0]["arguments"][0]["question"], "Ask CodeRAG lens: %r" % at[38])
    r = s.call("workspace/executeCommand", {"command": "coderag.ask", "arguments": ask[0]["arguments"]})
    check("apply_tax" in context_symbols(r["result"]), "the lens's question answers")
    lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    cited = [lens for lens in lenses if lens["command"]["title"].startswith("cited for: What does `apply_tax`")]
    check(cited, "a lens for the last answer's citation")
    check(all("anchor" in c and len(c["anchor"]["hash"]) == 16 for c in r["result"]["citations"]),
          "citations carry content anchors")
    # Unsaved edits above the cited lines: the lens follows them (the anchor
    # is re-resolved against the buffer, which is not indexed).
    before = sorted(lens["range"]["start"]["line"] for lens in cited)
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"text": "# one\n# two\n# three\n" + text}]})
    lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    after = sorted(lens["range"]["start"]["line"] for lens in lenses
                   if lens["command"]["title"].startswith("cited for: What does `apply_tax`"))
    check(after == [line + 3 for line in before], "cited lenses moved with the buffer: %r -> %r" % (before, after))
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                        "contentChanges": [{"text": text}]})

    # Hover on the call of apply_tax inside Order.total (line 36, 0-based 35).
    h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 35, "character": 18}})
    res = h["result"]
    check(res and res["contents"]["kind"] == "markdown", "hover: %r" % h)
    md = res["contents"]["value"]
    check("def apply_tax(amount):" in md and "Adds value-added tax" in md, "signature and docstring: %s" % md)
    check("Called from" in md and "Order.total" in md and uri + "#L34" in md, "caller link: %s" % md)
    check(res["range"] == {"start": {"line": 35, "character": 15}, "end": {"line": 35, "character": 24}},
          "word range %r" % res["range"])
    h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}})
    check(h["result"] is None, "nothing on a blank line")
    h = s.call("textDocument/hover", {"textDocument": {"uri": env.uri("shop/payments/gateway.py")},
                                      "position": {"line": 2, "character": 22}})
    check(h["result"] and "class Order" in h["result"]["contents"]["value"], "hover in a file not open: %r" % h)
    h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}})
    check(h.get("error", {}).get("code") == -32602, "bad position")
    lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": "file:///elsewhere/x.py"}})
    check(lenses["result"] == [], "no lenses outside the workspace")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_nav_long(env):
    """Definitions longer than the indexer's window (several chunks) get
    lenses and hover like short ones (tests/fixtures/longdef)."""
    shutil.copytree(os.path.join(env.fixtures, "longdef", "webapp"), os.path.join(env.root, "webapp"))
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    uri = env.uri("webapp/app.py")
    lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
    counts = {}
    for lens in lenses:
        if lens["command"]["command"] == "":
            counts[lens["range"]["start"]["line"]] = lens["command"]["title"]
    # class Application (line 7), __init__ (10), make_response (124), run (278), dispatch (402)
    check(sorted(counts) == [6, 9, 123, 277, 401], "one count lens per definition: %r" % counts)
    check(counts.get(123) == "1 caller, 0 references", "make_response: %r" % counts.get(123))
    check(counts.get(277) == "1 caller, 0 references", "run: %r" % counts.get(277))
    check(counts.get(6) == "1 caller, 1 reference", "Application: %r" % counts.get(6))
    # Hover on the name in `def make_response` (0-based line 123): this
    # method, not helpers.make_response.
    h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 123, "character": 10}})
    md = (h["result"] or {}).get("contents", {}).get("value", "")
    check(md.startswith("```python\ndef make_response(self, rv, **options):"), "hover: %s" % md[:300])
    check("Called from" in md and "Application.dispatch" in md, "callers of the long method: %s" % md)
    check("Also defined" in md and "webapp/helpers.py" in md, "the helper only as another definition")
    # From inside the helper's file the helper comes first.
    h = s.call("textDocument/hover", {"textDocument": {"uri": env.uri("webapp/helpers.py")},
                                      "position": {"line": 3, "character": 6}})
    md = (h["result"] or {}).get("contents", {}).get("value", "")
    check(md.startswith("```python\ndef make_response(*args):"), "helper hover: %s" % md[:200])
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_hierarchy(env):
    """workspace/symbol and call hierarchy over the graph, long definitions
    included (tests/fixtures/longdef beside the shop)."""
    shutil.copytree(os.path.join(env.fixtures, "longdef", "webapp"), os.path.join(env.root, "webapp"))
    s = env.server()
    r = s.initialize(env.root)
    caps = r["capabilities"]
    check(caps.get("workspaceSymbolProvider") is True and caps.get("callHierarchyProvider") is True,
          "capabilities: %r" % caps)
    s.wait_ready()
    syms = s.call("workspace/symbol", {"query": "make_response"})["result"]
    names = [(x["name"], x["containerName"], x["kind"]) for x in syms]
    check(("make_response", "webapp.app.Application", 6) in names and ("make_response", "webapp.helpers", 12) in names,
          "both make_response: %r" % names)
    app = [x for x in syms if x["containerName"] == "webapp.app.Application"][0]
    check(app["location"]["uri"] == env.uri("webapp/app.py") and
          app["location"]["range"] == {"start": {"line": 123, "character": 0}, "end": {"line": 276, "character": 0}},
          "the whole long method: %r" % app["location"])
    check(s.call("workspace/symbol", {"query": ""})["result"] == [], "empty query")
    check(s.call("workspace/symbol", {})["error"]["code"] == -32602, "no query")
    uri = env.uri("webapp/app.py")
    # On the name of `def make_response` (0-based line 123).
    items = s.call("textDocument/prepareCallHierarchy",
                   {"textDocument": {"uri": uri}, "position": {"line": 123, "character": 10}})["result"]
    check(items and len(items) == 1, "one item: %r" % items)
    it = items[0]
    check(it["name"] == "make_response" and it["kind"] == 6 and it["uri"] == uri, "item: %r" % it)
    check(it["selectionRange"] == {"start": {"line": 123, "character": 8}, "end": {"line": 123, "character": 21}},
          "selection on the name: %r" % it["selectionRange"])
    inc = s.call("callHierarchy/incomingCalls", {"item": it})["result"]
    check([c["from"]["name"] for c in inc] == ["dispatch"], "incoming: %r" % inc)
    out = s.call("callHierarchy/outgoingCalls", {"item": it})["result"]
    to = sorted((c["to"]["name"], c["to"]["uri"].rsplit("/", 1)[1]) for c in out)
    check(("make_response", "helpers.py") in to and ("ResponseError", "errors.py") in to, "outgoing: %r" % to)
    check(all(c["fromRanges"][0]["start"]["line"] >= 123 for c in out), "from the method's own lines")
    # From the call site in serve.py: Application.run, a long method.
    items = s.call("textDocument/prepareCallHierarchy",
                   {"textDocument": {"uri": env.uri("webapp/serve.py")}, "position": {"line": 8, "character": 17}})["result"]
    check(items and items[0]["name"] == "run" and items[0]["range"]["start"]["line"] == 277, "run: %r" % items)
    inc = s.call("callHierarchy/incomingCalls", {"item": items[0]})["result"]
    check([c["from"]["name"] for c in inc] == ["main"], "run's caller: %r" % inc)
    check(s.call("callHierarchy/incomingCalls", {"item": {"uri": uri}})["error"]["code"] == -32602, "bad item")
    check(s.call("callHierarchy/outgoingCalls", {"item": {"uri": "file:///elsewhere/x.py", "range": {"start": {"line": 0}}}})["result"] == [],
          "an item outside the workspace")
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

RESULTS = {"passed": 0, "failed": 0}


def run_case(name, env_factory, fn):
    env = env_factory()
    ok = False
    t0 = time.monotonic()
    try:
        fn(env)
        ok = True
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
    except Exception as e:  # noqa: BLE001 - a crash in the test is a failure too
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
    finally:
        env.close(ok)
    RESULTS["passed" if ok else "failed"] += 1
    print("%s %s (%.2f s)" % ("ok  " if ok else "FAIL", name, time.monotonic() - t0))


GROUPS = {
    "progress": [t_progress, t_no_progress],
    "save": [t_save, t_save_outside],
    "watch": [t_watch],
    "storm": [t_storm],
    "eof": [t_eof],
    "llm": [t_llm],  # explanations: lsp_stream_test.py
    "multiroot": [t_multiroot],
    "nav": [t_nav, t_nav_long, t_hierarchy],
    "bench": [t_bench],
}


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])

    def factory():
        return Env(bin_path, fixtures)

    for group in argv[2:]:
        if group == "transcripts":
            t_transcripts(factory)
            continue
        for fn in GROUPS[group]:
            run_case(fn.__name__[2:], factory, fn)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
