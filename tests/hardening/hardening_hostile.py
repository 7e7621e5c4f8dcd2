#!/usr/bin/env python3
"""Hostile repositories and resource limits (issue 40; groups hostile,
repair and limits of hardening.py, which runs them): pathological files and
.gitignore patterns finish (a generous bound that only a hang reaches;
what is bounded is counted: refs per line), a .gitignore that cannot be
read whole fails closed, index folders nested in the tree and paths past
PATH_MAX are never read and are listed, an index with a table gone is
rebuilt by a writer and told to a reader, and under `ulimit -v` and
`ulimit -n` index, ask and both servers work or fail with a `coderag:`
message and exit 2, never hang.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
from hardening_util import check, clean_env, digest, index, run, status
import lsp_client  # on sys.path through hardening_util

HANG = 300  # seconds: only a hang reaches it


def rows(index_dir, sql, args=()):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(index_dir, "index.db"), uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def files(index_dir):
    return dict(rows(index_dir, "SELECT path, status FROM files"))


def shop(fixtures, work):
    ws = os.path.join(work, "ws")
    shutil.copytree(os.path.join(fixtures, "shop"), ws)
    return ws


def index_bounded(bin_path, ws, ix, what):
    try:
        r = run([bin_path, "index", "--root", ws, "--index-dir", ix], timeout=HANG)
    except subprocess.TimeoutExpired:
        raise AssertionError("%s: `coderag index` still running after %d s" % (what, HANG))
    check(r.returncode == 0, "%s: exit %d %s" % (what, r.returncode, r.stderr[-300:]))
    return r


# ---------------------------------------------------------------- hostile


def t_py_chain(bin_path, fixtures, work):
    """A Python line `x = a.b.b.b...` of 490,000 links (under the 1 MiB file
    cap): skipped `too-nested` (its tree is 490,000 deep), the rest indexed.
    Before: quadratic, 148 s for 20,000 links; then indexed with its
    references bounded, in about 2 s of CPU and 155 MB."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    with open(os.path.join(ws, "chain.py"), "w") as f:
        f.write("x = a" + ".b" * 490000 + "\n\n\ndef after_chain():\n    return x.b.c\n")
    index_bounded(bin_path, ws, ix, "a 490,000-link chain")
    got = files(ix)
    check(got.get("chain.py") == "too-nested", "chain.py listed: %s" % got.get("chain.py"))
    check(any(v == "ok" for v in got.values()), "the rest indexed")
    print("  a 490,000-link attribute chain: listed too-nested")


# Per language row: the file's suffix and a function whose body sets x to
# an expression (%s); C's nested initializer is a declaration of its own.
NEST_ROWS = [
    ("c", "int main(void) {\n  x = %s;\n}\n"),
    ("cpp", "int main() {\n  x = %s;\n}\n"),
    ("go", "package p\n\nfunc main() {\n\tx = %s\n}\n"),
    ("rs", "fn main() {\n    let x = %s;\n}\n"),
    ("java", "class A {\n  void m() {\n    x = %s;\n  }\n}\n"),
    ("js", "function main() {\n  x = %s;\n}\n"),
    ("ts", "function main(): void {\n  x = %s;\n}\n"),
    ("py", "def main():\n    x = %s\n"),
]


def nest_cases(ext, wrap):
    """(name, text, skipped) for one row: what nests too deep is skipped,
    what is merely long, wide or repeated is indexed."""
    n = 100000
    yield "parens", wrap % ("(" * n + "a" + ")" * n), True
    yield "brackets", wrap % ("[" * n + "]" * n) if ext not in ("c", "cpp", "go", "java") else (
        "int x[] = " + "{" * n + "1" + "}" * n + ";\n" if ext in ("c", "cpp") else
        wrap % ("[]int{" * (n // 6) + "}" * (n // 6)) if ext == "go" else
        wrap % ("new int[][]{" + "{" * n + "}" * n + "}")), True
    yield "calls", wrap % ("g(" * n + "a" + ")" * n), True
    yield "method_chain", wrap % ("a" + ".b()" * 20000), True
    yield "member_chain", wrap % ("a" + ".b" * 40000), True
    yield "sum_of_calls", wrap % ("g()" + " + g()" * 20000), True
    yield "long_line", wrap % ("g(a" + ", a" * 50000 + ")"), False
    yield "string", wrap % ('"' + "s" * 200000 + '"'), False
    yield "identifier", wrap % ("i" * 200000), False
    yield "nested_200", wrap % ("g(" * 200 + "a" + ", a" * 2000 + ")" * 200), False


def t_nesting(bin_path, fixtures, work):
    """Every tree-sitter row, files that nest deep: brackets open 100,000
    deep (parentheses, a nested list or initializer, calls in calls), a
    method chain of 20,000 calls, a member chain of 40,000 links, a sum of
    20,000 calls: each skipped `too-nested` (status lists it), the rest of
    the root indexed. Before: the query pass is quadratic in the depth
    (tree-sitter's cursor keeps a state per open `(parent (child))`
    pattern, and past 65,535 levels never drops them): C's nested
    initializer of 500,000 levels, and calls in calls, method chains and
    sums of calls in C, C++, Go, Java and JavaScript ran for minutes (each
    case here was indexed, most in seconds). A line of 50,000 arguments, a
    200 KB string and identifier, and calls nested 200 deep are indexed."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    want = {}
    os.makedirs(os.path.join(ws, "nest"))
    for ext, wrap in NEST_ROWS:
        for name, text, skipped in nest_cases(ext, wrap):
            rel = "nest/%s_%s.%s" % (name, ext, ext)
            with open(os.path.join(ws, rel), "w") as f:
                f.write(text)
            want[rel] = "too-nested" if skipped else "ok"
    index_bounded(bin_path, ws, ix, "files that nest deep")
    got = files(ix)
    wrong = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    check(not wrong, "listed (got, wanted): %s" % wrong)
    check(any(v == "ok" for k, v in got.items() if not k.startswith("nest/")), "the rest indexed")
    r = run([bin_path, "status", "--root", ws, "--index-dir", ix, "--json"])
    n_skipped = sum(v == "too-nested" for v in want.values())
    check(json.loads(r.stdout).get("skipped", 0) >= n_skipped, "status counts them skipped")
    print("  %d files nesting deep in %d rows: listed too-nested; %d long, wide or 200 deep: "
          "indexed" % (n_skipped, len(NEST_ROWS), len(want) - n_skipped))


# Rows whose grammar makes a run of comments inside one statement children
# of one node: (file, text of 70,000 comments there); and one C file of
# 60,000, under the 16-bit count, which is indexed.
WIDE_ROWS = [
    ("wide/comments.c", "int x = " + "/**/\n" * 70000 + "1;\n"),
    ("wide/comments.js", "let x = " + "/**/\n" * 70000 + "1;\n"),
    ("wide/comments.go", "package p\n\nvar x = " + "/**/\n" * 70000 + "1\n"),
    ("wide/comments.py", "x = (\n" + "#c\n" * 70000 + "1)\n"),
]


def t_wide_nodes(bin_path, fixtures, work):
    """Files that make tree-sitter 0.20 build a node of 65,536 or more
    children (it counts them in 16 bits): 70,000 comments inside one
    statement in C, JavaScript, Go and Python. Each is listed `too-nested`,
    the rest of the root indexed; 60,000 comments are indexed. Before: the
    process aborted ("munmap_chunk(): invalid pointer", "free(): invalid
    size": tree-sitter freed a pointer inside its children's block), with
    nothing indexed. The children tree-sitter lost are leaked (its refcounts
    of them are never dropped), so LeakSanitizer is told not to look."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    os.makedirs(os.path.join(ws, "wide"))
    want = {}
    for rel, text in WIDE_ROWS:
        with open(os.path.join(ws, rel), "w") as f:
            f.write(text)
        want[rel] = "too-nested"
    with open(os.path.join(ws, "wide/fewer.c"), "w") as f:
        f.write("int y = " + "/**/\n" * 60000 + "1;\n")
    want["wide/fewer.c"] = "ok"
    env = clean_env({"ASAN_OPTIONS": "detect_leaks=0", "LSAN_OPTIONS": "detect_leaks=0"})
    try:
        r = run([bin_path, "index", "--root", ws, "--index-dir", ix], env=env, timeout=HANG)
    except subprocess.TimeoutExpired:
        raise AssertionError("nodes of 70,000 children: still running after %d s" % HANG)
    check(r.returncode == 0, "exit %d %s" % (r.returncode, r.stderr[-300:]))
    got = files(ix)
    wrong = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    check(not wrong, "listed (got, wanted): %s" % wrong)
    check(any(v == "ok" for k, v in got.items() if not k.startswith("wide/")), "the rest indexed")
    print("  70,000 comments in one statement in %d rows: listed too-nested; 60,000: indexed"
          % len(WIDE_ROWS))


# Error recovery that holds memory or repeats work out of all proportion to
# the input (each 500 KB): C++ `a<b,` held 1.27 GB, `a ****… b` 260 MB;
# 20,000 Rust lifetimes `'a 'a …` in a body (60 KB) took 3.4 s of CPU and were
# indexed (166,000: cut by the wall-time budget after 87 s).
RECOVERY_ROWS = [
    ("rec/lt.cpp", "a<b," * 125000 + "\n"),
    ("rec/stars.cpp", "a " + "*" * 500000 + " b;\n"),
    ("rec/lifetimes.rs", "fn f() { " + "'a " * 20000 + "}\n"),
]


def t_recovery_budget(bin_path, fixtures, work):
    """Inputs whose error recovery allocates far more than any real file
    (docs/hardening.md, the parse's budgets): each listed `too-costly` by a
    count of the bytes tree-sitter holds and allocates, never by a clock;
    the rest of the root indexed. Outside a sanitized build, under `ulimit -v`
    1 GB: the build finishes (before: out of memory, exit 2)."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    os.makedirs(os.path.join(ws, "rec"))
    for rel, text in RECOVERY_ROWS:
        with open(os.path.join(ws, rel), "w") as f:
            f.write(text)
    with open(bin_path, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    pre = "true" if sanitized else limited(as_bytes=1 << 30)
    code, out, err = run_limited([bin_path, "index", "--threads", "1", "--root", ws,
                                  "--index-dir", ix], pre)
    check(code == 0, "exit %d %s" % (code, err[-300:]))
    got = files(ix)
    wrong = {k: got.get(k) for k, _ in RECOVERY_ROWS if got.get(k) != "too-costly"}
    check(not wrong, "listed: %s" % wrong)
    check(any(v == "ok" for k, v in got.items() if not k.startswith("rec/")), "the rest indexed")
    print("  error recovery in %d rows: listed too-costly%s" %
          (len(RECOVERY_ROWS), "" if sanitized else " (under ulimit -v 1 GB)"))


# Valid files made of nothing but tokens (docs/hardening.md, "work per
# file"): each cost 1.0 to 3.6 s of CPU per MiB to index, about five times
# what real sources cost; the table of designated initializers stays under
# its budget (its `.open = f` are what the index keeps of such tables).
DENSE_ROWS = [
    ("dense/args.c", "void f(void){ g(" + ",".join(["a"] * 250000) + "); }\n"),
    ("dense/fns.c", "".join("void f%d(void){}\n" % i for i in range(50000))),
    ("dense/fns.rs", "".join("fn f%d(){}\n" % i for i in range(62000))),
    ("dense/mac.rs", "fn f(){ m!(" + " ".join("x.f%d(a)" % i for i in range(60000)) + "); }\n"),
    ("dense/fns.py", "".join("def f%d(): pass\n" % i for i in range(50000))),
    ("dense/arr.js", "var t = [" + ",".join(["a"] * 250000) + "];\n"),
]
# Those whose work is known to pass the budget before their tree is walked:
# counted from the text before the parse, they stop before it ends (or do
# not start it); each was parsed whole before (args.c and mac.rs walked too).
DENSE_EARLY = ("dense/args.c", "dense/mac.rs", "dense/arr.js")
DENSE_KEPT = ("dense/ops.c", "struct ops t[] = {\n" +
              "".join(" {.open = f%d, .n = %d},\n" % (i, i) for i in range(30000)) + "};\n")


def t_dense_files(bin_path, fixtures, work):
    """Valid token-dense files (a call of 250,000 arguments, 50,000 one-line
    functions, 60,000 calls in a macro's tokens, an array of 250,000 names):
    each listed `too-costly` by the count of its work (tree-sitter's
    allocations, the nodes and hidden list levels a query walks, the
    references and definitions kept), never by a clock; the lists and the
    macro stopped in their parse or before it, by the work their text
    foretells; a 900 KB table of 30,000 designated initializers and the rest
    of the root indexed, the table's stores kept. Before: each indexed, at
    1.0 to 3.6 s of CPU per MiB; then the lists were parsed whole and
    walked before they were skipped."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    os.makedirs(os.path.join(ws, "dense"))
    for rel, text in DENSE_ROWS + [DENSE_KEPT]:
        with open(os.path.join(ws, rel), "w") as f:
            f.write(text)
    r = index_bounded(bin_path, ws, ix, "token-dense files")
    got = files(ix)
    wrong = {k: got.get(k) for k, _ in DENSE_ROWS if got.get(k) != "too-costly"}
    check(not wrong, "listed: %s" % wrong)
    for rel in DENSE_EARLY:
        said = [ln for ln in r.stderr.splitlines() if ln.startswith("coderag: warn: %s:" % rel)]
        check(len(said) == 1 and re.search(r"counted at (the parse|its text),", said[0]),
              "%s: stopped in or before its parse: %s" % (rel, said))
    check(got.get(DENSE_KEPT[0]) == "ok", "%s: %s" % (DENSE_KEPT[0], got.get(DENSE_KEPT[0])))
    stores = rows(ix, "SELECT count(*) FROM refs WHERE kind = 7 AND qual LIKE 'open.f%'")[0][0]
    check(stores == 30000, "the table's stores kept: %d" % stores)
    check(any(v == "ok" for k, v in got.items() if not k.startswith("dense/")), "the rest indexed")
    print("  %d token-dense files: listed too-costly (%d stopped in or before the parse); a table "
          "of 30,000 entries: indexed (%d stores)" % (len(DENSE_ROWS), len(DENSE_EARLY), stores))


# tree-sitter 0.20's `assert(did_merge)` (ts_parser__handle_error): 66,000
# comments inside one Rust statement abort the process.
CRASH_RS = "fn main() {\n    let x = " + "/**/\n" * 66000 + "1;\n}\n"


def t_parser_crash(bin_path, fixtures, work):
    """A file the parser aborts the process on: the update that dies leaves
    marks of the files it was parsing (<index dir>/parsing); the next one
    parses those alone first, and the one it dies on again is skipped from
    then on, listed `parser-crashed`, until it changes. At most three runs
    to an index; then no run parses it again. Before: every run died."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    with open(os.path.join(ws, "crash.rs"), "w") as f:
        f.write(CRASH_RS)
    env = clean_env({"ASAN_OPTIONS": "detect_leaks=0", "LSAN_OPTIONS": "detect_leaks=0"})
    codes = []
    for _ in range(3):
        try:
            r = run([bin_path, "index", "--root", ws, "--index-dir", ix], env=env, timeout=HANG)
        except subprocess.TimeoutExpired:
            raise AssertionError("a crashing parser: still running after %d s" % HANG)
        codes.append(r.returncode)
        if r.returncode == 0:
            break
    check(codes[-1] == 0, "exits of three runs: %s" % codes)
    got = files(ix)
    check(got.get("crash.rs") == "parser-crashed", "crash.rs listed: %s" % got.get("crash.rs"))
    check(any(v == "ok" for v in got.values()), "the rest indexed")
    r = run([bin_path, "index", "--root", ws, "--index-dir", ix], env=env, timeout=HANG)
    check(r.returncode == 0 and "crash.rs" not in r.stderr, "the next run: %d %s" %
          (r.returncode, r.stderr[-300:]))
    r = run([bin_path, "status", "--root", ws, "--index-dir", ix, "--skipped"], env=env)
    check("crash.rs (parser-crashed)" in r.stdout, "status lists it: %s" % r.stdout[-300:])
    print("  a file the parser aborts on: exits %s, then listed parser-crashed" % codes)


def deep_tree(ws, depth, leaf):
    d = os.path.join(ws, *(["a"] * depth))
    os.makedirs(d)
    with open(os.path.join(d, leaf), "w") as f:
        f.write("def deep_%s():\n    return 1\n" % leaf[:-3])
    return os.path.relpath(os.path.join(d, leaf), ws)


def t_gitignore_starstar(bin_path, fixtures, work):
    """`**/` repeated in one line over a 20-deep tree (exponential before:
    over 20 s for a 90-byte line), and `**/**/*/` x 12 over 25 levels:
    indexed at once, with git's verdicts (runs of `**/` mean one)."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    keep = deep_tree(ws, 20, "keep.py")
    hide = os.path.join(os.path.dirname(keep), "hide.py")
    with open(os.path.join(ws, hide), "w") as f:
        f.write("def hidden():\n    return 1\n")
    with open(os.path.join(ws, ".gitignore"), "w") as f:
        f.write("**/" * 30 + "zz\n")
        f.write("**/**/*/" * 12 + "zz\n")
        f.write("**/**/**/hide.py\n")
    index_bounded(bin_path, ws, ix, "a `**/` line")
    got = files(ix)
    check(got.get(keep) == "ok", "%s indexed: %s" % (keep, got.get(keep)))
    check(hide not in got, "%s excluded by `**/**/**/hide.py`" % hide)
    print("  `**/` x 30 and `**/**/*/` x 12 over 20 levels: indexed, verdicts kept")


def t_gitignore_huge(bin_path, fixtures, work):
    """A .gitignore over 1 MiB in sub/ (its first line excludes secret.py):
    nothing under sub/ is indexed, sub/.gitignore is listed as skipped;
    the rest is indexed. Before: the file was dropped whole and secret.py
    indexed."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    sub = os.path.join(ws, "sub")
    os.makedirs(sub)
    for name in ("secret.py", "plain.py"):
        with open(os.path.join(sub, name), "w") as f:
            f.write("def %s_fn():\n    return 1\n" % name[:-3])
    with open(os.path.join(sub, ".gitignore"), "w") as f:
        f.write("secret.py\n")
        f.write(("# padding %s\n" % ("x" * 60)) * 20000)  # ~1.4 MB
    index_bounded(bin_path, ws, ix, "a 1.4 MB .gitignore")
    got = files(ix)
    check("sub/secret.py" not in got, "sub/secret.py indexed behind an unread .gitignore")
    check("sub/plain.py" not in got, "sub/plain.py indexed behind an unread .gitignore")
    check(got.get("sub/.gitignore") == "gitignore-unreadable", "listed: %s"
          % {k: v for k, v in got.items() if k.startswith("sub")})
    check(any(v == "ok" for k, v in got.items() if not k.startswith("sub/")), "the rest indexed")
    r = run([bin_path, "status", "--root", ws, "--index-dir", ix, "--json"])
    check(json.loads(r.stdout).get("skipped", 0) >= 1, "status counts it skipped")
    # a single-file update (a save) fails closed the same way
    s = lsp_client.Server(bin_path, work, args=("--index-dir", ix))
    try:
        s.initialize(ws)
        s.wait_ready(timeout=HANG)
        s.notify("textDocument/didSave", {"textDocument": {"uri": lsp_client.file_uri(
            os.path.join(sub, "secret.py"))}})
        s.ask("secret_fn", mode="extractive")  # after the save (one worker, in order)
        check(s.shutdown_exit() == 0, "clean exit")
    finally:
        s.kill()
    check("sub/secret.py" not in files(ix), "a save indexed sub/secret.py")
    print("  a 1.4 MB .gitignore: its folder not indexed (listed gitignore-unreadable), "
          "saves too")


def t_nested_index(bin_path, fixtures, work):
    """A nested project's index folder (sub/.coderag/, holding a .py) is
    never read as a source, by the walk nor by a save."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    nested = os.path.join(ws, "sub", ".coderag")
    os.makedirs(nested)
    with open(os.path.join(nested, "leak.py"), "w") as f:
        f.write("def nested_index_leak():\n    return 1\n")
    index_bounded(bin_path, ws, ix, "a nested .coderag")
    check(not any(".coderag" in k for k in files(ix)), "nested index folder read: %s"
          % [k for k in files(ix) if ".coderag" in k])
    print("  sub/.coderag/leak.py: not indexed")


def t_path_max(bin_path, fixtures, work):
    """A file whose path (root + rel) passes PATH_MAX: listed as skipped
    `path-too-long` (named, counted by status), the rest indexed."""
    ws, ix = shop(fixtures, work), os.path.join(work, "ix")
    fd = os.open(ws, os.O_RDONLY)
    rel = []
    try:
        for i in range(17):
            name = "d%02d" % i + "x" * 240
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
            rel.append(name)
        f = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(f, b"def too_deep():\n    return 1\n")
        os.close(f)
    finally:
        os.close(fd)
    rel = "/".join(rel + ["deep.py"])
    index_bounded(bin_path, ws, ix, "a path past PATH_MAX")
    check(files(ix).get(rel) == "path-too-long", "listed: %s" % files(ix).get(rel))
    r = run([bin_path, "status", "--root", ws, "--index-dir", ix, "--json"])
    check(json.loads(r.stdout).get("skipped", 0) >= 1, "status counts it")
    shutil.rmtree(ws, ignore_errors=True)  # rmtree copes with long paths through fds
    print("  a %d-byte path: listed path-too-long" % len(rel))


# ---------------------------------------------------------------- repair


def t_repair_tables(bin_path, fixtures, work):
    """An index with the right schema string but a table gone (edges) or a
    column gone (symbols remade without one): `status` (no --check) and
    `ask --no-update` say it is damaged (exit 2); `coderag index` rebuilds
    it equal to a fresh build. Before: index exited 2 "no such table" every
    time, status 0."""
    ws = shop(fixtures, work)
    fresh = os.path.join(work, "fresh")
    check(index(bin_path, ws, fresh).returncode == 0, "fresh")
    for damage in ("DROP TABLE edges",
                   "ALTER TABLE imports DROP COLUMN target"):
        ix = os.path.join(work, "ix-%d" % len(damage))
        check(index(bin_path, ws, ix).returncode == 0, "index")
        db = sqlite3.connect(os.path.join(ix, "index.db"))
        try:
            for idx in [r[0] for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'imports'")]:
                if "ALTER" in damage:
                    db.execute("DROP INDEX %s" % idx)
            db.execute(damage)
            db.commit()
        finally:
            db.close()
        r = run([bin_path, "status", "--root", ws, "--index-dir", ix])
        check(r.returncode == 2 and "damaged" in r.stderr and r.stderr.startswith("coderag:"),
              "%s: status: exit %d %s" % (damage, r.returncode, r.stderr))
        r = run([bin_path, "ask", "--root", ws, "--index-dir", ix, "--no-update", "--json",
                 "--mode", "extractive", "checkout"])
        check(r.returncode == 2 and "damaged" in r.stderr,
              "%s: ask --no-update: exit %d %s" % (damage, r.returncode, r.stderr))
        r = index(bin_path, ws, ix)
        check(r.returncode == 0, "%s: index: %s" % (damage, r.stderr))
        check(status(bin_path, ws, ix)[0] == status(bin_path, ws, fresh)[0] and
              digest(ix) == digest(fresh), "%s: rebuilt index differs" % damage)
    print("  a dropped table and a dropped column: told by status, rebuilt by index")


# ---------------------------------------------------------------- limits


def limited(as_bytes=None, nofile=None):
    """The shell's ulimit, as a user sets it (not preexec_fn: other tests'
    reader threads live in this process)."""
    cmd = []
    if as_bytes:
        cmd.append("ulimit -v %d" % (as_bytes >> 10))
    if nofile:
        cmd.append("ulimit -n %d" % nofile)
    return "; ".join(cmd)


def run_limited(args, pre, stdin=None):
    args = ["bash", "-c", pre + '; exec "$@"', "limited"] + args
    try:
        r = subprocess.run(args, input=stdin, capture_output=True, env=clean_env(),
                           timeout=HANG)
    except subprocess.TimeoutExpired:
        raise AssertionError("hang under a limit: %s" % args[5])
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def lsp_frames(ws):
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": lsp_client.file_uri(ws), "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "coderag/ask",
             "params": {"question": "checkout", "mode": "extractive"}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"}]
    return b"".join(lsp_client.frame(json.dumps(m).encode()) for m in msgs)


def mcp_lines():
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "limits", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "ask", "arguments": {"question": "checkout", "mode": "extractive"}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "search", "arguments": {"query": "checkout"}}}]
    return "".join(json.dumps(m) + "\n" for m in msgs).encode()


def t_limits(bin_path, fixtures, work):
    """index, ask, mcp and lsp under `ulimit -v` 256, 96, 48, 24 MB and
    `ulimit -n` 32 and 12: each exits 0, or 2 with a `coderag:` message;
    none hangs. Before: at 256 MB the indexer hung at exit (an OpenBLAS
    thread retrying mmap), lower a thread that could not start left the
    build waiting for it forever, and out of memory was SIGABRT."""
    ws = shop(fixtures, work)
    outcomes = []
    with open(bin_path, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    # AddressSanitizer reserves terabytes of address space (`ulimit -v` is
    # for the release build only), and UBSan's own memory checks need
    # descriptors (at 12 it reports a valid object as "invalid vptr")
    cases = [] if sanitized else [("v%dM" % mb, limited(as_bytes=mb << 20))
                                  for mb in (256, 96, 48, 24)]
    if sanitized:
        outcomes.append("(sanitized build: no ulimit -v, no ulimit -n 12)")
    cases += [("n%d" % n, limited(nofile=n)) for n in ((32,) if sanitized else (32, 12))]
    for name, pre in cases:
        ix = os.path.join(work, "ix-" + name)
        for door, args, stdin in (
                ("index", [bin_path, "index", "--root", ws, "--index-dir", ix], None),
                ("ask", [bin_path, "ask", "--root", ws, "--index-dir", ix, "--json",
                         "--mode", "extractive", "checkout"], None),
                ("mcp", [bin_path, "mcp", "--root", ws, "--index-dir", ix], mcp_lines()),
                ("lsp", [bin_path, "lsp", "--index-dir", ix], lsp_frames(ws))):
            code, out, err = run_limited(args, pre, stdin)
            ok = code == 0 or (code == 2 and err.strip().splitlines()[-1].startswith("coderag:")
                               if err.strip() else False)
            check(ok, "%s under %s: exit %d, stderr %r" % (door, name, code, err[-300:]))
            if door == "ask" and code == 0:
                json.loads(out)
            outcomes.append("%s/%s:%d" % (name, door, code))
    print("  limits: %s" % " ".join(outcomes))


GROUPS = {"hostile": [t_py_chain, t_nesting, t_wide_nodes, t_recovery_budget, t_dense_files,
                      t_parser_crash,
                      t_gitignore_starstar, t_gitignore_huge, t_nested_index, t_path_max],
          "repair": [t_repair_tables],
          "limits": [t_limits]}
