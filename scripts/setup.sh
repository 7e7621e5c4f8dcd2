#!/usr/bin/env bash
# Installs what coderag needs to build and test on Debian 12 (as root, with
# only Debian's archive and the npm registry reachable), then configures and
# builds into BUILD_DIR (default: build). Idempotent: installs only what is
# missing, and the grammar is fetched once into the build tree.
#
#   scripts/setup.sh [--sanitize] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
if [ "${1:-}" = "--sanitize" ]; then sanitize="address,undefined"; shift; fi
build_dir=${1:-build}

packages=(build-essential cmake pkg-config git ca-certificates
          libtree-sitter-dev libsqlite3-dev libjansson-dev libcurl4-openssl-dev
          libfaiss-dev libopenblas-dev liblapack-dev
          nodejs npm python3 cpio)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# npm may come with a Node.js that is not Debian's; then the package is not needed.
if command -v npm >/dev/null 2>&1; then
  missing=("${missing[@]/npm}"); missing=("${missing[@]/nodejs}")
fi
want=()
for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
if [ ${#want[@]} -gt 0 ]; then
  echo "setup: installing ${want[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
    --no-install-recommends "${want[@]}" >/dev/null
fi

cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON -DSANITIZE="$sanitize" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" >/dev/null
echo "setup: built $build_dir/coderag" >&2
