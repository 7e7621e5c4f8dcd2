"""Mines pseudo-questions for the re-ranker from one package's index, in any
language the index reads: a definition's doc comment's first sentence asks
for that definition, and a test's name asks for what the test calls. All
are paraphrased: the targets' own names are removed, and a
seeded quarter of the rest dropped, so that the model learns from questions
that do not name what they ask about.

Questions whose gold is several definitions (as most questions asked of a
code base are: --multi, scripts/train/mine_multi.py):
  refs     a doc comment naming other definitions of the package -> it and them;
  calls    a test (its doc comment, else its name) -> the 2 to 5 definitions it calls;
  module   a module's doc comment -> the definitions it names, else its file's
           public definitions when there are 2 to 5;
  section  a README/manual section (Markdown, reST; --docs DIR) -> the
           definitions its code names.

    mine_ranker.py INDEX_DIR NAME OUT_JSONL [--seed N] [--max-doc N] [--max-test N]
                   [--paraphrase names|words] [--targets all|functions] [--min-lines N]
                   [--multi refs,calls,module,section] [--max-multi N] [--docs DIR]

--paraphrase names (the default) removes the target's identifiers as
written; words also every word they are made of. --targets functions asks
doc questions about functions and methods only, of at least --min-lines lines.

Writes dev-lang-questions.jsonl lines: {"id", "corpus": NAME, "question",
"gold": [{"path", "symbol", "start", "end"}], "kind": "doc"|"test"}.
"""
import json
import random
import re
import sqlite3
import sys

import mine_multi
from excluded import path_excluded

KIND_CLASS, KIND_FUNCTION, KIND_METHOD = 1, 2, 3
EDGE_CALL = 1
TEST_PATH = re.compile(r"(^|/)(tests?|testing|__tests__|specs?)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$"
                       r"|Tests?\.java$|\.(test|spec)\.[jt]sx?$")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
STOP = {"the", "a", "an", "of", "to", "and", "or", "is", "in", "for", "this", "that", "it", "be",
        "with", "on", "as", "by", "if", "are", "returns", "return", "from", "its", "at", "which"}


def subwords(name):
    out = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        out += [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", part)]
    return out


def first_sentence(doc):
    doc = re.sub(r"\s+", " ", doc.strip())
    m = re.search(r"(.+?[.!?])(\s|$)", doc)
    return m.group(1) if m else doc


def paraphrase(text, own, rng, whole_only):
    """text without the target's own name: its identifiers as written
    (whole_only), or also every word of them."""
    words = [w for w in WORD.findall(text)]
    names = {p.lower() for p in own}
    parts_of = set()
    for p in own:
        parts_of.update(subwords(p))
    kept = []
    for w in words:
        if w.lower() in names:
            continue
        parts = subwords(w)
        if not whole_only and parts and all(p in parts_of for p in parts):
            continue
        kept.append(w)
    content = [w for w in kept if w.lower() not in STOP]
    if len(content) < 3:
        return None
    drop = set(rng.sample(range(len(kept)), len(kept) // 4)) if len(kept) > 6 else set()
    out = [w for i, w in enumerate(kept) if i not in drop]
    return " ".join(out)


def main():
    idx, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
    opts = {"--seed": "1", "--max-doc": "80", "--max-test": "40", "--paraphrase": "names",
            "--targets": "all", "--min-lines": "1", "--multi": "", "--max-multi": "60",
            "--docs": ""}
    args = sys.argv[4:]
    for i in range(0, len(args), 2):
        opts[args[i]] = args[i + 1]
    kinds = {KIND_FUNCTION, KIND_METHOD} if opts["--targets"] == "functions" else \
        {KIND_CLASS, KIND_FUNCTION, KIND_METHOD}
    rng = random.Random("%s/%s" % (opts["--seed"], name))
    db = sqlite3.connect("file:%s/index.db?mode=ro" % idx, uri=True)
    files = {fid: path for fid, path in db.execute("SELECT id, path FROM files")}
    # whole definitions: the span of all pieces of a (file, symbol)
    spans = {}
    for fid, sym, a, b in db.execute("SELECT file_id, symbol, start_line, end_line FROM chunks "
                                     "WHERE symbol != ''"):
        s = spans.get((fid, sym))
        spans[(fid, sym)] = (min(a, s[0]), max(b, s[1])) if s else (a, b)
    rows = db.execute("SELECT id, file_id, symbol, name, docstring, kind FROM chunks WHERE cont = 0 "
                      "AND symbol != '' AND kind IN (?, ?, ?) ORDER BY id",
                      (KIND_CLASS, KIND_FUNCTION, KIND_METHOD)).fetchall()
    by_id = {r[0]: r for r in rows}
    docs, tests = [], []
    for cid, fid, sym, nm, doc, kind in rows:
        path = files[fid]
        if path_excluded(path):
            continue
        is_test = bool(TEST_PATH.search(path))
        a, b = spans[(fid, sym)]
        if doc and not is_test and kind in kinds and b - a + 1 >= int(opts["--min-lines"]):
            own = sym.split(".") + [sym]
            q = paraphrase(first_sentence(doc), own, rng, opts["--paraphrase"] == "names")
            if q:
                docs.append({"question": q, "kind": "doc",
                             "gold": [{"path": path, "symbol": sym, "start": a, "end": b}]})
        last = sym.split(".")[-1]
        if is_test and kind != KIND_CLASS and last.lower().startswith("test"):
            words = [w for w in subwords(last) if w != "test"]
            if len(words) < 2:
                continue
            gold = []
            for (dst,) in db.execute("SELECT DISTINCT dst FROM edges WHERE src = ? AND kind = ?",
                                     (cid, EDGE_CALL)):
                r = by_id.get(dst)
                if not r or TEST_PATH.search(files[r[1]]) or path_excluded(files[r[1]]):
                    continue
                a, b = spans[(r[1], r[2])]
                gold.append({"path": files[r[1]], "symbol": r[2], "start": a, "end": b})
            # a test calling many things names none of them in particular
            if 1 <= len(gold) <= 3:
                tests.append({"question": " ".join(words), "kind": "test", "gold": gold})
    rng.shuffle(docs)
    rng.shuffle(tests)
    picked = docs[:int(opts["--max-doc"])] + tests[:int(opts["--max-test"])]
    multi = []
    if opts["--multi"]:
        ctx = mine_multi.Package(db, files, spans, rows, is_test=lambda p: bool(TEST_PATH.search(p)),
                                 excluded=path_excluded)
        for kind in opts["--multi"].split(","):
            qs = mine_multi.MINERS[kind](ctx, opts["--docs"])
            out_qs = []
            for text, gold, own in qs:
                q = paraphrase(text, own, rng, opts["--paraphrase"] == "names")
                if q:
                    out_qs.append({"question": q, "kind": kind, "gold": gold})
            rng.shuffle(out_qs)
            multi += out_qs[:int(opts["--max-multi"])]
            print("%s: %s %d (of %d)" % (name, kind, min(len(out_qs), int(opts["--max-multi"])),
                                         len(out_qs)))
    picked += multi
    with open(out, "w") as w:
        for i, q in enumerate(picked):
            q = dict(q, id="%s-%03d" % (name, i), corpus=name)
            w.write(json.dumps(q) + "\n")
    print("%s: %d doc, %d test questions (of %d, %d)" % (name, min(len(docs), int(opts["--max-doc"])),
          min(len(tests), int(opts["--max-test"])), len(docs), len(tests)))


if __name__ == "__main__":
    main()
