#!/usr/bin/env bash
# coderag ask on a terminal (pseudo-terminal, fake LLM): streamed, rendered, citations listed.
#   ask_tty.sh CODERAG_BIN FIXTURE_DIR
set -u
exec /usr/bin/python3 "$(dirname "$0")/ask_tty.py" "$1" "$2"
