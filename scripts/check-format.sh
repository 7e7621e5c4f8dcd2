#!/usr/bin/env bash
# Checks that every C/C++ source and header of ours follows .clang-format
# (fixture repositories and fuzz seeds are inputs, not our code). Installs
# Debian's clang-format when it is missing.
#
#   scripts/check-format.sh          report, exit 1 on any difference
#   scripts/check-format.sh --fix    reformat the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
    --no-install-recommends clang-format >/dev/null
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' | grep -v -e '^tests/fixtures/' -e '^tests/fuzz/corpus/')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/check-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not formatted: /'
  rm -f /tmp/check-format.$$
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files follow .clang-format"
