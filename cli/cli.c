#include "cli.h"
#include "lsp.h"
#include "cli_int.h"
#include "mcp.h"
#include "rtv.h"
#include "ws.h"

#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The index pass's line on a terminal, at the pace of every door. */
typedef struct ProgressLine {
    WsPace pace;
    int tty; /* stderr is a terminal: else no line at all */
    _Atomic int shown;
    /* where the pass stands, for the interrupt's message (another thread) */
    _Atomic size_t done, total;
} ProgressLine;

static int progress_line(void *ud, size_t done, size_t total)
{
    ProgressLine *p = ud;
    p->done = done;
    p->total = total;
    if (!p->tty || !ws_pace_due(&p->pace, done, total)) return 0;
    char files[64];
    ws_progress_files(files, sizeof files, done, total);
    fprintf(stderr, "\rindexing: %s (%d%%)", files, total ? (int)(done * 100 / total) : 100);
    p->shown = 1;
    return 0;
}

/* The root the command works on (the root rule from the current folder
 * unless a root was set), and why, on stderr, when it is not the rule's
 * plain answer (an index above a folder with no marker). */
static void resolve_root(CliArgs *a)
{
    StrBuf note;
    sb_init(&note);
    ws_config_resolve_root_note(&a->cfg, &note);
    if (note.len) fprintf(stderr, "coderag: %s\n", note.buf);
    sb_release(&note);
}

/* Another process indexes the root: said on stderr before the wait. */
static void say_waiting(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "coderag: %s\n", msg);
}

/* Ctrl-C (or SIGTERM) during `coderag index`: blocked in every thread, and
 * taken here, which says how far the pass got and that a rerun resumes
 * (the files written so far are committed in batches and kept), then ends
 * the process as the signal would have. */
typedef struct Interrupt {
    sigset_t set;
    ProgressLine *line;
} Interrupt;

static void *interrupt_wait(void *arg)
{
    Interrupt *in = arg;
    int sig = 0;
    if (sigwait(&in->set, &sig) != 0) return NULL;
    char msg[256];
    size_t done = in->line->done, total = in->line->total;
    int n;
    if (!total)
        n = snprintf(msg, sizeof msg,
                     "%scoderag: interrupted while looking for files: nothing indexed yet\n",
                     in->line->shown ? "\n" : "");
    else if (done < total)
        n = snprintf(msg, sizeof msg,
                     "%scoderag: interrupted at %zu/%zu files: the files indexed so far are kept; "
                     "run `coderag index` again to resume from there\n",
                     in->line->shown ? "\n" : "", done, total);
    else
        n = snprintf(msg, sizeof msg,
                     "%scoderag: interrupted after reading all %zu files, while linking them: "
                     "they are kept; run `coderag index` again to finish\n",
                     in->line->shown ? "\n" : "", total);
    ssize_t w = write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0);
    (void)w;
    _exit(128 + sig);
}

WsRoot *cli_root_new(const WsConfig *cfg)
{
    static const WsHostDoor none = {0};
    return ws_host_add_root(ws_host_new(&none), cfg->root ? cfg->root : ".", cfg);
}

void cli_root_free(WsRoot *r)
{
    if (r) ws_host_free(r->host);
}

/* Opens r's query store and brings it up to date (unless !update); with
 * verbose, Ctrl-C says how far it got (Interrupt) and a line sums the
 * pass up. */
static CrErr open_fresh(WsRoot *r, int update, int verbose, ErrInfo *e)
{
    IdxUpdateStats stats;
    ProgressLine line = {.tty = verbose && isatty(2)};
    Interrupt in = {.line = &line};
    pthread_t waiter;
    sigemptyset(&in.set);
    sigaddset(&in.set, SIGINT);
    sigaddset(&in.set, SIGTERM);
    int waiting = update && verbose && pthread_sigmask(SIG_BLOCK, &in.set, NULL) == 0 &&
                  pthread_create(&waiter, NULL, interrupt_wait, &in) == 0;
    if (waiting) pthread_detach(waiter);
    ws_pace_init(&line.pace, WS_PACE_MIN_MS);
    if (!update) return ws_root_open_fresh(r, &(WsFresh){.how = WS_OPEN_EXISTING}, e);
    WsFresh f = {.how = WS_OPEN_CREATE,
                 .fn = progress_line,
                 .ud = &line,
                 .waiting = say_waiting,
                 .stats = &stats};
    CrErr rc = ws_root_open_fresh(r, &f, e);
    if (line.shown) fputc('\n', stderr);
    if (rc || !verbose) return rc;
    int64_t chunks, edges;
    if ((rc = ws_status_sizes(r->q, &chunks, &edges, e))) return rc;
    fprintf(stderr,
            "indexed %s: %zu files (%zu changed, %zu unchanged, %zu removed, %zu skipped), "
            "%lld chunks, %lld edges in %.0f ms\n",
            ws_store_root(r->q), stats.files_seen, stats.files_changed, stats.files_unchanged,
            stats.files_removed, stats.files_skipped, (long long)chunks, (long long)edges,
            stats.ms);
    cli_say_if_empty(r->q);
    return CR_OK;
}

/* Subcommands; argv[0] is the subcommand name. */
int cli_index(const CliCommand *cmd, int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    WsRoot *r = NULL;
    CrErr rc = cli_parse_args(cmd, argc, argv, &a, &e);
    if (!rc && !a.help) {
        resolve_root(&a);
        r = cli_root_new(&a.cfg);
        rc = open_fresh(r, 1, 1, &e);
    }
    cli_root_free(r);
    ws_config_release(&a.cfg);
    return rc ? cli_fail(rc, &e) : 0;
}

/* A question as a job on the command's host (ws_host_run): one worker
 * stage that asks the LLM too, as the MCP server does (one question per
 * process: no endpoint state to keep between asks). */
typedef struct AskJob {
    WsJob hj;
    WsRoot *r;
    const RtvRequest *req;
    RtvAnswer *ans;
    ErrInfo *e;
    CrErr rc;
} AskJob;

static WsJobNext ask_stage(void *ctx, WsJob *hj)
{
    AskJob *j = (AskJob *)hj;
    (void)ctx;
    double t0 = now_ms();
    if ((j->rc = ws_root_warm(j->r, j->e))) return WS_JOB_KEPT;
    log_msg(LOG_INFO, "search structures loaded in %.1f ms", now_ms() - t0);
    j->rc = ws_ask(NULL, j->r->q, j->req, j->ans, j->e);
    return WS_JOB_KEPT; /* the job is the caller's */
}

int cli_ask(const CliCommand *cmd, int argc, char **argv)
{
    CliArgs a;
    ErrInfo e = {0};
    WsRoot *r = NULL;
    RtvRequest req;
    RtvAnswer ans = {0};
    CrErr rc = cli_parse_args(cmd, argc, argv, &a, &e);
    if (rc || a.help) goto out;
    if (!a.question) {
        rc = err_set(&e, CR_EUSAGE, "usage: %s (see `coderag ask --help`)", cmd->usage);
        goto out;
    }
    rtv_request_init(&req);
    req.question = a.question;
    req.use_bm25 = !a.no_bm25;
    req.use_dense = !a.no_dense;
    req.use_graph = !a.no_graph;
    req.answer_all = a.all;
    ws_config_llm(&a.cfg, &req);
    if (a.mode && !rtv_mode_parse(a.mode, &req.mode)) {
        rc = err_set(&e, CR_EUSAGE, "--mode must be extractive, llm or auto, not '%s'", a.mode);
        goto out;
    }
    if (req.mode == RTV_MODE_LLM && !(req.llm_url && req.llm_url[0])) {
        rc = err_set(&e, CR_EHTTP,
                     "--mode llm needs an LLM endpoint: pass --llm-url URL or set "
                     "CODERAG_LLM_URL (an OpenAI-compatible server: llama.cpp, Ollama, vLLM, "
                     "OpenAI); without one, --mode extractive answers from the code alone");
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
    resolve_root(&a);
    r = cli_root_new(&a.cfg);
    if (!a.json && isatty(1)) { /* for a person: progress, the text as it comes, citations */
        rc = cli_ask_terminal(r, a.no_update, &req, &ans, &e);
        goto out;
    }
    if ((rc = open_fresh(r, !a.no_update, 0, &e))) goto out;
    AskJob job = {.r = r, .req = &req, .ans = &ans, .e = &e};
    ws_job_init(&job.hj, ask_stage, NULL);
    ws_host_run(r->host, &job.hj);
    if ((rc = job.rc)) goto out;
    if (a.json) {
        json_t *j = ws_answer_json(&ans, ws_store_root(r->q));
        ws_answer_mark_partial(j, r->q, NULL);
        cli_say_index_state(r->q);
        rc = cli_print_json(j, &e);
        json_decref(j);
    } else {
        cli_say_index_state(r->q);
        fputs(ans.answer, stdout);
        if (ans.answer[0] && ans.answer[strlen(ans.answer) - 1] != '\n') fputc('\n', stdout);
        /* what verification removed from the text, said beside it */
        for (size_t i = 0; i < ans.n_rejected; i++)
            fprintf(stderr, "coderag: citation removed: %s (%s)\n", ans.rejected[i].text,
                    ans.rejected[i].reason);
    }
out:
    rtv_answer_release(&ans);
    cli_root_free(r);
    ws_config_release(&a.cfg);
    return rc ? cli_fail(rc, &e) : 0;
}

/* For a protocol server: nothing but protocol on stdout. Returns a private
 * copy of stdout for the transport (caller closes) and makes fd 1 stderr,
 * so that no stray print can corrupt the stream; a client that goes away
 * makes writes fail with EPIPE instead of killing us. -1 (said on stderr)
 * when that cannot be set up. */
static int protocol_stdout(void)
{
    int out = dup(1);
    if (out < 0 || dup2(2, 1) < 0) {
        fprintf(stderr, "coderag: cannot set up stdout: %s\n", strerror(errno));
        if (out >= 0) close(out);
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    return out;
}

/* A server lives for days holding the API keys it read (llm.apiKeyEnv,
 * embed.apiKeyEnv) in memory: no core dump of it, no ptrace by the same
 * user, no /proc/PID/mem to read (PR_SET_DUMPABLE 0; docs/hardening.md,
 * secrets). */
static void server_undumpable(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        log_msg(LOG_WARN, "cannot make the server undumpable: %s", strerror(errno));
}

int cli_lsp(const CliCommand *cmd, int argc, char **argv)
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
    CrErr rc = cli_parse_args(cmd, n, args, &a, &e);
    free(args);
    if (rc || a.help) {
        ws_config_release(&a.cfg);
        return rc ? cli_fail(rc, &e) : 0;
    }
    int out = protocol_stdout();
    if (out < 0) {
        ws_config_release(&a.cfg);
        return 2;
    }
    server_undumpable();
    int code = lsp_server_run(&a.cfg, 0, out);
    close(out);
    ws_config_release(&a.cfg);
    return code;
}

int cli_mcp(const CliCommand *cmd, int argc, char **argv)
{
    int agents = cli_mcp_agents(argc, argv);
    if (agents >= 0) return agents;
    CliArgs a;
    ErrInfo e = {0};
    CrErr rc = cli_parse_args(cmd, argc, argv, &a, &e);
    if (rc || a.help) {
        ws_config_release(&a.cfg);
        return rc ? cli_fail(rc, &e) : 0;
    }
    ws_config_resolve_root(&a.cfg);
    McpOptions o = {.cfg = &a.cfg};
    int out = protocol_stdout();
    if (out < 0) {
        ws_config_release(&a.cfg);
        return 2;
    }
    server_undumpable();
    int code = mcp_server_run(&o, 0, out);
    close(out);
    ws_config_release(&a.cfg);
    return code;
}
