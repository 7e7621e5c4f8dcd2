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

kills=0
for delay in 0.05 0.15 0.3 0.5 0.8 1.2; do
  "$bin" index --root "$work/ws" --index-dir "$work/killed" 2>/dev/null &
  pid=$!
  sleep "$delay"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null
  # whatever state it was left in, the database opens and is consistent so
  # far, or (killed before its first commit) says plainly to run the indexer,
  # or (killed before it even made the index directory, which a loaded
  # machine's process start-up can outlast) says the directory is missing
  if ! "$bin" status --root "$work/ws" --index-dir "$work/killed" --json --check >/dev/null 2>"$work/err"; then
    if [ -d "$work/killed" ]; then
      grep -q 'run `coderag index`' "$work/err" || { bad "status after kill at ${delay}s"; cat "$work/err"; }
    else
      grep -q 'No such file or directory' "$work/err" || { bad "status after kill at ${delay}s"; cat "$work/err"; }
    fi
  fi
done
"$bin" index --root "$work/ws" --index-dir "$work/killed" 2>/dev/null && ok || bad "finishing run"
got=$(counts "$work/killed")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "interrupted index differs: '$got' vs '$want'"
echo "killed $kills times; clean: $want; after kills: $got"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
