#!/usr/bin/env python3
"""CPU per MiB of indexing valid token-dense files (issue 40, docs/hardening.md,
"work per file"): each file alone in a root of its own, a cold
`coderag index --threads 1`, user + system CPU of the process (startup and
the row's query compile included) and how the file was listed.

    /usr/bin/python3 bench/dense_files.py BIN WORKDIR [--marginal] [--callgrind] [NAME...]

WORKDIR receives one folder per file and the indexes (it is emptied first).

--marginal: what the file adds to a root, the issue's "makes indexing take
more": the same root of one small file of the row's language (so the row's
query is compiled in both) indexed without it and with it, alternately
(A B A B), CPU of each, and (B - A) per MiB of the file.
--callgrind: the same difference in instructions (valgrind --tool=callgrind,
one run each: instruction counts do not vary with the machine's load), as
G per MiB.
"""
import os
import resource
import shutil
import sqlite3
import subprocess
import sys

N = 250000


def cases():
    return {
        "c_args/a.c": "void f(void){ g(" + ",".join(["a"] * N) + "); }\n",
        "c_tab/a.c": "int t[] = {" + ",".join(["a"] * N) + "};\n",
        "c_nums/a.c": "int t[] = {" + ",".join(["1"] * N) + "};\n",
        "c_fns/a.c": "".join("void f%d(void){}\n" % i for i in range(50000)),
        "c_calls/a.c": "void f(void){\n" + "".join(" g%d(a);\n" % i for i in range(60000)) + "}\n",
        "c_ops/a.c": "struct ops t[] = {\n" +
                     "".join(" {.open = f%d, .n = %d},\n" % (i, i) for i in range(30000)) + "};\n",
        "cpp_args/a.cpp": "void f(){ g(" + ",".join(["a"] * N) + "); }\n",
        "cpp_fns/a.cpp": "".join("void f%d(){}\n" % i for i in range(62000)),
        "go_args/a.go": "package p\nfunc f(){ g(" + ",".join(["a"] * N) + ") }\n",
        "go_fns/a.go": "package p\n" + "".join("func f%d(){}\n" % i for i in range(60000)),
        "java_args/A.java": "class A { void f(){ g(" + ",".join(["a"] * N) + "); } }\n",
        "java_fns/A.java": "class A {\n" + "".join("void f%d(){}\n" % i for i in range(60000)) + "}\n",
        "js_args/a.js": "g(" + ",".join(["a"] * N) + ");\n",
        "js_arr/a.js": "var t = [" + ",".join(["a"] * N) + "];\n",
        "js_fns/a.js": "".join("function f%d(){}\n" % i for i in range(50000)),
        "py_args/a.py": "g(" + ",".join(["a"] * N) + ")\n",
        "py_list/a.py": "t = [" + ",".join(["a"] * N) + "]\n",
        "py_cls/a.py": "".join("class C%d:\n    def m(self): return C%d()\n" % (i, i)
                               for i in range(20000)),
        "py_fns/a.py": "".join("def f%d(): pass\n" % i for i in range(50000)),
        "rs_args/a.rs": "fn f(){ g(" + ",".join(["a"] * N) + "); }\n",
        "rs_fns/a.rs": "".join("fn f%d(){}\n" % i for i in range(62000)),
        "rs_mac/a.rs": "fn f(){ m!(" + " ".join("x.f%d(a)" % i for i in range(60000)) + "); }\n",
        "ts_args/a.ts": "g(" + ",".join(["a"] * N) + ");\n",
    }


# One small file of each row, beside the dense one in --marginal roots.
SMALL = {".c": "int b;\n", ".cpp": "int b;\n", ".go": "package p\nvar b int\n",
         ".java": "class B { int b; }\n", ".js": "var b = 1;\n", ".py": "b = 1\n",
         ".rs": "fn b() {}\n", ".ts": "let b = 1;\n"}


def cpu_index(bin_path, root, ix):
    shutil.rmtree(ix, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([bin_path, "index", "--root", root, "--index-dir", ix, "--threads", "1"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(bin_path, root, ix):
    shutil.rmtree(ix, ignore_errors=True)
    out = ix + ".callgrind"
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, bin_path,
                        "index", "--root", root, "--index-dir", ix, "--threads", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    os.unlink(out)
    if "did not finish in" in r.stderr:  # the parse's wall-time guard: not its count
        print("%s: cut by the parse's wall-time budget under valgrind" % root, flush=True)
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    sys.exit("valgrind: %s" % r.stderr[-300:])


def marginal(bin_path, work, rel, text, use_callgrind):
    name, base = rel.split("/")[0], os.path.basename(rel)
    ext = os.path.splitext(base)[1]
    root_a, root_b = os.path.join(work, name + "-without"), os.path.join(work, name)
    for root in (root_a, root_b):
        os.makedirs(root)
        with open(os.path.join(root, "b" + ext), "w") as f:
            f.write(SMALL[ext])
    with open(os.path.join(root_b, base), "w") as f:
        f.write(text)
    ix = os.path.join(work, "ix-" + name)
    mib = len(text) / 1048576
    line = "%-10s %8d B" % (name, len(text))
    if use_callgrind:
        a, b = instructions(bin_path, root_a, ix), instructions(bin_path, root_b, ix)
        line += "  %6.2f G - %5.2f G = %5.2f G/MiB" % (b / 1e9, a / 1e9, (b - a) / 1e9 / mib)
    else:
        runs = [cpu_index(bin_path, r, ix) for r in (root_a, root_b, root_a, root_b)]
        line += "  A B A B %s s CPU  %5.2f, %5.2f s/MiB" % (
            " ".join("%.2f" % c for c in runs), (runs[1] - runs[0]) / mib, (runs[3] - runs[2]) / mib)
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(ix, "index.db"), uri=True)
    st = db.execute("SELECT status FROM files WHERE path = ?", (base,)).fetchone()
    db.close()
    print("%s  %s" % (line, st[0] if st else "?"), flush=True)


def main(argv):
    flags = [a for a in argv if a.startswith("--")]
    argv = [a for a in argv if not a.startswith("--")]
    if len(argv) < 2 or set(flags) - {"--marginal", "--callgrind"}:
        sys.exit(__doc__)
    bin_path, work, names = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2:]
    shutil.rmtree(work, ignore_errors=True)
    if flags:
        os.makedirs(work)
        for rel, text in cases().items():
            if not names or rel.split("/")[0] in names:
                marginal(bin_path, work, rel, text, "--callgrind" in flags)
        return
    for rel, text in cases().items():
        name = rel.split("/")[0]
        if names and name not in names:
            continue
        root, ix = os.path.join(work, name), os.path.join(work, "ix-" + name)
        os.makedirs(root)
        with open(os.path.join(work, rel), "w") as f:
            f.write(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([bin_path, "index", "--root", root, "--index-dir", ix, "--threads", "1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(ix, "index.db"), uri=True)
        st = db.execute("SELECT status FROM files").fetchone()
        db.close()
        mib = len(text) / 1048576
        print("%-10s %8d B  %5.2f s CPU  %5.2f s/MiB  %s" %
              (name, len(text), cpu, cpu / mib, st[0] if st else "?"))


if __name__ == "__main__":
    main(sys.argv[1:])
