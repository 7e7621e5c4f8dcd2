#!/usr/bin/env bash
# What a new user meets on the command line (issue 38): a mistyped command,
# an empty folder, --mode llm with no LLM, skipped files summarised, a C++
# project's headers, a subfolder of an indexed folder, Ctrl-C during
# `index`, and the state of an index a pass has not finished (status and
# answers). Points in a pass are states the indexer reaches (files
# committed, read from the database), never delays.
#   first_hour.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d /tmp/coderag-first.XXXXXX)
trap 'kill -CONT $(cat "$work/pid" 2>/dev/null) 2>/dev/null; rm -rf "$work"' EXIT
unset CODERAG_ROOT CODERAG_INDEXDIR CODERAG_LLM_URL
export CODERAG_EMBED_PROVIDER=none
passed=0 failed=0

check() { # name, expected exit, command...
  local name=$1 want=$2; shift 2
  "$@" >"$work/out" 2>"$work/err" </dev/null
  local got=$?
  if [ "$got" -eq "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL $name: exit $got, expected $want"; cat "$work/err"; fi
}
has() { # name, file, fixed string that must be in it
  if grep -qF -- "$3" "$2"; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL $1: no '$3' in:"; cat "$2"; fi
}
hasnt() { # name, file, fixed string that must not be in it
  if grep -qF -- "$3" "$2"; then failed=$((failed + 1)); echo "FAIL $1: '$3' in:"; cat "$2"; else
    passed=$((passed + 1)); fi
}
json_check() { # name, python expression over `j` that must be true
  if /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$work/out"; then
    passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; cat "$work/out"; fi
}

# A mistyped command: the nearest one, not the whole usage.
check "indx" 1 "$bin" indx
has "indx: did you mean" "$work/err" 'did you mean `index`?'
hasnt "indx: no usage" "$work/err" "commands:"
check "far from any command" 1 "$bin" frobnicate
has "frobnicate: usage" "$work/err" "commands:"

# An empty folder, then one whose only file is skipped: 0 files, and why.
mkdir "$work/empty"
check "index empty" 0 "$bin" index --root "$work/empty"
has "empty: 0 files" "$work/err" "0 files indexed: no file under the root is one coderag reads"
has "empty: suffixes" "$work/err" ".go"
check "ask empty" 0 "$bin" ask --root "$work/empty" --no-update "where is main"
has "ask empty: 0 files" "$work/err" "0 files indexed"
printf 'x\000y' >"$work/empty/blob.py"
check "index all skipped" 0 "$bin" index --root "$work/empty"
has "all skipped" "$work/err" "all 1 files found were skipped"

# --mode llm without an LLM names the flag and the variable.
check "mode llm without llm" 3 "$bin" ask --root "$work/empty" --mode llm "q"
has "mode llm: flag" "$work/err" "--llm-url"
has "mode llm: variable" "$work/err" "CODERAG_LLM_URL"

# Skipped files: summarised by reason; --skipped lists them.
mkdir -p "$work/sk/pkg"
echo 'def f(): return 1' >"$work/sk/pkg/a.py"
printf 'x\000y' >"$work/sk/pkg/b.py"
printf 'x\000y' >"$work/sk/pkg/c.py"
head -c 3000 /dev/zero | tr '\0' 'x' >"$work/sk/pkg/big.py"
check "index skipped" 0 "$bin" index --root "$work/sk" --max-file-bytes 2000
check "status skipped" 0 "$bin" status --root "$work/sk"
has "status: summary" "$work/out" "files:     1 (3 skipped: 2 binary, 1 too-large)"
hasnt "status: no list" "$work/out" "pkg/b.py"
has "status: the flag" "$work/out" "coderag status --skipped"
check "status --skipped" 0 "$bin" status --root "$work/sk" --skipped
has "status --skipped: list" "$work/out" "  pkg/b.py (binary)"
check "status --skipped --json" 0 "$bin" status --root "$work/sk" --skipped --json
json_check "status json: by reason" 'j["skippedByReason"] == {"binary": 2, "too-large": 1} and len(j["skippedFiles"]) == 3'

# A doc comment's code span is shown as written ('`[[array header]]`', no
# backslash inside it); outside one, brackets stay escaped so that no
# citation is read there.
mkdir -p "$work/spans"
printf '%s\n' 'def parse_array_header(line):' \
  '    """Reads a `[[array header]]` line into the table path it names, see [docs]."""' \
  '    return line.strip("[]").split(".")' >"$work/spans/tables.py"
check "ask spans" 0 "$bin" ask --root "$work/spans" --mode extractive "How is an array header line read?"
has "code span as written" "$work/out" 'Reads a `[[array header]]` line'
hasnt "no escape in a code span" "$work/out" '`\['
has "escaped outside" "$work/out" 'see \[docs\]'

# Headers follow the project's sources: a C++ project's plain headers are
# C++, a C project's header that reads as C++ (a comment) is C.
mkdir -p "$work/cxx/src" "$work/cc/src"
for n in a b c; do
  printf '#include "%s.h"\nnamespace p { int %s() { return 1; } }\n' $n $n >"$work/cxx/src/$n.cc"
  printf 'struct %s_s { int x; };\nint %s(void);\n' $n $n >"$work/cxx/src/$n.h"
  printf '#include "%s.h"\nint %s(void) { return 1; }\n' $n $n >"$work/cc/src/$n.c"
  printf 'struct %s_s { int x; };\nint %s(void);\n' $n $n >"$work/cc/src/$n.h"
done
printf '/* a class of its own */\nint d(void);\n' >"$work/cc/src/d.h"
check "index c++" 0 "$bin" index --root "$work/cxx"
check "status c++" 0 "$bin" status --root "$work/cxx" --json
json_check "c++ headers are c++" 'j["languages"] == {"cpp": 6}'
check "index c" 0 "$bin" index --root "$work/cc"
check "status c" 0 "$bin" status --root "$work/cc" --json
json_check "c headers are c" 'j["languages"] == {"c": 7}'

# ... and are chunked and linked as C++: a header's inline method is a
# method of its class, with its callers; a project that becomes C++ has its
# headers read again.
mkdir -p "$work/hx/src"
printf '%s\n' 'struct Runner {' '  void Run();' '  int Count() const { return n_; }' '  int n_;' '};' >"$work/hx/src/runner.h"
printf '%s\n' '#include "runner.h"' 'int tally(void) { return 0; }' >"$work/hx/src/tally.c"
check "index c first" 0 "$bin" index --root "$work/hx"
check "status c first" 0 "$bin" status --root "$work/hx" --json
json_check "a header beside C sources is C" 'j["languages"] == {"c": 2}'
printf '%s\n' '#include "runner.h"' 'void Runner::Run() { n_ = Count() + 1; }' >"$work/hx/src/runner.cc"
printf '%s\n' '#include "runner.h"' 'int Tally(Runner& r) { return r.Count(); }' >"$work/hx/src/main.cc"
check "index c++ now" 0 "$bin" index --root "$work/hx"
check "status c++ now" 0 "$bin" status --root "$work/hx" --json
json_check "the header follows the C++ sources" 'j["languages"] == {"cpp": 3, "c": 1}'
check "ask c++ header" 0 "$bin" ask --root "$work/hx" --json --mode extractive "Runner Count"
json_check "the header's inline method is a method" '("src/runner.h", "Runner.Count") in [(c["path"], c["symbol"]) for c in j["context"]]'
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"callers","arguments":{"symbol":"Runner.Count"}}}' >"$work/mcp.in"
"$bin" mcp --root "$work/hx" <"$work/mcp.in" 2>"$work/err" | tail -1 >"$work/out"
json_check "its callers in the C++ sources" 'sorted(r["symbol"] for r in j["result"]["structuredContent"]["definitions"][0]["references"]) == ["Runner.Run", "Tally"]'

# A subfolder with no marker inside an indexed folder: that index, said.
mkdir -p "$work/plain/src"
echo 'def handler(): return 2' >"$work/plain/src/h.py"
check "index plain" 0 "$bin" index --root "$work/plain"
plain=$(cd "$work/plain" && pwd -P)
(cd "$work/plain/src" && "$bin" status --json) >"$work/out" 2>"$work/err"
json_check "subfolder: the enclosing index" "j['root'] == '$plain' and j['files'] == 1"
has "subfolder: said" "$work/err" "using the index of $plain"
(cd "$work/plain/src" && "$bin" ask --json "handler") >"$work/out" 2>"$work/err"
if [ ! -e "$work/plain/src/.coderag" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL subfolder: a second index in src/"; fi
# A subfolder indexed on purpose (--root) keeps its own index from then on.
check "index the subfolder itself" 0 "$bin" index --root "$work/plain/src"
(cd "$work/plain/src" && "$bin" status --json) >"$work/out" 2>"$work/err"
json_check "subfolder with its own index: its own" "j['root'] == '$plain/src'"
hasnt "subfolder with its own index: nothing said" "$work/err" "using the index of"

# A first index of more files than a batch (500): stopped, then stalled.
mkdir -p "$work/big"
for i in $(seq 1 1200); do echo "def f$i(x): return x + $i" >"$work/big/m$i.py"; done
# Runs `coderag index`, sends SIG once N files are committed (or the pass
# ended), prints its exit status, writes its pid to the file named.
at() { # N SIG PIDFILE args...
  /usr/bin/python3 - "$@" <<'EOF'
import os, signal, sqlite3, subprocess, sys, time
n, sig, pidfile, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
db = os.path.join(args[args.index("--index-dir") + 1], "index.db")
def committed():
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        try:
            return con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return -1
err = open(pidfile + ".err", "w")
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
open(pidfile, "w").write(str(p.pid))
while p.poll() is None and committed() < n:  # the pass ending is the other way out
    time.sleep(0.002)
if p.poll() is None:
    p.send_signal(getattr(signal, "SIG" + sig))
if sig != "STOP":
    print(p.wait())
EOF
}
got=$(at 500 INT "$work/pid" "$bin" index --root "$work/big" --index-dir "$work/big.idx" --threads 1)
if [ "$got" = 130 ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL Ctrl-C: exit '$got', expected 130"; fi
has "Ctrl-C: how far" "$work/pid.err" "coderag: interrupted at "
has "Ctrl-C: resumes" "$work/pid.err" "run \`coderag index\` again to resume"
check "status partial" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx"
has "status partial: state" "$work/out" "state:     partial: "
has "status partial: of" "$work/out" "/1200 files indexed, then the pass stopped"
has "status partial: never" "$work/out" "updated:   never"
check "status partial json" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx" --json
json_check "status partial json" 'j["state"] == "partial" and j["partialIndex"]["total"] == 1200 and j["partialIndex"]["indexed"] >= 500 and j["partialIndex"]["pid"] == 0'
check "ask partial" 0 "$bin" ask --root "$work/big" --index-dir "$work/big.idx" --no-update --json "f7"
json_check "ask partial: marked" 'j["partialIndex"]["state"] == "partial" and j["partialIndex"]["total"] == 1200'
has "ask partial: said" "$work/err" "the index is not whole, so this answer may miss code"
check "index resumes" 0 "$bin" index --root "$work/big" --index-dir "$work/big.idx"
/usr/bin/python3 -c "import re,sys; m=re.search(r'(\d+) unchanged', open(sys.argv[1]).read()); sys.exit(0 if m and int(m.group(1)) >= 500 else 1)" "$work/err" &&
  passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL resume: files read again"; cat "$work/err"; }
check "ask whole" 0 "$bin" ask --root "$work/big" --index-dir "$work/big.idx" --no-update --json "f7"
json_check "ask whole: not marked" '"partialIndex" not in j'
check "status whole" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx" --json
json_check "status whole" 'j["state"] == "ready" and "partialIndex" not in j'

# Stalled (SIGSTOP) with 500 files committed: a pass under way, its process named.
rm -rf "$work/big.idx"
at 500 STOP "$work/pid" "$bin" index --root "$work/big" --index-dir "$work/big.idx" --threads 1
pid=$(cat "$work/pid")
check "status indexing" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx"
has "status indexing: state" "$work/out" "state:     indexing "
has "status indexing: process" "$work/out" "/1200 files (process $pid)"
check "status indexing json" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx" --json
json_check "status indexing json" "j['state'] == 'indexing' and j['partialIndex']['pid'] == $pid"
# A second writer meanwhile says whose pass it waits for, and how far that one got.
"$bin" index --root "$work/big" --index-dir "$work/big.idx" 2>"$work/waiter.err" &
waiter=$!
# (until it says so, or blocks on the index's lock without a word: then the check fails)
/usr/bin/python3 -c "
import os, sys, time
def blocked():
    try:
        return 'lock' in open('/proc/%s/wchan' % sys.argv[2]).read()
    except OSError:
        return True  # gone
while 'is indexing this root' not in open(sys.argv[1]).read() and not blocked():
    time.sleep(0.002)" "$work/waiter.err" "$waiter"
kill -CONT "$pid"
wait "$waiter"
has "waiting: whose pass" "$work/waiter.err" "coderag: process $pid is indexing this root ("
has "waiting: how far" "$work/waiter.err" "/1200 files so far): waiting for it to finish"
/usr/bin/python3 -c "
import os, sys, time
while os.path.exists('/proc/%s' % sys.argv[1]) and open('/proc/%s/stat' % sys.argv[1]).read().split(')')[1].split()[0] != 'Z':
    time.sleep(0.01)" "$pid"
check "status after the pass" 0 "$bin" status --root "$work/big" --index-dir "$work/big.idx" --json
json_check "status after the pass" 'j["state"] == "ready" and j["files"] == 1200'

echo "first_hour: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
