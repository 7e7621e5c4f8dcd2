#!/usr/bin/env python3
"""The harness of the protocol tests (lsp_test.py, lsp_index_test.py,
lsp_nav_test.py, lsp_stream_test.py) and of tests/hardening: a `coderag lsp`
child driven through pipes (Server), a temporary copy of a fixture
repository (Env), JSON patterns (match), the loopback fake LLM, and the
runner that prints "N passed, N failed". Python 3 standard library only.
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


def did_open(s, env, rel):
    """Opens the fixture file rel (version 1, as on disk) on server s;
    returns its URI and text."""
    uri = env.uri(rel)
    with open(os.path.join(env.root, rel), encoding="utf-8") as f:
        text = f.read()
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                       "version": 1, "text": text}})
    return uri, text


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


def run_groups(argv, groups, usage):
    """The command line of the test scripts: BIN FIXTURE_DIR GROUP...; each
    group's tests run in order, each on a fresh Env. Prints "N passed, N
    failed" and returns the exit code."""
    if len(argv) < 3:
        print(usage)
        return 2
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])

    def factory():
        return Env(bin_path, fixtures)

    for group in argv[2:]:
        tests = groups[group]
        if callable(tests):
            tests(factory)
            continue
        for fn in tests:
            run_case(fn.__name__[2:], factory, fn)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0
