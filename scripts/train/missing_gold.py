"""The gold definitions a first ranking does not hold, and what they share
with the ranking (docs/ranker.md, "Why the 19 are not candidates"):

    missing_gold.py QUESTIONS.jsonl DUMP.jsonl INDEX_DIR/index.db [--depth 60]

DUMP is rank_features' output over the same questions (`rank_features
--depth 3000 ROOT INDEX_DIR QUESTIONS.jsonl`: the whole first ranking). For
each gold definition no candidate overlaps, one line: its question, name,
whether its file is among the candidates (and its best candidate's rank),
whether its name shares a question word stem-alike (the name prior's rule,
retrieve/rerank.c: equal, or a common prefix of four letters or more that
leaves at most two of the shorter), and whether it calls or is called by one
of the first DEPTH candidates (calls, functions named as values); then the
counts. Reads the index read-only.
"""
import json
import re
import sqlite3
import sys

# index/postings/query.c's stop words: the question's words are the rest
STOP = set("""a about after all also an and any are as at be been being but by can could did do
does doing done each for from had has have how i if in into is it its just like may me might
must my no not of on one only or other our out own s same shall should so some such than that
the their them then there these they this those through to too up us used using very was we
were what when where which while who whose why will with would you your e g eg ie way happens
get gets work works make makes code""".split())
EDGE_CALL, EDGE_REFERENCE = 1, 6  # IdxEdgeKind (index/idx.h)


def subwords(symbol):
    out = []
    for part in re.split(r"[^A-Za-z0-9]+", symbol.split(".")[-1]):
        out += [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", part)]
    return out


def same_stem(a, b):
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    if p == len(a) == len(b):
        return True
    return p >= 4 and p + 2 >= min(len(a), len(b))


def main():
    args = sys.argv[1:]
    depth = 60
    if "--depth" in args:
        i = args.index("--depth")
        depth = int(args[i + 1])
        del args[i:i + 2]
    qfile, dump, db = args
    qs = {}
    for line in open(qfile):
        if line.strip():
            q = json.loads(line)
            qs[q["id"]] = q
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)

    def chunks(path, start, end):
        return [r[0] for r in con.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ?", (path, end, start))]

    n = in_file = in_ten = share = link = 0
    for line in open(dump):
        r = json.loads(line)
        q = qs[r["id"]]
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", q["question"])
                 if w.lower() not in STOP]
        first = set()
        for c in r["cands"][:depth]:
            first.update(chunks(c["path"], c["start"], c["end"]))
        for g in q["gold"]:
            if any(c["path"] == g["path"] and c["start"] <= g["end"] and c["end"] >= g["start"]
                   for c in r["cands"]):
                continue
            n += 1
            at = [i for i, c in enumerate(r["cands"]) if c["path"] == g["path"]]
            shares = any(same_stem(w, s) for w in words for s in subwords(g["symbol"]))
            own = chunks(g["path"], g["start"], g["end"])
            linked = False
            for x in own:
                for (o,) in con.execute(
                        "SELECT dst FROM edges WHERE src = ? AND kind IN (?, ?) UNION "
                        "SELECT src FROM edges WHERE dst = ? AND kind IN (?, ?)",
                        (x, EDGE_CALL, EDGE_REFERENCE, x, EDGE_CALL, EDGE_REFERENCE)):
                    linked |= o in first and o not in own
            in_file += bool(at)
            in_ten += bool(at and at[0] < 10)
            share += shares
            link += linked
            print("%-8s %-28s file %-5s name %-6s graph %-6s %s" % (
                r["id"], g["symbol"], at[0] if at else "-", "shares" if shares else "-",
                "linked" if linked else "-", q["question"]))
    print("missing %d: file among the candidates %d (in the first 10: %d), name shares a "
          "question word %d, linked to the first %d: %d" % (n, in_file, in_ten, share, depth, link))


if __name__ == "__main__":
    main()
