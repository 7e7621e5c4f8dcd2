#!/usr/bin/env bash
# Trains the builtin embedder's model from Debian's Python packages, end to
# end and seeded (docs/embedder.md):
#   1. installs python3-torch and the pinned library packages of
#      scripts/train/packages.txt (as root; Debian's archive only);
#   2. harvests (docstring / name words, code) pairs with ast, tokenized as
#      the index tokenizes, refusing evaluation projects, the standard
#      library and vendored copies (scripts/train/harvest.py prints what it
#      used and refused);
#   3. trains the weighted bag-of-tokens model on one thread, reporting the
#      held-out MRR (scripts/train/train.py);
#   4. writes models/code-nbow-py-v1.crm, models/SHA256SUMS and the C parity
#      fixtures under tests/fixtures/embed.
#
#   scripts/train-embedder.sh [WORK_DIR]   (default /tmp/coderag-train)
#
# Environment: EPOCHS, DIM, SEED (defaults 2, 128, 1).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/coderag-train}
mkdir -p "$work"
model=models/code-nbow-py-v1.crm

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
mapfile -t pkgs < <(grep -v '^#' scripts/train/packages.txt | grep .)
echo "train-embedder: installing python3-torch and ${#pkgs[@]} library packages" >&2
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
  --no-install-recommends python3-torch python3-numpy "${pkgs[@]}" >/dev/null

# three parts of the list in parallel, concatenated in list order
parts=(":140" "140:200" "200:")
pids=()
for i in 0 1 2; do
  /usr/bin/python3 scripts/train/harvest.py scripts/train/packages.txt "$work/pairs-$i.jsonl" \
    "${parts[$i]}" > "$work/harvest-$i.log" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cat "$work"/harvest-{0,1,2}.log | tee "$work/harvest.log"
cat "$work"/pairs-{0,1,2}.jsonl > "$work/pairs.jsonl"
nice /usr/bin/python3 scripts/train/train.py "$work/pairs.jsonl" "$model" \
  --epochs "${EPOCHS:-2}" --dim "${DIM:-128}" --seed "${SEED:-1}" --name code-nbow-py-v1 \
  | tee "$work/train.log"
/usr/bin/python3 scripts/train/fixture.py "$model" tests/fixtures/embed
scripts/train/sums.sh "$model"
cat models/SHA256SUMS
