#!/usr/bin/env bash
# A damaged index.db (a page zeroed, bytes flipped in the middle): `ask
# --no-update` and `status --check` fail with an error naming `coderag index`
# (exit 2) and leave the file as it is; `coderag index` rebuilds it, after
# which `status --check` passes and asks answer.
#   damaged_index.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$1
fixtures=$2
work=$(mktemp -d /tmp/coderag-cli.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -R "$fixtures/shop" "$work/shop"
root="$work/shop"
db="$root/.coderag/index.db"
# enough code for a database of many pages
for i in $(seq 1 30); do
  for k in $(seq 1 20); do printf 'def helper_%d_%d(x):\n    """Helper %d."""\n    return x + %d\n\n\n' "$i" "$k" "$k" "$k"; done >"$root/gen_$i.py"
done
passed=0 failed=0

check() { # name, expected exit, command...
  local name=$1 want=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL $name: exit $got, expected $want"; cat "$work/err"; fi
}
ok() { # name, condition already evaluated ($?)
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; cat "$work/err"; fi
}

damage() { # how: zero | flip
  local size pages mid
  size=$(stat -c %s "$db")
  mid=$(( size / 2 / 4096 ))
  if [ "$1" = zero ]; then
    dd if=/dev/zero of="$db" bs=4096 seek="$mid" count=1 conv=notrunc status=none
  else
    /usr/bin/python3 - "$db" $(( mid * 4096 )) <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
with open(p, "r+b") as f:
    f.seek(off); b = f.read(64); f.seek(off); f.write(bytes(x ^ 0xFF for x in b))
PY
  fi
}

for how in zero flip; do
  check "index ($how)" 0 "$bin" index --root "$root"
  damage $how
  sum=$(md5sum <"$db")
  check "ask --no-update on a damaged index ($how)" 2 "$bin" ask --root "$root" --no-update "How is tax applied?"
  grep -q 'damaged' "$work/err" && grep -q 'coderag index' "$work/err"; ok "ask names the damage and the cure ($how)" $?
  [ "$(md5sum <"$db")" = "$sum" ]; ok "ask --no-update leaves the index as it is ($how)" $?
  check "status --check on a damaged index ($how)" 2 "$bin" status --root "$root" --check
  [ "$(md5sum <"$db")" = "$sum" ]; ok "status leaves the index as it is ($how)" $?
  check "index rebuilds ($how)" 0 "$bin" index --root "$root"
  check "status --check after index ($how)" 0 "$bin" status --root "$root" --check
  check "ask --no-update after index ($how)" 0 "$bin" ask --root "$root" --no-update --json "How is tax applied to an order total?"
  grep -q 'apply_tax' "$work/out"; ok "ask answers from the rebuilt index ($how)" $?
done

# Damage behind the clean mark's back: bytes overwritten deep in the file,
# its mtime put back.
check "index (hidden)" 0 "$bin" index --root "$root"
touch -r "$db" "$work/stamp"
damage zero
touch -r "$work/stamp" "$db"
sum=$(md5sum <"$db")
check "status --check finds hidden damage" 2 "$bin" status --root "$root" --check
grep -q '^check: FAILED: .*damaged (quick_check: [^*].*): run `coderag index` to rebuild it$' "$work/out"
ok "the verdict names the first problem and the cure on one line" $?
[ "$(wc -l <"$work/out")" -eq 1 ]; ok "the verdict is one line" $?
[ "$(md5sum <"$db")" = "$sum" ]; ok "status --check leaves the index as it is (hidden)" $?
[ -e "$db.damaged" ] && [ ! -e "$db.clean" ]; ok "status --check records the damage" $?
check "status after a failed check refuses the index" 2 "$bin" status --root "$root"
grep -q 'damaged' "$work/err" && grep -q 'coderag index' "$work/err"; ok "status names the damage and the cure" $?
check "ask --no-update after a failed check" 2 "$bin" ask --root "$root" --no-update "How is tax applied?"
check "index rebuilds (hidden)" 0 "$bin" index --root "$root"
grep -q 'rebuilding' "$work/err"; ok "index says it rebuilds (hidden)" $?
check "status --check after index (hidden)" 0 "$bin" status --root "$root" --check
check "ask --no-update after index (hidden)" 0 "$bin" ask --root "$root" --no-update --json "How is tax applied to an order total?"
grep -q 'apply_tax' "$work/out"; ok "ask answers from the rebuilt index (hidden)" $?

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
