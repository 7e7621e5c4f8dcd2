/*
 * capture.h - the process's stderr (fd 2) redirected into a temporary file
 * while the code under test runs, with CODERAG_LOG=debug, so a test can
 * assert on what the code logged (a retry's wait, say) instead of on how
 * long it took, and can act when a line appears.
 */
#ifndef CODERAG_CAPTURE_H
#define CODERAG_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Capture {
    int saved; /* the real stderr */
    char path[64];
    char log[16]; /* CODERAG_LOG before, "" when unset */
} Capture;

static void capture_start(Capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/coderag-capture.XXXXXX");
    int fd = mkstemp(c->path);
    if (fd < 0) abort();
    fflush(stderr);
    c->saved = dup(2);
    dup2(fd, 2);
    close(fd);
    const char *log = getenv("CODERAG_LOG");
    snprintf(c->log, sizeof c->log, "%s", log ? log : "");
    setenv("CODERAG_LOG", "debug", 1);
}

/* What was logged since capture_start; caller frees. */
static char *capture_text(const Capture *c)
{
    FILE *f = fopen(c->path, "rb");
    if (!f) return calloc(1, 1);
    size_t cap = 4096, n = 0, r;
    char *buf = malloc(cap);
    while (buf && (r = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += r;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* Restores stderr; returns what was logged (caller frees) and echoes it. */
static char *capture_stop(Capture *c)
{
    fflush(stderr);
    char *text = capture_text(c);
    dup2(c->saved, 2);
    close(c->saved);
    unlink(c->path);
    if (c->log[0])
        setenv("CODERAG_LOG", c->log, 1);
    else
        unsetenv("CODERAG_LOG");
    if (text && text[0]) fprintf(stderr, "%s", text);
    return text;
}

/* An HttpCancelFn-shaped hook: true once `ud` (a Capture) holds a line
 * saying a retry is waiting, i.e. exactly during a backoff wait. */
static inline int capture_cancel_on_retry(void *ud)
{
    char *t = capture_text(ud);
    int r = t && strstr(t, "retrying in") != NULL;
    free(t);
    return r;
}

/* The n-th (from 0) wait "retrying in N ms" logged in text, or -1. */
static inline long capture_retry_wait(const char *text, int n)
{
    const char *p = text;
    for (int i = 0; p && (p = strstr(p, "retrying in ")) != NULL; i++, p++)
        if (i == n) return atol(p + strlen("retrying in "));
    return -1;
}

#endif
