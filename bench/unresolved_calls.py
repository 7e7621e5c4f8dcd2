#!/usr/bin/python3
"""How many bare calls in a C index's .c files the graph leaves unresolved,
and of those how many name a function that .c files define at top level,
not static, in 1, 2-3 or 4+ files (what a linker would pick among).

    unresolved_calls.py INDEX_DIR/index.db

Reads the index only. "static" is read from each definition's signature."""
import collections
import sqlite3
import sys


def main():
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    q = db.execute
    n_call = q("SELECT count(*) FROM refs WHERE kind = 1").fetchone()[0]
    bare = q("SELECT count(*) FROM refs WHERE kind = 1 AND qual IS NULL").fetchone()[0]
    unres = collections.Counter()
    for (last,) in q("SELECT r.last FROM refs r JOIN chunks c ON c.id = r.chunk_id "
                     "JOIN files f ON f.id = c.file_id WHERE r.kind = 1 AND r.qual IS NULL "
                     "AND f.path LIKE '%.c' AND NOT EXISTS (SELECT 1 FROM edges e "
                     "WHERE e.src = r.chunk_id AND e.ref_id = r.id)"):
        unres[last] += 1
    files = collections.defaultdict(set)
    for name, path, sig in q("SELECT c.name, f.path, c.signature FROM chunks c "
                             "JOIN files f ON f.id = c.file_id WHERE f.path LIKE '%.c' "
                             "AND c.kind = 2 AND c.signature NOT LIKE '#define%'"):
        head = sig.split("(")[0].split()
        if "static" not in head:
            files[name].add(path)
    refs, names = collections.Counter(), collections.Counter()
    for name, k in unres.items():
        n = len(files.get(name, ()))
        key = "0" if n == 0 else "1" if n == 1 else "2-3" if n <= 3 else "4+"
        refs[key] += k
        names[key] += 1
    tot = sum(unres.values())
    print("call refs %d, bare %d, bare and unresolved in .c files %d (%d names)"
          % (n_call, bare, tot, len(unres)))
    for key in ("0", "1", "2-3", "4+"):
        print("  defined non-static in %-3s .c files: %8d refs (%.1f%%), %d names"
              % (key, refs[key], 100.0 * refs[key] / max(tot, 1), names[key]))
    top = sorted(((k, n) for n, k in unres.items() if len(files.get(n, ())) >= 2), reverse=True)
    print("  most called of those defined in 2+: " + ", ".join("%s %d" % (n, k) for k, n in top[:8]))


if __name__ == "__main__":
    main()
