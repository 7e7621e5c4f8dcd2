#!/usr/bin/env bash
# coderag mcp and lsp: #if conditions of references, the same through both doors (tests/mcp/doors_pp_test.py).
#   doors_pp.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../mcp/doors_pp_test.py" "$1" "$2"
