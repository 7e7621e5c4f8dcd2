#include "cli_int.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void cli_ask_view_progress(CliAskView *v, const char *line);

/* `coderag ask` on a terminal: a progress line on stderr while the index
 * is updated, the context retrieved and the LLM asked; the answer streamed
 * as it arrives, rendered (term.c); then the verified citations as
 * path:line from the current folder, and the rejected ones. */

struct CliAskView {
    CliTerm *t;
    FILE *out;
    FILE *err;       /* the progress line's terminal, or NULL */
    size_t err_len;  /* the progress line's width on screen */
    char *root;      /* the index's root, absolute */
    char *cwd;       /* the current folder, absolute; or NULL */
    size_t streamed; /* bytes of the LLM's text rendered */
    WsPace pace;     /* of the current progress (the update's, the LLM's) */
};

static CliAskView *cli_ask_view_new(FILE *out, int styles, FILE *progress, const char *root)
{
    CliAskView *v = xcalloc(1, sizeof *v);
    char buf[PATH_MAX];
    v->root = xstrdup(realpath(root, buf) ? buf : root);
    v->cwd = realpath(".", buf) ? xstrdup(buf) : NULL;
    v->t = cli_term_new(out, styles, v->root);
    /* the terminal's own width: it would break a word at its edge */
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) cli_term_wrap(v->t, ws.ws_col);
    v->out = out;
    v->err = progress;
    ws_pace_init(&v->pace, WS_PACE_MIN_MS);
    return v;
}

/* Clears the progress line. */
static void cli_ask_view_free(CliAskView *v)
{
    if (!v) return;
    cli_ask_view_progress(v, NULL);
    cli_term_end(v->t); /* a text cut by an error ends its line, styles reset */
    cli_term_free(v->t);
    free(v->root);
    free(v->cwd);
    free(v);
}

/* Replaces the progress line (NULL: clears it). */
static void cli_ask_view_progress(CliAskView *v, const char *line)
{
    if (!v->err) return;
    /* blanks over the old line: no escape, so TERM=dumb clears it too */
    if (v->err_len) fprintf(v->err, "\r%*s\r", (int)v->err_len, "");
    v->err_len = 0;
    if (line && line[0]) {
        fputs(line, v->err);
        v->err_len = strlen(line);
    }
    fflush(v->err);
}

/* An IdxProgressFn for the index's update (ud: the view). */
static int cli_ask_view_update_fn(void *ud, size_t done, size_t total)
{
    CliAskView *v = ud;
    if (!ws_pace_due(&v->pace, done, total)) return 0;
    char files[64], line[96];
    ws_progress_files(files, sizeof files, done, total);
    snprintf(line, sizeof line, "updating the index: %s", files);
    cli_ask_view_progress(v, line);
    return 0;
}

static void on_tokens(void *ud, size_t tokens, size_t chars)
{
    CliAskView *v = ud;
    (void)chars;
    if (v->streamed) return; /* the text itself is on screen */
    if (!ws_pace_due(&v->pace, tokens, 0)) return;
    char line[64];
    snprintf(line, sizeof line, "asking the LLM: %zu token%s", tokens, tokens == 1 ? "" : "s");
    cli_ask_view_progress(v, line);
}

static void on_text(void *ud, const char *text, size_t len)
{
    CliAskView *v = ud;
    if (len <= v->streamed) return;
    if (!v->streamed) cli_ask_view_progress(v, NULL); /* the answer takes the screen */
    cli_term_md(v->t, text + v->streamed, len - v->streamed);
    v->streamed = len;
}

/* Sets req's progress and text hooks to the view (which must outlive the
 * request). */
static void cli_ask_view_hook(CliAskView *v, RtvRequest *req)
{
    req->progress = on_tokens;
    req->progress_ud = v;
    req->on_text = on_text;
    req->text_ud = v;
}

/* to, as seen from the folder from (both absolute and normalised):
 * "../pkg/a.py". Caller frees. */
static char *relative_to(const char *from, const char *to)
{
    size_t common = 0, i = 0;
    /* the longest common prefix ending at a component boundary */
    for (;; i++) {
        int fe = from[i] == '\0' || from[i] == '/', te = to[i] == '\0' || to[i] == '/';
        if (fe && te) common = i;
        if (!from[i] || !to[i] || from[i] != to[i]) break;
    }
    StrBuf sb;
    sb_init(&sb);
    for (const char *p = from + common; *p; p++)
        if (*p == '/' && p[1]) sb_adds(&sb, "../");
    const char *rest = to + common;
    while (*rest == '/')
        rest++;
    sb_adds(&sb, rest);
    if (!sb.len) sb_adds(&sb, ".");
    return sb_detach(&sb, NULL);
}

/* The answer (what was not streamed of it) and its citations. */
static void cli_ask_view_answer(CliAskView *v, const RtvAnswer *ans, int all)
{
    cli_ask_view_progress(v, NULL);
    if (v->streamed && ans->mode == RTV_MODE_LLM) {
        cli_term_end(v->t); /* the text is on screen as the LLM wrote it */
    } else {
        if (v->streamed) cli_term_end(v->t); /* cut short: the answer follows */
        cli_term_md(v->t, ans->answer, strlen(ans->answer));
        cli_term_end(v->t);
    }
    /* An extractive answer cites each location once in its text: listing
     * them again is for --all. */
    size_t n_cites = ans->mode == RTV_MODE_LLM || all ? ans->n_citations : 0;
    if (n_cites) {
        fputc('\n', v->out);
        cli_term_heading(v->t, "Citations");
    }
    /* each location once, as seen from here; labels in a column */
    char **shown = xcalloc(ans->n_citations + 1, sizeof *shown);
    size_t width = 0;
    for (size_t i = 0; i < n_cites; i++) {
        const VfyCitation *c = &ans->citations[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = ans->citations[j].start_line == c->start_line &&
                   !strcmp(ans->citations[j].path, c->path);
        if (seen) continue;
        StrBuf abs;
        sb_init(&abs);
        sb_addf(&abs, "%s/%s", v->root, c->path);
        shown[i] = v->cwd ? relative_to(v->cwd, abs.buf) : xstrdup(abs.buf);
        sb_release(&abs);
        char num[16];
        size_t len = strlen(shown[i]) + (size_t)snprintf(num, sizeof num, ":%u", c->start_line);
        if (len > width) width = len;
    }
    for (size_t i = 0; i < n_cites; i++) {
        const VfyCitation *c = &ans->citations[i];
        if (shown[i]) cli_term_location(v->t, c->path, shown[i], c->start_line, c->symbol, width);
        free(shown[i]);
    }
    free(shown);
    if (ans->n_rejected) cli_term_heading(v->t, "Rejected citations");
    for (size_t i = 0; i < ans->n_rejected; i++)
        cli_term_item(v->t, ans->rejected[i].text, ans->rejected[i].reason);
    fflush(v->out);
}

/* Interrupted while styles are on: the terminal back to plain (no style,
 * no open link) before the signal does what it does. Installed only when
 * styles are on, so it needs no state. */
static void reset_styles_and_raise(int sig)
{
    static const char reset[] = "\x1b[0m\x1b]8;;\x1b\\\n";
    ssize_t w = write(1, reset, sizeof reset - 1);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* An index that holds no file: says so on stderr, and why. */
void cli_say_if_empty(IdxStore *st)
{
    StrBuf why;
    sb_init(&why);
    if (ws_empty_index_note(st, &why)) fprintf(stderr, "coderag: %s\n", why.buf);
    sb_release(&why);
}

void cli_say_index_state(IdxStore *st)
{
    StrBuf note;
    sb_init(&note);
    if (ws_answer_mark_partial(NULL, st, &note))
        fprintf(stderr, "coderag: the index is not whole, so this answer may miss code: %s\n",
                note.buf);
    else
        cli_say_if_empty(st);
    sb_release(&note);
}

/* Another process indexes the root: said on the progress line (the wait
 * that follows is that process's). */
static void say_waiting(void *ud, const char *msg)
{
    cli_ask_view_progress(ud, msg);
}

/* The question's steps as a job on the command's host (ws_host_run): one
 * worker stage that asks the LLM too (the citations of its text checked
 * against the store as they stream), as the MCP server does. */
typedef struct AskJob {
    WsJob hj;
    WsRoot *r;
    CliAskView *v;
    RtvRequest *req;
    RtvAnswer *ans;
    ErrInfo *e;
    CrErr rc;
} AskJob;

static WsJobNext ask_stage(void *ctx, WsJob *hj)
{
    AskJob *j = (AskJob *)hj;
    CliAskView *v = j->v;
    IdxStore *st = j->r->q;
    (void)ctx;
    cli_ask_view_progress(v, "retrieving");
    CrErr rc = ws_root_warm(j->r, j->e);
    WsAsk *w = ws_ask_new(NULL);
    cli_ask_view_hook(v, j->req);
    if (!rc) rc = ws_ask_prepare(w, st, j->req, j->ans, j->e);
    if (!rc && ws_ask_wants_llm(w)) {
        cli_ask_view_progress(v, "asking the LLM");
        ws_pace_init(&v->pace, WS_PACE_MIN_MS);
        cli_term_set_check(v->t, st, j->req, j->ans);
        ws_ask_llm(w, j->req, j->ans); /* its failure is the answer's fallback_reason */
        /* the LLM is done: what verification logs (a fallback's warning)
         * starts a line of its own */
        cli_ask_view_progress(v, NULL);
        if (v->streamed) cli_term_end(v->t);
        cli_term_set_check(v->t, NULL, NULL, NULL); /* the verified answer needs none */
    }
    if (!rc) rc = ws_ask_finish(w, st, j->req, j->ans, j->e);
    ws_ask_free(w);
    j->rc = rc;
    return WS_JOB_KEPT; /* the job is the caller's */
}

CrErr cli_ask_terminal(WsRoot *r, int no_update, RtvRequest *req, RtvAnswer *ans, ErrInfo *e)
{
    IdxUpdateStats stats;
    const char *term = getenv("TERM");
    int styles = cli_term_styles_wanted(1, getenv("NO_COLOR"), term);
    CliAskView *v = cli_ask_view_new(stdout, styles, isatty(2) ? stderr : NULL, r->cfg.root);
    if (styles) {
        signal(SIGINT, reset_styles_and_raise);
        signal(SIGTERM, reset_styles_and_raise);
    }
    WsFresh f = {.how = WS_OPEN_EXISTING};
    if (!no_update) {
        cli_ask_view_progress(v, "updating the index");
        f = (WsFresh){.how = WS_OPEN_CREATE,
                      .fn = cli_ask_view_update_fn,
                      .ud = v,
                      .waiting = say_waiting,
                      .wait_ud = v,
                      .stats = &stats};
    }
    CrErr rc = ws_root_open_fresh(r, &f, e);
    if (!rc) {
        AskJob job = {.r = r, .v = v, .req = req, .ans = ans, .e = e};
        ws_job_init(&job.hj, ask_stage, NULL);
        ws_host_run(r->host, &job.hj);
        rc = job.rc;
    }
    if (!rc) cli_ask_view_answer(v, ans, req->answer_all);
    if (!rc) cli_say_index_state(r->q);
    cli_ask_view_free(v);
    return rc;
}
