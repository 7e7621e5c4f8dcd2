#!/usr/bin/env bash
# Hardening (docs/hardening.md): read-only workspace, full disk (tiny tmpfs, RLIMIT_FSIZE), two indexers and two language servers on one workspace: clear errors, no crash, never a corrupt index.
#   hardening_fs.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" fs two
