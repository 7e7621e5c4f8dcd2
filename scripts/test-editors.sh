#!/usr/bin/env bash
# Editor clients against the real server: the VS Code extension (unit tests,
# the request/response round trip over vscode-jsonrpc, the .vsix build),
# the Neovim plugin (headless) and the Emacs package (batch, eglot).
#
#   scripts/test-editors.sh            # installs what is missing, runs everything
#   CODERAG_BIN=path/to/coderag scripts/test-editors.sh
#   SKIP_INSTALL=1 scripts/test-editors.sh   # never apt-get / npm ci
#
# Installs, when missing: neovim, emacs-nox, elpa-eglot (to show coderag.el
# leaves eglot alone), curl and python3 (the fake LLM) from Debian's archive
# (apt-get, as root), the extension's npm packages into
# editors/vscode-client/node_modules (npm ci, from package-lock.json).
# Ends with the line "N passed, N failed"; exits non-zero when anything failed.
# The `timeout`s below are last-resort bounds on a hang, never pass conditions.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${CODERAG_BIN:-$ROOT/build/coderag}
EXT=$ROOT/editors/vscode-client
FIXTURE=$ROOT/tests/fixtures/shop
export CODERAG_FAKE_LLM=$ROOT/tests/fake_openai.py
PASSED=0
FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/coderag-editors.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

say() { printf '== %s\n' "$*"; }
fail_suite() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }
pass_suite() { PASSED=$((PASSED + 1)); printf 'ok   %s\n' "$*"; }

# --- what the tests need ------------------------------------------------------
if [ ! -x "$BIN" ]; then
    say "building coderag"
    cmake -S "$ROOT" -B "$ROOT/build" >/dev/null && cmake --build "$ROOT/build" -j2 >/dev/null ||
        { echo "could not build $BIN"; echo "0 passed, 1 failed"; exit 1; }
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v emacs >/dev/null 2>&1 || need+=(emacs-nox)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# eglot: built into Emacs 29+, Debian's elpa-eglot for Emacs 28.
if ! emacs -Q --batch --eval '(progn (require (quote package)) (add-to-list (quote package-directory-list) "/usr/share/emacs/site-lisp/elpa") (package-initialize) (require (quote eglot)))' >/dev/null 2>&1; then
    need+=(elpa-eglot)
fi
if [ ${#need[@]} -gt 0 ] && [ -z "${SKIP_INSTALL:-}" ]; then
    say "installing ${need[*]} from Debian"
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >"$TMP/apt.log" 2>&1 ||
        { tail -20 "$TMP/apt.log"; echo "apt-get install ${need[*]} failed"; }
fi
if [ ! -d "$EXT/node_modules/vscode-languageclient" ] || [ ! -d "$EXT/node_modules/@vscode/vsce" ] ||
   [ "$EXT/package-lock.json" -nt "$EXT/node_modules/.package-lock.json" ]; then
    if [ -z "${SKIP_INSTALL:-}" ]; then
        say "npm ci in editors/vscode-client"
        (cd "$EXT" && npm ci --no-audit --no-fund --loglevel=error >"$TMP/npm.log" 2>&1) ||
            { tail -20 "$TMP/npm.log"; echo "npm ci failed"; }
    fi
fi

# Adds the counts of a runner's output: node's "# pass N"/"# fail N", or our
# drivers' "...: N passed, N failed". A run without counts is one failure.
count() { # name logfile status
    local name=$1 log=$2 status=$3 p f
    p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
    if [ -z "$p" ]; then
        p=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
        f=$(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1)
    fi
    if [ -z "$p" ] || [ -z "$f" ]; then
        fail_suite "$name: no result (exit $status)"
        tail -30 "$log"
        return
    fi
    if [ "$status" != 0 ] && [ "$f" = 0 ]; then f=1; fi
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    printf '%-28s %s passed, %s failed\n' "$name" "$p" "$f"
    if [ "$f" != 0 ]; then grep -E '^(not ok|FAIL)' "$log" | head -20; tail -15 "$log"; fi
}

workspace() { # dir: a fresh copy of the fixture
    mkdir -p "$1" && cp -r "$FIXTURE" "$1/ws"
}

# --- VS Code --------------------------------------------------------------------
if command -v npm >/dev/null 2>&1 && [ -d "$EXT/node_modules" ]; then
    say "VS Code: compile and unit tests (npm test)"
    (cd "$EXT" && timeout 3600 npm test --silent) >"$TMP/vsc-unit.log" 2>&1
    count "vscode unit" "$TMP/vsc-unit.log" $?

    say "VS Code: extension logic against the server (vscode-jsonrpc)"
    (cd "$EXT" && CODERAG_BIN=$BIN CODERAG_FIXTURE=$FIXTURE timeout 3600 node --test --test-reporter=tap out/test-server/*.test.js) \
        >"$TMP/vsc-server.log" 2>&1
    count "vscode server round trip" "$TMP/vsc-server.log" $?

    say "VS Code: .vsix package (npm run package: bundled by esbuild, then vsce)"
    rm -f "$EXT/coderag.vsix"
    # one bundled extension.js holding vscode-languageclient (no node_modules, no vsce warning
    # that the files should be bundled), requiring nothing but vscode and node's own modules
    if (cd "$EXT" && timeout 3600 npm run package) >"$TMP/vsix.log" 2>&1 &&
       unzip -l "$EXT/coderag.vsix" >"$TMP/vsix.lst" 2>&1 &&
       grep -q 'extension/out/extension.js' "$TMP/vsix.lst" &&
       grep -q 'extension/package.json' "$TMP/vsix.lst" &&
       ! grep -q 'extension/node_modules/' "$TMP/vsix.lst" && ! grep -qi 'should bundle' "$TMP/vsix.log" &&
       ! unzip -p "$EXT/coderag.vsix" extension/out/extension.js | grep -oE 'require\("[^"]+"\)' |
           grep -vqE 'require\("(vscode|child_process|crypto|fs|net|os|path|util)"\)'; then
        pass_suite "vsix: $(ls -l "$EXT/coderag.vsix" | awk '{print $5}') bytes, $(grep -c ' extension/' "$TMP/vsix.lst") files, extension.js bundled"
    else
        fail_suite "vsix build"
        tail -20 "$TMP/vsix.log"
    fi
else
    fail_suite "VS Code: npm or editors/vscode-client/node_modules missing"
fi

# --- Neovim ---------------------------------------------------------------------
if command -v nvim >/dev/null 2>&1; then
    say "Neovim $(nvim --version | head -1 | awk '{print $2}'): headless :CodeRagAsk"
    workspace "$TMP/nvim"
    CODERAG_BIN=$BIN CODERAG_WS=$TMP/nvim/ws CODERAG_INDEX_DIR=$TMP/nvim/index HOME=$TMP/nvim \
        XDG_CONFIG_HOME=$TMP/nvim/config XDG_DATA_HOME=$TMP/nvim/data XDG_STATE_HOME=$TMP/nvim/state \
        timeout 3600 nvim --headless -u NONE -i NONE --cmd "set rtp^=$ROOT/editors/nvim" \
        -c "luafile $ROOT/tests/editors/nvim_test.lua" </dev/null >"$TMP/nvim.log" 2>&1
    count "neovim" "$TMP/nvim.log" $?
    # :checkhealth coderag: the binary, its version, the index, the LLM setting
    (cd "$TMP/nvim/ws" && HOME=$TMP/nvim CODERAG_LLM_URL=http://127.0.0.1:9/v1 timeout 300 nvim --headless -u NONE -i NONE \
        --cmd "set rtp^=$ROOT/editors/nvim" -c "lua require('coderag').setup({ cmd = { '$BIN', 'lsp' } })" \
        -c 'checkhealth coderag' -c "w! $TMP/health.txt" -c 'qa!' </dev/null >/dev/null 2>&1)
    if grep -q "OK: binary: $BIN" "$TMP/health.txt" && grep -q 'OK: version: coderag [0-9.]*, schema [0-9]*, commit' "$TMP/health.txt" &&
        grep -qE 'index: none yet|OK: index of' "$TMP/health.txt" && grep -q 'OK: LLM: http://127.0.0.1:9/v1 (CODERAG_LLM_URL)' "$TMP/health.txt"; then
        pass_suite ":checkhealth coderag: binary, version, index, LLM"
    else
        fail_suite ":checkhealth coderag"; cat "$TMP/health.txt" 2>/dev/null
    fi
else
    fail_suite "Neovim: nvim not installed"
fi

# --- Emacs ----------------------------------------------------------------------
if command -v emacs >/dev/null 2>&1; then
    say "Emacs $(emacs --version | head -1 | awk '{print $3}'): batch coderag-ask (its own jsonrpc process)"
    workspace "$TMP/emacs"
    CODERAG_BIN=$BIN CODERAG_WS=$TMP/emacs/ws CODERAG_INDEX_DIR=$TMP/emacs/index HOME=$TMP/emacs \
        timeout 3600 emacs -Q --batch -L "$ROOT/editors/emacs" -l "$ROOT/tests/editors/emacs_test.el" \
        </dev/null >"$TMP/emacs.log" 2>&1
    count "emacs" "$TMP/emacs.log" $?
    # On a terminal (emacs -nw on a pseudo-terminal: batch Emacs does no redisplay).
    say "Emacs on a terminal: *coderag* wraps between words"
    timeout 3600 python3 "$ROOT/tests/editors/emacs_tty.py" "$ROOT/editors/emacs" </dev/null >"$TMP/emacs-tty.log" 2>&1
    count "emacs tty" "$TMP/emacs-tty.log" $?
    # The package byte-compiles without warnings, with Emacs's own libraries only.
    mkdir -p "$TMP/elc" && cp "$ROOT"/editors/emacs/*.el "$TMP/elc/"
    if HOME=$TMP/emacs emacs -Q --batch -L "$TMP/elc" --eval '(setq byte-compile-error-on-warn t)' \
            -f batch-byte-compile "$TMP/elc/coderag-render.el" "$TMP/elc/coderag-connection.el" \
            "$TMP/elc/coderag-ask.el" "$TMP/elc/coderag-lens.el" "$TMP/elc/coderag.el" >"$TMP/elc.log" 2>&1; then
        pass_suite "coderag.el and its parts (coderag-*.el) byte-compile cleanly"
    else
        fail_suite "coderag.el byte-compile"
        cat "$TMP/elc.log"
    fi
else
    fail_suite "Emacs: emacs not installed"
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
