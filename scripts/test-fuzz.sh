#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (build-fuzz:
# -DFUZZ=ON, everything compiled with -fsanitize=fuzzer-no-link,address,
# undefined) and runs each one for a bounded time from its committed seed
# corpus. Fails on any crash, leak, timeout or sanitizer report.
#
#   scripts/test-fuzz.sh [TARGET...]        (default: all of tests/fuzz/fuzz_*.c)
#
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_HANG      seconds one input may take before it counts as a hang (default 300)
#   FUZZ_JOBS      targets run at once (default: number of cores, at most 2)
#   FUZZ_WORK      where the grown corpora and logs go (default: build-fuzz/fuzz-work)
#   FUZZ_ARGS      extra libFuzzer flags (e.g. "-max_len=65536")
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
cores=$(nproc)
jobs=${FUZZ_JOBS:-$((cores < 2 ? cores : 2))}
work=${FUZZ_WORK:-build-fuzz/fuzz-work}

need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  need+=(libclang-rt-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "test-fuzz: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The project's own dependencies: scripts/setup.sh installs them (and builds
# build/) when a library is missing.
pkg-config --exists tree-sitter sqlite3 jansson libcurl 2>/dev/null || scripts/setup.sh build >/dev/null

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in tests/fuzz/fuzz_*.c; do n=$(basename "$f" .c); targets+=("${n#fuzz_}"); done
fi

# Reuse the grammars another build dir already fetched (else CMake fetches them).
grammar=()
for d in build build-test; do
  if ls "$d"/_deps/tree-sitter-python-*/src/parser.c >/dev/null 2>&1 && [ ! -f build-fuzz/CMakeCache.txt ]; then
    grammar=(-DCR_GRAMMAR_DIR="$PWD/$d/_deps"); break
  fi
done
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFUZZ=ON \
  "${grammar[@]}" >/dev/null || exit 1
cmake --build build-fuzz -j"$cores" --target "${targets[@]/#/fuzz_}" >/dev/null || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$work"

run_one() { # target -> log in $work/<target>.log, rc in $work/<target>.rc
  local t=$1 start end
  rm -rf "$work/$t" && mkdir -p "$work/$t"
  start=$(date +%s.%N)
  # -timeout: one input taking longer than FUZZ_HANG seconds (default 300) is
  # a hang and fails the run. A last-resort bound, far above any input's
  # time on a loaded one-core machine (slow inputs are reported, not failed:
  # timing belongs in bench/); -max_total_time is a budget, not a condition.
  build-fuzz/tests/fuzz/"fuzz_$t" -max_total_time="$seconds" -timeout="${FUZZ_HANG:-300}" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/$t-" ${FUZZ_ARGS:-} \
    "$work/$t" "tests/fuzz/corpus/$t" >"$work/$t.log" 2>&1
  echo $? >"$work/$t.rc"
  end=$(date +%s.%N)
  echo "$start $end" >"$work/$t.time"
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

passed=0 failed=0
for t in "${targets[@]}"; do
  rc=$(cat "$work/$t.rc" 2>/dev/null || echo 99)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
  read -r s e <"$work/$t.time"
  secs=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.0f", e - s }')
  corpus=$(find "$work/$t" -type f | wc -l)
  if [ "$rc" -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/$t.log"; then
    passed=$((passed + 1))
    printf 'ok   %-10s %10s execs in %4ss, corpus %s\n' "$t" "${execs:-?}" "$secs" "$corpus"
  else
    failed=$((failed + 1))
    printf 'FAIL %-10s %10s execs in %4ss (exit %s); log: %s\n' "$t" "${execs:-?}" "$secs" "$rc" "$work/$t.log"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$work/$t.log" | head -8 | sed 's/^/     /'
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
