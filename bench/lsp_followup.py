#!/usr/bin/env python3
"""Follow-ups and explain through the language server (issue 36), on click and Flask:

    bench/lsp_followup.py CODERAG_BIN CORPUS_DIR INDEX_PREFIX

For each pair (question, follow-up) `coderag/ask` (extractive) asks the follow-up alone, then
with the first turn as `history`, and prints where the context items the follow-up alone ranks
first to fifth stand in the follow-up's context (the history is a prior: the first stays first).
Then the code action "Show `X` and its callers" runs `coderag.explain` on a few methods and
prints each answer, whose callers are to be marked as callers with their call lines quoted.
The server opens CORPUS_DIR/<corpus> with the index INDEX_PREFIX<corpus> (a copy: it may
update it). Questions written for this script; click and Flask are not held out.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lsp"))
import lsp_client as L  # noqa: E402
BIN, CORPUS, PREFIX = sys.argv[1:4]
PAIRS = {
 "click": [
  ("How does click parse command line options?", "How are unknown options reported as errors?"),
  ("How are command groups dispatched to subcommands?", "What happens when the subcommand is missing?"),
  ("How does click prompt the user for a value?", "How is the input hidden for passwords?"),
  ("How are parameter types converted from strings?", "What happens when the conversion fails?"),
  ("How does a command read its default values?", "Can they come from environment variables?"),
 ],
 "flask-werkzeug": [
  ("How does Flask route a request to a view function?", "How does it answer a method the route does not allow?"),
  ("How are blueprints registered on an app?", "How are their URL prefixes applied?"),
  ("How does Flask handle an exception raised in a view?", "How is the error handler looked up for the exception class?"),
  ("How is the session cookie signed?", "What happens when the signature is invalid?"),
  ("How does the test client send a request?", "How are cookies kept between requests?"),
 ],
}
EXPLAIN = {"click": [("click/core.py", "def parse_args(self, ctx: Context, args: t.List[str]) -> t.List[str]:", "parse_args", 0),
                     ("click/parser.py", "def _match_long_opt(", "_match_long_opt", 0)],
           "flask-werkzeug": [("flask/app.py", "def dispatch_request(self)", "dispatch_request", 0)]}
def top(r, k):
    return [(c["path"], c["startLine"], c.get("symbol")) for c in r["context"][:k]]
for corpus, pairs in PAIRS.items():
    root = os.path.join(CORPUS, corpus)
    s = L.Server(BIN, "/tmp", args=["--root", root, "--index-dir", PREFIX + corpus],
                 stderr_path=os.devnull)
    s.initialize(root)
    s.wait_ready()
    for q1, q2 in pairs:
        a1 = s.call("coderag/ask", {"question": q1, "mode": "extractive"})["result"]
        alone = s.call("coderag/ask", {"question": q2, "mode": "extractive"})["result"]
        fol = s.call("coderag/ask", {"question": q2, "mode": "extractive",
                                     "history": [{"question": q1, "answer": a1["answer"]}]})["result"]
        fk = [(c["path"], c["startLine"], c.get("symbol")) for c in fol["context"]]
        fsyms = [c.get("symbol") for c in fol["context"]]
        print("Q1:", q1, "\nQ2:", q2)
        print("   alone:", [c.get("symbol") for c in alone["context"][:5]], alone["match"])
        print("   follow:", fsyms[:5], fol["match"])
        pos = []
        for c in alone["context"][:5]:
            sym = c.get("symbol")
            pos.append(fsyms.index(sym) + 1 if sym in fsyms else 0)
        print("   alone top-5 at follow-up ranks:", pos)
    for rel, line_text, name, _ in EXPLAIN.get(corpus, []):
        lines = open(os.path.join(root, rel)).read().split("\n")
        ln = next(i for i, t in enumerate(lines) if line_text in t)
        uri = L.file_uri(os.path.join(root, rel))
        pos = {"line": ln, "character": lines[ln].index(name) + 2}
        acts = s.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": pos, "end": pos},
                                                  "context": {"diagnostics": []}})["result"]
        acts = [a for a in acts if a.get("command", {}).get("command") == "coderag.explain"]
        r = s.call("workspace/executeCommand", {"command": "coderag.explain", "arguments": acts[0]["command"]["arguments"]})["result"]
        print("==== EXPLAIN", acts[0]["title"], "->", r.get("title"))
        print(r["answer"])
    s.call("shutdown", {})
    s.notify("exit", {})
