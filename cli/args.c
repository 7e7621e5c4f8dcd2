#include "cli.h"
#include "cli_int.h"

#include <jansson.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command line's arguments: each command's flags and settings (one
 * table), its --help, and the parser every command calls. */

/* A command's own flags: which commands take it (ARG_*), and where it goes
 * in CliArgs (an int set to 1, or a string value when metavar is set). */
static const struct CliOpt {
    const char *name;
    unsigned accept;
    size_t offset;
    const char *metavar;
    const char *help;
} cli_opts[] = {
    {"json", ARG_JSON, offsetof(CliArgs, json), NULL,
     "print JSON (docs/protocol.md) instead of text"},
    {"markers", ARG_MARKERS, offsetof(CliArgs, markers), NULL,
     "list the markers of the root rule instead (VCS, then project markers)"},
    {"check", ARG_CHECK, offsetof(CliArgs, check), NULL,
     "also verify the index's consistency (reads all of it)"},
    {"skipped", ARG_SKIPPED, offsetof(CliArgs, skipped), NULL,
     "list every file seen but not indexed, with its reason"},
    {"mode", ARG_ASK, offsetof(CliArgs, mode), "MODE",
     "extractive, llm or auto (default: auto, the LLM when one is configured)"},
    {"budget", ARG_ASK, offsetof(CliArgs, budget), "CHARS",
     "characters of code to gather as context (default: 12000)"},
    {"llm-timeout", ARG_ASK, offsetof(CliArgs, llm_timeout), "SECONDS",
     "give up on the LLM after this long (default: 120)"},
    {"no-bm25", ARG_ASK, offsetof(CliArgs, no_bm25), NULL, "retrieve without the BM25 leg"},
    {"no-dense", ARG_ASK, offsetof(CliArgs, no_dense), NULL, "retrieve without the dense leg"},
    {"no-graph", ARG_ASK, offsetof(CliArgs, no_graph), NULL, "retrieve without the code graph"},
    {"all", ARG_ASK, offsetof(CliArgs, all), NULL,
     "show everything: every context location in the answer (none folded), then on a terminal "
     "the citations"},
    {"no-update", ARG_ASK, offsetof(CliArgs, no_update), NULL,
     "answer from the index as it is (skip the pass that finds changed files)"},
};

static const struct CliCommand {
    const char *name;
    unsigned accept;
    unsigned settings; /* WsFor: the settings it takes */
    const char *usage;
    const char *summary;
} cli_commands[] = {
    {"lsp", 0, WS_FOR_SERVER, "coderag lsp [settings]",
     "Speaks the Language Server Protocol on stdin/stdout (logs on stderr)."},
    {"mcp", 0, WS_FOR_SERVER,
     "coderag mcp [--root DIR] [settings]\n"
     "       coderag mcp --print-config|--install|--uninstall CLIENT",
     "Serves coding agents over the Model Context Protocol on stdin/stdout (logs on stderr).\n"
     "--print-config CLIENT prints the configuration that starts this binary from CLIENT (the\n"
     "file it belongs in, then the snippet); --install writes it there (atomically, keeping the\n"
     "rest of the file, the old one beside it as FILE.coderag.bak), --uninstall takes it out.\n"
     "CLIENT: claude-code, codex, cursor, vscode, gemini, continue, zed."},
    {"index", 0, WS_FOR_INDEX, "coderag index [--root DIR] [settings]",
     "Builds the index of a workspace, or brings it up to date (unchanged files cost a stat)."},
    {"ask", ARG_JSON | ARG_ASK | ARG_QUESTION, WS_FOR_ASK,
     "coderag ask [--root DIR] [options] [settings] \"QUESTION\"",
     "Answers a question with cited code, after bringing the index up to date.\n"
     "Exit status: 0 answered, 1 usage, 2 index or I/O error, 3 LLM or embeddings endpoint\n"
     "error, 4 not indexed yet (with --no-update)."},
    {"status", ARG_JSON | ARG_CHECK | ARG_SKIPPED, WS_FOR_STATUS,
     "coderag status [--root DIR] [options] [settings]",
     "Shows what the index holds. A workspace never indexed is reported as such\n"
     "(state \"missing\" with --json), with exit status 0."},
    {"root", ARG_JSON | ARG_MARKERS, 0, "coderag root [--markers] [--json] [PATH]",
     "Prints the workspace root the root rule picks for PATH (default: the current folder).\n"
     "The rule: the nearest folder up with a VCS marker, else with a project marker, else\n"
     "PATH's own folder; CODERAG_ROOT, when set and no PATH is given, is the root as it is."},
};

int cli_fail(CrErr rc, const ErrInfo *e)
{
    fprintf(stderr, "coderag: %s\n", e->msg[0] ? e->msg : cr_strerror(rc));
    return cr_exit_code(rc);
}

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

const char *cli_nearest_command(const char *name)
{
    const char *best = NULL;
    size_t best_d = 3; /* two edits at most, and fewer than the name's half */
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++) {
        size_t d = edit_distance(name, cli_commands[i].name);
        if (d < best_d && d * 2 < strlen(cli_commands[i].name)) {
            best = cli_commands[i].name;
            best_d = d;
        }
    }
    return best;
}

static const struct CliCommand *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++)
        if (!strcmp(cli_commands[i].name, name)) return &cli_commands[i];
    return NULL;
}

static void command_help(const struct CliCommand *c, FILE *f)
{
    fprintf(f, "usage: %s\n\n%s\n", c->usage, c->summary);
    if (c->accept & ~(unsigned)ARG_QUESTION) {
        fprintf(f, "\noptions:\n");
        for (size_t i = 0; i < sizeof cli_opts / sizeof cli_opts[0]; i++) {
            if (!(cli_opts[i].accept & c->accept)) continue;
            char left[48];
            snprintf(left, sizeof left, "--%s%s%s", cli_opts[i].name,
                     cli_opts[i].metavar ? " " : "",
                     cli_opts[i].metavar ? cli_opts[i].metavar : "");
            fprintf(f, "  %-26s %s\n", left, cli_opts[i].help);
        }
    }
    if (c->settings) {
        fprintf(f, "\nsettings (or the environment variable named):\n");
        ws_config_print_flags(f, c->settings);
    } else if (!(c->accept & ~(unsigned)ARG_QUESTION)) {
        fprintf(f, "\noptions:\n");
    }
    fprintf(f, "  %-26s %s\n", "--help", "this text");
}

int cli_usage(FILE *f)
{
    fprintf(f, "usage: coderag <command> [--root DIR] [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++) {
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

/* Parses argv[1..] (argv[0] is the subcommand): configuration flags as
 * `--key value` or `--key=value`, the command's own flags, and at most one
 * positional argument (the question for ask, the root otherwise). --help
 * prints the command's help and sets a->help. */
CrErr cli_parse_args(int argc, char **argv, CliArgs *a, ErrInfo *e)
{
    CrErr rc;
    const struct CliCommand *cmd = find_command(argv[0]);
    unsigned accept = cmd ? cmd->accept : 0;
    memset(a, 0, sizeof *a);
    ws_config_init(&a->cfg);
    if ((rc = ws_config_from_env(&a->cfg, e))) return rc;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || !strcmp(arg, "-")) {
            if ((accept & ARG_QUESTION) && !a->question)
                a->question = arg;
            else if (!(accept & ARG_QUESTION) && !a->root_arg && (a->root_arg = 1))
                ws_config_set(&a->cfg, "root", arg, e); /* over CODERAG_ROOT's */
            else
                return err_set(e, CR_EUSAGE, "unexpected argument '%s'", arg);
            continue;
        }
        if (!strcmp(arg, "--")) {
            if ((accept & ARG_QUESTION) && i + 1 < argc && !a->question) a->question = argv[++i];
            continue;
        }
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            if (cmd) command_help(cmd, stdout);
            a->help = 1;
            return CR_OK;
        }
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        char key[64];
        const char *eq = strchr(name, '=');
        size_t klen = eq ? (size_t)(eq - name) : strlen(name);
        if (klen >= sizeof key)
            return err_set(e, CR_EUSAGE, "unknown option '%s' (see `coderag %s --help`)", arg,
                           argv[0]);
        memcpy(key, name, klen);
        key[klen] = '\0';
        const char *val = eq ? eq + 1 : NULL;
        const struct CliOpt *o = NULL;
        for (size_t k = 0; k < sizeof cli_opts / sizeof cli_opts[0] && !o; k++)
            if ((cli_opts[k].accept & accept) && !strcmp(cli_opts[k].name, key)) o = &cli_opts[k];
        unsigned takes = 0;
        int takes_value = o ? o->metavar != NULL : ws_config_is_flag(key, &takes);
        if (!o && !takes_value)
            return err_set(e, CR_EUSAGE, "unknown option '%s' (see `coderag %s --help`)", arg,
                           argv[0]);
        /* SPEC: every configuration key is also a flag of every command, so a
         * script may pass one setting list to all; one the command does not use
         * is said, and ignored */
        int unused = !o && cmd && !(takes & cmd->settings);
        if (unused)
            fprintf(stderr, "coderag: --%s is not used by `coderag %s` (ignored)\n", key, argv[0]);
        if (takes_value && !val) {
            if (i + 1 >= argc) return err_set(e, CR_EUSAGE, "option --%s needs a value", key);
            val = argv[++i];
        } else if (!takes_value && val) {
            return err_set(e, CR_EUSAGE, "option --%s takes no value", key);
        }
        if (unused)
            continue;
        else if (o && o->metavar)
            *(const char **)((char *)a + o->offset) = val;
        else if (o)
            *(int *)((char *)a + o->offset) = 1;
        else if ((rc = ws_config_set(&a->cfg, key, val, e)))
            return rc;
        else if (!strcmp(key, "root"))
            a->root_arg = 1;
    }
    return CR_OK;
}

const char *cli_command_usage(const char *name)
{
    const struct CliCommand *c = find_command(name);
    return c ? c->usage : "coderag <command>";
}

CrErr cli_print_json(json_t *j, ErrInfo *e)
{
    /* one JSON line or an error: never exit 0 with an empty or cut stdout
     * (a value jansson cannot write, a full disk, a closed pipe) */
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (!s) return err_set(e, CR_EIO, "the result could not be written as JSON");
    size_t n = strlen(s);
    s[n] = '\n';
    int ok = fwrite(s, 1, n + 1, stdout) == n + 1 && fflush(stdout) == 0;
    free(s);
    if (!ok) return err_set(e, CR_EIO, "cannot write to standard output: %s", strerror(errno));
    return CR_OK;
}
