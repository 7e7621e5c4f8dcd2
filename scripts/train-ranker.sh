#!/usr/bin/env bash
# Trains the re-ranker (retrieve/rerank.c) from pseudo-questions mined from
# Debian and npm packages in the languages the index reads, end to end and
# seeded (docs/ranker.md):
#   1. fetches the pinned packages of scripts/train/ranker-packages.txt
#      (downloaded and unpacked, never installed), refusing evaluation
#      corpora, the standard library and vendored copies (excluded.py);
#   2. indexes each with BUILD_DIR/coderag;
#   3. mines pseudo-questions from each package's own index (a doc
#      comment's first sentence -> its definition, a test's name -> what it
#      calls; and, with several definitions for gold (MULTI): a doc comment
#      -> it and the definitions it names, a test -> the 2-5 it calls, a
#      module's doc comment -> its definitions, a README section -> the
#      definitions its code names; the targets' names removed) and dumps the first ranking's
#      candidates with their features (BUILD_DIR/rank_features);
#   4. learns a linear pairwise model (scripts/train/ranker.py) from the
#      questions of KINDS (refs: a doc comment -> it and the definitions it
#      names), the mean of SEEDS seeded runs, and writes
#      models/ranker-v1.json, its models/SHA256SUMS line and
#      retrieve/rerank_model.c;
#   5. with DEV_CORPORA (a folder of indexed dev corpora, .idx-NAME beside
#      each), measures the first ranking and the model on the dev sets.
#
#   scripts/train-ranker.sh [BUILD_DIR] [WORK_DIR]   (defaults build, /tmp/coderag-ranker)
#
# Environment: SEED (1), SEEDS (5: runs averaged, seeds SEED, SEED+1, ...),
# EPOCHS (6), MULTI (refs,calls,module,section: the
# multi-definition miners of mine_multi.py; empty for none), MAX_MULTI (200 a
# miner and package), MAX_DOC (80), MAX_TEST (40), DROP (features left out, comma-separated;
# default the ones the construction biases: see docs/ranker.md), ANCHOR (10:
# weight added to the first ranking's score after training, so that the model
# corrects the first ranking rather than replacing it), KINDS (the question
# kinds trained on, comma-separated: doc, test, refs, calls, module, section;
# default refs, docs/ranker.md), DEV_CORPORA; CANDIDATES, KEEP, DEPTH
# (rank_features' options: the first ranking's BM25 candidates, candidates
# kept after the file blend, candidates dumped; rank.c's when unset),
# to train for other constants than rank.c's before changing them there.
# About 2 minutes on two cores once the packages are fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/coderag-ranker}
seed=${SEED:-1}
drop=${DROP:-doc,has_doc,name,name_cover,path,ident}
pool=()
[ -n "${CANDIDATES:-}" ] && pool+=(--candidates "$CANDIDATES")
[ -n "${KEEP:-}" ] && pool+=(--keep "$KEEP")
[ -n "${DEPTH:-}" ] && pool+=(--depth "$DEPTH")
mkdir -p "$work"/{src,idx,q,dump}
cmake --build "$build" -j2 --target coderag rank_features >/dev/null
(cd scripts/train && python3 fetch_ranker.py ranker-packages.txt "$work") | tee "$work/fetch.log"
for d in "$work"/src/*; do
  n=$(basename "$d")
  rm -rf "$work/idx/$n"; mkdir -p "$work/idx/$n"
  "$build/coderag" index --root "$d" --index-dir "$work/idx/$n" >/dev/null 2>&1
  python3 scripts/train/mine_ranker.py "$work/idx/$n" "$n" "$work/q/$n.jsonl" --seed "$seed" \
    --multi "${MULTI-refs,calls,module,section}" --max-multi "${MAX_MULTI:-200}" \
    --max-doc "${MAX_DOC:-80}" --max-test "${MAX_TEST:-40}" --docs "$work/docs/$n"
  "$build/rank_features" ${pool[@]+"${pool[@]}"} "$d" "$work/idx/$n" "$work/q/$n.jsonl" \
    > "$work/dump/$n.jsonl" 2> "$work/dump/$n.err"
  sed -n 's/^features: //p' "$work/dump/$n.err" > "$work/names.json"
  python3 scripts/train/ranker.py label "$work/dump/$n.jsonl" "$work/q/$n.jsonl" "$work/src" \
    "$work/dump/$n.lab.jsonl"
done | tee "$work/mine.log"
python3 scripts/train/ranker.py train models/ranker-v1.json "$work"/dump/*.lab.jsonl \
  --names "$work/names.json" --seed "$seed" --epochs "${EPOCHS:-6}" --drop "$drop" \
  --anchor "${ANCHOR:-10}" --kinds "${KINDS-refs}" --seeds "${SEEDS:-5}"
python3 scripts/train/export_ranker.py models/ranker-v1.json retrieve/rerank_model.c
clang-format -i retrieve/rerank_model.c 2>/dev/null || true
scripts/train/sums.sh models/ranker-v1.json
grep ranker models/SHA256SUMS
if [ -n "${DEV_CORPORA:-}" ]; then
  shared=${SHARED_BENCH:-/work/shared/bench}
  for set in "$shared/dev-questions.jsonl" "$shared/dev-lang-questions.jsonl" \
             bench/lang2-questions.jsonl bench/lang3-questions.jsonl "$shared/dev2-questions.jsonl"; do
    s=$(basename "$set" .jsonl)
    : > "$work/dev-$s.jsonl"
    for c in $(python3 -c 'import json,sys
print(" ".join(sorted({json.loads(l)["corpus"] for l in open(sys.argv[1]) if l.strip()})))' "$set"); do
      [ -d "$DEV_CORPORA/.idx-$c" ] || continue
      "$build/rank_features" ${pool[@]+"${pool[@]}"} "$DEV_CORPORA/$c" "$DEV_CORPORA/.idx-$c" \
        "$set" "$c" >> "$work/dev-$s.jsonl" 2>/dev/null
    done
    python3 scripts/train/ranker.py label "$work/dev-$s.jsonl" "$set" "$DEV_CORPORA" \
      "$work/dev-$s.lab.jsonl"
  done
  python3 scripts/train/ranker.py eval models/ranker-v1.json "$work"/dev-*.lab.jsonl
fi
