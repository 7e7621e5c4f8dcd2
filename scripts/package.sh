#!/usr/bin/env bash
# Builds what people install, into dist/:
#   coderag_<version>_<arch>.deb          the binary, the FAISS module, the model, the Neovim plugin,
#                                         the Emacs package, coderag(1), completions (`cmake --install`
#                                         with prefix /usr); Depends computed (dpkg-shlibdeps, plus the
#                                         libraries the binary opens with dlopen); checked by lintian
#   coderag-linux-x64-<version>.vsix      the VS Code extension, bundled with esbuild, carrying the
#                                         server (server/: coderag, coderag-faiss.so, the model)
#   coderag-<version>.tar.gz              the source (git HEAD, plus COMMIT for --version)
#
#   scripts/package.sh                    # all three
#   scripts/package.sh deb|vsix|src ...   # some
#   BUILD_DIR=build-pkg CR_GRAMMAR_DIR=... scripts/package.sh
#
# Installs what is missing (as root): lintian, fakeroot, dpkg-dev, unzip from Debian's archive; the extension's npm
# packages (npm ci: esbuild and vsce at the versions package-lock.json pins). Fails when lintian
# reports an error, when the .deb passes 30 MB or the .vsix 40 MB, or when the versions of the
# binary, the .deb and the .vsix disagree.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
DIST=$ROOT/dist
BUILD=${BUILD_DIR:-$ROOT/build-pkg}
EXT=$ROOT/editors/vscode-client
MODEL=code-nbow-py-v1.crm
DEB_MAX=$((30 * 1024 * 1024))
VSIX_MAX=$((40 * 1024 * 1024))
what=${*:-deb vsix src}

say() { printf '== %s\n' "$*"; }
die() { printf 'package: %s\n' "$*" >&2; exit 1; }

VERSION=$(sed -n 's/^project(coderag VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$VERSION" ] || die "no version in CMakeLists.txt"
EXT_VERSION=$(node -p "require('$EXT/package.json').version")
[ "$EXT_VERSION" = "$VERSION" ] || die "editors/vscode-client/package.json says $EXT_VERSION, CMakeLists.txt $VERSION"
mkdir -p "$DIST"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/coderag-package.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

apt_need() { # command package...
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [ ${#missing[@]} = 0 ] && return 0
    say "installing ${missing[*]} from Debian"
    apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null &&
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends "${missing[@]}" >/dev/null
}

# --- the build and its install (prefix /usr) -------------------------------------
STAGE=$TMP/stage
build_install() {
    say "building coderag $VERSION in $BUILD (Release, prefix /usr)"
    local grammars=()
    [ -n "${CR_GRAMMAR_DIR:-}" ] && grammars=(-DCR_GRAMMAR_DIR="$CR_GRAMMAR_DIR")
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
        -DCODERAG_MODEL_PATH=/usr/share/coderag/models/$MODEL "${grammars[@]}" >"$TMP/cmake.log" 2>&1 ||
        { tail -20 "$TMP/cmake.log"; die "cmake configure"; }
    cmake --build "$BUILD" -j"${JOBS:-2}" --target coderag coderag_faiss_module cr_manpage >"$TMP/build.log" 2>&1 ||
        { tail -30 "$TMP/build.log"; die "cmake --build"; }
    rm -rf "$STAGE"
    DESTDIR=$STAGE cmake --install "$BUILD" --strip >"$TMP/install.log" 2>&1 ||
        { tail -20 "$TMP/install.log"; die "cmake --install"; }
    local v
    v=$("$STAGE/usr/bin/coderag" --version | head -1)
    [ "$v" = "coderag $VERSION" ] || die "the binary says '$v', expected 'coderag $VERSION'"
}
faiss_module() { find "$STAGE/usr/lib" -name coderag-faiss.so | head -1; }

# --- the .deb --------------------------------------------------------------------
make_deb() {
    apt_need lintian fakeroot dpkg-dev || die "cannot install lintian"
    local arch deb pkg=$TMP/deb
    arch=$(dpkg --print-architecture)
    deb=$DIST/coderag_${VERSION}_${arch}.deb
    rm -rf "$pkg"
    cp -a "$STAGE" "$pkg"
    local doc=$pkg/usr/share/doc/coderag
    mkdir -p "$doc" "$pkg/DEBIAN"
    gzip -9n "$pkg/usr/share/man/man1/coderag.1"
    sed "s/@VERSION@/$VERSION/; s/@DATE@/$(date -R -d @"$(git log -1 --format=%ct 2>/dev/null || date +%s)")/" \
        packaging/debian/changelog | gzip -9n >"$doc/changelog.gz"
    cp packaging/debian/copyright "$doc/copyright"
    # Depends: what the ELF files link (dpkg-shlibdeps) and what the binary opens with dlopen
    # (libcurl, base/http.c): its sonames, as strings in the binary, resolved to their packages.
    mkdir -p "$TMP/shlib/debian"
    printf 'Source: coderag\n\nPackage: coderag\nArchitecture: any\n' >"$TMP/shlib/debian/control"
    local depends dl=() so path
    depends=$(cd "$TMP/shlib" && dpkg-shlibdeps -O "$pkg/usr/bin/coderag" "$(find "$pkg/usr/lib" -name coderag-faiss.so)" 2>"$TMP/shlibdeps.log" |
        sed -n 's/^shlibs:Depends=//p') || { cat "$TMP/shlibdeps.log"; die "dpkg-shlibdeps"; }
    local needed real owner
    needed=$(readelf -d "$pkg/usr/bin/coderag" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    for so in $(strings "$pkg/usr/bin/coderag" | grep -xE 'lib[a-z0-9_+-]+\.so\.[0-9]+' | sort -u); do
        echo "$needed" | grep -qxF "$so" && continue
        path=$(ldconfig -p | awk -v s="$so" '$1 == s {print $NF; exit}')
        [ -n "$path" ] || die "the binary opens $so, which this system does not have"
        real=$(readlink -f "$path")
        # dpkg knows a merged-/usr file by either name
        owner=$(dpkg-query -S "$real" 2>/dev/null || dpkg-query -S "${real#/usr}" 2>/dev/null) ||
            die "no package owns $real ($so)"
        dl+=("${owner%%:*}")
    done
    for p in "${dl[@]}"; do
        echo "$depends" | grep -qE "(^|, )$p( |,|$)" || depends="$depends, $p"
    done
    local size
    size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
    sed "s/@VERSION@/$VERSION/; s/@ARCH@/$arch/; s/@DEPENDS@/$depends/; s/@SIZE@/$size/" \
        packaging/debian/control >"$pkg/DEBIAN/control"
    # every folder 0755, every file 0644 but the executables
    find "$pkg" -type d -exec chmod 0755 {} +
    find "$pkg" -type f ! -path '*/DEBIAN/*' -exec chmod 0644 {} +
    chmod 0755 "$pkg/usr/bin/coderag"
    (cd "$pkg" && find usr -type f -exec md5sum {} + | sort -k2) >"$pkg/DEBIAN/md5sums"
    chmod 0644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/md5sums"
    rm -f "$DIST"/coderag_*_"$arch".deb
    dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null || die "dpkg-deb"
    say "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB; Depends: $depends"
    [ "$(stat -c %s "$deb")" -le "$DEB_MAX" ] || die "$deb is over 30 MB"
    say "lintian"
    lintian --tag-display-limit 0 "$deb" >"$TMP/lintian.log" 2>&1 || true
    sed 's/^/  /' "$TMP/lintian.log"
    if grep -q '^E:' "$TMP/lintian.log"; then die "lintian reports errors"; fi
    [ "$(dpkg-deb -f "$deb" Version)" = "$VERSION" ] || die "the .deb's version is not $VERSION"
}

# --- the .vsix -------------------------------------------------------------------
make_vsix() {
    apt_need unzip || die "cannot install unzip"
    if [ ! -x "$EXT/node_modules/.bin/esbuild" ] || [ ! -x "$EXT/node_modules/.bin/vsce" ] ||
        [ "$EXT/package-lock.json" -nt "$EXT/node_modules/.package-lock.json" ]; then
        say "npm ci in editors/vscode-client"
        (cd "$EXT" && npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1 ||
            { tail -20 "$TMP/npm.log"; die "npm ci"; }
    fi
    local x=$TMP/vsix vsix=$DIST/coderag-linux-x64-$VERSION.vsix
    rm -rf "$x"
    mkdir -p "$x/out" "$x/server"
    say "bundling the extension (esbuild $("$EXT/node_modules/.bin/esbuild" --version))"
    "$EXT/node_modules/.bin/esbuild" "$EXT/src/extension.ts" --bundle --platform=node --format=cjs \
        --target=node18 --external:vscode --minify --outfile="$x/out/extension.js" --log-level=warning ||
        die "esbuild"
    cp "$EXT/README.md" "$EXT/LICENSE" "$x/"
    # the manifest without the scripts and packages the bundle replaces
    node -e '
      const p = require(process.argv[1]);
      delete p.scripts; delete p.dependencies; delete p.devDependencies;
      require("fs").writeFileSync(process.argv[2], JSON.stringify(p, null, 2) + "\n");
    ' "$EXT/package.json" "$x/package.json"
    cp "$STAGE/usr/bin/coderag" "$(faiss_module)" "$STAGE/usr/share/coderag/models/$MODEL" "$x/server/"
    chmod 0755 "$x/server/coderag"
    rm -f "$DIST"/coderag-linux-x64-*.vsix
    (cd "$x" && "$EXT/node_modules/.bin/vsce" package --target linux-x64 --no-dependencies \
        --allow-missing-repository --skip-license --out "$vsix") >"$TMP/vsce.log" 2>&1 ||
        { tail -20 "$TMP/vsce.log"; die "vsce package"; }
    say "$(basename "$vsix"): $(du -k "$vsix" | cut -f1) KiB, $(unzip -Z1 "$vsix" | wc -l) files"
    [ "$(stat -c %s "$vsix")" -le "$VSIX_MAX" ] || die "$vsix is over 40 MB"
    unzip -p "$vsix" extension/package.json | grep -q "\"version\": \"$VERSION\"" ||
        die "the .vsix's version is not $VERSION"
}

# --- the source ------------------------------------------------------------------
make_src() {
    local tgz=$DIST/coderag-$VERSION.tar.gz commit
    commit=$(git rev-parse --short=12 HEAD)
    mkdir -p "$TMP/src"
    echo "$commit" >"$TMP/src/COMMIT"
    rm -f "$DIST"/coderag-*.tar.gz
    git archive --format=tar.gz --prefix="coderag-$VERSION/" --add-file="$TMP/src/COMMIT" -o "$tgz" HEAD ||
        die "git archive"
    say "$(basename "$tgz"): $(du -k "$tgz" | cut -f1) KiB (commit $commit; uncommitted changes are not in it)"
}

case " $what " in *" deb "* | *" vsix "*) build_install ;; esac
for w in $what; do
    case $w in
    deb) make_deb ;;
    vsix) make_vsix ;;
    src) make_src ;;
    *) die "unknown target $w (deb, vsix, src)" ;;
    esac
done
