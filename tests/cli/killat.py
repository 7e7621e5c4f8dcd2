#!/usr/bin/env python3
"""Runs `coderag index` and SIGKILLs it at an observable point, never after
a fixed delay, so the same moments are reached on a fast or a slow machine.

    killat.py POINT CODERAG_BIN INDEX_ARGS...

POINT is one of
  start    at once, whatever the indexer has done (usually nothing yet)
  dir      once the index directory (--index-dir) exists
  db       once its index.db exists
  N        once at least N files are committed (the database, read-only)
Prints "killed" when the kill landed, or "finished EXIT" when the indexer
ended before the point was reached. Python standard library only.
"""
import os
import sqlite3
import subprocess
import sys
import time


def committed(db):
    """Files in the last committed transaction; -1 when not readable yet."""
    if not os.path.exists(db):
        return -1
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        try:
            return con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:  # not created yet, schema not there, or busy
        return -1


def main(argv):
    point, args = argv[0], argv[1:]
    index_dir = args[args.index("--index-dir") + 1]
    db = os.path.join(index_dir, "index.db")
    if point == "start":
        reached = lambda: True  # noqa: E731
    elif point == "dir":
        reached = lambda: os.path.isdir(index_dir)  # noqa: E731
    elif point == "db":
        reached = lambda: os.path.exists(db)  # noqa: E731
    else:
        n = int(point)
        reached = lambda: committed(db) >= n  # noqa: E731
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Polling observable state; the indexer ending is the other way out, so
    # this loop ends whatever the speed of the machine.
    while p.poll() is None and not reached():
        time.sleep(0.002)
    if p.poll() is None:
        p.kill()
        p.wait()
        print("killed")
    else:
        print("finished %d" % p.returncode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
