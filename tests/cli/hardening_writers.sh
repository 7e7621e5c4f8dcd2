#!/usr/bin/env bash
# Hardening (docs/hardening.md, "Writers that meet"): a CLI index, two cold indexers and a language server's save meeting another writer wait their turn and say so; CLI + two servers + MCP on one root lose nothing.
#   hardening_writers.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" writers stress
