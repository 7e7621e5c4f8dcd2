# bash completion for coderag: the commands, then the flags the command's own
# --help lists (so it never goes stale), then paths.
_coderag() {
    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "lsp mcp index ask status root --help --version" -- "$cur"))
        return
    fi
    case $cur in
    -*)
        local flags
        flags=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        ;;
    *)
        case ${COMP_WORDS[COMP_CWORD - 1]} in
        --print-config | --install | --uninstall)
            COMPREPLY=($(compgen -W "claude-code codex cursor vscode gemini continue zed" -- "$cur"))
            ;;
        --mode) COMPREPLY=($(compgen -W "extractive llm auto" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
        esac
        ;;
    esac
}
complete -o filenames -F _coderag coderag
