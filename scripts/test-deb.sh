#!/usr/bin/env bash
# The .deb as a user gets it: installed with apt into a clean Debian 12 root,
# then, inside it (chroot, in a mount namespace of its own), `coderag` from
# PATH indexes a small project and answers a question (the dense leg on: the
# FAISS module and the model are found where the package put them), `coderag
# lsp` and `coderag mcp` answer one request each, and `apt-get purge` (with
# autoremove) leaves no file behind that was not there before.
#
#   scripts/test-deb.sh [dist/coderag_<version>_<arch>.deb]   # default: scripts/package.sh deb
#
# The root is made once by mmdebstrap (--variant=apt) from the archive the
# host's apt sources name, and kept as a tarball under $CODERAG_CI_CACHE
# (default /var/cache/coderag-ci); the .debs apt fetches inside it are kept
# there too, so a run costs an unpack, an apt-get update and an install.
# Runs as root. Skips (exit 0, one line "SKIP ...") only when Debian's archive
# cannot be reached; anything else that fails is red. Ends with
# "deb root: N passed, N failed". The `timeout`s are last-resort bounds on a
# hang, never pass conditions.
set -u
cd "$(dirname "$0")/.."
SRC=$PWD
CACHE=${CODERAG_CI_CACHE:-/var/cache/coderag-ci}
SOURCES=/etc/apt/sources.list.d/debian.sources
[ -f "$SOURCES" ] || SOURCES=/etc/apt/sources.list
ROOT_TAR=$CACHE/debian12-apt-root.tar
PASSED=0
FAILED=0

say() { printf '== %s\n' "$*"; }
ok() { PASSED=$((PASSED + 1)); printf 'ok   %s\n' "$*"; }
bad() { FAILED=$((FAILED + 1)); printf 'FAIL %s\n' "$*"; }
finish() { echo "deb root: $PASSED passed, $FAILED failed"; [ "$FAILED" = 0 ]; exit $?; }
red() { bad "$*"; finish; }
skip() { printf 'SKIP deb root: %s\n' "$*"; exit 0; }
unreachable() { grep -qiE 'temporary failure resolving|could not resolve|unable to (fetch|connect)|failed to fetch|network is unreachable|connection (timed out|refused)' "$@"; }

[ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/coderag-deb.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

DEB=${1:-}
if [ -z "$DEB" ]; then
    scripts/package.sh deb >"$TMP/package.log" 2>&1 || { tail -30 "$TMP/package.log"; red "scripts/package.sh deb"; }
    DEB=$(ls dist/coderag_*_"$(dpkg --print-architecture)".deb)
fi
[ -f "$DEB" ] || red "no .deb at $DEB"
DEB=$(readlink -f "$DEB")

# --- the clean root (cached) ------------------------------------------------------
mkdir -p "$CACHE/archives/partial"
if [ ! -s "$ROOT_TAR" ]; then
    command -v mmdebstrap >/dev/null 2>&1 ||
        { apt-get -o DPkg::Lock::Timeout=900 update -qq >"$TMP/apt.log" 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends mmdebstrap >>"$TMP/apt.log" 2>&1; } ||
        { unreachable "$TMP/apt.log" && skip "Debian's archive cannot be reached (installing mmdebstrap)"
          tail -20 "$TMP/apt.log"; red "apt-get install mmdebstrap"; }
    say "making a Debian 12 root (mmdebstrap --variant=apt) into $ROOT_TAR"
    timeout 1800 mmdebstrap --variant=apt --quiet bookworm "$ROOT_TAR.part" "$SOURCES" >"$TMP/mmdebstrap.log" 2>&1 ||
        { rm -f "$ROOT_TAR.part"; unreachable "$TMP/mmdebstrap.log" && skip "Debian's archive cannot be reached (mmdebstrap)"
          tail -20 "$TMP/mmdebstrap.log"; red "mmdebstrap"; }
    mv "$ROOT_TAR.part" "$ROOT_TAR"
fi
R=$TMP/root
mkdir -p "$R"
tar -xf "$ROOT_TAR" -C "$R" || red "unpacking $ROOT_TAR"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null
cp "$DEB" "$R/tmp/coderag.deb"
cp -r "$SRC/tests/fixtures/shop" "$R/tmp/shop"

# --- inside: a mount namespace of its own, /proc and /dev, apt's .debs cached ------
cat >"$TMP/inside.sh" <<'INSIDE'
set -u
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin
APT="apt-get -o DPkg::Lock::Timeout=60 -o APT::Keep-Downloaded-Packages=true -qq"
out() { printf '%s\n' "$*" >>/tmp/result; }
ok() { out "ok   $*"; }
bad() { out "FAIL $*"; }
# the files of the system, but the ones apt, dpkg and a user's work change
snapshot() {
    find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /root -o -path /run \
        -o -path /var/cache/apt -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log \
        -o -path /var/cache/debconf -o -path /var/cache/ldconfig \) -prune -o -print | sort
}
$APT update >/tmp/apt.log 2>&1 || { out "UNREACHABLE apt-get update"; exit 0; }
snapshot >/tmp/before
if ! timeout 900 $APT install -y --no-install-recommends /tmp/coderag.deb >>/tmp/apt.log 2>&1; then
    if grep -qiE 'temporary failure resolving|could not resolve|unable to fetch|failed to fetch' /tmp/apt.log; then
        out "UNREACHABLE apt-get install"; exit 0
    fi
    tail -20 /tmp/apt.log >>/tmp/result
    bad "apt install ./coderag_*.deb"; exit 0
fi
ok "apt install ./coderag_*.deb (with its Depends)"
[ "$(command -v coderag)" = /usr/bin/coderag ] && ok "coderag on PATH: /usr/bin/coderag" || bad "coderag not on PATH"
v=$(coderag --version 2>&1)
out "     $(echo $v)"
[ "$(echo "$v" | head -1)" = "coderag $(dpkg-query -W -f '${Version}' coderag)" ] && echo "$v" | grep -q '^schema [0-9]' &&
    echo "$v" | grep -q '^commit ' && ok "--version: the package's version, the schema, the commit" || bad "--version: $v"
cd /tmp/shop
timeout 600 coderag index >/tmp/index.log 2>&1 && ok "coderag index (in the project, the root rule)" ||
    { cat /tmp/index.log >>/tmp/result; bad "coderag index"; }
coderag status --json >/tmp/status.json 2>&1
grep -q '"state":"ready"' /tmp/status.json && grep -qE '"vectors":[1-9]' /tmp/status.json &&
    ok "status: ready, with vectors (the FAISS module and the model were found)" ||
    { cat /tmp/status.json >>/tmp/result; bad "status: ready with vectors"; }
timeout 600 coderag ask --mode extractive "where is the order total computed?" >/tmp/ask.out 2>/tmp/ask.err &&
    grep -qE '[a-z_/]+\.py:[0-9]+' /tmp/ask.out && ok "coderag ask answers with a citation" ||
    { cat /tmp/ask.out /tmp/ask.err >>/tmp/result; bad "coderag ask"; }
# one LSP request (initialize), then end of input
body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file:///tmp/shop","capabilities":{}}}'
printf 'Content-Length: %d\r\n\r\n%s' "${#body}" "$body" | timeout 120 coderag lsp >/tmp/lsp.out 2>/tmp/lsp.err
grep -q '"capabilities"' /tmp/lsp.out && grep -q '"id":1' /tmp/lsp.out && ok "coderag lsp answers initialize" ||
    { head -c 2000 /tmp/lsp.out /tmp/lsp.err >>/tmp/result; bad "coderag lsp initialize"; }
# one MCP request
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"deb-test","version":"1"}}}' |
    timeout 120 coderag mcp >/tmp/mcp.out 2>/tmp/mcp.err
grep -q '"serverInfo"' /tmp/mcp.out && grep -q '"protocolVersion":"2025-06-18"' /tmp/mcp.out && ok "coderag mcp answers initialize" ||
    { head -c 2000 /tmp/mcp.out /tmp/mcp.err >>/tmp/result; bad "coderag mcp initialize"; }
coderag mcp --print-config claude-code | grep -q '"command": "/usr/bin/coderag"' && ok "mcp --print-config names /usr/bin/coderag" ||
    bad "mcp --print-config"
for f in /usr/share/man/man1/coderag.1.gz /usr/share/bash-completion/completions/coderag \
         /usr/share/emacs/site-lisp/coderag/coderag.el /usr/share/coderag/nvim/lua/coderag/init.lua \
         /usr/share/nvim/site/pack/coderag/start/coderag/lua/coderag/health.lua /usr/share/doc/coderag/copyright; do
    [ -e "$f" ] || { bad "missing $f"; missing=1; }
done
[ -z "${missing:-}" ] && ok "man page, completions, Emacs package, Neovim plugin (in Neovim's pack path)"
# The VS Code extension's layout (server/: the binary, the module, the model side by side) with
# the installed copies out of the way: the binary finds its parts beside itself.
mkdir -p /tmp/reloc/server && cp /usr/bin/coderag /usr/lib/*/coderag/coderag-faiss.so \
    /usr/share/coderag/models/*.crm /tmp/reloc/server/ && cp -r /tmp/shop /tmp/shop2 && rm -rf /tmp/shop2/.coderag
libdir=$(dirname /usr/lib/*/coderag/coderag-faiss.so)
mv /usr/share/coderag /tmp/hidden-share && mv "$libdir" /tmp/hidden-lib
(cd /tmp/shop2 && timeout 600 /tmp/reloc/server/coderag index >/tmp/reloc.log 2>&1 &&
    /tmp/reloc/server/coderag status --json >/tmp/reloc.json 2>&1)
grep -qE '"vectors":[1-9]' /tmp/reloc.json && ok "relocated (server/ as the .vsix has it): FAISS and the model found beside the binary" ||
    { cat /tmp/reloc.log /tmp/reloc.json >>/tmp/result; bad "relocated binary: vectors"; }
mv /tmp/hidden-share /usr/share/coderag && mv /tmp/hidden-lib "$libdir"
cd /
$APT purge -y coderag >>/tmp/apt.log 2>&1 && $APT autoremove --purge -y >>/tmp/apt.log 2>&1 || bad "apt-get purge coderag"
snapshot >/tmp/after
if cmp -s /tmp/before /tmp/after; then ok "purge (and autoremove) leaves nothing behind"; else
    diff /tmp/before /tmp/after | head -20 >>/tmp/result; bad "files left or lost after purge"; fi
INSIDE
say "installing $(basename "$DEB") into the clean root"
: >"$R/tmp/result"
cp "$TMP/inside.sh" "$R/tmp/inside.sh"
timeout 1800 unshare --mount --propagation private bash -c '
    R=$1 CACHE=$2
    mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" && mount -t sysfs sys "$R/sys" &&
        mount --bind "$CACHE/archives" "$R/var/cache/apt/archives" || exit 9
    chroot "$R" /bin/bash /tmp/inside.sh' _ "$R" "$CACHE" >"$TMP/inside.log" 2>&1
rc=$?
[ "$rc" = 9 ] && red "mounting /proc, /dev, /sys in the root"
cat "$TMP/inside.log"
if grep -q '^UNREACHABLE' "$R/tmp/result"; then skip "Debian's archive cannot be reached ($(sed -n 's/^UNREACHABLE //p' "$R/tmp/result"))"; fi
while IFS= read -r line; do
    case $line in
    "ok   "*) ok "${line#ok   }" ;;
    "FAIL "*) bad "${line#FAIL }" ;;
    *) printf '%s\n' "$line" ;;
    esac
done <"$R/tmp/result"
[ "$rc" = 0 ] || bad "the test inside the root exited $rc"
finish
