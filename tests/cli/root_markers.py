#!/usr/bin/env python3
"""`coderag root` and the root rule's markers in every client:

    root_markers.py CODERAG_BIN EDITORS_DIR

- `coderag root [PATH]` prints the root the rule picks (VCS marker, else
  project marker, else PATH's own folder; a file's folder for a file);
  CODERAG_ROOT as it is when no PATH is given; a missing PATH is exit 2;
- each editor client (nvim, emacs, vscode) lists exactly the server's VCS
  and project markers, in its order (`coderag root --markers --json`): a
  client whose list differs fails here.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN, EDITORS = os.path.abspath(sys.argv[1]), sys.argv[2]
FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL: " + what)


def run(args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("CODERAG_ROOT", None)
    e.update(env or {})
    return subprocess.run([BIN] + args, cwd=cwd, env=e, capture_output=True, text=True, timeout=600)


def strings(text):
    return re.findall(r"""['"]([^'"]+)['"]""", text)


def client_lists():
    """{client: (vcs, project)} read from each client's source."""
    def read(rel):
        with open(os.path.join(EDITORS, rel), encoding="utf-8") as f:
            return f.read()
    lua = read("nvim/lua/coderag/root.lua")
    el = read("emacs/coderag-connection.el")
    ts = read("vscode-client/src/logic.ts")

    def grab(text, pattern):
        m = re.search(pattern, text, re.S)
        return strings(m.group(1)) if m else None
    return {
        "nvim": (grab(lua, r"R\.vcs_markers\s*=\s*\{(.*?)\}"), grab(lua, r"R\.project_markers\s*=\s*\{(.*?)\}")),
        "emacs": (grab(el, r"\(defcustom coderag-vcs-markers '\((.*?)\)"),
                  grab(el, r"\(defcustom coderag-project-markers '\((.*?)\)")),
        "vscode": (grab(ts, r"export const VCS_MARKERS = \[(.*?)\]"),
                   grab(ts, r"export const PROJECT_MARKERS = \[(.*?)\]")),
    }


def t_markers():
    r = run(["root", "--markers", "--json"])
    check(r.returncode == 0, "root --markers --json: %s" % r.stderr)
    server = json.loads(r.stdout)
    check(".git" in server["vcs"] and "pyproject.toml" in server["project"] and
          "go.mod" in server["project"], "the server's markers: %r" % server)
    text = run(["root", "--markers"]).stdout.split("\n")
    check(text[:-1] == ["vcs " + m for m in server["vcs"]] + ["project " + m for m in server["project"]],
          "root --markers text lists the same: %r" % text)
    for client, (vcs, project) in client_lists().items():
        check(vcs == server["vcs"], "%s's VCS markers %r differ from the server's %r" % (client, vcs, server["vcs"]))
        check(project == server["project"],
              "%s's project markers %r differ from the server's %r" % (client, project, server["project"]))


def t_root(tmp):
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, ".git"))
    os.makedirs(os.path.join(repo, "pkg", "go", "sub"))
    open(os.path.join(repo, "pkg", "go", "go.mod"), "w").close()
    open(os.path.join(repo, "pkg", "go", "sub", "x.go"), "w").close()
    plain = os.path.join(tmp, "plain", "deep")
    os.makedirs(plain)
    proj = os.path.join(tmp, "proj")
    os.makedirs(os.path.join(proj, "src"))
    open(os.path.join(proj, "Cargo.toml"), "w").close()
    cases = [
        (["root"], os.path.join(repo, "pkg", "go", "sub"), repo),  # the VCS root wins
        (["root", os.path.join(repo, "pkg", "go", "sub", "x.go")], tmp, repo),  # a file: from its folder
        (["root", "src"], proj, proj),  # a project marker, relative PATH
        (["root", plain], tmp, plain),  # no marker: the folder itself
    ]
    for args, cwd, want in cases:
        r = run(args, cwd=cwd)
        check(r.returncode == 0 and r.stdout == os.path.realpath(want) + "\n",
              "%s from %s: %r (exit %d), expected %s" % (args, cwd, r.stdout, r.returncode, want))
    r = run(["root", "--json"], cwd=os.path.join(proj, "src"))
    check(r.returncode == 0 and json.loads(r.stdout) == {"root": os.path.realpath(proj)}, "root --json: %r" % r.stdout)
    r = run(["root"], cwd=os.path.join(proj, "src"), env={"CODERAG_ROOT": plain})
    check(r.stdout == os.path.realpath(plain) + "\n", "CODERAG_ROOT as it is: %r" % r.stdout)
    r = run(["root", "src"], cwd=proj, env={"CODERAG_ROOT": plain})
    check(r.stdout == os.path.realpath(proj) + "\n", "PATH over CODERAG_ROOT: %r" % r.stdout)
    r = run(["root", os.path.join(tmp, "nope")])
    check(r.returncode == 2 and "nope" in r.stderr, "missing PATH: exit 2 and a message: %r" % r.stderr)
    # root takes no settings: one is said and ignored (SPEC: every key is a flag)
    r = run(["root", "--root", plain], cwd=os.path.join(proj, "src"))
    check(r.returncode == 0 and r.stdout == os.path.realpath(proj) + "\n" and
          "--root is not used by `coderag root` (ignored)" in r.stderr,
          "root --root is ignored: %r %r (exit %d)" % (r.stdout, r.stderr, r.returncode))


def main():
    tmp = tempfile.mkdtemp(prefix="coderag-root-markers-")
    try:
        t_markers()
        t_root(os.path.realpath(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %d failure(s)" % (os.path.basename(__file__), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
