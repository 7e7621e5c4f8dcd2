#!/usr/bin/env python3
"""The extractive answer as a person first sees it (issue 36): `coderag ask`
on a 100x30 pseudo-terminal, no LLM, over question sets with gold:

    bench/answer_screen.py CODERAG_BIN CORPUS_DIR INDEX_PREFIX QUESTIONS.jsonl... \
        [--cols 100] [--rows 30] [--show N] [--args "--all"]

Each question runs `coderag ask --root CORPUS_DIR/<corpus> --index-dir
INDEX_PREFIX<corpus> --no-update --mode extractive` under a pseudo-terminal
of that size (TERM=xterm-256color); the screen's text (escapes removed,
lines wrapped at the width) is measured:
  - gold@screen: a citation on the first screen (the first ROWS lines) whose
    file and lines overlap a gold definition (score.py resolves the gold);
    named: that, or a gold definition's name (its last part) on it as a word;
  - lines: the answer's lines on screen (<= 45 is the target);
  - twice: a location (path:line) printed more than once;
  - quotes: >= 3 numbered code lines ("  366 │ ...") on the first screen.
Questions of corpora without an index are skipped. Prints one line per set
and the totals; --show N prints the first N screens.
"""
import argparse
import fcntl
import importlib.util
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from concurrent.futures import ThreadPoolExecutor

SCORE = "/work/shared/bench/score.py"
CITE = re.compile(r"([\w./+-]+\.[\w+]+):(\d+)(?:-(\d+))?")
QUOTE = re.compile(r"^\s*\d+ \u2502 ")


def load_score():
    spec = importlib.util.spec_from_file_location("score", SCORE)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def run_tty(argv, cols, rows):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
    env.pop("NO_COLOR", None)
    env.pop("CODERAG_LLM_URL", None)
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, env=env,
                         close_fds=True)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 300)
        if not r:
            break
        try:
            d = os.read(master, 65536)
        except OSError:
            break
        if not d:
            break
        out += d
    os.close(master)
    p.wait()
    return out


def visible(screen):
    s = re.sub(rb"\x1b\][^\x1b\x07]*(\x1b\\|\x07)", b"", screen)
    s = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", s).decode("utf-8", "replace")
    s = s.replace("\r\n", "\n")
    # a progress line cleared by "\r<blanks>\r": keep what follows the last \r
    return "\n".join(l.rsplit("\r", 1)[-1] for l in s.split("\n"))


def wrap(text, cols):
    """The rows on screen, and each logical line with the row it starts on."""
    rows, logical = [], []
    for line in text.rstrip("\n").split("\n"):
        line = line.expandtabs(8)
        if not rows and not line.strip():
            continue
        logical.append((len(rows), line))
        if not line:
            rows.append("")
        while line:
            rows.append(line[:cols])
            line = line[cols:]
    return rows, logical


def measure(a, score, cache, q):
    corpus = q["corpus"]
    argv = [a.bin, "ask", "--root", os.path.join(a.corpus_dir, corpus), "--index-dir",
            a.prefix + corpus, "--no-update", "--mode", "extractive"] + a.args.split() + [q["question"]]
    rows, logical = wrap(visible(run_tty(argv, a.cols, a.rows)), a.cols)
    first = rows[:a.rows]
    gold = []
    for g in q.get("gold", []):
        r = score.resolve_gold(cache, corpus, g, [])
        if r:
            gold.append((score.norm_path(g["path"]), r[0], r[1]))
    hit = False
    for at, line in logical:  # a citation wrapped over two rows is read whole
        if at >= a.rows:
            break
        for m in CITE.finditer(line):
            p, s = m.group(1), int(m.group(2))
            e = int(m.group(3) or s)
            hit = hit or any(p == gp and s <= ge and e >= gs for gp, gs, ge in gold)
    locs = {}
    for _, line in logical:
        for m in CITE.finditer(line):
            # the same file however it is written (root-relative, or from the
            # current folder in a citations block)
            key = ("/".join(m.group(1).split("/")[-2:]), m.group(2))
            locs[key] = locs.get(key, 0) + 1
    # named: the gold's name (its last part) as a word on the first screen
    screen = "\n".join(l for at, l in logical if at < a.rows)
    named = hit or any(re.search(r"(?<![\w.])%s(?!\w)" % re.escape(re.split(r"\.|::", g["symbol"])[-1]),
                                 screen) for g in q.get("gold", []) if g.get("symbol"))
    quotes = sum(1 for l in first if QUOTE.match(l))
    return {"id": q["id"], "gold": hit, "named": named, "lines": len(rows), "twice": any(v > 1 for v in locs.values()),
            "quotes": quotes, "rows": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("corpus_dir")
    ap.add_argument("prefix")
    ap.add_argument("questions", nargs="+")
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--rows", type=int, default=30)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("--args", default="")
    ap.add_argument("--max-lines", type=int, default=45)
    ap.add_argument("--misses", action="store_true", help="list the questions without gold on the first screen")
    a = ap.parse_args()
    score = load_score()
    cache = score.FileCache(a.corpus_dir)
    total = []
    for f in a.questions:
        qs = [json.loads(l) for l in open(f) if l.strip()]
        have = [q for q in qs if os.path.isdir(a.prefix + q["corpus"])]
        with ThreadPoolExecutor(2) as ex:
            res = list(ex.map(lambda q: measure(a, score, cache, q), have))
        total += res
        report(os.path.basename(f), res, len(qs) - len(have), a.max_lines)
    if len(a.questions) > 1:
        report("all", total, 0, a.max_lines)
    if a.misses:
        print("no gold on the first screen:", " ".join(r["id"] for r in total if not r["gold"]))
    for r in total[:a.show]:
        print("---- %s (%d lines)" % (r["id"], r["lines"]))
        print("\n".join(r["rows"][:a.rows]))


def report(name, res, skipped, max_lines):
    n = max(len(res), 1)
    pct = lambda k: 100.0 * k / n
    print("%-26s %3d asked (%d skipped)  gold@screen %5.1f%% (named %5.1f%%)  <=%d lines %5.1f%% (median %d, max %d)"
          "  twice %d  quotes>=3 %5.1f%%"
          % (name, len(res), skipped, pct(sum(r["gold"] for r in res)), pct(sum(r["named"] for r in res)), max_lines,
             pct(sum(r["lines"] <= max_lines for r in res)),
             sorted(r["lines"] for r in res)[len(res) // 2] if res else 0,
             max((r["lines"] for r in res), default=0), sum(r["twice"] for r in res),
             pct(sum(r["quotes"] >= 3 for r in res))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
