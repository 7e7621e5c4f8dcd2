#!/usr/bin/env python3
"""Protocol tests of `coderag lsp`: keeping the index current (didSave,
didChangeWatchedFiles, a storm of changes) and several workspace folders.

    lsp_index_test.py CODERAG_BIN FIXTURE_DIR GROUP...

Groups: save, watch, storm, multiroot (lsp_test.py runs them too). The
harness is lsp_client.py's."""
import os
import re
import shutil
import subprocess
import sys
import time
from urllib.parse import quote
from lsp_client import (
    TIMEOUT, check, check_sanitizers, context_paths, context_symbols, did_open, file_uri,
    run_groups)


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
    uri, text = did_open(s, env, "shop/models.py")
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


def t_disk_full(env):
    """Saves into a full disk (ENOSPC injected by tests/fault/enospc.c on the
    index folder's files) reach the user: one window/showMessage error for
    the change of state, status 'error' with the reason while it lasts; the
    next save that succeeds clears it, says so, and catches up on the saves
    that failed (issue 25: 30 saves logged 24 warnings, status stayed
    'ready', the client was told nothing)."""
    lib = os.path.join(os.path.dirname(os.path.abspath(env.bin)), "libcrfault.so")
    if not os.path.exists(lib):
        raise Failure("no %s (tests/fault is built with the tests)" % lib)
    flag = os.path.join(env.dir, "disk-full")
    asan = os.environ.get("ASAN_OPTIONS", "")
    s = env.server(env_extra={
        "LD_PRELOAD": lib, "CRFAULT_ENOSPC": flag,
        "CRFAULT_PREFIX": os.path.join(os.path.realpath(env.root), ".coderag") + "/",
        # the shim is preloaded ahead of the sanitizer's runtime
        "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"})
    s.initialize(env.root)
    s.wait_ready()
    open(flag, "w").close()
    env.write("shop/models.py", '\n\ndef compute_quarterly_rebate(total):\n    return total / 4\n', "a")
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/models.py")}})
    m = s.wait_method({"method": "window/showMessage", "params": {"message": "~cannot be updated"}})
    check(m["params"]["type"] == 1 and "disk is full" in m["params"]["message"], "told: %r" % m)
    for i in range(5):  # more saves into the full disk: told once
        env.write("shop/errors.py", "\n\ndef spare_%d():\n    return %d\n" % (i, i), "a")
        s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/errors.py")}})
    s.ask("quarterly rebate")  # after the saves on the worker
    st = s.call("coderag/status", {})["result"]
    check(st["state"] == "error" and st["roots"][0]["state"] == "error", "status error: %r" % st)
    check("re-indexing shop/errors.py failed" in st["message"] and "disk is full" in st["message"],
          "the reason: %r" % st["message"])
    os.unlink(flag)
    env.write("shop/errors.py", "\n\ndef spare_again():\n    return 0\n", "a")
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/errors.py")}})
    m = s.wait_method({"method": "window/showMessage", "params": {"message": "~updated again"}})
    check(m["params"]["type"] == 3, "recovery told: %r" % m)
    st = s.wait_ready()
    check(st["state"] == "ready", "status clears: %r" % st)
    r = s.ask("compute quarterly rebate")
    check(context_symbols(r)[:1] == ["compute_quarterly_rebate"],
          "the save that failed caught up: %r" % context_symbols(r))
    told = [m for m in s.server_msgs if m.get("method") == "window/showMessage"
            and "cannot be updated" in m["params"]["message"]]
    check(not told, "one error notice for the whole episode: %r" % told)
    # a full pass into the full disk fails too; the next save that works retries it
    open(flag, "w").close()
    env.write("shop/errors.py", "\n\ndef spare_later():\n    return 1\n", "a")
    s.call("workspace/executeCommand", {"command": "coderag.reindex", "arguments": []})
    m = s.wait_method({"method": "window/showMessage", "params": {"message": "~indexing .* failed"}})
    check(m["params"]["type"] == 1 and "full" in m["params"]["message"], "pass failure told: %r" % m)
    os.unlink(flag)
    env.write("shop/models.py", "\n\ndef settle_the_invoice(total):\n    return total\n", "a")
    s.notify("textDocument/didSave", {"textDocument": {"uri": env.uri("shop/models.py")}})
    s.wait_method({"method": "window/showMessage", "params": {"message": "~updated again"}})
    st = s.wait_ready()
    r = s.ask("spare later")
    check("spare_later" in context_symbols(r), "the failed pass retried: %r" % context_symbols(r))
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    chk = subprocess.run([env.bin, "status", "--root", env.root, "--check"], capture_output=True,
                         text=True)
    check(chk.returncode == 0, "index check after the full disk: %s" % chk.stderr)


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


def t_foreign_folders(env):
    """Folders that cannot be served (another scheme, another host, a
    malformed entry) are skipped and named in one warning; the local folder
    beside them is indexed (issue 25: the whole initialize was refused)."""
    s = env.server()
    folders = [{"uri": "vscode-vfs://github/someone/project", "name": "remote"},
               {"uri": file_uri(env.root), "name": "shop"},
               {"uri": "file://otherhost/srv/code", "name": "elsewhere"},
               {"name": "no uri"}]
    r = s.call("initialize", {"processId": os.getpid(), "rootUri": file_uri(env.root),
                              "capabilities": {}, "workspaceFolders": folders})
    check("result" in r, "initialize answered: %r" % r)
    s.notify("initialized", {})
    m = s.wait_method({"method": "window/showMessage"})
    text = m["params"]["message"]
    check(m["params"]["type"] == 2, "a warning: %r" % m)
    check("vscode-vfs://github/someone/project" in text and "file://otherhost/srv/code" in text
          and "(malformed)" in text and "indexing the others" in text, "names them: %r" % text)
    st = s.wait_ready()
    check(len(st["roots"]) == 1 and st["files"] > 0, "the local folder indexed: %r" % st)
    r = s.ask("How is tax applied?")
    check("shop/models.py" in context_paths(r), "asks answered: %r" % context_paths(r))
    check("cannot serve workspace folders" in s.stderr(), "logged")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    # a file: folder that cannot be opened (a file, not a folder) listed first: asks without a
    # document go to the folder that answers (they all failed with its error)
    s = env.server()
    s.initialize(env.root, folders=["/dev/null", env.root])
    for _ in range(100000):
        st = s.call("coderag/status", {})["result"]
        if all(r["state"] != "indexing" for r in st["roots"]) and len(st["roots"]) == 2:
            break
    check([r["state"] for r in st["roots"]] == ["error", "ready"], "roots: %r" % st["roots"])
    r = s.ask("How is tax applied?")
    check("shop/models.py" in context_paths(r), "asked the folder that answers: %r" % r)
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    # only a remote rootUri: initialize still succeeds, the user is told
    s = env.server()
    r = s.call("initialize", {"processId": os.getpid(), "capabilities": {},
                              "rootUri": "vscode-vfs://github/someone/project"})
    check("result" in r, "initialize with a remote rootUri answered: %r" % r)
    s.notify("initialized", {})
    m = s.wait_method({"method": "window/showMessage"})
    check("nothing to index" in m["params"]["message"], "told: %r" % m)
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


GROUPS = {
    "save": [t_save, t_save_outside, t_disk_full],
    "watch": [t_watch],
    "storm": [t_storm],
    "multiroot": [t_multiroot, t_foreign_folders],
}


if __name__ == "__main__":
    sys.exit(run_groups(sys.argv[1:], GROUPS, __doc__))
