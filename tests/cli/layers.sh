#!/usr/bin/env bash
# The build's layer checks catch what they are for, on small trees made
# here: scripts/check-includes.py fails on a cross-folder "../" include,
# and scripts/file-cycles.py sees a cycle that a call through a registered
# function pointer closes (a method table), which object files alone hide.
#   layers.sh CODERAG_BIN FIXTURE_DIR
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/coderag-layers.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $1"; [ -f "$work/out" ] && cat "$work/out"; }

# includes: the checkout passes; one reach into another folder fails
/usr/bin/python3 "$here/scripts/check-includes.py" "$here" >"$work/out" 2>&1 && ok || bad "the checkout has a cross-folder include"
mkdir -p "$work/inc/lsp" "$work/inc/index/lang"
echo '#include "../idx_int.h"' >"$work/inc/index/lang/x.c"     # inside its own folder: fine
/usr/bin/python3 "$here/scripts/check-includes.py" "$work/inc" >"$work/out" 2>&1 && ok || bad "a subfolder's include of its folder was refused"
echo '#include "../index/store_int.h"' >"$work/inc/lsp/y.c"
if /usr/bin/python3 "$here/scripts/check-includes.py" "$work/inc" >"$work/out" 2>&1; then
  bad "a cross-folder include passed"
elif grep -q 'lsp/y.c:1' "$work/out"; then ok; else bad "the error does not name lsp/y.c:1"; fi

# cycles: a.c hands a table of its handlers to b.c, which calls through it
src="$work/cyc"
obj="$work/build/CMakeFiles/coderag_lsp.dir/lsp"
mkdir -p "$src/lsp" "$obj"
cat >"$src/lsp/b.h" <<'H'
typedef struct Method {
    const char *name;
    int (*fn)(int);
} Method;
void b_register(const Method *m);
int b_run(int v);
H
cat >"$src/lsp/a.c" <<'C'
#include "b.h"
static int on_x(int v) { return v + 1; }
static const Method methods[] = {{"x", on_x}};
void a_start(void);
void a_start(void) { b_register(methods); }
C
cat >"$src/lsp/b.c" <<'C'
#include "b.h"
static const Method *table;
void b_register(const Method *m) { table = m; }
int b_run(int v) { return table->fn(v); }
C
for f in a b; do cc -c -o "$obj/$f.c.o" "$src/lsp/$f.c" || bad "compiling $f.c"; done
/usr/bin/python3 "$here/scripts/file-cycles.py" --source "$src" "$work/build" >"$work/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'lsp: cycle through function pointers among lsp/a, lsp/b' "$work/out" &&
  grep -q 'lsp/b -> lsp/a: \*on_x' "$work/out"; then ok; else bad "the pointer cycle was not seen (exit $rc)"; fi
/usr/bin/python3 "$here/scripts/file-cycles.py" --strict --source "$src" "$work/build" >"$work/out" 2>&1 &&
  bad "--strict passed a pointer cycle" || ok

echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
