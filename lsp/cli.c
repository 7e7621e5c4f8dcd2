#include "lsp.h"
#include "lsp_int.h"
#include "rtv.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Command-line flags a subcommand takes besides the configuration keys. */
typedef struct CliArgs {
    CrConfig cfg;
    int json;
    int check;
    int no_update;
    const char *mode;
    const char *budget;
    const char *llm_timeout;
    int no_bm25, no_dense, no_graph;
    const char *question;
} CliArgs;

enum { ARG_JSON = 1, ARG_ASK = 2, ARG_QUESTION = 4, ARG_CHECK = 8 };

static int exit_code(CrErr rc)
{
    switch (rc) {
    case CR_OK: return 0;
    case CR_EUSAGE:
    case CR_EINVAL:
    case CR_ETOOBIG: return 1;
    case CR_EHTTP:
    case CR_ETIMEOUT: return 3;
    default: return 2;
    }
}

static int fail(CrErr rc, const ErrInfo *e)
{
    fprintf(stderr, "coderag: %s\n", e->msg[0] ? e->msg : cr_strerror(rc));
    return exit_code(rc);
}

/* Parses argv[1..] (argv[0] is the subcommand): configuration flags as
 * `--key value` or `--key=value`, the command's own flags, and at most one
 * positional argument (the question for ask, the root otherwise). */
static CrErr parse_args(int argc, char **argv, unsigned accept, CliArgs *a, ErrInfo *e)
{
    CrErr rc;
    memset(a, 0, sizeof *a);
    config_init(&a->cfg);
    if ((rc = config_from_env(&a->cfg, e))) return rc;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || !strcmp(arg, "-")) {
            if ((accept & ARG_QUESTION) && !a->question)
                a->question = arg;
            else if (!(accept & ARG_QUESTION) && !a->cfg.root)
                config_set(&a->cfg, "root", arg, e);
            else
                return err_set(e, CR_EUSAGE, "unexpected argument '%s'", arg);
            continue;
        }
        if (!strcmp(arg, "--")) {
            if ((accept & ARG_QUESTION) && i + 1 < argc && !a->question) a->question = argv[++i];
            continue;
        }
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        char key[64];
        const char *eq = strchr(name, '=');
        size_t klen = eq ? (size_t)(eq - name) : strlen(name);
        if (klen >= sizeof key) return err_set(e, CR_EUSAGE, "unknown option '%s'", arg);
        memcpy(key, name, klen);
        key[klen] = '\0';
        const char *val = eq ? eq + 1 : NULL;
#define NEED_VALUE()                                                                               \
    do {                                                                                           \
        if (!val) {                                                                                \
            if (i + 1 >= argc) return err_set(e, CR_EUSAGE, "option --%s needs a value", key);    \
            val = argv[++i];                                                                       \
        }                                                                                          \
    } while (0)
        if ((accept & ARG_JSON) && !strcmp(key, "json")) {
            a->json = 1;
        } else if ((accept & ARG_CHECK) && !strcmp(key, "check")) {
            a->check = 1;
        } else if ((accept & ARG_ASK) && !strcmp(key, "mode")) {
            NEED_VALUE();
            a->mode = val;
        } else if ((accept & ARG_ASK) && !strcmp(key, "budget")) {
            NEED_VALUE();
            a->budget = val;
        } else if ((accept & ARG_ASK) && !strcmp(key, "llm-timeout")) {
            NEED_VALUE();
            a->llm_timeout = val;
        } else if ((accept & ARG_ASK) && !strcmp(key, "no-bm25")) {
            a->no_bm25 = 1;
        } else if ((accept & ARG_ASK) && !strcmp(key, "no-dense")) {
            a->no_dense = 1;
        } else if ((accept & ARG_ASK) && !strcmp(key, "no-graph")) {
            a->no_graph = 1;
        } else if ((accept & ARG_ASK) && !strcmp(key, "no-update")) {
            a->no_update = 1;
        } else if (config_is_flag(key)) {
            NEED_VALUE();
            if ((rc = config_set(&a->cfg, key, val, e))) return rc;
        } else {
            return err_set(e, CR_EUSAGE, "unknown option '%s' (see `coderag --help`)", arg);
        }
#undef NEED_VALUE
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
    IdxConfig ic;
    IdxUpdateStats stats;
    int last = -1;
    config_idx(&a->cfg, &ic);
    CrErr rc = idx_open(&ic, 0, out, e);
    if (rc || !update) return rc;
    rc = idx_update(*out, verbose ? progress_line : NULL, &last, &stats, e);
    if (verbose && isatty(2) && last >= 0) fputc('\n', stderr);
    if (rc) {
        idx_close(*out);
        *out = NULL;
        return rc;
    }
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
    CrErr rc = parse_args(argc, argv, 0, &a, &e);
    if (!rc) rc = open_updated(&a, 1, 1, &st, &e);
    idx_close(st);
    config_release(&a.cfg);
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
    CrErr rc = parse_args(argc, argv, ARG_JSON | ARG_ASK | ARG_QUESTION, &a, &e);
    if (rc) goto out;
    if (!a.question) {
        rc = err_set(&e, CR_EUSAGE, "usage: coderag ask [--root DIR] [--json] [options] \"QUESTION\"");
        goto out;
    }
    rtv_request_init(&req);
    req.question = a.question;
    req.use_bm25 = !a.no_bm25;
    req.use_dense = !a.no_dense;
    req.use_graph = !a.no_graph;
    req.llm_url = a.cfg.llm_url;
    req.llm_model = a.cfg.llm_model;
    req.llm_api_key_env = a.cfg.llm_api_key_env;
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
    if ((rc = open_updated(&a, !a.no_update, 0, &st, &e))) goto out;
    double t0 = now_ms();
    if ((rc = idx_warm(st, &e))) goto out;
    log_msg(LOG_INFO, "search structures loaded in %.1f ms", now_ms() - t0);
    if ((rc = rtv_ask(st, &req, &ans, &e))) goto out;
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
    config_release(&a.cfg);
    return rc ? fail(rc, &e) : 0;
}

int cli_status(int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    IdxStore *st = NULL;
    IdxStatus s;
    IdxConfig ic;
    CrErr rc = parse_args(argc, argv, ARG_JSON | ARG_CHECK, &a, &e);
    if (rc) goto out;
    config_idx(&a.cfg, &ic);
    if ((rc = idx_open(&ic, IDX_OPEN_READONLY, &st, &e))) goto out;
    if (a.check && (rc = idx_verify(st, &e))) goto out;
    if ((rc = idx_status(st, &s, &e))) goto out;
    char when[64] = "never";
    if (s.last_update) {
        time_t t = (time_t)s.last_update;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    const char *llm = a.cfg.llm_url ? a.cfg.llm_url : "none";
    if (a.json) {
        json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:s, s:s}",
                              "root", idx_root(st), "files", (json_int_t)s.files, "chunks",
                              (json_int_t)s.chunks, "edges", (json_int_t)s.edges, "vectors",
                              (json_int_t)s.vectors, "symbols", (json_int_t)s.symbols, "skipped",
                              (json_int_t)s.skipped, "indexBytes", (json_int_t)s.db_bytes,
                              "lastUpdate", when, "lastUpdateUnix", (json_int_t)s.last_update,
                              "embedder", s.embedder, "llm", llm);
        json_t *langs = json_object();
        for (size_t i = 0; i < s.n_langs; i++)
            json_object_set_new(langs, s.langs[i].name, json_integer((json_int_t)s.langs[i].files));
        json_object_set_new(j, "languages", langs);
        print_json(j);
        json_decref(j);
    } else {
        printf("root:      %s\nfiles:     %lld (%lld skipped)\nchunks:    %lld\nsymbols:   %lld\n"
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
            for (size_t i = 0; i < n; i++) printf("  %s (%s)\n", sk[i].path, sk[i].reason);
            idx_skipped_free(sk, n);
        }
    }
out:
    idx_close(st);
    config_release(&a.cfg);
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
    CrErr rc = parse_args(n, args, 0, &a, &e);
    free(args);
    if (rc) {
        config_release(&a.cfg);
        return fail(rc, &e);
    }
    /* Nothing but protocol on stdout: the transport writes to a private
     * copy of it, and fd 1 becomes stderr so that no stray print can
     * corrupt the stream. A client that goes away makes writes fail with
     * EPIPE instead of killing us. */
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0) {
        config_release(&a.cfg);
        fprintf(stderr, "coderag: cannot set up stdout: %s\n", strerror(errno));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int code = lsp_server_run(&a.cfg, 0, out);
    close(out);
    config_release(&a.cfg);
    return code;
}
