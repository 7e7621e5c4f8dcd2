/* LLM answers: rtv_ask end to end (the prompt and the event-stream reader
 * are test_llm_parts.c's, what goes over the wire test_llm_request.c's)
 * against the loopback fake OpenAI server (tests/fake_openai.py) over a
 * small fixture workspace (tests/fixtures/answers) with a symlink to a
 * folder outside it made at run time. Every scripted answer's citations
 * and rejections are checked exactly, and the two figures that matter are
 * printed: fabricated citations accepted and valid citations rejected. */
#include "llm_util.h"

/* Over all scripted cases. */
static int n_valid, n_fabricated, valid_rejected, fabricated_accepted;

/* ---------------------------------------------------------------- end to end */

typedef struct Case {
    const char *name;
    const char
        *content; /* the answer; {root} and {outside} are filled in here, {ctxK...} by the fake */
    const char *extra;   /* more members of the one action, e.g. "\"stream\": false" */
    const char *actions; /* or the whole chat script */
    RtvMode mode;        /* 0: auto */
    const char *url;     /* NULL: the fake */
    long timeout_ms;     /* 0: 3000 */
    int retries;         /* as llm_max_retries */
    CrErr rc;
    int extractive;       /* no LLM configured: extractive without a fallback */
    const char *reason;   /* in fallback_reason (or in e->msg when rc fails); NULL: no fallback */
    const char *cites[6]; /* "path:a-b source"; "ALL auto": each packed item */
    const char *rejected[6]; /* "text => reason" */
    int requests;            /* chat requests the fake must see; 0: unchecked */
} Case;

/* Fills {root}, {outside} and (with a) {ctxK}, {ctxK.path}, {ctxK.start}, {ctxK.end}. */
static void expand(StrBuf *out, const char *t, const RtvAnswer *a)
{
    while (*t) {
        unsigned k = 0;
        int used = 0;
        char part[8] = "";
        if (!strncmp(t, "{root}", 6)) {
            sb_adds(out, idx_root(st));
            t += 6;
            continue;
        }
        if (!strncmp(t, "{outside}", 9)) {
            sb_adds(out, outside);
            t += 9;
            continue;
        }
        if (a && !strncmp(t, "{ctx", 4) &&
            ((sscanf(t, "{ctx%u}%n", &k, &used) == 1 && used > 0) ||
             (part[0] = '\0', sscanf(t, "{ctx%u.%7[a-z]}%n", &k, part, &used) == 2 && used > 0)) &&
            k < a->n_items) {
            const RtvItem *it = &a->items[k];
            if (!part[0])
                sb_addf(out, "%s:%u-%u", it->chunk.path, it->start_line, it->end_line);
            else if (!strcmp(part, "path"))
                sb_adds(out, it->chunk.path);
            else if (!strcmp(part, "start"))
                sb_addf(out, "%u", it->start_line);
            else
                sb_addf(out, "%u", it->end_line);
            t += used;
            continue;
        }
        sb_addc(out, *t++);
    }
}

static int in_list(const char *s, char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, v[i])) return 1;
    return 0;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
}

/* What one case wants and what the answer has, as "path:a-b source" and
 * "text => reason" lines. */
typedef struct Lists {
    char *want_c[16], *want_r[16], *got_c[64], *got_r[64];
    size_t n_wc, n_wr, n_gc, n_gr;
} Lists;

/* Scripts the fake with the case's answer (or its whole chat script). */
static void script_case(const Case *c)
{
    StrBuf sb, actions;
    sb_init(&sb);
    sb_init(&actions);
    if (c->content) {
        expand(&sb, c->content, NULL);
        json_t *s = json_stringn(sb.buf, sb.len);
        char *q = json_dumps(s, JSON_ENCODE_ANY);
        sb_addf(&actions, "[{\"content\": %s%s%s}]", q, c->extra ? ", " : "",
                c->extra ? c->extra : "");
        free(q);
        json_decref(s);
    } else {
        expand(&actions, c->actions ? c->actions : "[]", NULL);
    }
    fake_script_chat(&fake, actions.buf);
    sb_release(&sb);
    sb_release(&actions);
}

static void fill_lists(const Case *c, const RtvAnswer *a, Lists *l)
{
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < 6 && c->cites[i]; i++) {
        if (!strcmp(c->cites[i], "ALL auto")) {
            for (size_t k = 0; k < a->n_items && l->n_wc < 16; k++) {
                sb_reset(&sb);
                sb_addf(&sb, "%s:%u-%u auto", a->items[k].chunk.path, a->items[k].start_line,
                        a->items[k].end_line);
                l->want_c[l->n_wc++] = xstrdup(sb.buf);
            }
            continue;
        }
        sb_reset(&sb);
        expand(&sb, c->cites[i], a);
        l->want_c[l->n_wc++] = xstrdup(sb.buf);
    }
    for (size_t i = 0; i < 6 && c->rejected[i]; i++) {
        sb_reset(&sb);
        expand(&sb, c->rejected[i], a);
        l->want_r[l->n_wr++] = xstrdup(sb.buf);
    }
    for (size_t i = 0; i < a->n_citations && l->n_gc < 64; i++) {
        const VfyCitation *x = &a->citations[i];
        sb_reset(&sb);
        sb_addf(&sb, "%s:%u-%u %s", x->path, x->start_line, x->end_line, x->source);
        l->got_c[l->n_gc++] = xstrdup(sb.buf);
        CHECK_INT(x->verified, 1);
    }
    for (size_t i = 0; i < a->n_rejected && l->n_gr < 64; i++) {
        sb_reset(&sb);
        sb_addf(&sb, "%s => %s", a->rejected[i].text, a->rejected[i].reason);
        l->got_r[l->n_gr++] = xstrdup(sb.buf);
    }
    sb_release(&sb);
}

/* Every wanted line was got and nothing else; what says which list. */
static void check_same(char *const *want, size_t n_want, char *const *got, size_t n_got,
                       const char *what)
{
    CHECK_INT(n_got, n_want);
    for (size_t i = 0; i < n_want; i++)
        if (!in_list(want[i], got, n_got)) {
            CHECK(!"expected line missing");
            fprintf(stderr, "  missing %s %s\n", what, want[i]);
        }
    for (size_t i = 0; i < n_got; i++)
        if (!in_list(got[i], want, n_want)) {
            CHECK(!"unexpected line");
            fprintf(stderr, "  unexpected %s %s\n", what, got[i]);
        }
}

/* The figures: the expected model citations are the valid ones written,
 * the expected rejections the fabricated ones. */
static void count_figures(const Lists *l)
{
    for (size_t i = 0; i < l->n_wc; i++) {
        if (!strstr(l->want_c[i], " model")) continue;
        n_valid++;
        if (!in_list(l->want_c[i], l->got_c, l->n_gc)) valid_rejected++;
    }
    n_fabricated += (int)l->n_wr;
    for (size_t i = 0; i < l->n_gc; i++)
        if (strstr(l->got_c[i], " model") && !in_list(l->got_c[i], l->want_c, l->n_wc))
            fabricated_accepted++;
}

/* Rejected citations are gone from the text; kept ones are there, canonical. */
static void check_answer_text(const RtvAnswer *a)
{
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < a->n_rejected; i++)
        CHECK(strstr(a->answer, a->rejected[i].text) == NULL);
    for (size_t i = 0; i < a->n_citations; i++) {
        const VfyCitation *x = &a->citations[i];
        if (strcmp(x->source, "model")) continue;
        sb_reset(&sb);
        if (x->start_line == x->end_line)
            sb_addf(&sb, "%s:%u", x->path, x->start_line);
        else
            sb_addf(&sb, "%s:%u-%u", x->path, x->start_line, x->end_line);
        CHECK(strstr(a->answer, sb.buf) != NULL);
    }
    sb_release(&sb);
}

/* The mode and the fallback the case expects of a successful answer. */
static void check_mode(const Case *c, const RtvAnswer *a)
{
    CHECK(a->n_items >= 3);
    CHECK_INT(a->mode, c->reason || c->extractive ? RTV_MODE_EXTRACTIVE : RTV_MODE_LLM);
    if (c->reason) {
        CHECK(a->fallback_reason && strstr(a->fallback_reason, c->reason));
        CHECK(!strncmp(a->answer, "**No LLM answer:** ", 19));
        CHECK(strstr(a->answer, "This is the extractive answer instead.") != NULL);
    } else {
        CHECK(a->fallback_reason == NULL);
    }
    if (!c->url || c->url[0]) CHECK(a->timings.llm_ms > 0);
}

static void run_case(const Case *c)
{
    RtvRequest req;
    RtvAnswer a;
    ErrInfo e = {0};
    Lists l = {0};
    int before = test_state_.failed_checks;

    script_case(c);
    rtv_request_init(&req);
    req.question = QUESTION;
    req.mode = c->mode;
    req.llm_url = c->url ? c->url : fake.base;
    req.llm_model = "test-model";
    req.llm_timeout_ms = c->timeout_ms ? c->timeout_ms : 3000;
    req.llm_max_retries = c->retries;
    CrErr rc = rtv_ask(st, &req, &a, &e);
    CHECK_INT(rc, c->rc);
    if (rc != CR_OK) {
        CHECK(c->reason && strstr(e.msg, c->reason) != NULL);
        CHECK(a.answer == NULL && a.n_citations == 0);
    } else {
        check_mode(c, &a);
        /* exact citations and rejections, in any order */
        fill_lists(c, &a, &l);
        check_same(l.want_c, l.n_wc, l.got_c, l.n_gc, "citation");
        check_same(l.want_r, l.n_wr, l.got_r, l.n_gr, "rejection");
        count_figures(&l);
        check_answer_text(&a);
    }
    if (c->requests) CHECK_INT(chat_requests(NULL), c->requests);
    if (test_state_.failed_checks != before) {
        fprintf(stderr, "  in case '%s' (rc %d: %s)\n", c->name, (int)rc, e.msg);
        if (rc == CR_OK) fprintf(stderr, "  answer: %s\n", a.answer);
        for (size_t i = 0; i < l.n_gc; i++)
            fprintf(stderr, "  got citation %s\n", l.got_c[i]);
        for (size_t i = 0; i < l.n_gr; i++)
            fprintf(stderr, "  got rejection %s\n", l.got_r[i]);
    }
    free_list(l.want_c, l.n_wc);
    free_list(l.want_r, l.n_wr);
    free_list(l.got_c, l.n_gc);
    free_list(l.got_r, l.n_gr);
    rtv_answer_release(&a);
}

static const Case cases[] = {
    {.name = "correct citations",
     .content = "Withdrawing more than the balance raises InsufficientFunds [{ctx0}], which "
                "keeps both amounts [{ctx1}]. The check is one line [{ctx0.path}:{ctx0.start}]; "
                "the same spans written otherwise: [./{ctx0}], [{root}/{ctx1}].",
     .cites = {"{ctx0} model", "{ctx1} model", "{ctx0.path}:{ctx0.start}-{ctx0.start} model"}},
    {.name = "correct citations, the server ignores stream",
     .content = "Withdraw raises InsufficientFunds [{ctx0}; {ctx1}].",
     .extra = "\"stream\": false",
     .cites = {"{ctx0} model", "{ctx1} model"}},
    {.name = "correct citations, unusual event framing",
     .content = "Withdraw raises InsufficientFunds [{ctx0}], a BankError [{ctx2}].",
     .extra = "\"chunk\": 1, \"comments\": true, \"multiline\": true, \"crlf\": true, "
              "\"no_done\": true",
     .cites = {"{ctx0} model", "{ctx2} model"}},
    {.name = "correct citations in other notations",
     .content = "Withdraw refuses in `{ctx0}`, raising {ctx1.path}#L{ctx1.start}-L{ctx1.end}, "
                "a [bank error]({ctx2.path}#L{ctx2.start}-L{ctx2.end}); the comparison is in "
                "bank/accounts.py, lines 22-23.",
     .cites = {"{ctx0} model", "{ctx1} model", "{ctx2} model", "bank/accounts.py:22-23 model"}},
    {.name = "a fabricated file",
     .content = "Overdrafts are logged in the ledger [bank/ledger.py:1-10] and refused [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/ledger.py:1-10] => file-not-found"}},
    {.name = "lines past the end of a file",
     .content = "See [bank/accounts.py:900-910] and [{ctx0.path}:{ctx0.start}-99].",
     .cites = {"{ctx0} auto"},
     .rejected = {"[bank/accounts.py:900-910] => out-of-range",
                  "[{ctx0.path}:{ctx0.start}-99] => out-of-range"}},
    {.name = "real lines not in the context",
     .content = "Deposits are checked too [bank/accounts.py:13-18] and statements printed "
                "[bank/report.py:4-9]; withdraw refuses [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/accounts.py:13-18] => not-in-context",
                  "[bank/report.py:4-9] => not-in-context"}},
    {.name = "paths outside the workspace",
     .content = "It reads [../../etc/passwd:1-3], [/etc/passwd:1-3] and [{outside}/secret.py:1-2]; "
                "InsufficientFunds is raised [{ctx1}].",
     .cites = {"{ctx1} model"},
     .rejected = {"[../../etc/passwd:1-3] => outside-workspace",
                  "[/etc/passwd:1-3] => outside-workspace",
                  "[{outside}/secret.py:1-2] => outside-workspace"}},
    {.name = "a symlink inside the workspace pointing outside",
     .content = "The token is in [bank/secret.py:1-2] and [vendor/secret.py:1-2]; withdraw "
                "refuses [{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/secret.py:1-2] => outside-workspace",
                  "[vendor/secret.py:1-2] => outside-workspace"}},
    {.name = "malformed citations",
     .content = "Withdraw refuses [bank/accounts.py:21-x] and [bank/accounts.py:25-20]; see "
                "[{ctx0}].",
     .cites = {"{ctx0} model"},
     .rejected = {"[bank/accounts.py:21-x] => malformed", "[bank/accounts.py:25-20] => malformed"}},
    {.name = "no citations",
     .content = "Withdraw compares the amount with the balance and raises when it is larger.",
     .cites = {"{ctx0} auto"}},
    {.name = "HTTP 500, then success",
     .actions = "[{\"status\": 500}, {\"content\": \"Withdraw refuses overdrafts [{ctx0}].\"}]",
     .cites = {"{ctx0} model"},
     .requests = 2},
    {.name = "HTTP 503 on every attempt",
     .actions = "[{\"status\": 503, \"times\": 5}]",
     .reason = "HTTP 503",
     .cites = {"ALL auto"},
     .requests = 3},
    {.name = "a timeout",
     .actions = "[{\"delay_ms\": 60000, \"content\": \"late [{ctx0}]\"}]",
     .timeout_ms = 300,
     .reason = "timed out",
     .cites = {"ALL auto"},
     .requests = 1},
    {.name = "a timeout, mode llm",
     .actions = "[{\"delay_ms\": 60000, \"content\": \"late [{ctx0}]\"}]",
     .mode = RTV_MODE_LLM,
     .timeout_ms = 300,
     .rc = CR_ETIMEOUT,
     .reason = "timed out"},
    {.name = "invalid JSON",
     .actions = "[{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": \"}]",
     .reason = "invalid JSON",
     .cites = {"ALL auto"}},
    {.name = "invalid JSON, mode llm",
     .actions = "[{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": \"}]",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "invalid JSON"},
    {.name = "invalid JSON in an event",
     .actions = "[{\"raw\": \"data: {\\\"choices\\\": oops}\\n\\n\"}]",
     .reason = "invalid JSON",
     .cites = {"ALL auto"}},
    {.name = "neither events nor JSON",
     .actions = "[{\"raw\": \"<html>502 Bad Gateway</html>\"}]",
     .reason = "neither",
     .cites = {"ALL auto"}},
    {.name = "a truncated stream",
     .content = "Withdraw refuses an overdraft by raising InsufficientFunds [{ctx0}].",
     .extra = "\"truncate\": true",
     .reason = "cut short",
     .cites = {"ALL auto"}},
    {.name = "a truncated stream, mode llm",
     .content = "Withdraw refuses an overdraft by raising InsufficientFunds [{ctx0}].",
     .extra = "\"truncate\": true",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "cut short"},
    {.name = "a 10 MB body",
     .actions = "[{\"big\": 10485760}]",
     .reason = "over the size cap",
     .cites = {"ALL auto"}},
    {.name = "a 10 MB body, chunked",
     .actions = "[{\"big\": 10485760, \"chunked\": true}]",
     .reason = "over the size cap",
     .cites = {"ALL auto"}},
    {.name = "a 10 MB body, mode llm",
     .actions = "[{\"big\": 10485760}]",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "over the size cap"},
    {.name = "a refusal",
     .content = "",
     .extra = "\"refusal\": \"I cannot help with that.\"",
     .reason = "refused",
     .cites = {"ALL auto"}},
    {.name = "a refusal, not streamed",
     .content = "",
     .extra = "\"refusal\": \"I cannot help with that.\", \"stream\": false",
     .reason = "refused",
     .cites = {"ALL auto"}},
    {.name = "an empty answer", .content = "", .reason = "empty answer", .cites = {"ALL auto"}},
    {.name = "a content filter",
     .content = "Withdraw [{ctx0}]",
     .extra = "\"finish_reason\": \"content_filter\"",
     .reason = "content filter",
     .cites = {"ALL auto"}},
    {.name = "an error event in the stream",
     .content = "Withdraw refuses [{ctx0}] because",
     .extra = "\"error_event\": \"model overloaded\"",
     .reason = "model overloaded",
     .cites = {"ALL auto"}},
    {.name = "the endpoint is down",
     .url = "http://127.0.0.1:1",
     .retries = -1,
     .reason = "unreachable",
     .cites = {"ALL auto"}},
    {.name = "the endpoint is down, mode llm",
     .url = "http://127.0.0.1:1",
     .retries = -1,
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "unreachable"},
    {.name = "no endpoint, mode llm",
     .url = "",
     .mode = RTV_MODE_LLM,
     .rc = CR_EHTTP,
     .reason = "no LLM endpoint configured (llm.url)"},
    {.name = "no endpoint, mode auto: extractive, no fallback",
     .url = "",
     .extractive = 1,
     .cites = {"ALL auto"}},
};

static void test_context_is_pinned(void)
{
    /* the cases' literal line numbers rely on this context */
    static const char *const want[] = {"bank/accounts.py:20-25 Account.withdraw",
                                       "bank/errors.py:8-9 InsufficientFunds",
                                       "bank/errors.py:4-5 BankError"};
    RtvRequest req;
    RtvAnswer a;
    rtv_request_init(&req);
    req.question = QUESTION;
    req.mode = RTV_MODE_EXTRACTIVE;
    CHECK_INT(rtv_ask(st, &req, &a, NULL), CR_OK);
    CHECK_INT(a.n_items, 3);
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < a.n_items && i < 3; i++) {
        sb_reset(&sb);
        sb_addf(&sb, "%s:%u-%u %s", a.items[i].chunk.path, a.items[i].start_line,
                a.items[i].end_line, rtv_item_symbol(&a.items[i]));
        CHECK_STR(sb.buf, want[i]);
    }
    CHECK(a.fallback_reason == NULL);
    CHECK_INT(a.mode, RTV_MODE_EXTRACTIVE);
    sb_release(&sb);
    rtv_answer_release(&a);
}

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    printf("LLM citation cases: %zu; valid citations written %d, fabricated %d\n",
           sizeof cases / sizeof cases[0], n_valid, n_fabricated);
    printf("fabricated citations accepted: %d\n", fabricated_accepted);
    printf("valid citations rejected: %d\n", valid_rejected);
    CHECK_INT(fabricated_accepted, 0);
    CHECK_INT(valid_rejected, 0);
}

static void run_tests(void)
{
    RUN(test_context_is_pinned);
    RUN(test_cases);
}

int main(void)
{
    return llm_main(run_tests);
}
