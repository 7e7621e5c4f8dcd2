#!/usr/bin/env bash
# Indexing speed across languages: cold index, and a single-file update of a
# ~1,000-line file (in-process), for Django (Python) and a ~1M-line C tree made
# of 22 copies of the c-lua and c-tree-sitter corpora.
#
#   bench/lang_bench.sh CORPUS_DIR [BUILD_DIR] [SCRATCH]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$1
build=${2:-build}
scratch=${3:-/tmp/coderag-lang-bench}
mkdir -p "$scratch"
if [ ! -d "$scratch/bigc" ]; then
  for i in $(seq 1 22); do
    mkdir -p "$scratch/bigc/copy$i"
    mkdir -p "$scratch/bigc/copy$i/lua" && cp -R "$corpus/c-lua/." "$scratch/bigc/copy$i/lua/"
    mkdir -p "$scratch/bigc/copy$i/ts" && cp -R "$corpus/c-tree-sitter/." "$scratch/bigc/copy$i/ts/"
  done
fi
run() { # name root ext file
  local idx; idx=$(mktemp -d /tmp/coderag-bench-idx.XXXXXX)
  local lines; lines=$(find "$2" -name "*.$3" -o -name '*.h' | xargs cat | wc -l)
  local t0 t1; t0=$(date +%s%N)
  "$build/coderag" index --root "$2" --index-dir "$idx" 2>/dev/null
  t1=$(date +%s%N)
  local upd; upd=$("$build/bench_update" "$2" "$idx" "$4" 20)
  printf '| %s | %d | %.2f | %s |\n' "$1" "$lines" "$(echo "($t1 - $t0) / 1000000000" | bc -l)" "$upd"
  rm -rf "$idx"
}
printf '| corpus | lines | cold index (s) | single-file update (ms, median worst) |\n|---|---|---|---|\n'
run django "$corpus/django" py django/db/models/sql/compiler.py
run c-1M "$scratch/bigc" c copy1/lua/src/lparser.c
