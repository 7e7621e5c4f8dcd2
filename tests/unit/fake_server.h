/*
 * fake_server.h - drives tests/fake_openai.py, the loopback fake of an
 * OpenAI-compatible server, from C tests: start it on a free port, script
 * its answers, read the requests it saw, stop it.
 */
#ifndef CODERAG_FAKE_SERVER_H
#define CODERAG_FAKE_SERVER_H

#include "base.h"
#include "test.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAKE_SCRIPT FIXTURE_DIR "/../fake_openai.py"

typedef struct Fake {
    pid_t pid;
    int stdin_fd; /* closing it stops the server (--watch-stdin) */
    char base[64];
} Fake;

/* Starts the fake and learns its port from its first line of output. */
static int fake_start(Fake *f)
{
    int in[2], out[2];
    memset(f, 0, sizeof *f);
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) return -1;
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    f->pid = fork();
    if (f->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        execlp(py, py, FAKE_SCRIPT, "--watch-stdin", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    f->stdin_fd = in[1];
    char line[32] = {0};
    size_t n = 0;
    struct pollfd p = {out[0], POLLIN, 0};
    while (n < sizeof line - 1 && !memchr(line, '\n', n) && poll(&p, 1, 10000) == 1) {
        ssize_t r = read(out[0], line + n, sizeof line - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(out[0]);
    int port = atoi(line);
    if (port <= 0) return -1;
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%d", port);
    return 0;
}

static void fake_stop(Fake *f)
{
    if (f->pid <= 0) return;
    close(f->stdin_fd);
    kill(f->pid, SIGTERM);
    waitpid(f->pid, NULL, 0);
    f->pid = 0;
}

static CrErr fake_post(const Fake *f, const char *path, const char *body, HttpResponse *r)
{
    char url[128];
    snprintf(url, sizeof url, "%s%s", f->base, path);
    HttpRequest req = {.url = url, .body = body, .body_len = strlen(body), .timeout_ms = 5000};
    return http_post(&req, r, NULL);
}

/* Sets the fake's dimension and embeddings script; clears its log. */
static void fake_script(const Fake *f, int dim, const char *actions)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"dim\": %d, \"actions\": {\"embeddings\": %s}}", dim, actions);
    HttpResponse r;
    CHECK_INT(fake_post(f, "/_control/reset", body, &r), CR_OK);
    http_response_release(&r);
}

/* Sets the fake's chat script (a JSON array of actions, see fake_openai.py),
 * leaving no embeddings script; clears its log. */
static inline void fake_script_chat(const Fake *f, const char *actions)
{
    StrBuf body;
    sb_init(&body);
    sb_addf(&body, "{\"actions\": {\"chat\": %s}}", actions);
    HttpResponse r;
    CHECK_INT(fake_post(f, "/_control/reset", body.buf, &r), CR_OK);
    http_response_release(&r);
    sb_release(&body);
}

/* The requests the fake saw since the last script, as a JSON array
 * (caller json_decref's), or NULL. */
static json_t *fake_log(const Fake *f)
{
    HttpResponse r;
    json_t *reqs = NULL;
    if (fake_post(f, "/_control/log", "{}", &r) == CR_OK) {
        json_t *root = json_loadb(r.body.buf, r.body.len, 0, NULL);
        json_t *v = NULL;
        if (root && !json_unpack(root, "{s:o}", "requests", &v) && json_is_array(v))
            reqs = json_incref(v);
        json_decref(root);
    }
    http_response_release(&r);
    return reqs;
}

#endif
