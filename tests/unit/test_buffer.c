/* Unsaved buffers (retrieve/buffer.c): the line map between a file as
 * indexed and an editor's buffer of it, and reads through a request's
 * buffer. */
#include "retrieve/rtv_int.h"
#include "test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static const char *the_buffer(void *ud, const char *path, size_t *len)
{
    if (strcmp(path, "m.py") != 0) return NULL;
    *len = strlen(ud);
    return ud;
}

static void test_line_map(void)
{
    char root[] = "/tmp/coderag-buf-XXXXXX", idx[] = "/tmp/coderag-buf-idx-XXXXXX";
    CHECK(mkdtemp(root) != NULL && mkdtemp(idx) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/m.py", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    /* 10 lines: a, b, ... j */
    fputs("def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n", f);
    fclose(f);
    IdxConfig cfg = {.root = root, .index_dir = idx, .threads = 1, .embed_provider = "none"};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (st) CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    if (!st) return;
    /* two lines added at the top, b's body changed, one line added after
     * b, c's blank line above removed */
    const char *buf = "# x\n# y\ndef a():\n    return 1\n\n\ndef b():\n    return 22\n    # z\n\n"
                      "def c():\n    return 3\n";
    RtvLineMap *lm = rtv_line_map_new(st, "m.py", buf, strlen(buf));
    CHECK(lm != NULL);
    if (lm) {
        CHECK_INT(rtv_line_map_to_buffer(lm, 1), 3);  /* def a */
        CHECK_INT(rtv_line_map_to_buffer(lm, 5), 7);  /* def b */
        CHECK_INT(rtv_line_map_to_buffer(lm, 6), 8);  /* b's changed body follows def b */
        CHECK_INT(rtv_line_map_to_buffer(lm, 9), 11); /* def c, past an added and a removed line */
        CHECK_INT(rtv_line_map_to_disk(lm, 11), 9);
        CHECK_INT(rtv_line_map_to_disk(lm, 1), 1); /* added before any kept line */
        CHECK_INT(rtv_line_map_to_disk(lm, 7), 5);
        rtv_line_map_free(lm);
    }
    RtvRequest req;
    rtv_request_init(&req);
    req.buffer = the_buffer;
    req.buffer_ud = (void *)buf;
    uint32_t a = 9, b = 10; /* c on disk */
    CHECK_INT(rtv_buffer_lines(st, &req, "m.py", &a, &b, NULL), CR_OK);
    CHECK_INT(a, 11);
    CHECK_INT(b, 12);
    StrBuf sb;
    sb_init(&sb);
    CHECK_INT(rtv_read_lines(st, &req, "m.py", a, b, &sb, NULL, NULL), CR_OK);
    CHECK_STR(sb.buf, "def c():\n    return 3\n");
    sb_reset(&sb);
    CHECK_INT(rtv_read_lines(st, &req, "m.py", 12, 13, &sb, NULL, NULL), CR_EINVAL);
    CHECK_INT(rtv_read_lines(st, NULL, "m.py", 9, 10, &sb, NULL, NULL), CR_OK); /* the disk */
    CHECK_STR(sb.buf, "def c():\n    return 3\n");
    sb_release(&sb);
    idx_close(st);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    nftw(idx, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    RUN(test_line_map);
    return test_summary();
}
