#!/usr/bin/env bash
# coderag mcp: lifecycle, version negotiation, framing and bad input (tests/mcp/transcripts/*.txt).
#   mcp_transcripts.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../mcp/transcript.py" "$1" "$2"
