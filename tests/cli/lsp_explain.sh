#!/usr/bin/env bash
# Hover, lens, code action and coderag.explain on a long, same-named, class-qualified
# definition in every language (tests/fake_openai.py as the LLM).
#   lsp_explain.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_explain_test.py" "$1" "$2" explain
