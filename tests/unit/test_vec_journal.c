/* The vector store's journal (index/dense/vec_file.c): a small change is a record
 * appended to <file>.log, replayed on open onto the file it belongs to, up
 * to its first damaged record; a big change, a damaged journal or one that
 * belongs to another file means the file is rewritten. */
#include "test.h"
#include "index/dense/vec_int.h"
#include "vec_util.h"

#include <sys/stat.h>
#include <unistd.h>

typedef struct Journal {
    TmpDir t;
    char log[160];
    struct stat base; /* the file after the first save */
} Journal;

/* ids 10..15 saved whole: the file every test journals onto. */
static void journal_init(Journal *j)
{
    tmp_init(&j->t);
    snprintf(j->log, sizeof j->log, "%s.log", j->t.path);
    VecStore *vs = open_filled(j->t.path);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);
    CHECK_INT(stat(j->t.path, &j->base), 0);
}

static VecStore *reopen(const Journal *j)
{
    VecStore *vs = NULL;
    CHECK_INT(idx_vecstore_open(j->t.path, D, &vs, NULL), CR_OK);
    return vs;
}

/* Removes id 10 and adds id, on axis 6 with weight w; saves. */
static void change(VecStore *vs, int64_t id, float w)
{
    float v[D];
    basis(v, 6, w);
    CHECK_INT(idx_vecstore_remove(vs, (const int64_t[]){10}, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_add(vs, &id, v, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static int same_file(const Journal *j)
{
    struct stat st;
    return stat(j->t.path, &st) == 0 && st.st_ino == j->base.st_ino &&
           st.st_size == j->base.st_size;
}

static void test_small_change_is_journaled(void)
{
    Journal j;
    journal_init(&j);
    VecStore *vs = reopen(&j);
    change(vs, 20, 9);
    CHECK(same_file(&j));
    CHECK(file_size(j.log) > 0);
    /* a second change appends */
    off_t first = file_size(j.log);
    float v[D];
    basis(v, 7, 8);
    CHECK_INT(idx_vecstore_add(vs, (const int64_t[]){11}, v, 1, NULL), CR_OK); /* replaces 11 */
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    CHECK(file_size(j.log) > first);
    idx_vecstore_close(vs);

    vs = reopen(&j);
    check_ids(vs, (const int64_t[]){11, 12, 13, 14, 15, 20}, 6);
    check_search(vs, ones, 3, (const int64_t[]){20, 11, 15}, (const float[]){9, 8, 6}, 3);
    idx_vecstore_close(vs);
    tmp_release(&j.t);
}

static void test_damaged_journal(void)
{
    Journal j;
    journal_init(&j);
    VecStore *vs = reopen(&j);
    change(vs, 20, 9);
    off_t first = file_size(j.log);
    float v[D];
    basis(v, 7, 8);
    CHECK_INT(idx_vecstore_add(vs, (const int64_t[]){21}, v, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    idx_vecstore_close(vs);

    /* the last record torn: what came before it still applies */
    CHECK_INT(truncate(j.log, file_size(j.log) - 3), 0);
    vs = reopen(&j);
    check_ids(vs, (const int64_t[]){11, 12, 13, 14, 15, 20}, 6);
    /* appending after a torn record would hide the new one: the save
     * rewrites the file and drops the journal */
    basis(v, 5, 7);
    CHECK_INT(idx_vecstore_add(vs, (const int64_t[]){22}, v, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    CHECK(!same_file(&j));
    CHECK(access(j.log, F_OK) != 0);
    idx_vecstore_close(vs);
    vs = reopen(&j);
    check_ids(vs, (const int64_t[]){11, 12, 13, 14, 15, 20, 22}, 7);
    idx_vecstore_close(vs);
    CHECK(first > 32);

    /* a flipped byte inside the first record: none applies */
    tmp_release(&j.t);
    journal_init(&j);
    vs = reopen(&j);
    change(vs, 20, 9);
    idx_vecstore_close(vs);
    FILE *f = fopen(j.log, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 40, SEEK_SET);
        int c = fgetc(f);
        fseek(f, 40, SEEK_SET);
        fputc(c ^ 0x5a, f);
        fclose(f);
    }
    vs = reopen(&j);
    check_ids(vs, (const int64_t[]){10, 11, 12, 13, 14, 15}, 6);
    idx_vecstore_close(vs);
    tmp_release(&j.t);
}

static void test_journal_of_another_file(void)
{
    Journal j;
    journal_init(&j);
    VecStore *vs = reopen(&j);
    change(vs, 20, 9);
    idx_vecstore_close(vs);
    char aside[200];
    snprintf(aside, sizeof aside, "%s.aside", j.t.path);
    CHECK_INT(rename(j.log, aside), 0);
    /* the file rewritten (its journal gone), then the old journal put back */
    vs = reopen(&j);
    CHECK_INT(idx_vecstore_remove(vs, (const int64_t[]){12}, 1, NULL), CR_OK);
    float big[D];
    for (int64_t id = 1000; id < 1000 + 300000 / (int64_t)sizeof big; id++) {
        basis(big, 0, 0.5f);
        CHECK_INT(idx_vecstore_add(vs, &id, big, 1, NULL), CR_OK);
    }
    CHECK_INT(idx_vecstore_save(vs, NULL), CR_OK);
    int64_t n = idx_vecstore_count(vs);
    idx_vecstore_close(vs);
    CHECK(access(j.log, F_OK) != 0);
    CHECK_INT(rename(aside, j.log), 0);
    vs = reopen(&j);
    CHECK_INT(idx_vecstore_count(vs), n);
    int64_t *ids = NULL;
    size_t k = 0;
    CHECK_INT(idx_vecstore_ids(vs, &ids, &k, NULL), CR_OK);
    CHECK(k > 1 && ids[0] == 10 && ids[1] == 11 && ids[2] == 13); /* 12 gone, 10 kept */
    free(ids);
    /* the next small change starts a journal of its own */
    change(vs, 30, 9);
    idx_vecstore_close(vs);
    vs = reopen(&j);
    CHECK_INT(idx_vecstore_count(vs), n);
    check_search(vs, ones, 1, (const int64_t[]){30}, (const float[]){9}, 1);
    idx_vecstore_close(vs);
    tmp_release(&j.t);
}

/* Two stores open on one file (a language server and a command-line
 * update): each sees that the other wrote (dense.c then reloads before its
 * sync), and each one's journal records stay readable. */
static void test_two_writers(void)
{
    Journal j;
    journal_init(&j);
    VecStore *a = reopen(&j), *b = reopen(&j);
    CHECK(!idx_vecstore_changed_on_disk(a) && !idx_vecstore_changed_on_disk(b));
    change(a, 20, 9);
    CHECK(!idx_vecstore_changed_on_disk(a));
    CHECK(idx_vecstore_changed_on_disk(b)); /* b must reload before it journals a change */
    float v[D];
    basis(v, 7, 8);
    CHECK_INT(idx_vecstore_add(b, (const int64_t[]){21}, v, 1, NULL), CR_OK);
    CHECK_INT(idx_vecstore_save(b, NULL), CR_OK);
    CHECK(same_file(&j));
    CHECK(idx_vecstore_changed_on_disk(a));
    idx_vecstore_close(a);
    idx_vecstore_close(b);
    VecStore *vs = reopen(&j);
    check_ids(vs, (const int64_t[]){11, 12, 13, 14, 15, 20, 21}, 7);
    idx_vecstore_close(vs);
    tmp_release(&j.t);
}

int main(void)
{
    RUN(test_small_change_is_journaled);
    RUN(test_damaged_journal);
    RUN(test_journal_of_another_file);
    RUN(test_two_writers);
    return test_summary();
}
