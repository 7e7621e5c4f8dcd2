#!/usr/bin/env bash
# The writers' stress test (tests/hardening/hardening_writers.py, group
# stress) in its long form: CLI + two language servers + one MCP server
# editing and asking on one root, STRESS_ROUNDS saves per server (default
# 300, CI runs 12), RUNS times (default 3). Not part of CI.
#   scripts/stress-writers.sh [BUILD_DIR]      (default build)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${RUNS:-3}
fail=0
for i in $(seq 1 "$runs"); do
  STRESS_ROUNDS=${STRESS_ROUNDS:-300} /usr/bin/python3 tests/hardening/hardening.py \
    "$build/coderag" tests/fixtures stress || fail=1
done
exit $fail
