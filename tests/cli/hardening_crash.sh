#!/usr/bin/env bash
# Hardening (docs/hardening.md): a `coderag index` on a real corpus (stdlib) SIGKILLed at random moments, and `coderag lsp` SIGKILLed during didSave storms, recover to an index equal to an uninterrupted build.
#   hardening_crash.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" crash lspkill
