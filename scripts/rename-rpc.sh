#!/usr/bin/env bash
# Renames what lsp/ code used of the JSON-RPC envelope and the Content-Length
# transport before they moved to rpc/ (rpc/rpc.h) to rpc.h's names, in place.
# Safe to re-run (after merging a branch that still uses the old names).
#
#   scripts/rename-rpc.sh FILE...        e.g. scripts/rename-rpc.sh lsp/*.[ch] tests/unit/*.c
#
# Then scripts/check-format.sh --fix: shorter names can reflow a line.
set -eu
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 1; }
sed -i -E \
  -e 's/\blsp_transport_new\(/rpc_transport_new(\&rpc_framing_content_length, /g' \
  -e 's/\blsp_rpc_new\(/rpc_new(\&rpc_profile_lsp, /g' \
  -e 's/\blsp_transport_(free|set_limits|read|reject|write|broken)\b/rpc_transport_\1/g' \
  -e 's/\blsp_rpc_(free|handle|framing_error|exited|shut_down|notify|request)\b/rpc_\1/g' \
  -e 's/\blsp_call_(reply|drop|cancelled|method)\b/rpc_call_\1/g' \
  -e 's/\blsp_error\b/rpc_error/g' \
  -e 's/\bLsp(Transport|ReadResult|Call|Error|Status|Handler|Method|SendFn|ResponseFn)\b/Rpc\1/g' \
  -e 's/\bLspRpc\b/Rpc/g' \
  -e 's/\bLSP_(READ_MSG|READ_BAD|READ_EOF|READ_IO|MAX_BODY|MAX_HEADER|STALL_MS)\b/RPC_\1/g' \
  -e 's/\bLSP_(PARSE_ERROR|INVALID_REQUEST|METHOD_NOT_FOUND|INVALID_PARAMS|INTERNAL_ERROR)\b/RPC_\1/g' \
  -e 's/\bLSP_(SERVER_NOT_INITIALIZED|REQUEST_FAILED|REQUEST_CANCELLED)\b/RPC_\1/g' \
  -e 's/\bLSP_(DONE|FAIL|LATER|REQUEST|NOTIFY|NEEDS_INIT|INIT|SHUTDOWN)\b/RPC_\1/g' \
  "$@"
