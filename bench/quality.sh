#!/usr/bin/env bash
# Retrieval quality on a question file: asks every question through
# `coderag ask --json` over its corpus and scores the results with
# ../shared/bench/score.py (SHARED_DIR: the folder holding bench/score.py and the
# dev, dev2 and dev-lang question sets, which live outside the repository).
# A corpus missing from CORPUS_DIR is built by bench/corpus.sh.
#
#   bench/quality.sh [QUESTIONS] [CORPUS_DIR] [BUILD_DIR] [-- extra ask options]
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED_DIR:-../shared}
questions=${1:-$shared/bench/dev-questions.jsonl}
corpus=${2:-/tmp/coderag-corpus}
build=${3:-build}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
extra=("$@")

[ -x "$build/coderag" ] || scripts/setup.sh "$build"
out=$(mktemp /tmp/coderag-results.XXXXXX.jsonl)
for c in $(/usr/bin/python3 -c 'import json,sys
print(" ".join(sorted({json.loads(l)["corpus"] for l in open(sys.argv[1]) if l.strip()})))' "$questions"); do
  [ -d "$corpus/$c" ] || bash bench/corpus.sh "$corpus" "$c" >&2
  mkdir -p "$corpus/.idx-$c"
  "$build/coderag" index --root "$corpus/$c" --index-dir "$corpus/.idx-$c" 2>/dev/null
done
/usr/bin/python3 - "$questions" "$corpus" "$build/coderag" "$out" "${extra[@]}" <<'PY'
import json, subprocess, sys, time
questions, corpus, binary, out = sys.argv[1:5]
extra = sys.argv[5:]
with open(questions) as f, open(out, "w") as w:
    for line in f:
        if not line.strip():
            continue
        q = json.loads(line)
        root = "%s/%s" % (corpus, q["corpus"])
        t0 = time.time()
        p = subprocess.run([binary, "ask", "--root", root, "--index-dir", "%s/.idx-%s" % (corpus, q["corpus"]),
                            "--no-update", "--json", *extra, q["question"]], capture_output=True, text=True)
        wall = (time.time() - t0) * 1000
        if p.returncode != 0:
            print("%s: exit %d: %s" % (q["id"], p.returncode, p.stderr.strip()), file=sys.stderr)
            continue
        w.write(json.dumps({"id": q["id"], "result": json.loads(p.stdout), "wall_ms": wall}) + "\n")
PY
/usr/bin/python3 "$shared/bench/score.py" "$questions" "$out" --corpus-root "$corpus" ${SCORE_ARGS:-}
echo "results: $out" >&2
