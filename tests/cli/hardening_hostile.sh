#!/usr/bin/env bash
# Hardening (docs/hardening.md, "Hostile repositories" and "Limits"): pathological lines and .gitignore patterns finish, a .gitignore over 1 MiB fails closed, nested index folders and paths past PATH_MAX are listed, an index with a table gone is told and rebuilt, index/ask/mcp/lsp under ulimit -v and -n exit 0 or 2 with a coderag: message.
#   hardening_hostile.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" hostile repair limits
