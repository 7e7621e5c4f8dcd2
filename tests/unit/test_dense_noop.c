/* An update that writes nothing the builtin model embeds (nothing changed,
 * or a C file changed) never loads the model (index/dense/dense_state.c, the
 * sync's coverage from the language rows, no parse workers without files):
 * the model here is damaged after the first build, so any load of it says
 * "no dense leg" on stderr, which these updates must not. */
#include "idx.h"
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256], index_dir[300], model[300], log_path[300];

static void write_c(const char *body)
{
    char p[512];
    snprintf(p, sizeof p, "%s/a.c", root);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(body, f);
    fclose(f);
    /* a settled mtime, another one per content: the update reads it */
    struct timespec t[2] = {{1600000000 + (long)strlen(body), 0},
                            {1600000000 + (long)strlen(body), 0}};
    CHECK_INT(utimensat(AT_FDCWD, p, t, 0), 0);
}

static IdxStore *open_store(void)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1, .embed_model = model};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e)) fprintf(stderr, "idx_open: %s\n", e.msg);
    CHECK(st != NULL);
    return st;
}

/* Runs one update on a store of its own with stderr captured; returns
 * whether it said the model was unusable. */
static int update_says_no_model(void)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    IdxStore *st = open_store();
    ErrInfo e = {0};
    CrErr rc = st ? idx_update(st, NULL, NULL, NULL, &e) : CR_EIO;
    idx_close(st);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK_INT(rc, CR_OK);
    StrBuf sb;
    sb_init(&sb);
    sb_read_file(&sb, log_path, 0, NULL);
    int said = sb.buf && strstr(sb.buf, "no dense leg") != NULL;
    sb_release(&sb);
    return said;
}

static void test_model_left_unread(void)
{
    write_c("int add(int a, int b)\n{\n    return a + b;\n}\n");
    CHECK_INT(update_says_no_model(), 0); /* the model is whole: built */
    /* damage the model's payload (its header, and so its id, intact) */
    int fd = open(model, O_RDWR);
    CHECK(fd >= 0);
    unsigned char b = 0;
    CHECK_INT(pread(fd, &b, 1, 4096), 1);
    b ^= 0xff;
    CHECK_INT(pwrite(fd, &b, 1, 4096), 1);
    close(fd);
    CHECK_INT(update_says_no_model(), 0); /* nothing changed */
    write_c(
        "int add(int a, int b)\n{\n    return a + b;\n}\n\nint neg(int a)\n{\n    return -a;\n}\n");
    CHECK_INT(update_says_no_model(), 0); /* a C file changed */
    /* and the model is damaged indeed: what loads it says so */
    IdxStore *st = open_store();
    IdxStatus s;
    if (st) CHECK_INT(idx_status(st, &s, NULL), CR_OK);
    if (st) CHECK(strstr(s.embedder, "unusable") != NULL);
    idx_close(st);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/coderag-test-dnoop-XXXXXX");
    if (!mkdtemp(root)) return 1;
    snprintf(index_dir, sizeof index_dir, "%s.idx", root);
    snprintf(model, sizeof model, "%s.model", root);
    snprintf(log_path, sizeof log_path, "%s.log", root);
    test_sh("cp '%s' '%s'", FIXTURE_DIR "/../../models/code-nbow-py-v1.crm", model);
    RUN(test_model_left_unread);
    test_sh("rm -rf '%s' '%s'", root, index_dir);
    test_sh("rm -f '%s' '%s'", model, log_path);
    return test_summary();
}
