#!/usr/bin/env bash
# Installs what is missing, builds with AddressSanitizer and UBSan, and runs
# the whole test suite.
#
#   scripts/test.sh [ctest args...]          everything (CI)
#   scripts/test.sh --unit [ctest args...]   the sanitized build and its ctest tests only
#
# ctest args pick tests (`-R test_vectors`); TEST_FILTER=word[,word] runs
# only the unit-test functions whose name holds a word (tests/unit/test.h).
set -euo pipefail
cd "$(dirname "$0")/.."
unit_only=""
if [ "${1:-}" = "--unit" ]; then unit_only=1; shift; fi
# Layout first: .clang-format over every C source of ours.
scripts/check-format.sh
scripts/setup.sh --sanitize build-test
# No cycle between the files of one library (from the object files).
scripts/file-cycles.py build-test
# No extern symbol that no other file uses (from the object files).
scripts/check-externs.py build-test
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd build-test && ctest --output-on-failure -j"$(nproc)" "$@")
[ -n "$unit_only" ] && exit 0
# The editor clients against the same (sanitized) server.
CODERAG_BIN=$PWD/build-test/coderag scripts/test-editors.sh
# The MCP server against the official MCP TypeScript SDK client.
CODERAG_BIN=$PWD/build-test/coderag scripts/test-mcp.sh
# The packages as installed (scripts/package.sh, a Release build in build-pkg): the .deb in a clean
# Debian 12 root (the root cached under /var/cache/coderag-ci; one SKIP line when Debian's
# archive cannot be reached), then the platform .vsix in a real VS Code (code-server in headless
# Chromium) with the server it carries and no coderag.server.path.
scripts/test-deb.sh
scripts/package.sh vsix
CODERAG_VSIX=$(ls dist/coderag-linux-x64-*.vsix) CODERAG_BIN=$PWD/build-pkg/coderag scripts/test-vscode.sh
# libFuzzer targets, bounded (FUZZ_SECONDS per target, default 60).
scripts/test-fuzz.sh
