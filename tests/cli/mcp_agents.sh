#!/usr/bin/env bash
# `coderag mcp --print-config|--install|--uninstall CLIENT` for every coding
# agent, in a HOME of its own: the file each client reads, what is there kept
# (a backup beside it), idempotent, undone by --uninstall, a JSONC file never
# touched.
#   mcp_agents.sh CODERAG_BIN FIXTURE_DIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d /tmp/coderag-agents.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_CONFIG_HOME= CODEX_HOME=
mkdir -p "$HOME" "$work/proj/.git"
cd "$work/proj"
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
# client, file (under HOME, or the project for continue), format, key
clients="claude-code:$HOME/.claude.json:json:mcpServers
codex:$HOME/.codex/config.toml:toml:mcp_servers
cursor:$HOME/.cursor/mcp.json:json:mcpServers
vscode:$HOME/.config/Code/User/mcp.json:json:servers
gemini:$HOME/.gemini/settings.json:json:mcpServers
continue:$work/proj/.continue/mcpServers/coderag.yaml:yaml:
zed:$HOME/.config/zed/settings.json:json:context_servers"
# true when file starts coderag (the running binary, `mcp`)
has_entry() { # format key file
  case $1 in
  json) /usr/bin/python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))[sys.argv[2]]["coderag"]
c=e["command"] if isinstance(e["command"], str) else e["command"]["path"]
sys.exit(0 if c == sys.argv[3] and e["args"] == ["mcp"] else 1)' "$3" "$2" "$bin" ;;
  toml) grep -qx '\[mcp_servers.coderag\]' "$3" && grep -qxF "command = \"$bin\"" "$3" && grep -qx 'args = \["mcp"\]' "$3" ;;
  yaml) grep -qF "command: \"$bin\"" "$3" && grep -qx '      - mcp' "$3" ;;
  esac
}
while IFS=: read -r client file format key; do
  out=$("$bin" mcp --print-config "$client") && [ "$(printf '%s\n' "$out" | head -1 | grep -cF "$file")" = 1 ] &&
    printf '%s\n' "$out" | grep -qF "$bin" && ok || bad "$client: --print-config names the file and the binary"
  # into nothing: the file is made, a second install changes nothing, uninstall removes it
  rm -rf "$HOME" "$work/proj/.continue"; mkdir -p "$HOME"
  "$bin" mcp --install "$client" >/dev/null && has_entry "$format" "$key" "$file" && ok || bad "$client: install into nothing"
  cp "$file" "$work/first"
  "$bin" mcp --install "$client" | grep -q 'already' && cmp -s "$file" "$work/first" && [ ! -e "$file.coderag.bak" ] &&
    ok || bad "$client: a second install is a no-op"
  "$bin" mcp --uninstall "$client" >/dev/null && [ ! -e "$file" ] && [ ! -e "$file.coderag.bak" ] &&
    ok || bad "$client: uninstall after install into nothing leaves nothing"
  "$bin" mcp --uninstall "$client" | grep -q 'already' && ok || bad "$client: a second uninstall is a no-op"
  [ "$format" = yaml ] && continue
  # into a file with more: kept, backed up, restored by uninstall
  mkdir -p "$(dirname "$file")"
  if [ "$format" = toml ]; then
    printf 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\nargs = []\n' >"$file"
  else
    printf '{"theme": "dark", "%s": {"other": {"command": "x"}}}\n' "$key" >"$file"
  fi
  cp "$file" "$work/orig"
  "$bin" mcp --install "$client" >/dev/null && has_entry "$format" "$key" "$file" && cmp -s "$file.coderag.bak" "$work/orig" &&
    ok || bad "$client: install keeps a backup of the file as it was"
  if [ "$format" = toml ]; then
    grep -qx 'model = "o3"' "$file" && grep -qx '\[mcp_servers.other\]' "$file" && ok || bad "$client: install keeps the rest"
    "$bin" mcp --uninstall "$client" >/dev/null && cmp -s "$file" "$work/orig" && ok || bad "$client: uninstall gives the file back byte for byte"
  else
    /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["theme"]=="dark" and j[sys.argv[2]]["other"]=={"command":"x"} else 1)' "$file" "$key" &&
      ok || bad "$client: install keeps the rest"
    "$bin" mcp --uninstall "$client" >/dev/null &&
      /usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)' "$file" "$work/orig" &&
      ok || bad "$client: uninstall gives the same JSON back"
    # a file with comments (JSONC) is never touched: the snippet goes to stderr, exit 1
    printf '// mine\n{"theme": "dark"}\n' >"$file"; cp "$file" "$work/orig"; rm -f "$file.coderag.bak"
    "$bin" mcp --install "$client" >/dev/null 2>"$work/err"; rc=$?
    [ "$rc" = 1 ] && cmp -s "$file" "$work/orig" && [ ! -e "$file.coderag.bak" ] && grep -qF "$bin" "$work/err" &&
      ok || bad "$client: a JSONC file is left as it is (exit $rc)"
  fi
done <<<"$clients"
"$bin" mcp --install no-such-client 2>/dev/null; [ $? = 1 ] && ok || bad "unknown client: exit 1"
"$bin" mcp --install 2>/dev/null; [ $? = 1 ] && ok || bad "no client: exit 1"
echo "mcp agents: $passed passed, $failed failed"
[ "$failed" = 0 ]
