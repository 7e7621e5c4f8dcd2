#!/usr/bin/env bash
# The whole suite (scripts/test.sh: sanitized ctest, editor clients,
# fuzzers) on a starved machine, to show no test depends on timing: three
# runs in a row pinned to one core (taskset -c 0), then one run beside a
# CPU-heavy job (two busy loops, started and stopped here). Not part of CI:
# it takes four times the suite. Prints pass/fail and the wall time of each
# run and a summary; exits non-zero if any run failed.
#
#   scripts/test-stress.sh [RUNS...]       (default: one one two three load)
#
#   one, two, three   a run under `taskset -c 0`
#   load              a run on all cores with `yes >/dev/null` x2 beside it
#   STRESS_LOG        folder for each run's log (default build-test/stress)
#   STRESS_NICE       nice level of the suite (default 0; the busy loops run
#                     at the same level so they really compete)
#   FUZZ_SECONDS etc. passed through to scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(one two three load)
log_dir=${STRESS_LOG:-build-test/stress}
level=${STRESS_NICE:-0}
mkdir -p "$log_dir"
command -v taskset >/dev/null 2>&1 || { echo "test-stress: taskset (util-linux) not found" >&2; exit 2; }

busy=()
stop_busy() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  busy=()
}
trap stop_busy EXIT
trap 'exit 130' INT TERM

# Builds first (scripts/test.sh would, too), so the runs time the tests alone.
scripts/setup.sh --sanitize build-test || { echo "test-stress: build failed" >&2; exit 2; }

results=() failed=0
for run in "${runs[@]}"; do
  log="$log_dir/$run.log"
  case $run in
    one | two | three) how="taskset -c 0"; cmd=(taskset -c 0 nice -n "$level" scripts/test.sh) ;;
    load)
      how="all cores, 2 x 'yes >/dev/null' beside it"
      for _ in 1 2; do nice -n "$level" yes >/dev/null & busy+=($!); done
      cmd=(nice -n "$level" scripts/test.sh) ;;
    *) echo "test-stress: unknown run '$run' (one, two, three, load)" >&2; exit 2 ;;
  esac
  echo "== run $run ($how): ${cmd[*]} > $log"
  start=$(date +%s)
  "${cmd[@]}" >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  stop_busy
  # the suite's own summaries: ctest's, the editors' and the fuzzers'
  summary=$(grep -E '^[0-9]+% tests passed|^[0-9]+ passed, [0-9]+ failed$' "$log" | tr '\n' ';' | sed 's/;$//')
  if [ "$rc" -eq 0 ]; then word=PASS; else word=FAIL; failed=$((failed + 1)); fi
  line=$(printf '%-4s %-5s %5ss  exit %s  (%s)' "$word" "$run" "$secs" "$rc" "$summary")
  echo "$line"
  [ "$rc" -eq 0 ] || grep -E '^FAIL|\*\*\*Failed|Timeout|^[[:space:]]+[0-9]+ - ' "$log" | head -20 | sed 's/^/     /'
  results+=("$line")
done

echo "== summary ($(nproc) cores visible, $(date -u +%FT%TZ))"
printf '%s\n' "${results[@]}"
echo "$(( ${#runs[@]} - failed )) of ${#runs[@]} runs passed"
[ "$failed" -eq 0 ]
