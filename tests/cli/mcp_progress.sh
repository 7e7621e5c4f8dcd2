#!/usr/bin/env bash
# coderag mcp: progress at a human pace, counts that match status, the LLM's tokens (tests/mcp/progress_test.py).
#   mcp_progress.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../mcp/progress_test.py" "$1" "$2"
