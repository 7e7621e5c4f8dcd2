/*
 * verify_util.h - the fake workspace of the citation checks (test_verify*.c):
 * two indexed files and one that is not, read through VfySource hooks that
 * count the reads and can fail on demand, and the context packed from them.
 */
#ifndef CODERAG_VERIFY_UTIL_H
#define CODERAG_VERIFY_UTIL_H

#include "test.h"
#include "vfy.h"

#define NDASH "\xE2\x80\x93"

/* ---------------------------------------------------------------- a fake workspace */

typedef struct FakeFile {
    const char *path;
    const char *text;
    int indexed;
} FakeFile;

typedef struct Fake {
    const FakeFile *files;
    size_t n;
    CrErr fail_with; /* CR_OK, or an error every read returns */
    int reads;
} Fake;

static inline const FakeFile *fake_find(const Fake *f, const char *path)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->files[i].path, path) == 0) return &f->files[i];
    return NULL;
}

static inline int fake_is_indexed(void *ud, const char *path)
{
    const FakeFile *ff = fake_find(ud, path);
    return ff && ff->indexed;
}

static inline CrErr fake_read_lines(void *ud, const char *path, uint32_t start, uint32_t end,
                                    StrBuf *out, uint32_t *out_total, ErrInfo *e)
{
    Fake *f = ud;
    f->reads++;
    if (f->fail_with != CR_OK) return err_set(e, f->fail_with, "injected");
    const FakeFile *ff = fake_find(f, path);
    if (!ff) return err_set(e, CR_ENOENT, "%s: gone", path);
    size_t len = strlen(ff->text);
    uint32_t total = (uint32_t)count_lines(ff->text, len);
    if (out_total) *out_total = total;
    if (start < 1 || end < start || end > total) return err_set(e, CR_EINVAL, "range");
    uint32_t line = 1;
    for (size_t i = 0; i < len; i++) {
        if (line >= start && line <= end) sb_addc(out, ff->text[i]);
        if (ff->text[i] == '\n') line++;
    }
    return CR_OK;
}

#define A_PY "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
#define B_PY "b1\nb2\nb3\nb4\nb5"

static const FakeFile files[] = {
    {"pkg/a.py", A_PY, 1},
    {"pkg/b.py", B_PY, 1},
    {"notindexed.py", "x = 1\n", 0},
    {"Makefile", "all:\n\tcc x.c\n", 1},
};

static Fake fake;

static inline VfySource fake_source(void)
{
    fake = (Fake){.files = files, .n = sizeof files / sizeof files[0]};
    VfySource s = {.root = "/work/proj",
                   .is_indexed = fake_is_indexed,
                   .read_lines = fake_read_lines,
                   .ud = &fake};
    return s;
}

/* a.py lines 3-6 as packed; b.py packed when line 2 still read "old". */
#define LIT(s) s, sizeof s - 1
static const VfyContextItem ctx[] = {
    {"pkg/a.py", 3, 6, "A.f", LIT("l3\nl4\nl5\nl6\n")},
    {"pkg/b.py", 1, 5, "pkg.b", LIT("b1\nold\nb3\nb4\nb5")},
};

#endif
