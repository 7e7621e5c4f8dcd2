#!/usr/bin/env python3
"""CPU per MiB of indexing valid token-dense files (issue 40, docs/hardening.md,
"work per file"): each file alone in a root of its own, a cold
`coderag index --threads 1`, user + system CPU of the process (startup and
the row's query compile included) and how the file was listed.

    /usr/bin/python3 bench/dense_files.py BIN WORKDIR [NAME...]

WORKDIR receives one folder per file and the indexes (it is emptied first).
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


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    bin_path, work, names = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2:]
    shutil.rmtree(work, ignore_errors=True)
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
