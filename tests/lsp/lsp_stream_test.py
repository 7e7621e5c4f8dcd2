#!/usr/bin/env python3
"""The editor issue's server side, against the real binary and a loopback
fake LLM (tests/fake_openai.py) that holds its answers until the test
releases them, so nothing here depends on timing:

    lsp_stream_test.py CODERAG_BIN FIXTURE_DIR

- an extractive ask, hovers and lenses answer while LLM requests are held
  (and at most LLM_THREADS LLM requests run at once);
- a hover never calls the LLM; coderag.explain does (code action offers it),
  and later hovers show the explanation;
- coderag/ask streams: partial results with the text so far arrive while
  the LLM is still writing; work-done progress begin .. end; the final result
  lists rejected citations;
- $/cancelRequest closes the LLM connection (the fake sees it go) without
  the LLM ever answering;
- a failing endpoint is contacted once and then backed off; it is announced
  when it fails and when it works again, not per request;
- an off-topic question gets match weak/none and says so on its first line,
  without asking the LLM or raising an endpoint warning;
- the root rule when initialize names no folder; history in the prompt.
"""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsp_client as L  # noqa: E402
from lsp_client import Failure, check, check_sanitizers, did_open, fake_llm, file_uri  # noqa: E402


def control(port, what, body=None, timeout=60):
    req = urllib.request.Request("http://127.0.0.1:%d/_control/%s" % (port, what),
                                 data=json.dumps(body or {}).encode(), method="POST")
    return json.load(urllib.request.urlopen(req, timeout=timeout))


def wait_event(port, kind, count=1):
    r = control(port, "wait", {"kind": kind, "count": count, "timeout_s": L.TIMEOUT})
    check(r["ok"], "fake LLM: %d %r event(s) expected, saw %r" % (count, kind, r["events"]))
    return r["events"]


def chats(port):
    return [r for r in control(port, "log")["requests"] if r.get("endpoint") == "chat/completions"]


def llm_server(env, port, **kw):
    s = env.server(**kw)
    s.initialize(env.root, options={"llm": {"url": "http://127.0.0.1:%d" % port}})
    s.wait_ready()
    return s


HOVER = {"line": 35, "character": 18}  # `apply_tax` in Order.total


def t_no_waiting(env):
    """Problem 1: questions, hovers and lenses never wait behind an LLM call."""
    script = {"actions": {"chat": [{"hold": "go", "times": 100}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        uri = env.uri("shop/models.py")
        llm_ids = [s.request("coderag/ask", {"question": "How is tax applied to an order?",
                                             "mode": "llm"}) for _ in range(3)]
        wait_event(port, "start", 2)  # the pool's two threads are both held
        hovers = [s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": HOVER})
                  for _ in range(3)]
        lens = s.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
        r = s.call("coderag/ask", {"question": "How is tax applied to an order?", "mode": "extractive"})
        check("result" in r and r["result"]["mode"] == "extractive", "extractive ask answered: %r" % r)
        for h in hovers:
            md = s.wait_response(h)["result"]["contents"]["value"]
            check("apply_tax" in md, "hover answered while the LLM is held")
        check(s.wait_response(lens)["result"], "lenses answered while the LLM is held")
        starts = [e for e in control(port, "wait", {"kind": "start", "count": 2})["events"]
                  if e["kind"] == "start"]
        check(len(starts) == 2, "at most two LLM requests at once, saw %d" % len(starts))
        control(port, "release", {"name": "go"})
        for rid in llm_ids:
            r = s.wait_response(rid)
            check(r.get("result", {}).get("mode") == "llm", "LLM ask finished: %r" % r)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_explain(env):
    """Problem 1: a hover never calls the LLM; the explanation is asked for."""
    script = {"actions": {"chat": [{"content": "It adds the tax rate to an amount {ctx0}; "
                                               "also [shop/nowhere.py:1-2].", "times": 100}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        uri = env.uri("shop/models.py")
        where = {"textDocument": {"uri": uri}, "position": HOVER}
        md = s.call("textDocument/hover", where)["result"]["contents"]["value"]
        check("apply_tax" in md and "**Explanation**" not in md, "plain hover: %s" % md)
        check(len(chats(port)) == 0, "a hover made no LLM request")
        acts = s.call("textDocument/codeAction", {"textDocument": {"uri": uri},
                                                  "range": {"start": HOVER, "end": HOVER},
                                                  "context": {"diagnostics": []}})["result"]
        check(len(acts) == 1 and acts[0]["command"]["command"] == "coderag.explain"
              and "apply_tax" in acts[0]["title"], "explain action: %r" % acts)
        r = s.call("workspace/executeCommand", {"command": "coderag.explain",
                                                "arguments": acts[0]["command"]["arguments"]})
        res = r.get("result") or {}
        check(res.get("mode") == "llm" and res.get("symbol") == "apply_tax", "explained: %r" % r)
        check("It adds the tax rate" in res["answer"] and "nowhere.py" not in res["answer"],
              "verified explanation: %s" % res["answer"])
        check(any("nowhere.py" in x["text"] for x in res["rejected"]), "rejected listed")
        md = s.call("textDocument/hover", where)["result"]["contents"]["value"]
        check("**Explanation**" in md and "It adds the tax rate" in md, "hover shows it: %s" % md)
        check(len(chats(port)) == 1, "one LLM request in all, got %d" % len(chats(port)))
        # without an LLM: no action, and the command says why
        s2 = env.server()
        s2.initialize(env.root)
        s2.wait_ready()
        acts = s2.call("textDocument/codeAction", {"textDocument": {"uri": uri},
                                                   "range": {"start": HOVER, "end": HOVER},
                                                   "context": {"diagnostics": []}})["result"]
        # without an LLM: an action that shows the definition and its callers
        # (issue 27: Neovim's Explain ended in an error and no action)
        check(len(acts) == 1 and acts[0]["command"]["command"] == "coderag.explain"
              and acts[0]["title"] == "Show `apply_tax` and its callers (CodeRAG)"
              and acts[0]["command"]["arguments"][0].get("mode") == "extractive",
              "action without an LLM: %r" % acts)
        r = s2.call("workspace/executeCommand", {"command": "coderag.explain",
                                                 "arguments": acts[0]["command"]["arguments"]})
        res = r.get("result") or {}
        check(res.get("mode") == "extractive" and res.get("symbol") == "apply_tax"
              and res.get("title") == "`apply_tax` and its callers" and res["citations"]
              and res["context"][0]["symbol"] == "apply_tax", "shown: %r" % r)
        r = s2.call("workspace/executeCommand", {"command": "coderag.explain",
                                                 "arguments": [{"textDocument": {"uri": uri},
                                                                "position": HOVER}]})
        check(r.get("error", {}).get("code") == -32803 and "llm.url" in r["error"]["message"],
              "explain without LLM: %r" % r)
        for x in (s, s2):
            check(x.shutdown_exit() == 0, "exit code")
            check_sanitizers(x)


def t_supersede(env):
    """Problem 1: an explanation's LLM call stops when the user moves on
    (a newer explanation supersedes it)."""
    script = {"actions": {"chat": [{"hold": "never"}, {"content": "It totals the order {ctx0}."}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        uri = env.uri("shop/models.py")
        first = s.request("workspace/executeCommand", {"command": "coderag.explain", "arguments": [
            {"textDocument": {"uri": uri}, "position": HOVER}]})
        wait_event(port, "start")
        second = s.request("workspace/executeCommand", {"command": "coderag.explain", "arguments": [
            {"textDocument": {"uri": uri}, "position": {"line": 33, "character": 10}}]})
        r = s.wait_response(first)
        check(r.get("error", {}).get("code") == -32800 and "superseded" in r["error"]["message"],
              "first explanation superseded: %r" % r)
        wait_event(port, "closed")
        r = s.wait_response(second)
        check(r.get("result", {}).get("symbol") == "Order.total", "second explained: %r" % r)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_stream(env):
    """Problem 2: progress from the start, the text streamed as it comes,
    the verified answer last with rejected citations listed."""
    script = {"actions": {"chat": [{"content": "Tax is added by apply_tax {ctx0}; see also "
                                               "[shop/nowhere.py:1-2].", "chunk": 5,
                                    "hold_after": "rest"}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        rid = s.request("coderag/ask", {"question": "How is tax applied to an order?",
                                        "workDoneToken": "wd-1", "partialResultToken": "pr-1"})
        begin = s.wait_method({"method": "$/progress", "params": {"token": "wd-1"}})
        check(begin["params"]["value"]["kind"] == "begin"
              and begin["params"]["value"]["cancellable"] is True, "begin first: %r" % begin)
        ctx = s.wait_method({"method": "$/progress", "params": {"token": "pr-1",
                                                                "value": {"stage": "context"}}})
        v = ctx["params"]["value"]
        check(v["provisional"] and v["match"] == "strong" and v["context"], "context partial: %r" % v)
        wait_event(port, "first")
        first = s.wait_method({"method": "$/progress", "params": {"token": "pr-1",
                                                                  "value": {"stage": "writing"}}})
        text = first["params"]["value"]["answer"]
        check(text and "Tax is added by apply_tax".startswith(text[:25]),
              "streamed text before the LLM finished: %r" % text)
        check(rid not in s.responses, "no result while the LLM is held")
        control(port, "release", {"name": "rest"})
        r = s.wait_response(rid)["result"]
        check(r["mode"] == "llm" and r["match"] == "strong", "final: %r" % r)
        check("nowhere.py" not in r["answer"], "final answer verified")
        check([x["reason"] for x in r["rejected"]] == ["file-not-found"], "rejected: %r" % r["rejected"])
        kinds = [m["params"]["value"]["kind"] for m in s.server_msgs
                 if m.get("method") == "$/progress" and m["params"]["token"] == "wd-1"]
        check(kinds and kinds[-1] == "end" and "begin" not in kinds, "progress ends: %r" % kinds)
        partials = [m["params"]["value"]["answer"] for m in s.server_msgs
                    if m.get("method") == "$/progress" and m["params"]["token"] == "pr-1"]
        check(partials and "nowhere.py" in partials[-1], "last partial is the whole draft: %r" % partials)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_cancel(env):
    """Problem 2: $/cancelRequest stops the LLM request (its connection)."""
    script = {"actions": {"chat": [{"hold": "never"}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        rid = s.request("coderag/ask", {"question": "How is tax applied to an order?",
                                        "workDoneToken": 7})
        wait_event(port, "start")
        s.notify("$/cancelRequest", {"id": rid})
        r = s.wait_response(rid)
        check(r.get("error", {}).get("code") == -32800, "cancelled: %r" % r)
        wait_event(port, "closed")  # the fake saw the connection go, never released
        end = s.wait_method({"method": "$/progress", "params": {"token": 7, "value": {"kind": "end"}}})
        check(end["params"]["value"]["message"] == "cancelled", "progress end: %r" % end)
        check(s.call("coderag/status")["result"]["llm"]["state"] != "down", "a cancel is no outage")
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_backoff(env):
    """Problems 1 and 4: a dead endpoint is tried once, then backed off;
    announced when it fails and when it works again."""
    script = {"actions": {"chat": [{"status": 500, "times": 3}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        r = s.ask("How is tax applied to an order?")
        check(r["mode"] == "extractive" and "**No LLM answer:**" in r["answer"], "fallback: %r" % r["answer"])
        n = len(chats(port))
        check(n == 3, "one request with its retries, got %d" % n)
        for _ in range(3):
            r = s.ask("How is tax applied to an order?")
            check("endpoint is down" in r["answer"], "backed off: %s" % r["answer"][:200])
        check(len(chats(port)) == n, "not contacted while backed off")
        st = s.call("coderag/status")["result"]["llm"]
        check(st["configured"] and st["state"] == "down" and "500" in st["message"], "status: %r" % st)
        r = s.ask("How is tax applied to an order?", mode="llm")  # the user asks for it: tried
        check(r["mode"] == "llm", "llm mode tries and succeeds: %r" % r)
        s.call("coderag/status")
        shown = [m["params"] for m in s.server_msgs if m.get("method") == "window/showMessage"]
        check(len(shown) == 2 and shown[0]["type"] == 2 and "500" in shown[0]["message"]
              and shown[1]["type"] == 3 and "works again" in shown[1]["message"], "messages: %r" % shown)
        check(s.call("coderag/status")["result"]["llm"]["state"] == "ok", "ok again")
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_match(env):
    """Problem 4: nothing relevant is said plainly; the LLM is not asked."""
    with fake_llm({}) as port:
        s = llm_server(env, port)
        r = s.ask("How is the GPU kernel scheduled on the device?")
        check(r["match"] in ("weak", "none"), "off-topic match: %r" % r["match"])
        first = r["answer"].split("\n", 1)[0]
        check(first.startswith("**Nothing relevant found:**") or first.startswith("**Weak match:**"),
              "first line says so: %s" % first)
        check(r["matchReason"], "a reason")
        if r["match"] == "none":
            check(len(chats(port)) == 0 and r["mode"] == "extractive", "LLM not asked for nothing relevant")
        r = s.ask("How is tax applied to an order total?")
        check(r["match"] == "strong" and r["mode"] == "llm", "on-topic: %r" % r["match"])
        s.call("coderag/status")
        shown = [m for m in s.server_msgs if m.get("method") == "window/showMessage"]
        check(not shown, "no endpoint warning for an off-topic question: %r" % shown)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_history(env):
    """A follow-up carries the previous turn to the LLM."""
    with fake_llm({}) as port:
        s = llm_server(env, port)
        hist = [{"question": "What does apply_tax do?", "answer": "It adds tax."}]
        r = s.ask("And where is it called?", history=hist)
        check("Order.total" in [c["symbol"] for c in r["context"]] or
              "apply_tax" in [c["symbol"] for c in r["context"]], "follow-up retrieval: %r" % r["context"])
        msgs = chats(port)[-1]["json"]["messages"]
        check([m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
              and msgs[1]["content"] == "What does apply_tax do?", "history in the prompt: %r" % msgs[:3])
        r = s.call("coderag/ask", {"question": "q", "history": [{"answer": 3}]})
        check(r.get("error", {}).get("code") == -32602, "bad history: %r" % r)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_root(env):
    """Problem 6, server side: with no folder named, the root rule from the
    working directory; `.coderag/` alone is no marker; a configured root is
    used as given."""
    proj = os.path.join(env.dir, "proj")
    sub = os.path.join(proj, "pkg", "inner")
    os.makedirs(os.path.join(sub, ".coderag"))
    with open(os.path.join(proj, "pyproject.toml"), "w") as f:
        f.write("[project]\nname = 'proj'\n")
    with open(os.path.join(proj, "pkg", "mod.py"), "w") as f:
        f.write("def hello_root_rule():\n    return 1\n")
    s = L.Server(env.bin, sub)
    env.servers.append(s)
    r = s.call("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
    check("result" in r, "initialize: %r" % r)
    s.notify("initialized", {})
    st = s.wait_ready()
    check([x["root"] for x in st["roots"]] == [os.path.realpath(proj)], "root: %r" % st["roots"])
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)
    # a configured root is used as given, as by the command line: no marker
    # above it (pyproject.toml in proj) takes its place
    pkg = os.path.join(proj, "pkg")
    s = L.Server(env.bin, env.dir, args=("--root", pkg), stderr_path=os.path.join(env.dir, "pkg.stderr"))
    env.servers.append(s)
    r = s.call("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}})
    check("result" in r, "initialize: %r" % r)
    s.notify("initialized", {})
    st = s.wait_ready()
    check([x["root"] for x in st["roots"]] == [os.path.realpath(pkg)], "--root: %r" % st["roots"])
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


def t_first_index(env):
    """Issue 27: an ask during the first index waits for it (with progress on
    its token, cancellable, other requests served meanwhile) instead of
    answering "nothing relevant" from a part of the workspace. The build is
    held at a known point: the embeddings request, which the fake holds."""
    script = {"actions": {"embeddings": [{"hold": "index"}]}}
    with fake_llm(script) as port:
        s = env.server()
        s.initialize(env.root, options={"embed": {"provider": "openai",
                                                  "url": "http://127.0.0.1:%d" % port}})
        rid = s.request("coderag/ask", {"question": "How is the tax applied to an order total?",
                                        "workDoneToken": "w1"})
        m = s.wait_method({"method": "$/progress", "params": {
            "token": "w1", "value": {"kind": "report", "message": "~^waiting for the first index"}}})
        check(0 <= m["params"]["value"]["percentage"] <= 100, "percentage: %r" % m)
        st = s.call("coderag/status", {})["result"]  # served while the ask waits
        check(st["state"] == "indexing", "status while held: %r" % st)
        check(rid not in s.responses, "the ask waits for the index: %r" % s.responses.get(rid))
        # a waiting ask is cancellable: answered -32800 at once, its progress ends
        rid2 = s.request("coderag/ask", {"question": "Where is the order total computed?",
                                         "workDoneToken": "w2"})
        s.wait_method({"method": "$/progress", "params": {
            "token": "w2", "value": {"kind": "report", "message": "~^waiting for the first index"}}})
        s.notify("$/cancelRequest", {"id": rid2})
        r2 = s.wait_response(rid2)
        check(r2.get("error", {}).get("code") == -32800, "cancelled while waiting: %r" % r2)
        s.wait_method({"method": "$/progress", "params": {"token": "w2", "value": {
            "kind": "end", "message": "cancelled"}}})
        check(rid not in s.responses, "still waiting: %r" % s.responses.get(rid))
        control(port, "release", {"name": "index"})
        r = s.wait_response(rid)
        check("result" in r, "answered after the index: %r" % r)
        res = r["result"]
        scores = [c["score"] for c in res["context"]]
        check(scores == sorted(scores, reverse=True) and scores[0] <= 1.0,
              "context ordered by the score it shows: %r" % scores)
        check(res["indexing"] is False and res["match"] == "strong" and res["citations"],
              "a whole index's answer: %r" % {k: res.get(k) for k in ("indexing", "match", "answer")})
        # later asks (the index complete) never wait, even during a rebuild
        s.call("workspace/executeCommand", {"command": "coderag.reindex"})
        r3 = s.ask("How is the tax applied to an order total?", workDoneToken="w3")
        check(r3["citations"], "ask during a rebuild: %r" % r3)
        check(not any(m.get("method") == "$/progress" and m["params"]["token"] == "w3"
                      and "waiting" in m["params"]["value"].get("message", "")
                      for m in s.server_msgs), "a complete index is never waited for")
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def t_buffer(env):
    """Issue 27: unsaved buffers. An ask reads what the editor shows (the
    LLM is given the buffer's lines, citations are verified against them,
    line numbers are the buffer's); the disk and the index are untouched;
    didClose (and didSave) return to the disk's text."""
    script = {"actions": {"chat": [{"content": "It applies the tax {ctx0}.", "times": 100}]}}
    with fake_llm(script) as port:
        s = llm_server(env, port)
        st0 = s.call("coderag/status", {})["result"]
        q = "How does apply_tax add the tax to an amount?"

        def models_item(res):
            return next(c for c in res["context"] if c["path"] == "shop/models.py"
                        and c["symbol"] == "apply_tax")

        def last_prompt():
            return json.dumps(chats(port)[-1]["json"]["messages"])

        disk = s.ask(q, mode="llm")
        d0 = models_item(disk)
        check("bufferonly_marker" not in last_prompt(), "disk prompt")
        uri, text = did_open(s, env, "shop/models.py")
        edited = "# one\n# two\n# three\n" + text.replace(
            "    return amount * (1 + TAX_RATE)", "    return amount * (1 + TAX_RATE)  # bufferonly_marker")
        check(edited != "# one\n# two\n# three\n" + text, "the fixture has the line")
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                            "contentChanges": [{"text": edited}]})
        buf = s.ask(q, mode="llm")
        b0 = models_item(buf)
        check((b0["startLine"], b0["endLine"]) == (d0["startLine"] + 3, d0["endLine"] + 3),
              "the buffer's lines: %r vs disk %r" % (b0, d0))
        check("bufferonly_marker" in last_prompt(), "the LLM is shown the buffer's text")
        check(buf["rejected"] == [] and buf["citations"], "verified against the buffer: %r" % buf)
        cited = [c for c in buf["citations"] if c["path"] == "shop/models.py"]
        check(cited and cited[0]["startLine"] == b0["startLine"] and cited[0]["verified"],
              "a citation of the buffer's lines: %r" % buf["citations"])
        # lenses and hovers stand where the buffer has the lines
        lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
        starts = sorted({l["range"]["start"]["line"] for l in lenses
                         if "caller" in l["command"]["title"] or "reference" in l["command"]["title"]})
        check(38 + 3 in starts and 38 not in starts, "apply_tax's lens on its buffer line: %r" % starts)
        md = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {
            "line": HOVER["line"] + 3, "character": HOVER["character"]}})["result"]["contents"]["value"]
        check("apply_tax" in md and "Adds value-added tax" in md, "hover in the buffer: %s" % md)
        # an explanation of the buffer: its definition's buffer lines, never cached as the
        # indexed definition's
        r = s.call("workspace/executeCommand", {"command": "coderag.explain", "arguments": [{
            "textDocument": {"uri": uri},
            "position": {"line": HOVER["line"] + 3, "character": HOVER["character"]}}]})
        res = r.get("result") or {}
        scores = [c["score"] for c in res["context"]]
        check(scores == sorted(scores, reverse=True), "ordered by the score shown: %r" % scores)
        check(res.get("symbol") == "apply_tax" and res["context"][0]["startLine"] == 42
              and res["context"][0]["endLine"] == 44, "explained from the buffer: %r" % r)
        check("bufferonly_marker" in last_prompt(), "the explanation's LLM saw the buffer")
        md = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {
            "line": HOVER["line"] + 3, "character": HOVER["character"]}})["result"]["contents"]["value"]
        check("**Explanation**" not in md, "no cached explanation of unsaved text: %s" % md)
        with open(os.path.join(env.root, "shop/models.py"), encoding="utf-8") as f:
            check(f.read() == text, "the disk is untouched")
        st1 = s.call("coderag/status", {})["result"]
        check((st1["files"], st1["chunks"]) == (st0["files"], st0["chunks"]), "the index is untouched")
        s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        again = s.ask(q, mode="llm")
        a0 = models_item(again)
        check((a0["startLine"], a0["endLine"]) == (d0["startLine"], d0["endLine"]),
              "the disk's lines after didClose: %r" % a0)
        check("bufferonly_marker" not in last_prompt(), "the disk's text after didClose")
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


CASES = [t_first_index, t_buffer, t_no_waiting, t_explain, t_supersede, t_stream, t_cancel, t_backoff, t_match, t_history, t_root]


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    bin_path, fixtures = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    only = set(argv[2:])
    for fn in CASES:
        if only and fn.__name__[2:] not in only:
            continue
        L.run_case(fn.__name__[2:], lambda: L.Env(bin_path, fixtures), fn)
    print("%d passed, %d failed" % (L.RESULTS["passed"], L.RESULTS["failed"]))
    return 1 if L.RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
