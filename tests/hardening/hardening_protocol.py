#!/usr/bin/env python3
"""Protocol and secrets (issue 40; group protocol of hardening.py): MCP
integers past int64 answered for their call, MCP paths outside the root
refused, names that are not UTF-8 escaped and taken back, the servers
undumpable, an LLM answer holding U+0000, and JSON output that is whole
or an error.
"""
import json
import os
import shutil
import subprocess
import time
from hardening_util import FakeOpenAI, check, clean_env, index, run
from hardening_leak import Mcp
import lsp_client  # on sys.path through hardening_util

HANG = 300


def shop(fixtures, work):
    ws = os.path.join(work, "ws")
    shutil.copytree(os.path.join(fixtures, "shop"), ws)
    return ws


def mcp_raw(bin_path, ws, ix, lines):
    """Lines sent as they are (no JSON re-encoding); the replies by id."""
    head = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "protocol", "version": "1"}}}),
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    r = subprocess.run([bin_path, "mcp", "--root", ws, "--index-dir", ix],
                       input=("\n".join(head + lines) + "\n").encode(), capture_output=True,
                       env=clean_env(), timeout=HANG)
    out = {}
    for line in r.stdout.decode().splitlines():
        m = json.loads(line)
        out[m.get("id")] = m
    return out


def t_mcp_bigint(bin_path, fixtures, work):
    """`"startLine": 18446744073709551616` (and a 300-digit negative):
    answered for that call's id with isError, the session goes on. Before:
    an id-null parse error the client never matches."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    check(index(bin_path, ws, ix).returncode == 0, "index")
    call = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read",' \
           '"arguments":{"path":"shop/models.py","startLine":%s}}}'
    got = mcp_raw(bin_path, ws, ix, [call % (7, "18446744073709551616"),
                                     call % (8, "-" + "9" * 300),
                                     call % (9, "1")])
    for rid in (7, 8):
        m = got.get(rid)
        check(m and m.get("result", {}).get("isError") is True,
              "call %d: %s (ids answered: %s)" % (rid, m, sorted(got, key=str)))
    check(None not in got, "an id-null error: %s" % got.get(None))
    check(got.get(9, {}).get("result", {}).get("isError") is not True, "a good call after")
    print("  integers past int64: isError for their call ids, the session goes on")


def t_mcp_paths(bin_path, fixtures, work):
    """`definition` (and callers) with a path outside the root, absolute,
    or through a symlink leading out: refused (isError), as docs/mcp.md
    says; an indexed path still works."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "models.py"), "w") as f:
        f.write("def checkout():\n    return 1\n")
    os.symlink(outside, os.path.join(ws, "out"))
    check(index(bin_path, ws, ix).returncode == 0, "index")
    m = Mcp(bin_path, ws, args=("--index-dir", ix))
    try:
        for tool in ("definition", "callers"):
            for path in ("../outside/models.py", outside + "/models.py", "out/models.py",
                         "/etc/passwd"):
                r = m.tool(tool, {"symbol": "checkout", "path": path})
                check(r.get("isError") is True, "%s with path %s answered: %s" % (tool, path, r))
        r = m.tool("definition", {"symbol": "Order", "path": "shop/models.py"})
        check(not r.get("isError") and r["structuredContent"]["definitions"],
              "an indexed path: %s" % r)
        code, err = m.close()
        check(code == 0, "mcp exit %s %s" % (code, err[-200:]))
    finally:
        m.proc.kill()
    print("  definition/callers: paths outside, absolute and through a link out refused")


def t_non_utf8_names(bin_path, fixtures, work):
    """A folder named in Latin-1 (b"caf\\xe9"): search names it escaped
    ("caf%E9/..."), not with U+FFFD, and read/definition take that name
    back."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    d = os.path.join(os.fsencode(ws), b"caf\xe9")
    os.makedirs(d)
    with open(os.path.join(d, b"menu.py"), "w") as f:
        f.write("def latin_named_folder_fn():\n    return 1\n")
    check(index(bin_path, ws, ix).returncode == 0, "index")
    m = Mcp(bin_path, ws, args=("--index-dir", ix))
    try:
        r = m.tool("search", {"query": "latin_named_folder_fn", "limit": 1})
        path = r["structuredContent"]["results"][0]["path"]
        check(path == "caf%E9/menu.py", "search names %r" % path)
        check("\ufffd" not in json.dumps(r, ensure_ascii=False), "U+FFFD in the result")
        r = m.tool("read", {"path": path})
        check(not r.get("isError") and "latin_named_folder_fn" in r["structuredContent"]["text"],
              "read of the escaped name: %s" % r)
        r = m.tool("definition", {"symbol": "latin_named_folder_fn", "path": path})
        check(not r.get("isError"), "definition with the escaped name: %s" % r)
        m.close()
    finally:
        m.proc.kill()
    print("  a Latin-1 folder: named caf%E9/menu.py, read back by that name")


def t_undumpable(bin_path, fixtures, work):
    """`coderag lsp` and `coderag mcp` are not dumpable (no core file, no
    /proc/PID/mem for the same user): their /proc entries belong to root
    whatever user runs them. Run as nobody when the test is root."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    os.chmod(work, 0o777)
    # not preexec_fn: other tests' reader threads live in this process
    who = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}
    for args in (["lsp", "--index-dir", ix], ["mcp", "--root", ws, "--index-dir", ix]):
        p = subprocess.Popen([bin_path] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=clean_env(), cwd=work, **who)
        try:
            # the server made itself undumpable before it reads a message:
            # its answer to initialize is the moment to look
            if args[0] == "lsp":
                p.stdin.write(lsp_client.frame(json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"processId": None, "rootUri": None, "capabilities": {}}})))
            else:
                p.stdin.write((json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "protocol", "version": "1"}}}) + "\n")
                    .encode())
            p.stdin.flush()
            p.stdout.read1(1)
            if p.poll() is not None:
                check(False, "%s exited: %s" % (args[0], p.stderr.read()[-300:]))
            owner = os.stat("/proc/%d/mem" % p.pid).st_uid
            check(owner == 0, "%s: /proc/PID/mem owned by uid %d: dumpable" % (args[0], owner))
        finally:
            p.kill()
            p.wait()
    print("  lsp and mcp: not dumpable")


def t_llm_nul(bin_path, fixtures, work):
    """An LLM answer holding U+0000 (one JSON body, then an event stream):
    answered (exit 0), the character dropped. Before: exit 3, "invalid
    JSON"."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    check(index(bin_path, ws, ix).returncode == 0, "index")
    fake = FakeOpenAI()
    try:
        for stream in (False, True):
            fake.control("reset", {"actions": {"chat": [
                {"content": "The total\u0000 is computed in {ctx0}.", "stream": stream}]}})
            r = run([bin_path, "ask", "--root", ws, "--index-dir", ix, "--json", "--mode", "llm",
                     "--llm-url", fake.url, "--no-update", "order total"], timeout=HANG)
            check(r.returncode == 0, "stream %s: exit %d %s" % (stream, r.returncode, r.stderr))
            ans = json.loads(r.stdout)["answer"]
            check("The total is computed" in ans and "\u0000" not in ans, "answer %r" % ans)
    finally:
        fake.close()
    print("  an LLM answer with U+0000: answered without it")


GROUPS = {"protocol": [t_mcp_bigint, t_mcp_paths, t_non_utf8_names, t_undumpable, t_llm_nul]}
