#!/usr/bin/env bash
# Indexing through the protocol: progress, didSave, watched files, a didSave storm while asks run, several roots, code lenses and hover.
#   lsp_index.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../lsp/lsp_test.py" "$1" "$2" progress save watch storm multiroot nav
