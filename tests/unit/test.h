/*
 * test.h - a minimal table-friendly test harness. Each test file defines
 * tests as functions and runs them from main with RUN(fn); main returns
 * test_summary(), which prints "N passed, N failed". TEST_FILTER (a
 * comma-separated list of words) runs only the tests whose function name
 * holds one of them: `TEST_FILTER=journal ctest -R test_vectors -V`.
 */
#ifndef CODERAG_TEST_H
#define CODERAG_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TestState {
    int checks;
    int failed_checks;
    int passed;
    int failed;
    int skipped;
    const char *skip; /* the running test's reason for not running, or NULL */
    int quiet;        /* the harness's own test: no FAIL/SKIP lines */
} TestState;

static TestState test_state_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        test_state_.checks++;                                                                      \
        if (!(cond)) {                                                                             \
            test_state_.failed_checks++;                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        test_state_.checks++;                                                                      \
        if (a_ != b_) {                                                                            \
            test_state_.failed_checks++;                                                           \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        test_state_.checks++;                                                                      \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
            test_state_.failed_checks++;                                                           \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,      \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                       \
        }                                                                                          \
    } while (0)

/* Whether the test named name is to run: TEST_FILTER unset or empty, or
 * one of its comma-separated words is part of the name. */
static inline int test_selected_(const char *name)
{
    const char *f = getenv("TEST_FILTER");
    if (!f || !*f) return 1;
    while (*f) {
        size_t n = strcspn(f, ",");
        for (const char *p = name; n && *p; p++)
            if (strncmp(p, f, n) == 0) return 1;
        f += n + (f[n] == ',');
    }
    return 0;
}

/* A test that made no check proves nothing: it fails. A test that cannot
 * run here says so with SKIP(reason) and counts as skipped. */
#define RUN(fn)                                                                                    \
    do {                                                                                           \
        if (!test_selected_(#fn)) break;                                                           \
        int before_ = test_state_.failed_checks, checks_ = test_state_.checks;                     \
        test_state_.skip = NULL;                                                                   \
        fn();                                                                                      \
        if (test_state_.skip && test_state_.checks == checks_) {                                   \
            test_state_.skipped++;                                                                 \
            if (!test_state_.quiet) fprintf(stderr, "SKIP %s: %s\n", #fn, test_state_.skip);       \
        } else if (test_state_.checks == checks_) {                                                \
            test_state_.failed++;                                                                  \
            if (!test_state_.quiet) fprintf(stderr, "FAIL %s: made no checks\n", #fn);             \
        } else if (test_state_.failed_checks == before_) {                                         \
            test_state_.passed++;                                                                  \
        } else {                                                                                   \
            test_state_.failed++;                                                                  \
            fprintf(stderr, "FAIL %s\n", #fn);                                                     \
        }                                                                                          \
    } while (0)

#define SKIP(reason) (test_state_.skip = (reason))

/* Runs a shell command made of fmt with two strings (paths of the test's
 * own files); a failure is said on stderr, the checks that follow decide. */
static inline void test_sh(const char *fmt, const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    if (system(cmd) != 0) fprintf(stderr, "command failed: %s\n", cmd);
}

/* Writes text as the file root/rel (its folder must exist). */
static inline void test_put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static inline int test_summary(void)
{
    if (test_state_.skipped) printf("%d skipped\n", test_state_.skipped);
    printf("%d passed, %d failed\n", test_state_.passed, test_state_.failed);
    return test_state_.failed ? 1 : 0;
}

#endif
