#!/usr/bin/env bash
# Lifecycle, envelope errors and framing robustness (tests/lsp/*.txt transcripts), and clients that go away.
#   lsp_protocol.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_test.py" "$1" "$2" transcripts eof
