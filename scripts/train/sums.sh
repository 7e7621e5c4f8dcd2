#!/usr/bin/env bash
# Sets FILE's line of models/SHA256SUMS (the other models' lines stay).
#   scripts/train/sums.sh models/FILE
set -euo pipefail
dir=$(dirname "$1"); name=$(basename "$1")
cd "$dir"
{ [ -f SHA256SUMS ] && grep -v "  $name\$" SHA256SUMS || true; sha256sum "$name"; } |
  sort -k2 > SHA256SUMS.new
mv SHA256SUMS.new SHA256SUMS
