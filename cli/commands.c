#include "cli.h"
#include "commit.h"
#include "cli_int.h"

#include <stdio.h>
#include <string.h>

/* The commands: one row each (its name, flags, settings, help and run
 * function), the dispatch of argv[1] to its row, and the list `coderag
 * --help` prints. Adding a command is a run function in its own file and a
 * row here. */

static const CliCommand cli_commands[] = {
    {"lsp", 0, WS_FOR_SERVER, "coderag lsp [settings]",
     "Speaks the Language Server Protocol on stdin/stdout (logs on stderr).", cli_lsp},
    {"mcp", 0, WS_FOR_SERVER,
     "coderag mcp [--root DIR] [settings]\n"
     "       coderag mcp --print-config|--install|--uninstall CLIENT",
     "Serves coding agents over the Model Context Protocol on stdin/stdout (logs on stderr).\n"
     "--print-config CLIENT prints the configuration that starts this binary from CLIENT (the\n"
     "file it belongs in, then the snippet); --install writes it there (atomically, keeping the\n"
     "rest of the file, the old one beside it as FILE.coderag.bak), --uninstall takes it out.\n"
     "CLIENT: claude-code, codex, cursor, vscode, gemini, continue, zed.",
     cli_mcp},
    {"index", 0, WS_FOR_INDEX, "coderag index [--root DIR] [settings]",
     "Builds the index of a workspace, or brings it up to date (unchanged files cost a stat).",
     cli_index},
    {"ask", ARG_JSON | ARG_ASK | ARG_QUESTION, WS_FOR_ASK,
     "coderag ask [--root DIR] [options] [settings] \"QUESTION\"",
     "Answers a question with cited code, after bringing the index up to date.\n"
     "Exit status: 0 answered, 1 usage, 2 index or I/O error, 3 LLM or embeddings endpoint\n"
     "error, 4 not indexed yet (with --no-update).",
     cli_ask},
    {"status", ARG_JSON | ARG_CHECK | ARG_SKIPPED, WS_FOR_STATUS,
     "coderag status [--root DIR] [options] [settings]",
     "Shows what the index holds. A workspace never indexed is reported as such\n"
     "(state \"missing\" with --json), with exit status 0.",
     cli_status},
    {"root", ARG_JSON | ARG_MARKERS, 0, "coderag root [--markers] [--json] [PATH]",
     "Prints the workspace root the root rule picks for PATH (default: the current folder).\n"
     "The rule: the nearest folder up with a VCS marker, else with a project marker, else\n"
     "PATH's own folder; CODERAG_ROOT, when set and no PATH is given, is the root as it is.",
     cli_root},
};

#define N_COMMANDS (sizeof cli_commands / sizeof cli_commands[0])

/* Edits (insert, delete, replace, swap two neighbours) from a to b; short
 * words only (the commands' names). */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 30 || m > 30) return 99;
    size_t d[32][32];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

/* The known command nearest to a mistyped one (a few edits away), or NULL. */
static const char *nearest_command(const char *name)
{
    const char *best = NULL;
    size_t best_d = 3; /* two edits at most, and fewer than the name's half */
    for (size_t i = 0; i < N_COMMANDS; i++) {
        size_t d = edit_distance(name, cli_commands[i].name);
        if (d < best_d && d * 2 < strlen(cli_commands[i].name)) {
            best = cli_commands[i].name;
            best_d = d;
        }
    }
    return best;
}

/* The list of commands (exit 0 on stdout, 1 on stderr). */
static int usage(FILE *f)
{
    fprintf(f, "usage: coderag <command> [--root DIR] [options]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const char *s = cli_commands[i].summary;
        /* the first sentence */
        const char *stop = strstr(s, ". ");
        size_t n = strcspn(s, "\n");
        if (stop && (size_t)(stop - s) < n) n = (size_t)(stop - s) + 1;
        fprintf(f, "  %-8s %.*s\n", cli_commands[i].name, (int)n, s);
    }
    fprintf(f, "\n`coderag COMMAND --help` lists a command's options; `coderag --version`.\n");
    return f == stderr ? 1 : 0;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("coderag %s\nschema %d\ncommit %s\n", CODERAG_VERSION, ws_schema_version(),
               CODERAG_COMMIT);
        return 0;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(cli_commands[i].name, argv[1]))
            return cli_commands[i].run(&cli_commands[i], argc - 1, argv + 1);
    const char *near = nearest_command(argv[1]);
    if (near) {
        fprintf(stderr,
                "coderag: unknown command '%s': did you mean `%s`? (`coderag --help` lists "
                "the commands)\n",
                argv[1], near);
        return 1;
    }
    fprintf(stderr, "coderag: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
