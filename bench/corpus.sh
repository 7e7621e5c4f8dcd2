#!/usr/bin/env bash
# Build the benchmark corpora: real projects, each pinned to one version of a
# Debian or npm package, so that the gold line ranges of the question sets hold.
#
#   bench/corpus.sh DEST [NAME...]
#
# Each corpus becomes DEST/NAME, a plain folder of source files that a code index
# treats as a workspace root; gold paths in the question files are relative to it.
# Python corpora: the .py files of a Debian binary package (installed with apt-get
# when missing: needs root, as on CI). Other languages (LANG_CORPORA below): only that
# language's files of a pinned package (apt-get download, apt-get source with deb-src
# lists kept in a temporary folder, or npm pack; nothing installed). With no NAME the
# first eight Python corpora are built; the others only when named.
# docs/benchmarks.md lists which benchmark uses which corpus, and their sizes.
#
# c-lua and cpp-leveldb are held-out projects (acceptance only: never a benchmark,
# dev set or tuning); they are built only with CODERAG_HELD_OUT=1.
set -euo pipefail

DEST=${1:?usage: bench/corpus.sh DEST [NAME...]}
shift || true

# corpus name -> "debian-package:top-level-dir ..."
declare -A CORPORA=(
  [flask-werkzeug]="python3-flask:flask python3-werkzeug:werkzeug"
  [requests]="python3-requests:requests"
  [click]="python3-click:click"
  [jinja2]="python3-jinja2:jinja2"
  [pytest]="python3-pytest:_pytest python3-pytest:pytest"
  [django]="python3-django:django"
  [sympy]="python3-sympy:sympy"
  [stdlib]="libpython3.11-minimal:STDLIB libpython3.11-stdlib:STDLIB"
  # the further SWE-QA-Bench projects (eval/dev2); name them to build them
  [sphinx]="python3-sphinx:sphinx"
  [pylint]="pylint:pylint"
  [xarray]="python3-xarray:xarray"
  [astropy]="python3-astropy:astropy"
  [matplotlib]="python3-matplotlib:matplotlib python3-matplotlib:mpl_toolkits"
  [scikit-learn]="python3-sklearn:sklearn"
  [streamlink]="python3-streamlink:streamlink"
)

# Other languages: corpus name -> "KIND:PACKAGE=VERSION:FROM[>TO] ...", each pinned (gold line
# ranges hold for exactly these files). KIND deb: a Debian binary package's files (apt-get
# download; nothing is installed), FROM an absolute path in it; debtar: the tarball such a package ships,
# FROM a path under its top folder; src: the upstream tarball of a
# Debian source package (apt-get source, with deb-src lists kept in a temporary folder), FROM a
# path under its top folder; npm: a registry tarball (npm pack NAME@VERSION), FROM a path under
# its package/ folder. A folder FROM has its files copied under the corpus folder TO (default:
# the corpus root), a file FROM goes into TO. Only the files with the extensions of the
# language named by the corpus prefix are kept (LANG_EXTS).
declare -A LANG_CORPORA=(
  [go-gin]="deb:golang-github-gin-gonic-gin-dev=1.8.1-1:/usr/share/gocode/src/github.com/gin-gonic/gin"
  [go-cobra]="deb:golang-github-spf13-cobra-dev=1.6.1-1:/usr/share/gocode/src/github.com/spf13/cobra"
  [rust-serde-json]="deb:librust-serde-json-dev=1.0.87-1:/usr/share/cargo/registry/serde_json-1.0.87"
  [rust-regex]="deb:librust-regex-dev=1.7.1-1:/usr/share/cargo/registry/regex-1.7.1"
  [c-lua]="src:lua5.4=5.4.4-3+deb12u1:src>src"
  [c-tree-sitter]="src:tree-sitter=0.20.7-1:lib/src>lib/src src:tree-sitter=0.20.7-1:lib/include>lib/include"
  [cpp-leveldb]="src:leveldb=1.23-4:."
  [cpp-ninja]="src:ninja-build=1.11.1-2~deb12u1:src>src"
  # googletest and googlemock's library (no tests): classes, overloads, operators, RAII
  [cpp-googletest]="deb:googletest=1.12.1-0.2:/usr/src/googletest/googletest/src>src
    deb:googletest=1.12.1-0.2:/usr/src/googletest/googlemock/src>src
    deb:googletest=1.12.1-0.2:/usr/src/googletest/googletest/include>include
    deb:googletest=1.12.1-0.2:/usr/src/googletest/googlemock/include>include"
  [java-jsoup]="src:jsoup=1.15.3-1:src/main/java>src/main/java"
  [java-junit4]="src:junit4=4.13.2-3:src/main/java>src/main/java"
  [js-markdown-it]="npm:markdown-it@13.0.1:index.js>markdown-it npm:markdown-it@13.0.1:lib>markdown-it/lib
    npm:markdown-it@13.0.1:bin>markdown-it/bin npm:linkify-it@4.0.1:.>linkify-it npm:mdurl@1.0.1:.>mdurl"
  [js-express]="npm:express@4.18.2:.>express npm:body-parser@1.20.1:.>body-parser npm:send@0.18.0:.>send
    npm:serve-static@1.15.0:.>serve-static npm:finalhandler@1.2.0:.>finalhandler
    npm:path-to-regexp@0.1.7:.>path-to-regexp"
  [ts-rxjs]="npm:rxjs@7.8.1:src>src"
  # scale only (no questions): the Linux kernel's C sources, ~31M lines in ~55k files (debtar: a binary
  # package that ships the upstream tarball; unpinned, so the newest 6.1 the archive has)
  [c-linux]="debtar:linux-source-6.1:."
  [ts-query-core]="npm:@tanstack/query-core@4.29.5:src>src"
)
declare -A LANG_EXTS=(
  [go]="go" [rust]="rs" [c]="c h" [cpp]="c cc cpp cxx h hh hpp" [java]="java"
  [js]="js mjs cjs" [ts]="ts tsx mts cts"
)

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(flask-werkzeug requests click jinja2 pytest django stdlib sympy)
HELD_OUT=" c-lua cpp-leveldb "
for n in "${names[@]}"; do
  case $HELD_OUT in
    *" $n "*) [ "${CODERAG_HELD_OUT:-0}" = 1 ] ||
      { echo "$n is a held-out project (acceptance only): CODERAG_HELD_OUT=1 builds it" >&2; exit 2; } ;;
  esac
done

lang_names=(); py_names=()
for n in "${names[@]}"; do
  if [ -n "${LANG_CORPORA[$n]:-}" ]; then lang_names+=("$n"); else py_names+=("$n"); fi
done
names=("${py_names[@]}")

pkgs=()
for n in "${names[@]}"; do
  [ -n "${CORPORA[$n]:-}" ] || { echo "unknown corpus: $n (known: ${!CORPORA[*]} ${!LANG_CORPORA[*]})" >&2; exit 2; }
  for pair in ${CORPORA[$n]}; do pkgs+=("${pair%%:*}"); done
done

missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p "$DEST"
for n in "${names[@]}"; do
  out="$DEST/$n"
  rm -rf "$out"; mkdir -p "$out"
  for pair in ${CORPORA[$n]}; do
    pkg=${pair%%:*}; top=${pair#*:}
    if [ "$top" = STDLIB ]; then
      # the standard library's own modules (the package's .py files), without test suites
      dpkg -L "$pkg" | awk '/^\/usr\/lib\/python3\.[0-9]+\/.*\.py$/' |
        grep -vE '/(site-packages|dist-packages|test|tests|idle_test)/' |
        sed -E 's#^/usr/lib/python3\.[0-9]+/##' > "$out/.files"
      src=$(dpkg -L "$pkg" | awk '/^\/usr\/lib\/python3\.[0-9]+$/ && !f {print; f=1}')
      (cd "$src" && tr '\n' '\0' < "$out/.files" | cpio -0pdm --quiet "$out")
      rm -f "$out/.files"
    else
      init=$(dpkg -L "$pkg" | awk -v t="$top" '!f && ($0 ~ "/" t "/__init__[.]py$" || $0 ~ "/" t "[.]py$") {print; f=1}')
      src=$(dirname "$init")
      if [ "$(basename "$init")" = "$top.py" ]; then
        cp "$init" "$out/"
      else
        (cd "$src/.." && find "$top" -name '*.py' -print0 | cpio -0pdm --quiet "$out")
      fi
    fi
  done
  printf '%-15s %6d files %8d lines\n' "$n" \
    "$(find "$out" -name '*.py' | wc -l)" "$(find "$out" -name '*.py' -print0 | xargs -0 cat | wc -l)"
done

[ ${#lang_names[@]} -eq 0 ] && exit 0

# ---- the other languages: fetch each pinned source once into a scratch folder, copy its files
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
APT_SRC=(-o "Dir::Etc::SourceList=$WORK/apt/deb-src.sources" -o "Dir::Etc::SourceParts=$WORK/apt/parts"
         -o "Dir::State::Lists=$WORK/apt/lists" -o "Dir::Cache=$WORK/apt/cache" -o "APT::Sandbox::User=root")

fetch() {  # fetch KIND PACKAGE=VERSION -> prints the folder holding the unpacked source
  local kind=$1 spec=$2 dir; dir="$WORK/$kind-$(printf '%s' "$spec" | tr -c 'A-Za-z0-9.+~=@-' _)"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir.dl" "$dir"
    case $kind in
      deb)
        (cd "$dir.dl" && { apt-get download -qq -o APT::Sandbox::User=root "$spec" 2>/dev/null ||
          { apt-get update -qq && apt-get download -qq -o APT::Sandbox::User=root "$spec"; }; }) >&2 ||
          { echo "cannot download $spec (the gold lines are for this version)" >&2; exit 1; }
        dpkg-deb -x "$dir.dl"/*.deb "$dir" ;;
      src)
        if [ ! -d "$WORK/apt/lists" ]; then
          mkdir -p "$WORK/apt/parts" "$WORK/apt/lists/partial" "$WORK/apt/cache"
          # the archive this machine's apt already uses (its first deb822 source), for source packages
          uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
          [ -n "$uri" ] || uri=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
          printf '%s\n' "Types: deb-src" "URIs: $uri" "Suites: bookworm" \
            "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
            > "$WORK/apt/deb-src.sources"
          apt-get "${APT_SRC[@]}" update -qq >&2
        fi
        (cd "$dir.dl" && apt-get "${APT_SRC[@]}" source --download-only -qq "$spec") >/dev/null 2>"$dir.err" ||
          { cat "$dir.err" >&2; echo "cannot fetch the source of $spec (the gold lines are for this version)" >&2; exit 1; }
        tar -xf "$(ls "$dir.dl"/*.orig.tar.* | head -n 1)" -C "$dir" --strip-components=1 ;;
      debtar)
        (cd "$dir.dl" && { apt-get download -qq -o APT::Sandbox::User=root "$spec" 2>/dev/null ||
          { apt-get update -qq && apt-get download -qq -o APT::Sandbox::User=root "$spec"; }; }) >&2 ||
          { echo "cannot download $spec" >&2; exit 1; }
        dpkg-deb -x "$dir.dl"/*.deb "$dir.dl/x"
        tar -xf "$(find "$dir.dl/x" -name '*.tar.*' | head -n 1)" -C "$dir" --strip-components=1 ;;
      npm)
        (cd "$dir.dl" && npm pack "$spec" --silent >/dev/null) ||
          { echo "cannot npm pack $spec" >&2; exit 1; }
        tar -xzf "$dir.dl"/*.tgz -C "$dir" --strip-components=1 ;;
    esac
  fi
  printf '%s\n' "$dir"
}

for n in "${lang_names[@]}"; do
  out="$(cd "$DEST" && pwd)/$n"
  rm -rf "$out"; mkdir -p "$out"
  pat=(); for e in ${LANG_EXTS[${n%%-*}]}; do pat+=(-o -name "*.$e"); done
  pat=("${pat[@]:1}")
  for item in ${LANG_CORPORA[$n]}; do
    kind=${item%%:*}; rest=${item#*:}; path=${rest##*:}; spec=${rest%:*}
    from=${path%%>*}; to=.; [ "$path" = "${path#*>}" ] || to=${path#*>}
    root=$(fetch "$kind" "$spec")
    src="$root/${from#/}"
    mkdir -p "$out/$to"
    if [ -d "$src" ]; then
      (cd "$src" && find . -type f \( "${pat[@]}" \) -print0 | cpio -0pdm --quiet "$out/$to")
    else
      [ -f "$src" ] || { echo "$n: no $from in $spec" >&2; exit 1; }
      cp -p "$src" "$out/$to/"
    fi
  done
  printf '%-15s %6d files %8d lines\n' "$n" \
    "$(find "$out" -type f | wc -l)" "$(find "$out" -type f -print0 | xargs -0 cat | wc -l)"
done
