# fish completion for coderag: the commands, then the flags the command's own
# --help lists, then paths.
complete -c coderag -n __fish_use_subcommand -f -a 'lsp mcp index ask status root'
complete -c coderag -n __fish_use_subcommand -l help -l version
complete -c coderag -n 'not __fish_use_subcommand' -f -a '(set -l c (commandline -opc); if string match -q -- "-*" (commandline -ct); coderag $c[2] --help 2>/dev/null | string match -ar -- "--[a-z][a-z0-9-]*" | sort -u; end)'
complete -c coderag -n '__fish_seen_subcommand_from mcp' -l print-config -l install -l uninstall -x -a 'claude-code codex cursor vscode gemini continue zed'
