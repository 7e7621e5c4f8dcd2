#!/usr/bin/env bash
# End to end with the benchmark client ../shared/bench/lsp_ask.py (skipped when absent).
#   lsp_bench.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_test.py" "$1" "$2" bench
