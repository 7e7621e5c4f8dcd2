#!/usr/bin/env bash
# Hardening (docs/hardening.md, "Protocol and secrets"): MCP integers past int64 answered for their call, MCP paths outside the root refused, names not UTF-8 escaped and taken back, servers undumpable, an LLM answer with U+0000 answered.
#   hardening_protocol.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/../hardening/hardening.py" "$1" "$2" protocol
