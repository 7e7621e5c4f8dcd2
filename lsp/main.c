#include "lsp_int.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"lsp", cli_lsp, "speak LSP on stdin/stdout"},
    {"mcp", cli_mcp, "serve coding agents over MCP on stdin/stdout"},
    {"index", cli_index, "build or update the index of a workspace"},
    {"ask", cli_ask, "answer a question with cited code"},
    {"status", cli_status, "show what the index holds"},
};

static int usage(FILE *f)
{
    fprintf(f, "usage: coderag <command> [--root DIR] [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nask options: --json --mode extractive|llm|auto --budget CHARS --no-bm25 "
               "--no-dense --no-graph --no-update --llm-timeout SECONDS\nstatus options: --json --check\n"
               "settings (also CODERAG_* environment variables): --index-dir DIR --exclude GLOB "
               "--max-file-bytes N --threads N --llm-url URL --llm-model NAME --llm-api-key-env VAR "
               "--embed-provider builtin|openai --embed-url URL --embed-model NAME "
               "--embed-api-key-env VAR\n");
    return f == stderr ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* Past a file-size limit, writes fail with EFBIG (reported as an I/O
     * error) instead of the process being killed. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout);
    if (!strcmp(argv[1], "--version")) {
        printf("coderag 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "coderag: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
