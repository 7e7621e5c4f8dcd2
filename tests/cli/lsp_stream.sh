#!/usr/bin/env bash
# The editor issue's server side: nothing waits behind the LLM, streaming,
# cancel, explain, back-off, match, history, root rule (tests/lsp/lsp_stream_test.py).
#   lsp_stream.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_stream_test.py" "$1" "$2"
