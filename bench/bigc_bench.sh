#!/usr/bin/env bash
# A real million lines of C: PostgreSQL 15.18's backend, headers, common and
# port code (Debian source package postgresql-15 15.18-0+deb12u1, fetched
# with a deb-src list kept in a temporary folder), without the generated
# Snowball stemmers, the Unicode conversion maps and utils/adt: 1,570 files,
# 1,010,271 lines of .c/.h under 1 MiB. Then a cold index, timed with
# /usr/bin/time -v (wall, user, sys, peak RSS) and the load average around it.
#
#   bench/bigc_bench.sh [BUILD_DIR] [SCRATCH] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
scratch=${2:-/tmp/coderag-bigc}
runs=${3:-1}
tree="$scratch/postgresql"
if [ ! -d "$tree" ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/apt/parts" "$work/apt/lists/partial" "$work/apt/cache" "$work/dl"
  printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" "Suites: bookworm" \
    "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
    > "$work/apt/deb-src.sources"
  apt=(-o "Dir::Etc::SourceList=$work/apt/deb-src.sources" -o "Dir::Etc::SourceParts=$work/apt/parts"
       -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
       -o "APT::Sandbox::User=root" -o DPkg::Lock::Timeout=900)
  apt-get "${apt[@]}" update -qq >&2
  (cd "$work/dl" && apt-get "${apt[@]}" source --download-only -qq "postgresql-15=15.18-0+deb12u1") >&2
  mkdir -p "$work/src"
  tar -xf "$(ls "$work/dl"/*.orig.tar.* | head -n 1)" -C "$work/src" --strip-components=1
  (cd "$work/src" && find src/backend src/include src/common src/port \( -name '*.c' -o -name '*.h' \) \
     -size -1024k | grep -v -e '^src/backend/snowball/' -e '^src/include/snowball' \
     -e 'utils/mb/Unicode' -e '^src/backend/utils/adt/' > "$work/files")
  mkdir -p "$tree.tmp"
  (cd "$work/src" && tar -cf - -T "$work/files") | (cd "$tree.tmp" && tar -xf -)
  mv "$tree.tmp" "$tree"
fi
files=$(find "$tree" -type f | wc -l)
lines=$(find "$tree" -type f -print0 | xargs -0 cat | wc -l)
echo "corpus: $tree, $files files, $lines lines"
for run in $(seq 1 "$runs"); do
  idx=$(mktemp -d /tmp/coderag-bigc-idx.XXXXXX)
  echo "run $run: load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -v "$build/coderag" index --root "$tree" --index-dir "$idx" 2>&1 |
    grep -E 'indexed|Elapsed|User time|System time|Maximum resident|Percent of CPU'
  echo "run $run: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$idx"
done
