#!/usr/bin/env python3
"""Hover, code lens, call hierarchy, code action and coderag.explain on the
definition under the cursor, in every language (tests/fixtures/explain, see its generator
tests/fixtures/explain.gen.py): in each, Headers.render is longer than the
indexer's window (several chunks), First.render (the file's first),
Other.render (nearer to the call in Headers.update) and a module-level render
in util/ share its name. The LLM
is tests/fake_openai.py on loopback.

    lsp_explain_test.py CODERAG_BIN FIXTURE_DIR explain
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsp_client as L  # noqa: E402
from lsp_client import check, check_sanitizers, fake_llm, fake_log, run_groups  # noqa: E402

# (file with Headers, Headers' render as the index names it, the line before
# its name (or the name's line itself), kind word in hover)
LANGS = [
    ("python/headers.py", "Headers.render", "class Headers"),
    ("c/headers.c", "render", "one step at a time"),
    ("cpp/headers.cc", "Headers.render", "one step at a time"),
    ("go/headers.go", "Headers.render", "one step at a time"),
    ("rust/headers.rs", "Headers.render", "one step at a time"),
    ("java/Headers.java", "Headers.render", "one step at a time"),
    ("js/headers.js", "Headers.render", "one step at a time"),
    ("ts/headers.ts", "Headers.render", "one step at a time"),
]


def lines_of(env, rel):
    with open(os.path.join(env.root, rel), encoding="utf-8") as f:
        return f.read().split("\n")


def positions(lines, after):
    """0-based (line, character) of render's name and of its call in update,
    and the 1-based first and last lines of Headers.render."""
    armed = False
    name = call = last = None
    for i, text in enumerate(lines):
        if after in text:
            armed = True
        if armed and name is None and "render(" in text:
            name = (i, text.index("render("))
        if "fresh" in text and "render(" in text:
            call = (i, text.index("render("))
        if "n + 119" in text:
            last = i + 1
    return name, call, last


def explain(s, uri, pos):
    where = {"textDocument": {"uri": uri}, "position": {"line": pos[0], "character": pos[1] + 2}}
    acts = s.call("textDocument/codeAction", {"textDocument": {"uri": uri},
                                              "range": {"start": where["position"], "end": where["position"]},
                                              "context": {"diagnostics": []}})["result"]
    check(len(acts) == 1 and acts[0]["command"]["command"] == "coderag.explain", "action: %r" % acts)
    r = s.call("workspace/executeCommand", {"command": "coderag.explain",
                                            "arguments": acts[0]["command"]["arguments"]})
    check("result" in r, "explained: %r" % r)
    return acts[0]["title"], r["result"]


def t_explain_langs(env):
    shutil.rmtree(env.root)
    shutil.copytree(os.path.join(env.fixtures, "explain"), env.root)
    script = {"actions": {"chat": [{"content": "It renders every header {ctx0}.", "times": 1000}]}}
    with fake_llm(script) as port:
        s = env.server()
        s.initialize(env.root, options={"llm": {"url": "http://127.0.0.1:%d" % port}})
        s.wait_ready()
        for rel, symbol, after in LANGS:
            lines = lines_of(env, rel)
            name, call, last = positions(lines, after)
            check(name and call and last, "%s: positions %r %r %r" % (rel, name, call, last))
            uri = env.uri(rel)
            # the whole definition: from its first line (the name's, or the
            # comment/attribute line above it) to its closing line
            first = name[0] + 1
            what = "%s %s" % (rel, symbol)

            # hover on the call in update: Headers' render first, whole
            h = s.call("textDocument/hover", {"textDocument": {"uri": uri},
                                              "position": {"line": call[0], "character": call[1] + 1}})
            md = (h.get("result") or {}).get("contents", {}).get("value", "")
            head = md.split("**Also defined**")[0]
            check("`%s` — [`%s`](%s#L%d)" % (symbol, symbol, uri, first) in head,
                  "%s: hover names the definition in scope: %s" % (what, md))

            # call hierarchy from the call: the same definition, whole
            r = s.call("textDocument/prepareCallHierarchy",
                       {"textDocument": {"uri": uri}, "position": {"line": call[0], "character": call[1] + 1}})
            items = r.get("result") or []
            check(len(items) == 1 and items[0]["uri"] == uri and items[0]["range"]["start"]["line"] == first - 1
                  and items[0]["range"]["end"]["line"] >= last, "%s: call hierarchy item %r" % (what, r))
            sel = items[0]["selectionRange"]["start"] if items else None
            check(sel == {"line": name[0], "character": name[1]},
                  "%s: call hierarchy selection on the name: %r" % (what, sel))

            # lenses: one pair on Headers.render, its question qualified
            lenses = s.call("textDocument/codeLens", {"textDocument": {"uri": uri}})["result"]
            asks = [x["command"] for x in lenses if x["range"]["start"]["line"] == first - 1
                    and x["command"]["command"] == "coderag.ask"]
            check(len(asks) == 1 and "`%s`" % symbol in asks[0]["arguments"][0]["question"],
                  "%s: lens on line %d: %r" % (what, first, lenses))

            # explain, on the call and on the name: the whole right definition
            for where in (call, name):
                n_before = len(fake_log(port))
                title, res = explain(s, uri, where)
                check("`%s`" % symbol in title, "%s: action title %r" % (what, title))
                check(res.get("mode") == "llm" and res.get("symbol") == symbol
                      and "`%s`" % symbol in res.get("title", ""), "%s: result %r" % (what, res))
                ctx = res["context"][0]
                check(ctx["path"] == rel and ctx["symbol"] == symbol and ctx["startLine"] == first
                      and last < ctx["endLine"] <= last + 2,
                      "%s: first context item is the whole definition: %r" % (what, res["context"]))
                check(all(c["path"] != rel or c["endLine"] < first or c["startLine"] > ctx["endLine"]
                          for c in res["context"][1:]), "%s: its lines once: %r" % (what, res["context"]))
                cits = res["citations"]
                check(len(cits) == 1 and cits[0]["startLine"] == first, "%s: cited %r" % (what, cits))
                chats = [r for r in fake_log(port)[n_before:] if r.get("endpoint") == "chat/completions"]
                if chats:  # a second explain of the same definition is cached
                    prompt = chats[-1]["json"]["messages"][-1]["content"]
                    block = "[%s:%d-%d] %s" % (rel, first, ctx["endLine"], symbol)
                    check(block in prompt.split("\n## Block 2")[0] and "`%s`" % symbol in prompt,
                          "%s: the LLM saw it first: %s" % (what, prompt[:600]))
        stale_after_edit(env, s)
        check(s.shutdown_exit() == 0, "exit code")
        check_sanitizers(s)


def stale_after_edit(env, s):
    """Hover shows the explanation of Headers.render until a line of its last
    window changes (the cache is keyed on every piece, not the first)."""
    rel = "python/headers.py"
    uri = env.uri(rel)
    lines = lines_of(env, rel)
    name = positions(lines, "class Headers")[0]
    where = {"textDocument": {"uri": uri}, "position": {"line": name[0], "character": name[1] + 1}}
    md = s.call("textDocument/hover", where)["result"]["contents"]["value"]
    check("**Explanation**" in md and "It renders every header" in md, "hover shows it: %s" % md)
    at = [i for i, text in enumerate(lines) if "n + 115" in text][0]
    lines[at] = lines[at].replace("n + 115", "n + 1150")
    env.write(rel, "\n".join(lines))
    s.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    md = s.call("textDocument/hover", where)["result"]["contents"]["value"]
    check("Headers.render" in md and "**Explanation**" not in md,
          "an edit in its last window: the explanation is stale: %s" % md)


GROUPS = {"explain": [t_explain_langs]}

if __name__ == "__main__":
    sys.exit(run_groups(sys.argv[1:], GROUPS, __doc__))
