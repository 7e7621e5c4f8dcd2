#!/usr/bin/env bash
# `coderag mcp` driven by the official MCP TypeScript SDK client
# (@modelcontextprotocol/sdk: Client + StdioClientTransport), tests/mcp/sdk.test.mjs.
#
#   scripts/test-mcp.sh                      # installs what is missing, runs the tests
#   CODERAG_BIN=path/to/coderag scripts/test-mcp.sh
#   SKIP_INSTALL=1 scripts/test-mcp.sh       # never npm ci
#   CODERAG_MCP_CORPUS=/path/to/tree CODERAG_INDEXDIR=/tmp/idx scripts/test-mcp.sh
#                                            # also every tool on a real corpus
#
# Installs, when missing: the test project's npm packages into
# tests/mcp/node_modules (npm ci, from package-lock.json). Ends with
# "N passed, N failed"; exits non-zero when anything failed.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${CODERAG_BIN:-$ROOT/build/coderag}
DIR=$ROOT/tests/mcp
if [ ! -x "$BIN" ]; then
    cmake -S "$ROOT" -B "$ROOT/build" >/dev/null && cmake --build "$ROOT/build" -j2 >/dev/null ||
        { echo "could not build $BIN"; echo "0 passed, 1 failed"; exit 1; }
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if ! command -v node >/dev/null 2>&1; then
    echo "node is not installed (scripts/setup.sh installs it)"; echo "0 passed, 1 failed"; exit 1
fi
if [ ! -d "$DIR/node_modules/@modelcontextprotocol/sdk" ] ||
   [ "$DIR/package-lock.json" -nt "$DIR/node_modules/.package-lock.json" ]; then
    if [ -z "${SKIP_INSTALL:-}" ]; then
        echo "== npm ci in tests/mcp"
        (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
            { echo "npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
    fi
fi
log=$(mktemp "${TMPDIR:-/tmp}/coderag-mcp-sdk.XXXXXX")
trap 'rm -f "$log"' EXIT
(cd "$DIR" && CODERAG_BIN=$BIN timeout 600 node --test --test-reporter=tap sdk.test.mjs) >"$log" 2>&1
status=$?
p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
if [ -z "$p" ] || [ -z "$f" ]; then tail -40 "$log"; echo "0 passed, 1 failed"; exit 1; fi
if [ "$status" != 0 ] && [ "$f" = 0 ]; then f=1; fi
if [ "$f" != 0 ]; then grep -E -A25 '^not ok' "$log" | head -80; fi
echo "MCP SDK client: $p passed, $f failed"
[ "$f" = 0 ]
