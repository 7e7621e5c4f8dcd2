#!/usr/bin/env bash
# The extension in a real VS Code: code-server (VS Code 1.100.3 in a browser)
# driven from Debian's headless Chromium by puppeteer-core, against the real
# server and the loopback LLM (tests/fake_openai.py). The scenario is
# tests/editors/vscode_e2e.mjs.
#
#   CODERAG_BIN=path/to/coderag scripts/test-vscode.sh
#   CODERAG_VSIX=dist/coderag-linux-x64-<version>.vsix scripts/test-vscode.sh
#       # the packaged extension (scripts/package.sh vsix), with the server it carries:
#       # no coderag.server.path is set (CODERAG_BIN is only the path the settings UI types)
#   scripts/test-vscode.sh --install-only     # fill the cache, run nothing
#
# Installs, once, into ${XDG_CACHE_HOME:-$HOME/.cache}/coderag-vscode/<versions>:
# Debian's chromium, ripgrep and libkrb5-dev (apt-get, as root), then a local
# npm install of code-server and puppeteer-core at the exact versions below.
# @vscode/ripgrep's postinstall would download ripgrep from GitHub: its cache
# folder is seeded with Debian's /usr/bin/rg first, so only Debian's archive
# and the npm registry are used.
#
# Skips (exit 0, one line "SKIP ...") only when the registries cannot be
# reached; any other failure is red. Ends with "vscode e2e: N passed, N failed".
# The `timeout`s below are last-resort bounds on a hang, never pass conditions.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${CODERAG_BIN:-$ROOT/build/coderag}
EXT=$ROOT/editors/vscode-client
CODE_SERVER_VERSION=4.100.3
PUPPETEER_VERSION=24.43.1
RIPGREP_PKG_VERSION=1.15.11 # @vscode/ripgrep inside code-server 4.100.3
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/coderag-vscode
CACHE=$CACHE_ROOT/code-server-$CODE_SERVER_VERSION-puppeteer-core-$PUPPETEER_VERSION
INSTALL_ONLY=
[ "${1:-}" = "--install-only" ] && INSTALL_ONLY=1

say() { printf '== %s\n' "$*"; }
red() { printf 'FAIL %s\n' "$*"; echo "vscode e2e: 0 passed, 1 failed"; exit 1; }
skip() { printf 'SKIP vscode e2e: %s\n' "$*"; exit 0; }
# True when the npm registry does not answer.
offline() {
    ! timeout 60 npm ping >/dev/null 2>&1
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/coderag-vscode.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# --- Debian packages --------------------------------------------------------------
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]} from Debian"
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >"$TMP/apt.log" 2>&1
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends "${need[@]}" >>"$TMP/apt.log" 2>&1; then
        if grep -qiE 'temporary failure resolving|could not resolve|unable to fetch|failed to fetch' "$TMP/apt.log"; then
            skip "apt-get cannot reach Debian's archive to install ${need[*]}"
        fi
        tail -20 "$TMP/apt.log"
        red "apt-get install ${need[*]}"
    fi
fi

# --- code-server and puppeteer-core (cached by version) ---------------------------
if [ ! -x "$CACHE/node_modules/.bin/code-server" ] || [ ! -d "$CACHE/node_modules/puppeteer-core" ]; then
    say "installing code-server $CODE_SERVER_VERSION and puppeteer-core $PUPPETEER_VERSION into $CACHE"
    mkdir -p "$CACHE_ROOT"
    STAGE=$(mktemp -d "$CACHE_ROOT/.install.XXXXXX")
    # @vscode/ripgrep looks for its download in $TMPDIR/vscode-ripgrep-cache-<its version>/.
    mkdir -p "$STAGE/tmp/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION"
    tar -czf "$STAGE/tmp/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION/$RIPGREP_ASSET" -C "$(dirname "$(command -v rg)")" rg
    printf '{"name":"coderag-vscode-e2e","private":true}\n' >"$STAGE/package.json"
    if ! (cd "$STAGE" && TMPDIR=$STAGE/tmp npm_config_yes=true npm_config_unsafe_perm=true \
            npm_config_nodedir=/usr PUPPETEER_SKIP_DOWNLOAD=1 \
            timeout 3600 npm install --no-audit --no-fund --loglevel=error --save-exact \
            "code-server@$CODE_SERVER_VERSION" "puppeteer-core@$PUPPETEER_VERSION") >"$TMP/npm.log" 2>&1 ||
       [ ! -x "$STAGE/node_modules/.bin/code-server" ]; then
        if offline; then rm -rf "$STAGE"; skip "the npm registry cannot be reached to install code-server"; fi
        tail -30 "$TMP/npm.log"
        rm -rf "$STAGE"
        red "npm install code-server@$CODE_SERVER_VERSION puppeteer-core@$PUPPETEER_VERSION"
    fi
    rm -rf "$STAGE/tmp" "$CACHE"
    mv "$STAGE" "$CACHE"
fi
[ -n "$INSTALL_ONLY" ] && { say "installed in $CACHE"; exit 0; }

# --- the server, the extension, a workspace ---------------------------------------
if [ ! -x "$BIN" ]; then
    say "building coderag"
    cmake -S "$ROOT" -B "$ROOT/build" >/dev/null && cmake --build "$ROOT/build" -j2 >/dev/null ||
        red "could not build $BIN"
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
VSIX=${CODERAG_VSIX:-}
if [ -n "$VSIX" ]; then
    [ -f "$VSIX" ] || red "no .vsix at $VSIX"
    say "the packaged extension $(basename "$VSIX") (its own server; no coderag.server.path)"
    cp "$VSIX" "$TMP/coderag.vsix"
elif [ ! -d "$EXT/node_modules/@vscode/vsce" ] || [ "$EXT/package-lock.json" -nt "$EXT/node_modules/.package-lock.json" ]; then
    say "npm ci in editors/vscode-client"
    (cd "$EXT" && npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm-ext.log" 2>&1 ||
        { if offline; then skip "the npm registry cannot be reached for the extension's packages"; fi
          tail -20 "$TMP/npm-ext.log"; red "npm ci in editors/vscode-client"; }
fi
if [ -z "$VSIX" ]; then
    say "building the .vsix"
    (cd "$EXT" && npx --no-install vsce package --no-dependencies --allow-missing-repository \
        --out "$TMP/coderag.vsix") >"$TMP/vsix.log" 2>&1 || { tail -20 "$TMP/vsix.log"; red "vsce package"; }
fi

CS=$CACHE/node_modules/.bin/code-server
USER_DIR=$TMP/user
EXT_DIR=$TMP/extensions
mkdir -p "$USER_DIR/User" "$EXT_DIR" "$TMP/home"
cp -r "$ROOT/tests/fixtures/shop" "$TMP/ws"
cp -r "$ROOT/tests/fixtures/lang/go" "$TMP/go-ws" # a folder with no Python file (activation)
: >"$TMP/config.yaml"
say "installing the extension into code-server"
timeout 600 "$CS" --config "$TMP/config.yaml" --user-data-dir "$USER_DIR" --extensions-dir "$EXT_DIR" \
    --install-extension "$TMP/coderag.vsix" >"$TMP/install-ext.log" 2>&1 ||
    { cat "$TMP/install-ext.log"; red "code-server --install-extension"; }

say "VS Code $("$CS" --config "$TMP/config.yaml" --version 2>/dev/null | head -1 | sed 's/.*with Code //') in headless $(/usr/lib/chromium/chromium --version 2>/dev/null | head -1)"
# The scenario starts the fake LLM and code-server itself (it writes the settings with the
# LLM's port), drives Chromium, and stops both.
CODERAG_BUNDLED=${VSIX:+1} CODERAG_BIN=$BIN CODERAG_FAKE_LLM=$ROOT/tests/fake_openai.py CODE_SERVER=$CS CODE_SERVER_CONFIG=$TMP/config.yaml \
    VSCODE_USER_DIR=$USER_DIR VSCODE_EXT_DIR=$EXT_DIR VSCODE_WS=$TMP/ws VSCODE_GO_WS=$TMP/go-ws VSCODE_TMP=$TMP \
    PUPPETEER_DIR=$CACHE CHROMIUM=/usr/lib/chromium/chromium HOME=$TMP/home \
    timeout 1800 node "$ROOT/tests/editors/vscode_e2e.mjs" >"$TMP/e2e.log" 2>&1 &
E2E_PID=$!
trap 'kill "$E2E_PID" 2>/dev/null; wait "$E2E_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
wait "$E2E_PID"
status=$?
cat "$TMP/e2e.log"
if ! grep -q '^vscode e2e: [0-9]* passed, [0-9]* failed$' "$TMP/e2e.log"; then
    echo "FAIL vscode e2e: no result (exit $status)"
    [ -f "$TMP/code-server.log" ] && tail -30 "$TMP/code-server.log"
    echo "vscode e2e: 0 passed, 1 failed"
    exit 1
fi
if [ "$status" != 0 ] && [ -f "$TMP/code-server.log" ]; then
    echo "--- code-server log (tail)"; tail -30 "$TMP/code-server.log"
fi
exit "$status"
