#!/usr/bin/env bash
# Hardening (docs/hardening.md): the API key never appears in logs (debug), results or error messages; citations never read outside the workspace.
#   hardening_secrets.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" secrets
