#!/usr/bin/env bash
# Hardening (issue 25): symlink races, the index folder's ownership, masked credentials, FIFOs in every role, mapped files cut short under a live server.
#   hardening_leak.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" leak avail
