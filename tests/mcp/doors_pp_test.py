#!/usr/bin/env python3
"""Preprocessor conditions through both doors (tests/fixtures/graph_pp):
MCP `callers`/`callees`/`definition` and LSP call hierarchy give the same
references for the same definition, each marked with the #if condition it
is compiled under (MCP: `condition` and `built`; LSP: in `detail`), and a
compile_commands.json written at the root changes what is built at once.

    doors_pp_test.py CODERAG_BIN FIXTURES_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

failed = []


def check(cond, what):
    if not cond:
        failed.append(what)
        print("FAIL " + what)


class Mcp:
    def __init__(self, binary, root):
        self.p = subprocess.Popen([binary, "mcp", "--root", root], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0
        self.call_raw("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "doors_pp", "version": "1"}})
        self.send({"method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(dict(msg, jsonrpc="2.0")).encode() + b"\n")
        self.p.stdin.flush()

    def call_raw(self, method, params):
        self.n += 1
        self.send({"id": self.n, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return msg["result"]

    def tool(self, name, args):
        return self.call_raw("tools/call", {"name": name, "arguments": args})["structuredContent"]

    def close(self):
        self.p.stdin.close()
        return self.p.wait()


class Lsp:
    def __init__(self, binary, root):
        self.p = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.n = 0
        self.root = root
        self.call("initialize", {"processId": None, "rootUri": "file://" + root,
                                 "capabilities": {}})
        self.send({"method": "initialized", "params": {}})

    def send(self, msg):
        body = json.dumps(dict(msg, jsonrpc="2.0")).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        length = 0
        while True:
            line = self.p.stdout.readline().strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def call(self, method, params):
        self.n += 1
        self.send({"id": self.n, "method": method, "params": params})
        while True:
            msg = self.read()
            if "method" in msg and "id" in msg:  # a request of the server's: answer null
                self.send({"id": msg["id"], "result": None})
            elif msg.get("id") == self.n and "method" not in msg:
                return msg.get("result")

    def close(self):
        self.call("shutdown", None)
        self.send({"method": "exit"})
        return self.p.wait()


def mcp_refs(m, tool, symbol, path):
    s = m.tool(tool, {"symbol": symbol, "path": path, "kinds": ["call"]})
    return [(r["symbol"], r.get("condition"), r.get("built"))
            for r in s["definitions"][0]["references"]]


def lsp_refs(lsp, path, line0, col0, outgoing):
    uri = "file://" + os.path.join(lsp.root, path)
    items = lsp.call("textDocument/prepareCallHierarchy",
                     {"textDocument": {"uri": uri}, "position": {"line": line0, "character": col0}})
    check(items and len(items) == 1, "one item at %s:%d: %r" % (path, line0, items))
    if not items:
        return []
    got = lsp.call("callHierarchy/%s" % ("outgoingCalls" if outgoing else "incomingCalls"),
                   {"item": items[0]})
    out = []
    for c in got:
        it = c["to" if outgoing else "from"]
        detail = it.get("detail", "")
        cond = built = None
        if " · #if " in detail:
            rest = detail.split(" · #if ", 1)[1]
            cond, state = rest.rsplit(" (", 1)
            built = {"built)": True, "not built)": False}.get(state)
        out.append((it["name"], cond, built))
    return out


def main():
    binary, fixtures = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="coderag-doors-pp-")
    try:
        root = os.path.join(work, "graph_pp")
        shutil.copytree(os.path.join(fixtures, "graph_pp"), root)
        subprocess.run([binary, "index", "--root", root], check=True, stdout=subprocess.DEVNULL)
        m = Mcp(binary, root)
        want = [("fast", "defined(FASTPATH)", False), ("dead", "0", False),
                ("api", "defined(API)", True), ("main", None, None)]
        got = mcp_refs(m, "callers", "deep", "main.c")
        check(got == want, "MCP callers of deep: %r" % (got,))
        lsp = Lsp(binary, root)
        lgot = lsp_refs(lsp, "main.c", 8, 5, 0)  # `int deep(void)` of the #if branch
        check(lgot == want, "LSP incoming calls of deep: %r" % (lgot,))
        got = mcp_refs(m, "callees", "clock_now", "clock.h")
        lgot = lsp_refs(lsp, "clock.h", 6, 25, 1)
        check(got == lgot and len(got) == 3 and got[2] == (
            "posix_now", "!defined(_WIN32) && !defined(__APPLE__)", True),
            "callees of clock_now, MCP %r, LSP %r" % (got, lgot))
        d = m.tool("definition", {"symbol": "clock_now"})["definitions"][0]
        check([(v["startLine"], v["built"]) for v in d.get("variants", [])] ==
              [(7, False), (9, False), (11, True)] and d.get("built") is True,
              "variants of clock_now: %r" % d)
        # a configuration at the root: what it builds first, at once
        with open(os.path.join(root, "compile_commands.json"), "w") as f:
            json.dump([{"directory": root, "file": "main.c",
                        "arguments": ["cc", "-c", "-DUSE_FAST", "main.c"]}], f)
        want = [("fast", "defined(FASTPATH)", True), ("api", "defined(API)", True),
                ("main", None, None), ("dead", "0", False)]
        got = mcp_refs(m, "callers", "deep", "main.c")
        check(got == want, "MCP callers of deep, configured: %r" % (got,))
        lgot = lsp_refs(lsp, "main.c", 8, 5, 0)
        check(lgot == want, "LSP incoming calls of deep, configured: %r" % (lgot,))
        check(m.close() == 0, "mcp exit code")
        check(lsp.close() == 0, "lsp exit code")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%s: %d failed" % (os.path.basename(__file__), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
