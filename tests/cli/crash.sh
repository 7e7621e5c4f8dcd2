#!/usr/bin/env bash
# A `coderag index` killed (SIGKILL) at several moments leaves an index that
# opens, finishes on the next run, passes `status --check`, and equals an
# index built without interruption (files, chunks, symbols, edges).
#   crash.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$1
work=$(mktemp -d /tmp/coderag-crash.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# A generated package of 2,000 modules that import and call each other.
/usr/bin/python3 - "$work/ws" <<'PY'
import os, sys
root = sys.argv[1]
for p in range(20):
    d = os.path.join(root, "pkg%d" % p)
    os.makedirs(d)
    open(os.path.join(d, "__init__.py"), "w").write("from .m0 import Widget0\n")
    for m in range(100):
        prev = "from .m%d import helper_%d_%d, Widget%d\n" % (m - 1, p, m - 1, m - 1) if m else ""
        body = ['"""Module %d of package %d."""' % (m, p), "import os", prev,
                "class Widget%d(%s):" % (m, "Widget%d" % (m - 1) if m else "object"),
                '    """A widget."""', "    size = %d" % m, "",
                "    def grow(self, n):", "        return self.size + n", "",
                "def helper_%d_%d(x):" % (p, m),
                "    w = Widget%d()" % m,
                "    return %s" % ("helper_%d_%d(x) + w.grow(x)" % (p, m - 1) if m else "w.grow(x)"), ""]
        for k in range(8):
            body += ["def f%d_%d(a, b):" % (m, k), "    if a > b:", "        return os.path.join(str(a), str(b))",
                     "    return helper_%d_%d(a)" % (p, m), ""]
        open(os.path.join(d, "m%d.py" % m), "w").write("\n".join(body))
PY

counts() { # index dir -> "files chunks symbols edges"
  "$bin" status --root "$work/ws" --index-dir "$1" --json --check |
    /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["files"], j["chunks"], j["symbols"], j["edges"])'
}

"$bin" index --root "$work/ws" --index-dir "$work/clean" 2>/dev/null && ok || bad "clean index"
want=$(counts "$work/clean")

# status on an index left at a kill point: consistent (--check passes), with
# at least the files committed before the kill; before the first commit it
# may also say plainly that nothing is indexed yet (exit 0, state "missing";
# builds before issue 10: exit 2 with "run `coderag index`"), never a raw error.
status_ok() { # point
  local rc=0 min=$1 early=0
  case $1 in start | dir | db) min=0 early=1 ;; esac
  "$bin" status --root "$work/ws" --index-dir "$work/killed" --json --check >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -eq 0 ]; then
    /usr/bin/python3 - "$work/out" "$min" "$early" <<'PY' || { bad "status after kill at '$1': $(cat "$work/out")"; return; }
import json, sys
j = json.load(open(sys.argv[1]))
counts = all(isinstance(j.get(k), int) for k in ("files", "chunks", "symbols", "edges"))
missing = j.get("state") == "missing" and sys.argv[3] == "1"
sys.exit(0 if missing or (counts and j["files"] >= int(sys.argv[2])) else 1)
PY
  elif [ "$early" = 0 ] || ! grep -q 'run `coderag index`' "$work/err"; then
    bad "status after kill at '$1': exit $rc: $(cat "$work/err")"; return
  fi
  ok
}

# Kill points are states the indexer reaches (tests/cli/killat.py), not
# delays: at once, once the index folder exists, once the database exists,
# and once 500, 1000, 1500 and 2000 of the 2,020 files are committed (it
# commits every 500); each run resumes where the last one stopped.
kills=0
for point in start dir db 500 1000 1500 2000; do
  got=$(/usr/bin/python3 "$(dirname "$0")/killat.py" "$point" "$bin" index --root "$work/ws" --index-dir "$work/killed")
  [ "$got" = killed ] && kills=$((kills + 1))
  status_ok "$point"
done
"$bin" index --root "$work/ws" --index-dir "$work/killed" 2>/dev/null && ok || bad "finishing run"
got=$(counts "$work/killed")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "interrupted index differs: '$got' vs '$want'"
echo "killed $kills of 7 times; clean: $want; after kills: $got"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
