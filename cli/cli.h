/*
 * cli.h - the program: `main` and the command line above the protocols
 * (coderag index|ask|status|lsp|mcp|root). It parses flags into the workspace
 * layer's settings (ws.h) and starts a door: the language server (lsp.h),
 * the MCP server (mcp.h), or a command that answers on the terminal.
 */
#ifndef CODERAG_CLI_H
#define CODERAG_CLI_H

#include <stdio.h>

/* The command line: dispatches argv[1] to a command (usage on stderr and
 * exit 1 for an unknown one); returns the exit status of SPEC.md: 0 ok,
 * 1 usage, 2 index or I/O error, 3 endpoint error, 4 not indexed yet. */
int cli_main(int argc, char **argv);

#endif
