#!/usr/bin/env bash
# coderag mcp: notifications/cancelled of a running and of a queued call (tests/mcp/cancel_test.py).
#   mcp_cancel.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../mcp/cancel_test.py" "$1" "$2"
