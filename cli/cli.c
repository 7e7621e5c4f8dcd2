#include "cli.h"
#include "lsp.h"
#include "mcp.h"
#include "rtv.h"
#include "ws.h"

#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Command-line flags a subcommand takes besides the configuration keys. */
typedef struct CliArgs {
    WsConfig cfg;
    int json;
    int check;
    int no_update;
    const char *mode;
    const char *budget;
    const char *llm_timeout;
    int no_bm25, no_dense, no_graph;
    const char *question;
    int help;
} CliArgs;

enum { ARG_JSON = 1, ARG_ASK = 2, ARG_QUESTION = 4, ARG_CHECK = 8 };

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
    {"check", ARG_CHECK, offsetof(CliArgs, check), NULL,
     "also verify the index's consistency (reads all of it)"},
    {"mode", ARG_ASK, offsetof(CliArgs, mode), "MODE",
     "extractive, llm or auto (default: auto, the LLM when one is configured)"},
    {"budget", ARG_ASK, offsetof(CliArgs, budget), "CHARS",
     "characters of code to gather as context (default: 12000)"},
    {"llm-timeout", ARG_ASK, offsetof(CliArgs, llm_timeout), "SECONDS",
     "give up on the LLM after this long (default: 120)"},
    {"no-bm25", ARG_ASK, offsetof(CliArgs, no_bm25), NULL, "retrieve without the BM25 leg"},
    {"no-dense", ARG_ASK, offsetof(CliArgs, no_dense), NULL, "retrieve without the dense leg"},
    {"no-graph", ARG_ASK, offsetof(CliArgs, no_graph), NULL, "retrieve without the code graph"},
    {"no-update", ARG_ASK, offsetof(CliArgs, no_update), NULL,
     "answer from the index as it is (skip the pass that finds changed files)"},
};

static const struct CliCommand {
    const char *name;
    int (*run)(int argc, char **argv);
    unsigned accept;
    const char *usage;
    const char *summary;
} cli_commands[] = {
    {"lsp", cli_lsp, 0, "coderag lsp [settings]",
     "Speaks the Language Server Protocol on stdin/stdout (logs on stderr)."},
    {"mcp", cli_mcp, 0, "coderag mcp [--root DIR] [settings]",
     "Serves coding agents over the Model Context Protocol on stdin/stdout (logs on stderr)."},
    {"index", cli_index, 0, "coderag index [--root DIR] [settings]",
     "Builds the index of a workspace, or brings it up to date (unchanged files cost a stat)."},
    {"ask", cli_ask, ARG_JSON | ARG_ASK | ARG_QUESTION,
     "coderag ask [--root DIR] [options] [settings] \"QUESTION\"",
     "Answers a question with cited code, after bringing the index up to date.\n"
     "Exit status: 0 answered, 1 usage, 2 index or I/O error, 3 LLM or embeddings endpoint\n"
     "error, 4 not indexed yet (with --no-update)."},
    {"status", cli_status, ARG_JSON | ARG_CHECK, "coderag status [--root DIR] [options] [settings]",
     "Shows what the index holds. A workspace never indexed is reported as such\n"
     "(state \"missing\" with --json), with exit status 0."},
};

static int exit_code(CrErr rc)
{
    switch (rc) {
    case CR_OK:
        return 0;
    case CR_EUSAGE:
    case CR_EINVAL:
    case CR_ETOOBIG:
        return 1;
    case CR_EHTTP:
    case CR_ETIMEOUT:
        return 3;
    case CR_ENOINDEX:
        return 4;
    default:
        return 2;
    }
}

static int fail(CrErr rc, const ErrInfo *e)
{
    fprintf(stderr, "coderag: %s\n", e->msg[0] ? e->msg : cr_strerror(rc));
    return exit_code(rc);
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
    fprintf(f, "\nsettings (or the environment variable named):\n");
    ws_config_print_flags(f);
    fprintf(f, "  %-26s %s\n", "--help", "this text");
}

int cli_usage(FILE *f)
{
    fprintf(f, "usage: coderag <command> [--root DIR] [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; i++) {
        const char *s = cli_commands[i].summary;
        fprintf(f, "  %-8s %.*s\n", cli_commands[i].name, (int)strcspn(s, "\n"), s);
    }
    fprintf(f, "\n`coderag COMMAND --help` lists a command's options; `coderag --version`.\n");
    return f == stderr ? 1 : 0;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) return cli_usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return cli_usage(stdout);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("coderag %s\n", CODERAG_VERSION);
        return 0;
    }
    const struct CliCommand *c = find_command(argv[1]);
    if (!c) {
        fprintf(stderr, "coderag: unknown command '%s'\n", argv[1]);
        return cli_usage(stderr);
    }
    return c->run(argc - 1, argv + 1);
}

/* Parses argv[1..] (argv[0] is the subcommand): configuration flags as
 * `--key value` or `--key=value`, the command's own flags, and at most one
 * positional argument (the question for ask, the root otherwise). --help
 * prints the command's help and sets a->help. */
static CrErr parse_args(int argc, char **argv, CliArgs *a, ErrInfo *e)
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
            else if (!(accept & ARG_QUESTION) && !a->cfg.root)
                ws_config_set(&a->cfg, "root", arg, e);
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
        int takes_value = o ? o->metavar != NULL : ws_config_is_flag(key);
        if (!o && !takes_value)
            return err_set(e, CR_EUSAGE, "unknown option '%s' (see `coderag %s --help`)", arg,
                           argv[0]);
        if (takes_value && !val) {
            if (i + 1 >= argc) return err_set(e, CR_EUSAGE, "option --%s needs a value", key);
            val = argv[++i];
        } else if (!takes_value && val) {
            return err_set(e, CR_EUSAGE, "option --%s takes no value", key);
        }
        if (o && o->metavar)
            *(const char **)((char *)a + o->offset) = val;
        else if (o)
            *(int *)((char *)a + o->offset) = 1;
        else if ((rc = ws_config_set(&a->cfg, key, val, e)))
            return rc;
    }
    return CR_OK;
}

static int progress_line(void *ud, size_t done, size_t total)
{
    int *last = ud;
    int pct = total ? (int)(done * 100 / total) : 100;
    if (pct == *last) return 0;
    *last = pct;
    if (isatty(2)) fprintf(stderr, "\rindexing: %zu/%zu files (%d%%)", done, total, pct);
    return 0;
}

/* Opens the store of a.cfg and brings it up to date (unless no_update). */
static CrErr open_updated(CliArgs *a, int update, int verbose, IdxStore **out, ErrInfo *e)
{
    IdxUpdateStats stats;
    int last = -1;
    if (!update) return ws_store_open(&a->cfg, WS_OPEN_EXISTING, out, e);
    CrErr rc =
        ws_store_open_updated(&a->cfg, verbose ? progress_line : NULL, &last, &stats, out, e);
    if (verbose && isatty(2) && last >= 0) fputc('\n', stderr);
    if (rc) return rc;
    if (verbose) {
        IdxStatus s;
        if (idx_status(*out, &s, NULL) == CR_OK)
            fprintf(stderr,
                    "indexed %s: %zu files (%zu changed, %zu unchanged, %zu removed, %zu skipped), "
                    "%lld chunks, %lld edges in %.0f ms\n",
                    idx_root(*out), stats.files_seen, stats.files_changed, stats.files_unchanged,
                    stats.files_removed, stats.files_skipped, (long long)s.chunks,
                    (long long)s.edges, stats.ms);
    }
    return CR_OK;
}

int cli_index(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    IdxStore *st = NULL;
    CrErr rc = parse_args(argc, argv, &a, &e);
    if (!rc && !a.help) {
        ws_config_resolve_root(&a.cfg);
        rc = open_updated(&a, 1, 1, &st, &e);
    }
    idx_close(st);
    ws_config_release(&a.cfg);
    return rc ? fail(rc, &e) : 0;
}

static void print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
}

int cli_ask(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    IdxStore *st = NULL;
    RtvRequest req;
    RtvAnswer ans = {0};
    CrErr rc = parse_args(argc, argv, &a, &e);
    if (rc || a.help) goto out;
    if (!a.question) {
        rc = err_set(&e, CR_EUSAGE, "usage: %s (see `coderag ask --help`)",
                     find_command("ask")->usage);
        goto out;
    }
    rtv_request_init(&req);
    req.question = a.question;
    req.use_bm25 = !a.no_bm25;
    req.use_dense = !a.no_dense;
    req.use_graph = !a.no_graph;
    ws_config_llm(&a.cfg, &req);
    if (a.mode && !rtv_mode_parse(a.mode, &req.mode)) {
        rc = err_set(&e, CR_EUSAGE, "--mode must be extractive, llm or auto, not '%s'", a.mode);
        goto out;
    }
    if (a.budget) {
        char *end;
        long long b = strtoll(a.budget, &end, 10);
        if (end == a.budget || *end || b < 1 || b > 10000000) {
            rc = err_set(&e, CR_EUSAGE, "--budget must be a character count, not '%s'", a.budget);
            goto out;
        }
        req.budget = (size_t)b;
    }
    if (a.llm_timeout) {
        char *end;
        double secs = strtod(a.llm_timeout, &end);
        if (end == a.llm_timeout || *end || !(secs >= 0.001 && secs <= 86400)) {
            rc = err_set(&e, CR_EUSAGE, "--llm-timeout must be seconds, not '%s'", a.llm_timeout);
            goto out;
        }
        req.llm_timeout_ms = (long)(secs * 1000 + 0.5);
    }
    ws_config_resolve_root(&a.cfg);
    if ((rc = open_updated(&a, !a.no_update, 0, &st, &e))) goto out;
    double t0 = now_ms();
    if ((rc = idx_warm(st, &e))) goto out;
    log_msg(LOG_INFO, "search structures loaded in %.1f ms", now_ms() - t0);
    /* one question per process: no endpoint state to keep between asks */
    if ((rc = ws_ask(NULL, st, &req, &ans, &e))) goto out;
    if (a.json) {
        json_t *j = lsp_answer_to_json(&ans, idx_root(st));
        print_json(j);
        json_decref(j);
    } else {
        fputs(ans.answer, stdout);
        if (ans.answer[0] && ans.answer[strlen(ans.answer) - 1] != '\n') fputc('\n', stdout);
    }
out:
    rtv_answer_release(&ans);
    idx_close(st);
    ws_config_release(&a.cfg);
    return rc ? fail(rc, &e) : 0;
}

/* status of a workspace never indexed: not an error, a state. */
static CrErr print_missing(const CliArgs *a, const IdxConfig *ic, const ErrInfo *why)
{
    char real[PATH_MAX];
    const char *root = realpath(ic->root, real) ? real : ic->root;
    if (a->json) {
        StrBuf llm;
        sb_init(&llm);
        if (a->cfg.llm_url) http_redact_url(&llm, a->cfg.llm_url);
        json_t *j =
            json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:s}", "state", "missing", "root",
                      root, "message", why->msg, "files", 0, "chunks", 0, "edges", 0, "vectors", 0,
                      "symbols", 0, "llm", a->cfg.llm_url ? llm.buf : "none");
        print_json(j);
        json_decref(j);
        sb_release(&llm);
    } else {
        printf("root:      %s\nstate:     not indexed yet: run `coderag index`\n", root);
    }
    return CR_OK;
}

int cli_status(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    IdxStore *st = NULL;
    IdxStatus s;
    IdxConfig ic;
    CrErr rc = parse_args(argc, argv, &a, &e);
    if (rc || a.help) goto out;
    ws_config_resolve_root(&a.cfg);
    ws_config_idx(&a.cfg, &ic);
    if ((rc = ws_store_open(&a.cfg, WS_OPEN_READ, &st, &e)) == CR_ENOINDEX) {
        rc = print_missing(&a, &ic, &e);
        goto out;
    }
    if (rc) goto out;
    if (a.check && (rc = idx_verify(st, &e))) goto out;
    if ((rc = idx_status(st, &s, &e))) goto out;
    char when[32];
    utc_iso8601(s.last_update, when);
    StrBuf shown;
    sb_init(&shown);
    if (a.cfg.llm_url) http_redact_url(&shown, a.cfg.llm_url);
    const char *llm = a.cfg.llm_url ? shown.buf : "none";
    if (a.json) {
        json_t *j = json_pack("{s:s}", "state", "ready");
        json_t *common = ws_status_json(idx_root(st), &s);
        json_object_update(j, common);
        json_decref(common);
        json_object_set_new(j, "lastUpdateUnix", json_integer((json_int_t)s.last_update));
        json_object_set_new(j, "llm", json_string(llm));
        json_t *langs = json_object();
        for (size_t i = 0; i < s.n_langs; i++)
            json_object_set_new(langs, s.langs[i].name, json_integer((json_int_t)s.langs[i].files));
        json_object_set_new(j, "languages", langs);
        print_json(j);
        json_decref(j);
    } else {
        printf("root:      %s\nstate:     ready\nfiles:     %lld (%lld skipped)\nchunks:    "
               "%lld\nsymbols:   %lld\n"
               "edges:     %lld\nvectors:   %lld\nindex:     %.1f MB\nupdated:   %s\n"
               "embedder:  %s\nllm:       %s\n",
               idx_root(st), (long long)s.files, (long long)s.skipped, (long long)s.chunks,
               (long long)s.symbols, (long long)s.edges, (long long)s.vectors,
               (double)s.db_bytes / 1e6, when, s.embedder, llm);
        if (s.n_langs) {
            printf("languages:");
            for (size_t i = 0; i < s.n_langs; i++)
                printf("%s %s %lld", i ? "," : "", s.langs[i].name, (long long)s.langs[i].files);
            printf("\n");
        }
        IdxSkipped *sk = NULL;
        size_t n = 0;
        if (s.skipped && idx_skipped(st, &sk, &n, NULL) == CR_OK) {
            printf("skipped files:\n");
            for (size_t i = 0; i < n; i++)
                printf("  %s (%s)\n", sk[i].path, sk[i].reason);
            idx_skipped_free(sk, n);
        }
    }
    sb_release(&shown);
out:
    idx_close(st);
    ws_config_release(&a.cfg);
    return rc ? fail(rc, &e) : 0;
}

int cli_lsp(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    /* Editor launchers add --stdio (our only transport) and sometimes
     * --clientProcessId; neither is a setting. */
    char **args = xcalloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--stdio")) continue;
        if (i > 0 && !strncmp(argv[i], "--clientProcessId", 17)) {
            if (!argv[i][17] && i + 1 < argc) i++;
            continue;
        }
        args[n++] = argv[i];
    }
    CrErr rc = parse_args(n, args, &a, &e);
    free(args);
    if (rc || a.help) {
        ws_config_release(&a.cfg);
        return rc ? fail(rc, &e) : 0;
    }
    /* Nothing but protocol on stdout: the transport writes to a private
     * copy of it, and fd 1 becomes stderr so that no stray print can
     * corrupt the stream. A client that goes away makes writes fail with
     * EPIPE instead of killing us. */
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0) {
        ws_config_release(&a.cfg);
        fprintf(stderr, "coderag: cannot set up stdout: %s\n", strerror(errno));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int code = lsp_server_run(&a.cfg, 0, out);
    close(out);
    ws_config_release(&a.cfg);
    return code;
}

int cli_mcp(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    CrErr rc = parse_args(argc, argv, &a, &e);
    if (rc || a.help) {
        ws_config_release(&a.cfg);
        return rc ? fail(rc, &e) : 0;
    }
    McpOptions o;
    StrBuf llm;
    sb_init(&llm);
    ws_config_resolve_root(&a.cfg);
    o.cfg = &a.cfg;
    rtv_request_init(&o.ask);
    ws_config_llm(&a.cfg, &o.ask);
    if (a.cfg.llm_url) http_redact_url(&llm, a.cfg.llm_url);
    o.llm_label = a.cfg.llm_url ? llm.buf : NULL;
    /* As for lsp: protocol alone on the real stdout, stray prints to stderr. */
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0) {
        sb_release(&llm);
        ws_config_release(&a.cfg);
        fprintf(stderr, "coderag: cannot set up stdout: %s\n", strerror(errno));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int code = mcp_server_run(&o, 0, out);
    close(out);
    sb_release(&llm);
    ws_config_release(&a.cfg);
    return code;
}
