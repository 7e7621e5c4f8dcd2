#!/usr/bin/env python3
"""Protocol tests of `coderag lsp`: navigation (hover, code lenses,
definitions), long definitions, workspace symbols and call hierarchy.

    lsp_nav_test.py CODERAG_BIN FIXTURE_DIR nav

(lsp_test.py runs the group too.) The harness is lsp_client.py's."""
import os
import shutil
import sqlite3
import sys
from lsp_client import check, check_sanitizers, context_symbols, did_open, run_groups


def t_nav(env):
    """Code lenses (reference counts, Ask CodeRAG, last answer's citations)
    and hover (definition, docstring, callers as links)."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    uri, text = did_open(s, env, "shop/models.py")
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
    # Go to definition from the same call: apply_tax's first line (0-based 38).
    d = s.call("textDocument/definition", {"textDocument": {"uri": uri}, "position": {"line": 35, "character": 18}})
    res = d.get("result") or {}
    check(res.get("uri") == uri and res.get("range", {}).get("start", {}).get("line") == 38,
          "definition of apply_tax from its call: %r" % d)
    d = s.call("textDocument/definition", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}})
    check("result" in d and d["result"] is None, "no definition on a blank line: %r" % d)
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


def t_nav_lang(env):
    """Hover fences a definition in its own language (the table's fence tag),
    never as Python (tests/fixtures/lang/go and ts beside the shop)."""
    shutil.copytree(os.path.join(env.fixtures, "lang", "go"), os.path.join(env.root, "goapp"))
    shutil.copytree(os.path.join(env.fixtures, "lang", "ts"), os.path.join(env.root, "tsapp"))
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    for rel, line, char, want in (("goapp/store/store.go", 13, 17, "```go\nfunc (s *Store) Get(k string)"),
                                  ("tsapp/index.ts", 7, 3, "```typescript\n"),
                                  ("shop/models.py", 38, 6, "```python\n")):
        h = s.call("textDocument/hover", {"textDocument": {"uri": env.uri(rel)},
                                          "position": {"line": line, "character": char}})
        md = (h["result"] or {}).get("contents", {}).get("value", "")
        check(md.startswith(want), "hover in %s: %s" % (rel, md[:200]))
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


def damage_under_server(db):
    """Damages index.db under a running server so that its next read meets
    the damage: a commit from another connection (the server's page cache is
    dropped when it sees one), every page moved into the file, then every
    page but the first (the header and the schema, which the server has
    read) overwritten with garbage."""
    con = sqlite3.connect(db, timeout=30)
    con.execute("INSERT INTO meta VALUES('lsp-test', 'x')")
    con.commit()
    con.execute("DELETE FROM meta WHERE key = 'lsp-test'")
    con.commit()
    busy = con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    check(busy == 0, "the checkpoint moved every page into index.db")
    size = os.path.getsize(db)
    check(size > 4 * page, "a database of several pages (%d bytes)" % size)
    with open(db, "r+b") as f:
        f.seek(page)
        f.write(b"\xa5" * (size - page))


def t_nav_dberr(env):
    """A database that cannot be read is an error reply (-32803 naming the
    index), never an empty result: hover, code lenses, workspace symbols
    and call hierarchy, on an index damaged under the server."""
    s = env.server()
    s.initialize(env.root)
    s.wait_ready()
    uri, _ = did_open(s, env, "shop/models.py")
    at_call = {"textDocument": {"uri": uri}, "position": {"line": 35, "character": 18}}
    requests = (("textDocument/hover", at_call),
                ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
                ("workspace/symbol", {"query": "apply_tax"}),
                ("textDocument/prepareCallHierarchy", at_call))
    for method, params in requests:
        r = s.call(method, params)
        check(r.get("result"), "%s answers before the damage: %r" % (method, r))
    damage_under_server(os.path.join(env.root, ".coderag", "index.db"))
    for method, params in requests:
        r = s.call(method, params)
        err = r.get("error") or {}
        check(err.get("code") == -32803 and "index" in err.get("message", ""),
              "%s: an error, not an empty result: %r" % (method, r))
    check(s.call("coderag/status", {}).get("result"), "the server still answers")
    check(s.shutdown_exit() == 0, "exit code")
    check_sanitizers(s)


GROUPS = {
    "nav": [t_nav, t_nav_long, t_nav_lang, t_hierarchy, t_nav_dberr],
}


if __name__ == "__main__":
    sys.exit(run_groups(sys.argv[1:], GROUPS, __doc__))
