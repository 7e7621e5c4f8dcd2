#!/usr/bin/env bash
# The main job, end to end: install what is missing, build, index a real
# Python project present on this machine (Debian's Python standard library),
# and answer a question with cited code.
#
#   scripts/demo.sh ["QUESTION"]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

# Debian's own Python (not whatever python3 comes first on PATH)
py=/usr/bin/python3; [ -x "$py" ] || py=python3
stdlib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
[ -d "$stdlib" ] || stdlib=$(ls -d /usr/lib/python3.[0-9]* | head -n 1)
question=${1:-"How does http.server parse the request line and reject a malformed HTTP request?"}
index_dir="$PWD/build/demo-index"
mkdir -p "$index_dir"

# The standard library folder is read-only for us in spirit: keep the index
# in the build tree, and leave out the library's own test suites.
./build/coderag index --root "$stdlib" --index-dir "$index_dir" \
  --exclude 'test/,tests/,idle_test/,site-packages/,dist-packages/'
echo
echo "Q: $question"
echo
./build/coderag ask --root "$stdlib" --index-dir "$index_dir" --no-update \
  --exclude 'test/,tests/,idle_test/,site-packages/,dist-packages/' "$question"
