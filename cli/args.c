#include "cli.h"
#include "cli_int.h"

#include <jansson.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command line's arguments: the flags of the commands (one table), a
 * command's --help, and the parser every command calls. */

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

int cli_fail(CrErr rc, const ErrInfo *e)
{
    fprintf(stderr, "coderag: %s\n", e->msg[0] ? e->msg : cr_strerror(rc));
    return cr_exit_code(rc);
}

static void command_help(const CliCommand *c, FILE *f)
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

/* Parses argv[1..] (argv[0] is the subcommand): configuration flags as
 * `--key value` or `--key=value`, the command's own flags, and at most one
 * positional argument (the question for ask, the root otherwise). --help
 * prints the command's help and sets a->help. */
CrErr cli_parse_args(const CliCommand *cmd, int argc, char **argv, CliArgs *a, ErrInfo *e)
{
    CrErr rc;
    unsigned accept = cmd->accept;
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
            command_help(cmd, stdout);
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
        int unused = !o && !(takes & cmd->settings);
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
