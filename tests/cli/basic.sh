#!/usr/bin/env bash
# CLI contract of SPEC.md, against the real binary and a copy of the shop
# fixture: subcommands, exit codes, and the JSON that tools depend on.
#   basic.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$1
fixtures=$2
work=$(mktemp -d /tmp/coderag-cli.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -R "$fixtures/shop" "$work/shop"
root="$work/shop"
passed=0 failed=0

check() { # name, expected exit, command...
  local name=$1 want=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL $name: exit $got, expected $want"; cat "$work/err"; fi
}
json_check() { # name, python expression over `j` that must be true
  if /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$work/out"; then
    passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; cat "$work/out"; fi
}

check "help" 0 "$bin" --help
check "no command" 1 "$bin"
check "unknown command" 1 "$bin" frobnicate
check "unknown option" 1 "$bin" index --root "$root" --bogus
check "missing root" 2 "$bin" index --root "$work/nope"
check "status before index" 0 "$bin" status --root "$root" --json
json_check "status missing" 'j["state"] == "missing" and j["files"] == 0 and "coderag index" in j["message"]'
check "status text before index" 0 "$bin" status --root "$root"
grep -q 'not indexed yet: run `coderag index`' "$work/out" && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL status text before index"; cat "$work/out"; }
check "ask --no-update before index" 4 "$bin" ask --root "$root" --no-update "q"
grep -q 'not indexed yet' "$work/err" && [ ! -e "$root/.coderag" ] && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL ask --no-update before index: message or leftovers"; cat "$work/err"; }
for cmd in index ask status lsp; do
  check "$cmd --help" 0 "$bin" $cmd --help
  grep -q "^usage: coderag $cmd" "$work/out" && grep -q -- '--root DIR' "$work/out" && passed=$((passed + 1)) ||
    { failed=$((failed + 1)); echo "FAIL $cmd --help text"; cat "$work/out"; }
done
grep -q -- '--no-update' <("$bin" ask --help) && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL ask --help lists --no-update"; }
check "version" 0 "$bin" --version
grep -q '^coderag [0-9]' "$work/out" && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL version"; }
check "flag with a value it does not take" 1 "$bin" status --root "$root" --json=yes

check "index" 0 "$bin" index --root "$root"
[ -f "$root/.coderag/.gitignore" ] && grep -qx '\*' "$root/.coderag/.gitignore" && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL index dir .gitignore"; }
check "status json" 0 "$bin" status --root "$root" --json
json_check "status keys" 'j["state"] == "ready" and all(isinstance(j[k], int) for k in ("files","chunks","edges","vectors")) and j["files"] == 5 and j["chunks"] == 21'
check "status text" 0 "$bin" status --root "$root"
# --check ends with a verdict line; a damaged index fails it (exit 2) and says why
check "status --check" 0 "$bin" status --root "$root" --check
[ "$(tail -n 1 "$work/out")" = "check: ok" ] && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL status --check verdict"; cat "$work/out"; }
check "status --check --json" 0 "$bin" status --root "$root" --check --json
json_check "status --check --json verdict" 'j["check"] == "ok" and j["state"] == "ready"'
cp -R "$root" "$work/damaged"
/usr/bin/python3 -c "import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO symbols(qualname, own_name, chunk_id, file_id) VALUES ('gone.gone', 'gone', 999999, 1)\"); c.commit()" "$work/damaged/.coderag/index.db"
check "status --check on a damaged index" 2 "$bin" status --root "$work/damaged" --check
grep -qx 'check: FAILED: the index at .* is damaged (1 symbols without a chunk): run `coderag index` to rebuild it' "$work/out" &&
  passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL status --check failure verdict"; cat "$work/out"; }
# what the check found is marked: readers refuse the index, `coderag index` rebuilds it (issue 25)
check "status after a failed check" 2 "$bin" status --root "$work/damaged"
check "index after a failed check" 0 "$bin" index --root "$work/damaged"
check "status --check after index" 0 "$bin" status --root "$work/damaged" --check
mkdir "$work/nothing-here"
check "status --check before index" 0 "$bin" status --root "$work/nothing-here" --check
[ "$(tail -n 1 "$work/out")" = "check: nothing to check: not indexed yet" ] && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL status --check verdict before index"; cat "$work/out"; }
# each command's --help lists the settings it takes, and takes no other
index_help=$("$bin" index --help) status_help=$("$bin" status --help) ask_help=$("$bin" ask --help)
if ! grep -q -- '--llm' <<<"$index_help" && grep -q -- '--exclude' <<<"$index_help" &&
   grep -q -- '--index-dir' <<<"$status_help" && grep -q -- '--embed-provider' <<<"$status_help" &&
   ! grep -qE -- '--(exclude|threads|max-file-bytes|llm-model|llm-api-key-env)' <<<"$status_help" &&
   grep -q -- '--llm-model' <<<"$ask_help" && grep -q -- '--threads' <<<"$ask_help"; then
  passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL --help lists each command's own settings"; fi
# a setting the command does not use is accepted (SPEC: every key is a flag), said and ignored
check "a setting index does not take" 0 "$bin" index --root "$root" --llm-url http://127.0.0.1:9
grep -q -- '--llm-url is not used by `coderag index` (ignored)' "$work/err" && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL message for a setting index does not take"; cat "$work/err"; }
check "a setting status does not take" 0 "$bin" status --root "$root" --threads 2

check "ask json" 0 "$bin" ask --root "$root" --json "How is tax applied to an order total?"
json_check "ask shape" 'set(j) >= {"answer","mode","citations","rejected","context","timings"} and j["mode"] == "extractive"'
json_check "ask finds apply_tax" 'any(c["path"] == "shop/models.py" and c["symbol"] == "apply_tax" for c in j["context"])'
json_check "ask cites" 'len(j["citations"]) > 0 and all(c["verified"] and c["uri"].startswith("file://") and c["range"]["start"]["line"] == c["startLine"] - 1 for c in j["citations"])'
json_check "ask timings" 'all(k in j["timings"] for k in ("bm25_ms","pack_ms","total_ms"))'
# the dense leg: FAISS is a module the binary loads on first use
check "index with the builtin embedder" 0 "$bin" index --root "$root" --embed-provider builtin
check "ask with the builtin embedder" 0 "$bin" ask --root "$root" --embed-provider builtin --no-update --json "How is an order paid?"
json_check "dense leg answers" 'any("dense" in c["via"] for c in j["context"])'
check "status with the builtin embedder" 0 "$bin" status --root "$root" --embed-provider builtin --json
json_check "vectors stored" 'j["vectors"] == 21'
# reading with another embedder configured deletes nothing (only an update replaces vectors)
cp "$root/.coderag/vectors.faiss" "$work/vectors.before"
other=(--embed-provider openai --embed-url http://127.0.0.1:9 --embed-model other)
check "status with another embedder" 0 "$bin" status --root "$root" "${other[@]}" --json
json_check "no vectors of the other embedder" 'j["vectors"] == 0'
check "ask with another embedder" 0 "$bin" ask --root "$root" "${other[@]}" --no-update --json "How is an order paid?"
json_check "ask with another embedder has no dense leg" 'not any("dense" in c["via"] for c in j["context"])'
cmp -s "$root/.coderag/vectors.faiss" "$work/vectors.before" && passed=$((passed + 1)) ||
  { failed=$((failed + 1)); echo "FAIL a read with another embedder changed or deleted vectors.faiss"; }
check "ask budget" 0 "$bin" ask --root "$root" --json --budget 200 "How is tax applied to an order total?"
json_check "ask budget respected" 'sum(c["endLine"] - c["startLine"] + 1 for c in j["context"]) <= 20'
check "ask via env" 0 env CODERAG_INDEXDIR="$root/.coderag" "$bin" ask --root "$root" --json --no-update "payment declined"
json_check "ask env result" 'any(c["path"] == "shop/errors.py" for c in j["context"])'
check "ask text" 0 "$bin" ask --root "$root" "Which error does a declined card raise?"
grep -q '\[shop/' "$work/out" && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL ask text cites"; }
check "ask no question" 1 "$bin" ask --root "$root"
check "ask bad mode" 1 "$bin" ask --root "$root" --mode psychic "q"
check "ask bad budget" 1 "$bin" ask --root "$root" --budget lots "q"
check "ask llm without endpoint" 3 env -u CODERAG_LLM_URL "$bin" ask --root "$root" --mode llm "q"

# an edit is picked up by the next ask
printf '\n\ndef frobnicate_widgets(count):\n    """Frobnicates widgets."""\n    return count * 2\n' >> "$root/shop/models.py"
check "ask after edit" 0 "$bin" ask --root "$root" --json "frobnicate widgets"
json_check "edit found" 'j["context"] and j["context"][0]["symbol"] == "frobnicate_widgets"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
