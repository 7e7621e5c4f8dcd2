/*
 * cli_int.h - cli/'s internals, shared by its files:
 *   - the command line's arguments (args.c: the table of each command's
 *     flags and settings, --help, the parser); the commands in cli.c and
 *     report.c;
 *   - answers for a person at a terminal (term.c): Markdown rendered as the
 *     terminal shows it - bold and colour through escapes when styles are
 *     on, never the syntax itself - fed in pieces as an LLM streams;
 *     citations shown as path:line, linked to the file (OSC 8) where the
 *     terminal takes escapes;
 *   - `coderag ask` on a terminal (ask_view.c).
 */
#ifndef CODERAG_CLI_INT_H
#define CODERAG_CLI_INT_H

#include "base.h"
#include "rtv.h"
#include "ws.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- the command line */

/* Command-line flags a subcommand takes besides the configuration keys. */
typedef struct CliArgs {
    WsConfig cfg;
    int json;
    int check;
    int no_update;
    int all;
    const char *mode;
    const char *budget;
    const char *llm_timeout;
    int no_bm25, no_dense, no_graph;
    const char *question;
    int markers;
    int skipped;  /* status: list the skipped files */
    int root_arg; /* the root was given on the command line (not by CODERAG_ROOT) */
    int help;
} CliArgs;

/* Which commands take a flag of their own. */
enum {
    ARG_JSON = 1,
    ARG_ASK = 2,
    ARG_QUESTION = 4,
    ARG_CHECK = 8,
    ARG_MARKERS = 16,
    ARG_SKIPPED = 32,
};

/* A command (commands.c's table): its name, the flags of its own it takes
 * (ARG_*), the settings it takes (WsFor), its help, and what runs it
 * (argv[0] is its name; the exit status). */
typedef struct CliCommand {
    const char *name;
    unsigned accept;
    unsigned settings;
    const char *usage;
    const char *summary;
    int (*run)(const struct CliCommand *cmd, int argc, char **argv);
} CliCommand;

/* The commands' run functions: cli.c's and report.c's. */
int cli_index(const CliCommand *cmd, int argc, char **argv);
int cli_ask(const CliCommand *cmd, int argc, char **argv);
int cli_lsp(const CliCommand *cmd, int argc, char **argv);
int cli_mcp(const CliCommand *cmd, int argc, char **argv);
int cli_status(const CliCommand *cmd, int argc, char **argv);
int cli_root(const CliCommand *cmd, int argc, char **argv);

/* A command's root on a workspace host of its own, cfg's (root resolved):
 * the host's threads never start, the calling thread runs its jobs
 * (ws_host_run). Free with cli_root_free (NULL: nothing), host and all. */
WsRoot *cli_root_new(const WsConfig *cfg);
void cli_root_free(WsRoot *r);

/* Parses argv[1..] (argv[0] is cmd's name) into *a (see args.c). */
CrErr cli_parse_args(const CliCommand *cmd, int argc, char **argv, CliArgs *a, ErrInfo *e);
/* Prints the error on stderr; returns the exit status of rc. */
int cli_fail(CrErr rc, const ErrInfo *e);
/* On stderr, what an answer from st must be read with: an index a pass
 * has not finished ("answered from a partial index: ..."), or one that
 * holds no file (and why). Nothing for a whole index. */
void cli_say_index_state(IdxStore *st);
/* On stderr, when st holds no file: "0 files indexed: ..." and why. */
void cli_say_if_empty(IdxStore *st);
/* One line of compact JSON on stdout, flushed; CR_EIO (said in e) when
 * it cannot be made or written whole. */
CrErr cli_print_json(struct json_t *j, ErrInfo *e);

/* ---------------------------------------------------------------- coding agents (agents.c) */

/* `coderag mcp --print-config|--install|--uninstall CLIENT` (argv as cli_mcp
 * has it): the exit status, or -1 when argv[1] is none of those flags. */
int cli_mcp_agents(int argc, char **argv);

/* ---------------------------------------------------------------- the terminal */

typedef struct CliTerm CliTerm;

/* Whether to style output on a descriptor: a terminal, NO_COLOR unset or
 * empty (https://no-color.org), TERM not "dumb". */
int cli_term_styles_wanted(int fd_is_tty, const char *no_color, const char *term);

/* A renderer writing to f (borrowed); root_abs (copied; may be NULL) makes
 * citation links. styles 0: plain text, no escape at all. */
CliTerm *cli_term_new(FILE *f, int styles, const char *root_abs);
void cli_term_free(CliTerm *t);
/* Wraps the text of cli_term_md (not code blocks, not the lists below) at
 * word boundaries to `width` columns (a character is a column), a list
 * item's further rows indented to its text; 0 (the default): never. A
 * word longer than the width is written whole. */
void cli_term_wrap(CliTerm *t, size_t width);

/* Renders the next piece of a Markdown text; what cannot be told yet
 * (a "*" that may open "**", a "[" that may be a citation) waits for the
 * next piece or cli_term_end. Flushes f. */
void cli_term_md(CliTerm *t, const char *s, size_t n);
/* Ends the text: writes what waited, resets styles, ends the line. */
void cli_term_end(CliTerm *t);

/* The answer whose streamed citations the renderer checks before it styles
 * one, as the answer's own are checked once the LLM is done
 * (rtv_ask_check): a rejected citation is struck out, not linked and
 * followed by "(rejected: REASON)"; what is no citation stays text,
 * brackets included. st NULL: no check, every "[path:lines]" is styled as
 * one. The three must outlive the check. */
void cli_term_set_check(CliTerm *t, IdxStore *st, const RtvRequest *req, const RtvAnswer *ans);

/* A line of its own, bold. */
void cli_term_heading(CliTerm *t, const char *text);
/* "  shown_path:line  label": a location the terminal can open; rel is
 * the path under root_abs that the link names. The location is padded to
 * `width` bytes (0: none), so that a list's labels line up. */
void cli_term_location(CliTerm *t, const char *rel, const char *shown_path, uint32_t line,
                       const char *label, size_t width);

/* "  text  (note)": an entry of a list, text as written (not Markdown). */
void cli_term_item(CliTerm *t, const char *text, const char *note);

/* ---------------------------------------------------------------- ask on a terminal */

/* `coderag ask` for a person (cli/ask_view.c): the answer rendered on out
 * (streamed as the LLM writes it), a progress line on `progress` (NULL:
 * none) cleared before any answer text, then the verified citations as
 * path:line from the current folder with their symbols, and the rejected
 * ones with their reasons. root: the index's root. */
typedef struct CliAskView CliAskView;

/* `coderag ask` with stdout on a terminal: r's query store opened and,
 * unless no_update, brought up to date; req asked through ws_ask's steps,
 * each shown, as a job on r's host; *ans as ws_ask leaves it. */
CrErr cli_ask_terminal(WsRoot *r, int no_update, RtvRequest *req, RtvAnswer *ans, ErrInfo *e);

#endif
