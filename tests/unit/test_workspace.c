/*
 * test_workspace.c - the workspace layer (ws.h): what a file change calls
 * for, the root rule from the current folder, the LLM endpoint's back-off,
 * the pace of progress reports, and the one orchestration of a question
 * (steps and one call) against the fake OpenAI server.
 */
#include "index/store/store_int.h"
#include "llm_util.h"
#include "ws.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

static void test_change_kind(void)
{
    static const struct {
        const char *rel;
        int deleted;
        WsChange want;
    } cases[] = {
        {"pkg/mod.py", 0, WS_CHANGE_FILE},
        {"pkg/mod.py", 1, WS_CHANGE_FILE},
        {"bin/tool", 0, WS_CHANGE_FILE},   /* a script, perhaps: the update reads its shebang */
        {"pkg/gone", 1, WS_CHANGE_RESCAN}, /* perhaps a folder */
        {".gitignore", 0, WS_CHANGE_RESCAN},
        {"sub/.gitignore", 0, WS_CHANGE_RESCAN},
        {"notes.bin", 0, WS_CHANGE_NONE},
        {".git/HEAD", 0, WS_CHANGE_NONE},
        {".git/refs/heads/main", 1, WS_CHANGE_NONE},
        {"sub/.hg/store", 1, WS_CHANGE_NONE},
        {".coderag/index.db", 0, WS_CHANGE_NONE},
        {"a/.coderag/x.py", 0, WS_CHANGE_NONE},
        {".github/ci.py", 0, WS_CHANGE_FILE}, /* only the exact names are skipped */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        WsChange got = ws_change_kind(cases[i].rel, cases[i].deleted);
        if (got != cases[i].want) fprintf(stderr, "  case %s\n", cases[i].rel);
        CHECK_INT(got, cases[i].want);
    }
}

static void test_root_from_current_folder(void)
{
    char base[64] = "/tmp/coderag-test-ws-XXXXXX", real[PATH_MAX], path[PATH_MAX];
    char *cwd = getcwd(NULL, 0);
    CHECK(mkdtemp(base) != NULL);
    CHECK(realpath(base, real) != NULL);
    test_sh("mkdir -p '%s/repo/.git' '%s/repo/pkg/deep'", base, base);
    test_sh("mkdir -p '%s/plain/sub' '%s/plain'", base, base);

    /* from a subfolder of a repository: the repository */
    snprintf(path, sizeof path, "%s/repo/pkg/deep", base);
    CHECK(chdir(path) == 0);
    WsConfig c;
    ws_config_init(&c);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/repo", real);
    CHECK_STR(ws_config_resolve_root(&c), want);
    ws_config_release(&c);

    /* an explicit root is kept as given */
    ws_config_init(&c);
    ErrInfo e = {0};
    CHECK_INT(ws_config_set(&c, "root", ".", &e), CR_OK);
    CHECK_STR(ws_config_resolve_root(&c), ".");
    ws_config_release(&c);

    /* a plain folder (no marker up to /tmp): itself */
    snprintf(path, sizeof path, "%s/plain/sub", base);
    CHECK(chdir(path) == 0);
    ws_config_init(&c);
    snprintf(want, sizeof want, "%s/plain/sub", real);
    char *found = ws_find_root(path, NULL);
    if (found) { /* a marker above /tmp on this machine: the rule still applies */
        CHECK_STR(ws_config_resolve_root(&c), found);
    } else {
        CHECK_STR(ws_config_resolve_root(&c), want);
    }
    free(found);
    ws_config_release(&c);

    CHECK(ws_skip_dir_name(".git") && ws_skip_dir_name(".coderag") && !ws_skip_dir_name("src"));
    CHECK(ws_skip_dir_name(".hg") && ws_skip_dir_name(".jj") && !ws_skip_dir_name(".gitignore"));
    CHECK(!ws_skip_dir_name(".g") && !ws_skip_dir_name(".coderag-index"));
    CHECK(chdir(cwd) == 0);
    free(cwd);
    test_sh("rm -rf '%s' '%s'", base, "/nonexistent");
}

typedef struct Notices {
    int n, last_type;
    char last[600];
} Notices;

static void on_notice(void *ud, int type, const char *msg)
{
    Notices *n = ud;
    n->n++;
    n->last_type = type;
    snprintf(n->last, sizeof n->last, "%s", msg);
}

static void test_endpoint_backoff(void)
{
    Notices n = {0};
    char why[600] = "";
    WsEndpoint *ep = ws_endpoint_new("LLM", on_notice, &n);
    CHECK(!ws_endpoint_skip(ep, why, sizeof why));
    ws_endpoint_report(ep, CR_EHTTP, "connection refused");
    CHECK_INT(n.n, 1);
    CHECK_INT(n.last_type, 2);
    CHECK(strstr(n.last, "connection refused") != NULL);
    CHECK(ws_endpoint_skip(ep, why, sizeof why));
    CHECK(strstr(why, "down") != NULL);
    ws_endpoint_report(ep, CR_EHTTP, "connection refused"); /* the same: not told again */
    CHECK_INT(n.n, 1);
    ws_endpoint_report(ep, CR_ECANCELED, "cancelled"); /* no outcome */
    CHECK_INT(n.n, 1);
    ws_endpoint_report(ep, CR_OK, NULL);
    CHECK_INT(n.n, 2);
    CHECK_INT(n.last_type, 3);
    CHECK(!ws_endpoint_skip(ep, why, sizeof why));
    json_t *j = ws_endpoint_status_json(ep, 1);
    CHECK_STR(json_string_value(json_object_get(j, "state")), "ok");
    json_decref(j);
    ws_endpoint_free(ep);
    ws_endpoint_free(NULL);
}

/* Reports over a known total: the first, one per step, the last; never
 * more than WS_PACE_STEPS + 1 however many files (issue 24: 860 for 860). */
static void test_pace_steps(void)
{
    size_t totals[] = {1, 7, 50, 860, 100000};
    for (size_t k = 0; k < sizeof totals / sizeof totals[0]; k++) {
        size_t total = totals[k], n = 0, last = 0;
        WsPace p;
        ws_pace_init(&p, 0);
        for (size_t done = 1; done <= total; done++)
            if (ws_pace_due(&p, done, total)) {
                n++;
                last = done;
            }
        /* a first report before the first step, then one per step */
        size_t want = total <= WS_PACE_STEPS ? total : WS_PACE_STEPS + 1;
        CHECK_INT(n, want);
        CHECK_INT(last, total); /* the end is always told */
        CHECK(!ws_pace_due(&p, total, total));
    }
}

/* Open-ended work (an LLM's tokens): the first report, then one per
 * WS_PACE_UNITS units. */
static void test_pace_open_ended(void)
{
    WsPace p;
    size_t n = 0;
    ws_pace_init(&p, 0);
    for (size_t tokens = 1; tokens <= 10 * WS_PACE_UNITS; tokens++)
        n += (size_t)ws_pace_due(&p, tokens, 0);
    CHECK_INT(n, 11);
}

/* The time floor only drops reports: with one that never passes, the
 * first and the last of a known total are all that is told. */
static void test_pace_time_floor(void)
{
    WsPace p;
    size_t n = 0;
    ws_pace_init(&p, 1e12);
    for (size_t done = 1; done <= 860; done++)
        n += (size_t)ws_pace_due(&p, done, 860);
    CHECK_INT(n, 2);
    ws_pace_init(&p, 1e12);
    n = 0;
    for (size_t tokens = 1; tokens <= 1000; tokens++)
        n += (size_t)ws_pace_due(&p, tokens, 0);
    CHECK_INT(n, 1);
    char msg[64];
    ws_progress_files(msg, sizeof msg, 12, 860);
    CHECK_STR(msg, "12/860 files");
    ws_progress_files(msg, sizeof msg, 0, 0);
    CHECK_STR(msg, "scanning");
    ws_progress_tokens(msg, sizeof msg, 48);
    CHECK_STR(msg, "writing the answer: 48 tokens");
}

/* Every door's status shows the LLM this way: credentials never. */
static void test_llm_label(void)
{
    WsConfig c;
    StrBuf sb;
    ws_config_init(&c);
    sb_init(&sb);
    ws_config_llm_label(&c, &sb);
    CHECK_STR(sb.buf, "none");
    ErrInfo e = {0};
    CHECK_INT(ws_config_set(&c, "llm.url", "http://u:pw@h:1/v1?api_key=s3cret", &e), CR_OK);
    sb_reset(&sb);
    ws_config_llm_label(&c, &sb);
    CHECK(strstr(sb.buf, "pw") == NULL && strstr(sb.buf, "s3cret") == NULL);
    CHECK(strstr(sb.buf, "h:1/v1") != NULL);
    sb_release(&sb);
    ws_config_release(&c);
}

static void ask_request(RtvRequest *req)
{
    rtv_request_init(req);
    req->question = QUESTION;
    req->llm_url = fake.base;
    req->llm_max_retries = -1;
    req->use_dense = 0;
}

/* A dead LLM is asked once: the next auto-mode question (CLI or MCP alike)
 * answers extractively at once, saying why, without contacting it. */
static void test_ask_backs_off_a_dead_llm(void)
{
    RtvRequest req;
    RtvAnswer a = {0};
    ErrInfo e = {0};
    Notices n = {0};
    WsEndpoint *ep = ws_endpoint_new("LLM", on_notice, &n);
    ask_request(&req);
    fake_script_chat(&fake, "[{\"status\": 500, \"times\": 5}]");
    CHECK_INT(ws_ask(ep, st, &req, &a, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_EXTRACTIVE);
    CHECK(a.fallback_reason != NULL);
    CHECK_INT(chat_requests(NULL), 1);
    CHECK_INT(n.n, 1);
    rtv_answer_release(&a);

    CHECK_INT(ws_ask(ep, st, &req, &a, &e), CR_OK);
    CHECK_INT(a.mode, RTV_MODE_EXTRACTIVE);
    CHECK(a.fallback_reason && strstr(a.fallback_reason, "endpoint is down"));
    CHECK_INT(chat_requests(NULL), 1); /* not contacted again */
    rtv_answer_release(&a);

    /* mode llm insists: the user asked for the LLM whatever its state */
    req.mode = RTV_MODE_LLM;
    CHECK(ws_ask(ep, st, &req, &a, &e) != CR_OK);
    CHECK_INT(chat_requests(NULL), 2);
    rtv_answer_release(&a);

    /* without an endpoint to remember it, every question asks */
    req.mode = RTV_MODE_AUTO;
    CHECK_INT(ws_ask(NULL, st, &req, &a, &e), CR_OK);
    CHECK_INT(chat_requests(NULL), 3);
    rtv_answer_release(&a);
    ws_endpoint_free(ep);
}

/* The steps (the language server's threading) give what the one call gives. */
static void test_ask_steps_equal_one_call(void)
{
    RtvRequest req;
    RtvAnswer one = {0}, steps = {0};
    ErrInfo e = {0};
    ask_request(&req);
    fake_script_chat(&fake, "[{\"content\": \"It raises [{ctx0}].\", \"times\": 2}]");
    CHECK_INT(ws_ask(NULL, st, &req, &one, &e), CR_OK);
    CHECK_INT(one.mode, RTV_MODE_LLM);

    WsAsk *a = ws_ask_new(NULL);
    CHECK_INT(ws_ask_prepare(a, st, &req, &steps, &e), CR_OK);
    CHECK(ws_ask_wants_llm(a));
    CHECK_INT(ws_ask_llm(a, &req, &steps), CR_OK);
    CHECK(ws_ask_llm_text(a) && strstr(ws_ask_llm_text(a), "It raises"));
    CHECK_INT(ws_ask_finish(a, st, &req, &steps, &e), CR_OK);
    CHECK_STR(steps.answer, one.answer);
    CHECK_INT(steps.n_citations, one.n_citations);
    ws_ask_free(a);
    ws_ask_free(NULL);
    rtv_answer_release(&one);
    rtv_answer_release(&steps);
}

/* Settings copied from a server's (one per root) lend the server's shared
 * data to every store they open: one model for all the roots. */
static void test_shared_across_roots(void)
{
    char dir[] = "/tmp/coderag-ws-shared-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    WsConfig server, root_a, root_b;
    ws_config_init(&server);
    server.shared = idx_shared_new();
    CHECK_INT(ws_config_set(&server, "embed.provider", "builtin", NULL), CR_OK);
    ws_config_copy(&root_a, &server);
    ws_config_copy(&root_b, &server);
    ws_config_release(&server); /* the copies keep the handle */
    char ia[PATH_MAX], ib[PATH_MAX];
    snprintf(ia, sizeof ia, "%s/a", dir);
    snprintf(ib, sizeof ib, "%s/b", dir);
    root_a.root = xstrdup(FIXTURE_DIR "/shop");
    root_a.index_dir = xstrdup(ia);
    root_b.root = xstrdup(FIXTURE_DIR "/shop");
    root_b.index_dir = xstrdup(ib);
    IdxStore *a = NULL, *b = NULL;
    CHECK_INT(ws_store_open(&root_a, WS_OPEN_CREATE, &a, NULL), CR_OK);
    CHECK_INT(ws_store_open(&root_b, WS_OPEN_CREATE, &b, NULL), CR_OK);
    if (a && b) CHECK(idx_dense_embedder(a) != NULL && a->dense.em == idx_dense_embedder(b));
    idx_close(a);
    idx_close(b);
    ws_config_release(&root_a);
    ws_config_release(&root_b);
    test_sh("rm -rf '%s' # %s", dir, "");
}

/* ws_root_unpark_locked's pick: the job named by ud. */
static int picks_second(WsJob *j, void *ud)
{
    return j == ud;
}

/* A root is found by the longest root holding a path, after the path is
 * normalised; parked jobs leave in the order they came, the picked ones
 * first. */
static void test_host_roots(void)
{
    char dir[] = "/tmp/coderag-ws-roots-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_sh("mkdir -p '%s/a/inner' '%s/b'", dir, dir);
    char a[256], inner[256], path[512];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(inner, sizeof inner, "%s/a/inner", dir);
    WsHostDoor door = {NULL, NULL, NULL, NULL};
    WsHost *h = ws_host_new(&door);
    WsConfig cfg;
    ws_config_init(&cfg);
    WsRoot *ra = ws_host_add_root(h, a, &cfg);
    WsRoot *ri = ws_host_add_root(h, inner, &cfg);
    char *rel = NULL;
    snprintf(path, sizeof path, "%s/inner/x.py", a);
    CHECK(ws_host_root_for_path(h, path, &rel) == ri);
    CHECK_STR(rel, "x.py");
    free(rel);
    snprintf(path, sizeof path, "%s/pkg/y.py", a);
    CHECK(ws_host_root_for_path(h, path, &rel) == ra);
    CHECK_STR(rel, "pkg/y.py");
    free(rel);
    CHECK(ws_host_root_for_path(h, a, &rel) == ra && rel == NULL);
    snprintf(path, sizeof path, "%s/inner/../../b/z.py", a);
    CHECK(ws_host_root_for_path(h, path, &rel) == NULL && rel == NULL);

    WsJob *j[3];
    ws_host_lock(h);
    for (int i = 0; i < 3; i++) {
        j[i] = xcalloc(1, sizeof *j[i]);
        ws_job_init(j[i], NULL, NULL);
        ws_root_park_locked(ra, j[i]);
    }
    WsJob *go = ws_root_unpark_locked(ra, picks_second, j[1]);
    CHECK(go == j[1] && go->next == NULL);
    WsJob *rest = ws_root_unpark_locked(ra, NULL, NULL);
    CHECK(rest == j[0] && rest->next == j[2] && j[2]->next == NULL);
    ws_root_park_locked(ra, j[1]); /* the list is whole again after taking from it */
    CHECK(ra->parked == j[1] && ra->parked_tail == &j[1]->next);
    ws_host_unlock(h);
    free(j[0]);
    free(j[2]);
    ws_config_release(&cfg);
    ws_host_free(h); /* frees the roots, and the job still parked */
    test_sh("rm -rf '%s' # %s", dir, "");
}

/* The threads of this process. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

typedef struct PoolJob {
    WsJob hj;
    pthread_t stage[2];
    int done;
} PoolJob;

static WsJobNext pool_stage3(void *ctx, WsJob *wj)
{
    PoolJob *j = (PoolJob *)wj;
    j->done = 1;
    return WS_JOB_KEPT; /* the test frees it */
}

static WsJobNext pool_stage2(void *ctx, WsJob *wj)
{
    PoolJob *j = (PoolJob *)wj;
    j->stage[1] = pthread_self();
    j->hj.run = pool_stage3;
    return WS_JOB_WORKER;
}

static WsJobNext pool_stage1(void *ctx, WsJob *wj)
{
    PoolJob *j = (PoolJob *)wj;
    j->stage[0] = pthread_self();
    j->hj.run = pool_stage2;
    return WS_JOB_LLM;
}

static int pool_done(void *ud)
{
    return ((PoolJob *)ud)->done;
}

/* A host starts the LLM pool with the first job sent there, not before:
 * the job's LLM stage runs on a thread of its own, then it comes back. */
static void test_llm_pool_on_first_use(void)
{
    WsHostDoor door = {NULL, NULL, NULL, NULL};
    WsHost *h = ws_host_new(&door);
    int before = thread_count();
    CHECK_INT(ws_host_start(h), 0);
    CHECK_INT(thread_count(), before + 1); /* the worker alone: no builder, no pool */
    PoolJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, pool_stage1, NULL);
    ws_host_submit(h, &j->hj);
    ws_host_wait_until(h, pool_done, j);
    CHECK(!pthread_equal(j->stage[0], j->stage[1]));
    CHECK_INT(thread_count(), before + 1 + WS_LLM_THREADS);
    CHECK_INT(ws_host_stop(h, 10000), 0);
    ws_host_free(h);
    free(j);
}

/* A one-shot command's host (the CLI's): the host starts no thread; the
 * caller runs a job's stages, worker and LLM stages alike, in order, and
 * a root's query store is opened and brought up to date on the caller
 * (the pre-ask pass), the root then ready and whole; opened as it is
 * (--no-update) an index that is missing is CR_ENOINDEX and the root in
 * the error state. */
static void test_host_one_shot(void)
{
    char dir[] = "/tmp/coderag-ws-oneshot-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    WsHostDoor door = {NULL, NULL, NULL, NULL};
    WsHost *h = ws_host_new(&door);
    int before = thread_count();
    PoolJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, pool_stage1, NULL);
    ws_host_run(h, &j->hj);
    CHECK(j->done);
    CHECK(pthread_equal(j->stage[0], pthread_self()) && pthread_equal(j->stage[1], pthread_self()));
    CHECK_INT(thread_count(), before);
    free(j);

    WsConfig cfg;
    ws_config_init(&cfg);
    char idx[PATH_MAX];
    snprintf(idx, sizeof idx, "%s/idx", dir);
    cfg.index_dir = xstrdup(idx);
    WsRoot *r = ws_host_add_root(h, FIXTURE_DIR "/shop", &cfg);
    ErrInfo e = {0};
    CHECK_INT(ws_root_open_fresh(r, &(WsFresh){.how = WS_OPEN_EXISTING}, &e), CR_ENOINDEX);
    CHECK(r->q == NULL && r->state == WS_ROOT_ERROR);
    IdxUpdateStats stats;
    CHECK_INT(ws_root_open_fresh(r, &(WsFresh){.how = WS_OPEN_CREATE, .stats = &stats}, &e), CR_OK);
    CHECK(r->q != NULL && r->state == WS_ROOT_READY && r->complete);
    CHECK(stats.files_seen > 0 && stats.files_changed == stats.files_seen);
    ws_config_release(&cfg);
    ws_host_free(h); /* closes the root's store */
    test_sh("rm -rf '%s' # %s", dir, "");
}

/* A door that reads its input on the host (ws_host_serve): N messages,
 * each queuing a worker job, then the end. */
#define TURN_MSGS 40
typedef struct TurnDoor {
    WsHost *h;
    int next; /* messages read (serve_one runs one at a time) */
    pthread_t reader[TURN_MSGS], runner[TURN_MSGS];
    pthread_mutex_t mu; /* the rest */
    int running, overlap, n_ran, ran[TURN_MSGS];
} TurnDoor;

typedef struct TurnJob {
    WsJob hj;
    TurnDoor *d;
    int i;
} TurnJob;

static WsJobNext turn_stage(void *ctx, WsJob *wj)
{
    TurnJob *j = (TurnJob *)wj;
    TurnDoor *d = j->d;
    pthread_mutex_lock(&d->mu);
    if (++d->running > 1) d->overlap = 1;
    d->ran[d->n_ran++] = j->i;
    d->runner[j->i] = pthread_self();
    pthread_mutex_unlock(&d->mu);
    pthread_mutex_lock(&d->mu);
    d->running--;
    pthread_mutex_unlock(&d->mu);
    return WS_JOB_DONE;
}

static int turn_serve_one(void *ud)
{
    TurnDoor *d = ud;
    if (d->next == TURN_MSGS) return 0;
    int i = d->next++;
    d->reader[i] = pthread_self();
    TurnJob *j = xcalloc(1, sizeof *j);
    ws_job_init(&j->hj, turn_stage, NULL);
    j->d = d;
    j->i = i;
    ws_host_submit(d->h, &j->hj);
    return 1;
}

static int turn_all_ran(void *ud)
{
    TurnDoor *d = ud;
    pthread_mutex_lock(&d->mu);
    int done = d->n_ran == TURN_MSGS;
    pthread_mutex_unlock(&d->mu);
    return done;
}

/* The caller's thread and the worker take turns at the input: every job
 * runs, in the order its message came, never two at once; the first,
 * queued while the worker waited, runs on the thread that read it (no
 * hand-off); ws_host_serve returns once the input ended. */
static void test_host_serve_turns(void)
{
    TurnDoor d;
    memset(&d, 0, sizeof d);
    pthread_mutex_init(&d.mu, NULL);
    WsHostDoor door = {&d, NULL, NULL, turn_serve_one};
    d.h = ws_host_new(&door);
    CHECK_INT(ws_host_start(d.h), 0);
    ws_host_serve(d.h);
    CHECK_INT(d.next, TURN_MSGS);
    ws_host_wait_until(d.h, turn_all_ran, &d);
    CHECK_INT(d.n_ran, TURN_MSGS);
    for (int i = 0; i < TURN_MSGS; i++)
        CHECK_INT(d.ran[i], i);
    CHECK_INT(d.overlap, 0);
    CHECK(pthread_equal(d.runner[0], d.reader[0]));
    CHECK_INT(ws_host_stop(d.h, 10000), 0);
    ws_host_free(d.h);
    pthread_mutex_destroy(&d.mu);
}

static void run_tests(void)
{
    RUN(test_change_kind);
    RUN(test_root_from_current_folder);
    RUN(test_endpoint_backoff);
    RUN(test_pace_steps);
    RUN(test_pace_open_ended);
    RUN(test_pace_time_floor);
    RUN(test_llm_label);
    RUN(test_ask_backs_off_a_dead_llm);
    RUN(test_ask_steps_equal_one_call);
    RUN(test_shared_across_roots);
    RUN(test_host_roots);
    RUN(test_llm_pool_on_first_use);
    RUN(test_host_one_shot);
    RUN(test_host_serve_turns);
}

int main(void)
{
    return llm_main(run_tests);
}
