#!/usr/bin/env bash
# Issue 26's table for the Linux kernel (bench/corpus.sh DIR c-linux: the Linux 6.1
# C sources, 55,405 files, 31.6M lines), plus the 1M-line one-shot ask
# against grep. Builds the corpus when missing, indexes it cold into a
# scratch folder and prints, each with its command's figures:
#   cold `coderag index`: wall, CPU (user+sys), peak RSS (/usr/bin/time -v)
#   index on disk (index.db + postings.bin + vectors)
#   one-shot `ask --no-update`: median wall of the questions of
#     bench/kernel-questions.jsonl (second pass: files in the page cache)
#   `coderag index` after one file changed (a line appended), and with
#     nothing changed
#   language server: ready, ask p50 and peak RSS (SHARED_DIR/bench/lsp_ask.py,
#     outside the repository: /work/shared by default)
#   stdlib+SymPy (~1M lines): one-shot ask wall vs `grep -rlw NAME`
# Timings are wall clock on a shared machine: the CPU time is printed beside.
#
#   bench/kernel_bench.sh [BUILD_DIR] [CORPUS_DIR] [SCRATCH]
# (REUSE_INDEX=1 keeps the cold index of an earlier run in SCRATCH)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
corpus=${2:-/work/corpus}
scratch=${3:-/tmp/coderag-kernel-bench}
shared=${SHARED_DIR:-/work/shared}
[ -x "$build/coderag" ] || scripts/setup.sh "$build"
mkdir -p "$scratch"
# a copy: a rebuild during the run changes nothing measured
cp "$build/coderag" "$scratch/coderag"
bin=$scratch/coderag
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
[ -d "$corpus/c-linux" ] || bash bench/corpus.sh "$corpus" c-linux >&2
mkdir -p "$scratch"
# a tree of hard links to the corpus (no copy): the one file the update
# figure changes is unlinked and copied first, so the corpus is never written
root=$scratch/c-linux
[ -d "$root" ] || cp -al "$corpus/c-linux" "$root" 2>/dev/null ||
  { rm -rf "$root"; mkdir -p "$root" && cp -R "$corpus/c-linux/." "$root/"; } # another file system: a copy
idx=$scratch/idx
tv=$scratch/time.txt
# REUSE_INDEX=1: keep the index (and cold-time.txt) of an earlier run's cold build
cold=$scratch/cold-time.txt
[ "${REUSE_INDEX:-0}" = 1 ] && [ -f "$cold" ] || rm -rf "$idx"

# "wall_s cpu_s rss_mb" of the /usr/bin/time -v report in $tv
time_figs() {
  awk -F': ' '/Elapsed/ {n = split($2, a, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + a[i]}
              /User time/ {u = $2} /System time/ {s = $2} /Maximum resident/ {r = $2}
              END {printf "%.1f %.1f %d\n", w, u + s, r / 1024}' "$tv"
}

echo "corpus: $root ($(find "$root" -type f | wc -l) files); load: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -d "$idx" ] || /usr/bin/time -v "$bin" index --root "$root" --index-dir "$idx" 2>"$cold" >/dev/null
cp "$cold" "$tv"
read -r wall cpu rss < <(time_figs)
grep -E '^indexed' "$tv" || true
printf 'cold index: wall %s s, CPU %s s, peak RSS %s MB\n' "$wall" "$cpu" "$rss"
printf 'index on disk: %s MB (%s)\n' "$(du -sm "$idx" | cut -f1)" \
  "$(cd "$idx" && ls -s --block-size=1M index.db postings.bin vectors* 2>/dev/null | tr '\n' ' ')"

# one-shot asks: the kernel questions twice, the second pass timed
askq=bench/kernel-questions.jsonl
python3 - "$bin" "$root" "$idx" "$askq" <<'PY'
import json, resource, statistics, subprocess, sys, time
bin_, root, idx, qf = sys.argv[1:5]
qs = [json.loads(l)["question"] for l in open(qf) if l.strip()]
walls = []
for rnd in range(2):
    for q in qs:
        t0 = time.perf_counter()
        subprocess.run([bin_, "ask", "--root", root, "--index-dir", idx, "--no-update", "--json", q],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if rnd: walls.append(time.perf_counter() - t0)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("one-shot ask --no-update: p50 %.3f s, max %.3f s (%d questions; CPU %.3f s per ask)" %
      (statistics.median(walls), max(walls), len(walls), (ru.ru_utime + ru.ru_stime) / (2 * len(qs))))
PY

# one file changed, then nothing changed
f=kernel/sched/core.c
cp -p "$root/$f" "$scratch/saved.c"
cp -p --remove-destination "$scratch/saved.c" "$root/$f"
sleep 3 # a file modified in the last 2 s is read again by the next pass (write.c)
echo "/* kernel_bench */" >> "$root/$f"
sleep 3
/usr/bin/time -v "$bin" index --root "$root" --index-dir "$idx" 2>"$tv" >/dev/null
read -r wall cpu rss < <(time_figs)
printf 'index after one file changed (%s): wall %s s, CPU %s s\n' "$f" "$wall" "$cpu"
/usr/bin/time -v "$bin" index --root "$root" --index-dir "$idx" 2>"$tv" >/dev/null
read -r wall cpu rss < <(time_figs)
printf 'index with nothing changed: wall %s s, CPU %s s, peak RSS %s MB\n' "$wall" "$cpu" "$rss"
cp -p "$scratch/saved.c" "$root/$f"
"$bin" index --root "$root" --index-dir "$idx" >/dev/null 2>&1

# the language server
python3 "$shared/bench/lsp_ask.py" \
  --server "/usr/bin/time -f %M -o $scratch/lsp.rss $bin lsp --index-dir $idx" \
  --root "$root" "$askq" --corpus c-linux -o "$scratch/lsp.jsonl" --meta "$scratch/lsp.meta" \
  --stderr-log "$scratch/lsp.stderr" >/dev/null 2>&1 || true
python3 - "$scratch/lsp.meta" "$scratch/lsp.rss" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rss = open(sys.argv[2]).read().split()[-1] if open(sys.argv[2]).read().strip() else "?"
print("language server: ready %.2f s, ask p50 %s ms, peak RSS %s MB" %
      (m.get("ready_ms", 0) / 1000, m.get("wall_p50_ms"), int(rss) // 1024 if rss != "?" else rss))
PY

# 1M lines (stdlib + SymPy): one-shot ask vs grep -rlw
one=$corpus/stdlib-sympy
if [ ! -d "$one" ]; then
  for c in stdlib sympy; do [ -d "$corpus/$c" ] || bash bench/corpus.sh "$corpus" "$c" >&2; done
  one=$scratch/stdlib-sympy
  [ -d "$one" ] || { mkdir -p "$one"; cp -R "$corpus/stdlib/." "$one/"; cp -R "$corpus/sympy/." "$one/"; }
fi
"$bin" index --root "$one" --index-dir "$scratch/idx1m" >/dev/null 2>&1
python3 - "$bin" "$one" "$scratch/idx1m" <<'PY'
import resource, statistics, subprocess, sys, time
bin_, root, idx = sys.argv[1:4]
pairs = [("How does the tokenizer split source lines into tokens?", "generate_tokens"),
         ("How are symbolic expressions simplified?", "simplify"),
         ("How does json decode a string?", "JSONDecoder")]
def run(cmd):
    """(wall, CPU: user + sys) of one process"""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    w, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
a, g, ac, gc = [], [], [], []
for rnd in range(5):
    for q, name in pairs:
        w, c = run([bin_, "ask", "--root", root, "--index-dir", idx, "--no-update", "--json", q])
        a.append(w); ac.append(c)
        w, c = run(["grep", "-rlw", name, root])
        g.append(w); gc.append(c)
m = statistics.median
print("1M lines one-shot ask: p50 %.0f ms (CPU %.1f ms); grep -rlw: p50 %.0f ms (CPU %.1f ms); "
      "ratio %.2f (CPU %.2f)" % (1000 * m(a), 1000 * m(ac), 1000 * m(g), 1000 * m(gc),
                                 m(a) / m(g), m(ac) / m(gc)))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
