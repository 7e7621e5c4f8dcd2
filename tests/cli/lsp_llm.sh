#!/usr/bin/env bash
# Cancellation of an LLM ask and endpoint failures shown once (tests/fake_openai.py as the LLM).
#   lsp_llm.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_test.py" "$1" "$2" llm
