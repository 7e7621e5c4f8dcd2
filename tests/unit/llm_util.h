/*
 * llm_util.h - the workspace and the fake LLM of the end-to-end LLM tests
 * (test_llm.c, test_llm_request.c): the fake OpenAI server on loopback, a
 * copy of tests/fixtures/answers with a symlinked file and folder that lead
 * outside it, indexed lexically.
 */
#ifndef CODERAG_LLM_UTIL_H
#define CODERAG_LLM_UTIL_H

#include "fake_server.h"
#include "retrieve/rtv_int.h"
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>

#define QUESTION "How does withdraw refuse an overdraft?"

static Fake fake;
static char root[128], outside[128], index_dir[160];
static IdxStore *st;

/* How many chat requests the fake saw; *out_last (when given) gets the last. */
static inline int chat_requests(json_t **out_last)
{
    json_t *log = fake_log(&fake);
    int n = 0;
    for (size_t i = 0; log && i < json_array_size(log); i++) {
        const char *ep = NULL;
        json_t *r = json_array_get(log, i);
        if (!json_unpack(r, "{s:s}", "endpoint", &ep) && !strcmp(ep, "chat/completions")) {
            n++;
            if (out_last) {
                json_decref(*out_last);
                *out_last = json_incref(r);
            }
        }
    }
    json_decref(log);
    return n;
}

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* Starts the fake and indexes the workspace: 0 when the tests can run, 1
 * when indexing failed (a failed check), -1 when nothing could start. */
static inline int llm_fixture_open(void)
{
    /* the fallbacks warn on stderr; the tests check them themselves */
    setenv("CODERAG_LOG", "error", 0);

    if (fake_start(&fake) != 0) {
        fprintf(stderr, "cannot start the fake server\n");
        fake_stop(&fake);
        return -1;
    }
    fake_script(&fake, 8, "[]");
    snprintf(root, sizeof root, "/tmp/coderag-test-llm-XXXXXX");
    snprintf(outside, sizeof outside, "/tmp/coderag-test-llm-out-XXXXXX");
    if (!mkdtemp(root) || !mkdtemp(outside)) return -1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    test_sh("cp -R '%s/answers/.' '%s'", FIXTURE_DIR, root);
    char path[256], target[256];
    snprintf(path, sizeof path, "%s/secret.py", outside);
    write_text(path, "TOKEN = 'outside-the-workspace'\n\n\ndef leak():\n    return TOKEN\n");
    snprintf(path, sizeof path, "%s/bank/secret.py", root);
    snprintf(target, sizeof target, "%s/secret.py", outside);
    CHECK(symlink(target, path) == 0);
    snprintf(path, sizeof path, "%s/vendor", root);
    CHECK(symlink(outside, path) == 0);

    /* the LLM cases pin the lexical context; the dense leg is tested elsewhere */
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1, .embed_provider = "none"};
    ErrInfo e = {0};
    CrErr rc = idx_open(&cfg, 0, &st, &e);
    if (!rc) rc = idx_update(st, NULL, NULL, NULL, &e);
    if (rc) {
        fprintf(stderr, "indexing the fixture: %s\n", e.msg);
        CHECK_INT(rc, CR_OK);
        return 1;
    }
    return 0;
}

static inline void llm_fixture_close(void)
{
    idx_close(st);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    test_sh("rm -rf '%s' '%s'", outside, "/nonexistent");
    fake_stop(&fake);
}

/* The main of an executable whose tests (run_tests: its RUN lines) need
 * the workspace: 1 when nothing could start, else the summary's code. */
static inline int llm_main(void (*run_tests)(void))
{
    int rc = llm_fixture_open();
    if (rc < 0) return 1;
    if (rc == 0) run_tests();
    llm_fixture_close();
    return test_summary();
}

#endif
