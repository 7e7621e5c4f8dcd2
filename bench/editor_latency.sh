#!/usr/bin/env bash
# Latencies seen by the Neovim client against the real server and the fake LLM
# (bench/editor_latency.lua). Usage: bench/editor_latency.sh [BIN] (default build/coderag);
# BENCH_N=10 rounds.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${1:-$ROOT/build/coderag}
T=$(mktemp -d "${TMPDIR:-/tmp}/coderag-bench-editor.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp -r tests/fixtures/shop "$T/ws"
CODERAG_BIN=$BIN CODERAG_WS=$T/ws CODERAG_INDEX_DIR=$T/index CODERAG_FAKE_LLM=$ROOT/tests/fake_openai.py \
  HOME=$T XDG_STATE_HOME=$T/state XDG_DATA_HOME=$T/data \
  timeout 600 nvim --headless -u NONE -i NONE --cmd "set rtp^=$ROOT/editors/nvim" \
  -c "luafile $ROOT/bench/editor_latency.lua" </dev/null 2>&1 | grep -a " ms"
