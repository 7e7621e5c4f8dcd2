#!/usr/bin/env bash
# The re-ranker's feature dump (scripts/train/rank_features.c, built beside
# the binary) ranks with other constants when asked: --candidates, --keep,
# --depth (scripts/train-ranker.sh's CANDIDATES, KEEP, DEPTH).
#   rank_features.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$1
fixtures=$2
rf="$(dirname "$bin")/rank_features"
work=$(mktemp -d /tmp/coderag-rf.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -R "$fixtures/shop" "$work/shop"
root="$work/shop"
passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $1"; cat "$work/err" 2>/dev/null; }

"$bin" index --root "$root" --index-dir "$work/idx" >/dev/null 2>&1 || fail "index"
printf '%s\n' '{"id": "q1", "question": "How is an order total computed with its discount?"}' \
  > "$work/q.jsonl"
cands() { # largest candidate list of the dump in $work/out
  /usr/bin/python3 -c 'import json,sys
print(max(len(json.loads(l)["cands"]) for l in open(sys.argv[1]) if l.strip()))' "$work/out"
}
"$rf" "$root" "$work/idx" "$work/q.jsonl" >"$work/out" 2>"$work/err" && ok || fail "defaults"
all=$(cands)
[ "$all" -gt 2 ] && ok || fail "defaults dump more than 2 candidates (got $all)"
"$rf" --depth 2 "$root" "$work/idx" "$work/q.jsonl" >"$work/out" 2>"$work/err" && ok ||
  fail "--depth"
[ "$(cands)" -eq 2 ] && ok || fail "--depth 2 dumps 2 candidates (got $(cands))"
"$rf" --candidates 1 --keep 1 "$root" "$work/idx" "$work/q.jsonl" >"$work/out" 2>"$work/err" &&
  ok || fail "--candidates --keep"
few=$(cands)
[ "$few" -lt "$all" ] && ok || fail "one BM25 candidate kept ranks fewer ($few of $all)"
"$rf" --depth 0 "$root" "$work/idx" "$work/q.jsonl" >"$work/out" 2>"$work/err"
[ $? -eq 1 ] && grep -q usage "$work/err" && ok || fail "--depth 0 is a usage error"
"$rf" --bogus 3 "$root" "$work/idx" "$work/q.jsonl" >"$work/out" 2>"$work/err"
[ $? -eq 1 ] && grep -q usage "$work/err" && ok || fail "unknown option is a usage error"

echo "rank_features: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
