#!/usr/bin/env bash
# The same root everywhere (docs/protocol.md, "root rule"): without --root,
# `index`, `status`, `ask` and `mcp` take the editors' root rule from the
# current folder, so that from a subfolder of an indexed repository they
# all see the repository's index and never make a second one.
#   root.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$1
fixtures=$2
work=$(mktemp -d /tmp/coderag-root.XXXXXX)
trap 'rm -rf "$work"' EXIT
unset CODERAG_ROOT CODERAG_INDEXDIR CODERAG_LLM_URL
mkdir "$work/repo"
cp -R "$fixtures/shop/." "$work/repo/"
mkdir "$work/repo/.git" # a VCS marker (the rule looks for the name only)
repo=$(cd "$work/repo" && pwd -P)
sub="$repo/shop"
passed=0 failed=0

check() { # name, expected exit, folder, command...
  local name=$1 want=$2 dir=$3; shift 3
  (cd "$dir" && "$@") >"$work/out" 2>"$work/err" </dev/null
  local got=$?
  if [ "$got" -eq "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL $name: exit $got, expected $want"; cat "$work/err"; fi
}
json_check() { # name, python expression over `j` (and `repo`) that must be true
  if /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); repo=sys.argv[2]; sys.exit(0 if ($2) else 1)" "$work/out" "$repo"; then
    passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; cat "$work/out"; fi
}
no_second_index() { # name
  if [ -e "$sub/.coderag" ]; then failed=$((failed + 1)); echo "FAIL $1: $sub/.coderag was created"
  else passed=$((passed + 1)); fi
}

# never indexed: status from the subfolder names the repository
check "status before index" 0 "$sub" "$bin" status --json
json_check "status missing at the repository root" 'j["state"] == "missing" and j["root"] == repo'
no_second_index "status before index"

# index from the subfolder builds the repository's index
check "index from a subfolder" 0 "$sub" "$bin" index
no_second_index "index"
if [ -d "$repo/.coderag" ]; then passed=$((passed + 1)); else
  failed=$((failed + 1)); echo "FAIL index: no $repo/.coderag"; fi

check "status from a subfolder" 0 "$sub" "$bin" status --json
json_check "status reports the repository" 'j["state"] == "ready" and j["root"] == repo and j["files"] == 5'

check "ask from a subfolder" 0 "$sub" "$bin" ask --json "where is the discount applied?"
json_check "ask answers from the repository" 'j["citations"] and all(not c["path"].startswith("/") for c in j["citations"]) and any(c["path"].startswith("shop/") for c in j["citations"])'
no_second_index "ask"

check "ask --no-update from a subfolder" 0 "$sub" "$bin" ask --no-update --json "discount"
no_second_index "ask --no-update"

# mcp from the subfolder serves the repository
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"status","arguments":{}}}' \
  >"$work/mcp_in"
(cd "$sub" && "$bin" mcp <"$work/mcp_in" >"$work/mcp_out" 2>"$work/err")
/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") == 2:
        json.dump(m["result"]["structuredContent"], open(sys.argv[2], "w"))
' "$work/mcp_out" "$work/out" || { echo "mcp output:"; cat "$work/mcp_out" "$work/err"; }
json_check "mcp serves the repository" 'j["root"] == repo and j["files"] == 5'
no_second_index "mcp"

# an explicit --root still wins, and a plain folder is its own root
check "status --root the subfolder" 0 "$sub" "$bin" status --root . --json
json_check "explicit root" 'j["state"] == "missing" and j["root"] == repo + "/shop"'
mkdir "$work/plain"
plain=$(cd "$work/plain" && pwd -P)
check "status in a plain folder" 0 "$plain" "$bin" status --json
/usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j['root'] == sys.argv[2] else 1)" "$work/out" "$plain" \
  && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL plain folder root"; cat "$work/out"; }

echo "root: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
