/* The search postings snapshot (index/postings/postings_file.c): written by updates,
 * used by later opens together with what changed since, and never trusted
 * when it is damaged, foreign or behind: every search then gives what a
 * build from the search text gives, and `status --check` agrees. */
#include "idx.h"
#include "index/postings/postings_int.h" /* the snapshot's list codec */
#include "fixture_util.h"
#include "test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char root[256], index_dir[256], snap[300];

static void write_module(int m, const char *extra)
{
    char p[512];
    snprintf(p, sizeof p, "%s/pkg/mod%d.py", root, m);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "\"\"\"Module %d: ledgers and tariffs.\"\"\"\n", m);
    for (int k = 0; k < 12; k++)
        fprintf(f,
                "def settle_ledger_%d_%d(tariff, amount):\n    \"\"\"Settle a ledger entry "
                "under tariff %d.\"\"\"\n    return tariff * amount + %d\n\n",
                m, k, k, m);
    if (extra) fputs(extra, f);
    fclose(f);
}

static void update_all(void)
{
    IdxStore *st = fixture_open(root, index_dir, 0);
    ErrInfo e = {0};
    if (!st) return;
    CHECK_INT(idx_update(st, NULL, NULL, NULL, &e), CR_OK);
    idx_close(st);
}

static int verify(void)
{
    IdxStore *st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    ErrInfo e = {0};
    CrErr rc = st ? idx_verify(st, &e) : CR_EIO;
    if (rc) fprintf(stderr, "idx_verify: %s\n", e.msg);
    idx_close(st);
    return rc == CR_OK;
}

/* The top hits of a few queries on st, as "chunk:score" text. */
static char *search_on(IdxStore *st)
{
    static const char *const queries[] = {"settle ledger tariff", "settle_ledger_3_7", "amount",
                                          "zebra crossing", "module ledgers"};
    StrBuf sb;
    sb_init(&sb);
    for (size_t q = 0; st && q < sizeof queries / sizeof queries[0]; q++) {
        IdxHit *hits = NULL;
        size_t n = 0;
        CHECK_INT(idx_search_bm25(st, queries[q], 10, &hits, &n, NULL), CR_OK);
        for (size_t i = 0; i < n; i++)
            sb_addf(&sb, "%lld:%.5f ", (long long)hits[i].chunk_id, hits[i].score);
        sb_addc(&sb, '\n');
        free(hits);
    }
    return sb_detach(&sb, NULL);
}

static char *search_text_with(unsigned flags)
{
    IdxStore *st = fixture_open(root, index_dir, flags);
    char *text = search_on(st);
    idx_close(st);
    return text;
}

static char *search_text(void)
{
    return search_text_with(0);
}

/* What a search gives with no snapshot at all (built from the search text). */
static char *search_without_snapshot(void)
{
    char moved[320];
    snprintf(moved, sizeof moved, "%s.aside", snap);
    CHECK_INT(rename(snap, moved), 0);
    char *text = search_text_with(IDX_OPEN_READONLY); /* read-only: writes no snapshot */
    CHECK(access(snap, F_OK) != 0);
    rename(moved, snap);
    return text;
}

/* The snapshot's inode: a new snapshot is a new file renamed into place. */
static ino_t snap_inode(void)
{
    struct stat sb;
    return stat(snap, &sb) == 0 ? sb.st_ino : 0;
}

static void test_written_and_used(void)
{
    update_all();
    CHECK(snap_inode() != 0);
    CHECK(verify());
    char *with = search_text(), *without = search_without_snapshot();
    CHECK_STR(with, without);
    CHECK(strstr(with, ":") != NULL); /* the queries found something */
    free(with);
    free(without);
}

static void test_changes_since_snapshot(void)
{
    /* A commit that is not followed by a new snapshot (a single-file update,
     * or a crash between the database commit and the snapshot write): the
     * snapshot stays, and searches see the new rows through the files'
     * generations. */
    ino_t before = snap_inode();
    write_module(3, "def zebra_crossing(stripes):\n    return stripes\n");
    char p[512];
    snprintf(p, sizeof p, "%s/pkg/mod5.py", root);
    unlink(p);
    IdxStore *st = fixture_open(root, index_dir, 0);
    if (!st) return;
    CHECK_INT(idx_update_file(st, "pkg/mod3.py", NULL), CR_OK);
    CHECK_INT(idx_update_file(st, "pkg/mod5.py", NULL), CR_OK);
    idx_close(st);
    CHECK(snap_inode() == before);
    CHECK(verify());
    char *with = search_text(), *without = search_without_snapshot();
    CHECK_STR(with, without);
    free(with);
    free(without);
    IdxHit *hits = NULL;
    size_t n = 0;
    st = fixture_open(root, index_dir, 0);
    CHECK_INT(idx_search_bm25(st, "zebra crossing", 3, &hits, &n, NULL), CR_OK);
    CHECK(n >= 1);
    IdxChunk c = {0};
    if (n && idx_chunk_get(st, hits[0].chunk_id, &c, NULL) == CR_OK) {
        CHECK_STR(c.symbol, "zebra_crossing");
        idx_chunk_release(&c);
    }
    free(hits);
    CHECK_INT(idx_search_bm25(st, "settle_ledger_5_3", 3, &hits, &n, NULL), CR_OK);
    for (size_t i = 0; i < n; i++) {
        if (idx_chunk_get(st, hits[i].chunk_id, &c, NULL) != CR_OK) continue;
        CHECK(strcmp(c.path, "pkg/mod5.py") != 0); /* the removed file is gone */
        idx_chunk_release(&c);
    }
    free(hits);
    idx_close(st);

    /* Enough change since the snapshot: a full update writes a new one. */
    for (int m = 0; m < 8; m++)
        write_module(m, "def extra_tariff():\n    return 1\n");
    update_all();
    CHECK(snap_inode() != before);
    CHECK(verify());
}

/* Overwrites len bytes at off (from the end when off < 0). */
static void damage(long off, const char *bytes, size_t len)
{
    FILE *f = fopen(snap, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
    fwrite(bytes, 1, len, f);
    fclose(f);
}

static void test_damaged_snapshot(void)
{
    update_all();
    char good[320];
    snprintf(good, sizeof good, "%s.good", snap);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", snap, good);
    CHECK_INT(system(cmd), 0);
    char *want = search_without_snapshot();
    static const struct {
        long off;
        const char *bytes;
        size_t len;
        long truncate; /* >= 0: truncate to this size instead */
    } cases[] = {
        {0, "XXXX", 4, -1},         /* magic */
        {60, "\xff\xff", 2, -1},    /* header counts */
        {300, "\x01", 1, -1},       /* slot columns */
        {-1, "\x7f", 1, -1},        /* last posting */
        {-4000, "\x00\x00", 2, -1}, /* within the postings */
        {0, "", 0, 10},             /* shorter than a header */
        {0, "", 0, 4096},           /* cut short */
        {0, "", 0, 0},              /* empty */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, snap);
        CHECK_INT(system(cmd), 0);
        if (cases[i].truncate >= 0)
            CHECK_INT(truncate(snap, cases[i].truncate), 0);
        else
            damage(cases[i].off, cases[i].bytes, cases[i].len);
        CHECK(verify());
        char *got = search_text();
        if (strcmp(got, want) != 0) fprintf(stderr, "damage case %zu\n", i);
        CHECK_STR(got, want);
        free(got);
    }
    free(want);
    unlink(good);
}

static void test_foreign_snapshot(void)
{
    /* A snapshot of another database (a rebuilt index, a copied folder) is
     * never adopted, even when its generations look plausible. */
    char other[300], cmd[900];
    snprintf(other, sizeof other, "%s-other", index_dir);
    IdxConfig cfg = {.root = root, .index_dir = other, .threads = 1};
    IdxStore *st = NULL;
    mkdir(other, 0755);
    CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
    if (!st) return;
    write_module(1, "def only_in_other(x):\n    return x\n");
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    idx_close(st);
    write_module(1, NULL);
    update_all();
    snprintf(cmd, sizeof cmd, "cp '%s/postings.bin' '%s'", other, snap);
    CHECK_INT(system(cmd), 0);
    CHECK(verify());
    st = fixture_open(root, index_dir, 0);
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, "only_in_other", 3, &hits, &n, NULL), CR_OK);
    IdxChunk c = {0};
    for (size_t i = 0; i < n; i++) {
        if (idx_chunk_get(st, hits[i].chunk_id, &c, NULL) != CR_OK) continue;
        CHECK(strcmp(c.symbol, "only_in_other") != 0);
        idx_chunk_release(&c);
    }
    free(hits);
    idx_close(st);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", other);
    CHECK_INT(system(cmd), 0);
}

static void test_readonly_writes_nothing(void)
{
    unlink(snap);
    IdxStore *st = fixture_open(root, index_dir, IDX_OPEN_READONLY);
    IdxHit *hits = NULL;
    size_t n = 0;
    CHECK_INT(idx_search_bm25(st, "settle ledger", 3, &hits, &n, NULL), CR_OK);
    CHECK(n > 0);
    free(hits);
    idx_close(st);
    CHECK(access(snap, F_OK) != 0);
    /* A writable open that has to build them from the text saves them. */
    st = fixture_open(root, index_dir, 0);
    CHECK_INT(idx_warm(st, NULL), CR_OK);
    idx_close(st);
    CHECK(access(snap, F_OK) == 0);
}

/* The snapshot cut short in place (the same inode) while a store has it
 * open and has read part of it (issue 25: a mapping of it met SIGBUS past
 * the new end and killed the language server): every later search answers,
 * as a search without the snapshot does. */
static void test_truncated_while_open(void)
{
    update_all();
    char *want = search_without_snapshot();
    for (int ro = 0; ro < 2; ro++) {
        IdxStore *w = fixture_open(root, index_dir, 0); /* writes the snapshot when there is none */
        CHECK_INT(idx_warm(w, NULL), CR_OK);
        idx_close(w);
        struct stat sb;
        CHECK(stat(snap, &sb) == 0 && sb.st_size > 4 * 8192);
        IdxStore *st = fixture_open(root, index_dir, ro ? IDX_OPEN_READONLY : 0);
        if (!st) break;
        IdxHit *hits = NULL;
        size_t n = 0;
        CHECK_INT(idx_search_bm25(st, "zebra crossing", 10, &hits, &n, NULL), CR_OK);
        free(hits);
        CHECK_INT(truncate(snap, 8192), 0);
        char *got = search_on(st);
        CHECK_STR(got, want);
        free(got);
        idx_close(st);
    }
    free(want);
}

/* The snapshot's compressed lists decode to what was encoded, and bytes
 * that are not such a list (cut short, one byte too many, a slot that does
 * not grow) are refused rather than misread. */
static void test_list_codec(void)
{
    Posting l[5] = {{0, {1, 0, 0, 0}},
                    {1, {0, 0, 0, 255}},
                    {200, {3, 1, 2, 9}},
                    {70000, {0, 1, 0, 0}},
                    {4000000000u, {0, 0, 7, 0}}};
    StrBuf sb;
    sb_init(&sb);
    size_t n = idx_postings_encode(l, 5, &sb);
    CHECK_INT(n, sb.len);
    CHECK(n < sizeof l);
    Posting back[5];
    CHECK(idx_postings_decode((const unsigned char *)sb.buf, sb.len, back, 5));
    CHECK(!memcmp(back, l, sizeof l));
    CHECK(!idx_postings_decode((const unsigned char *)sb.buf, sb.len - 1, back, 5));
    CHECK(!idx_postings_decode((const unsigned char *)sb.buf, sb.len, back, 4));
    sb_addc(&sb, 0);
    CHECK(!idx_postings_decode((const unsigned char *)sb.buf, sb.len, back, 5));
    /* two postings of one slot */
    Posting same[2] = {{5, {1, 0, 0, 0}}, {5, {1, 0, 0, 0}}};
    sb_reset(&sb);
    idx_postings_encode(same, 2, &sb);
    CHECK(!idx_postings_decode((const unsigned char *)sb.buf, sb.len, back, 2));
    sb_release(&sb);
}

/* A snapshot of an index with no chunks (no slots: the arrays are never
 * made) is written and read back like any other. */
static void test_empty_snapshot(void)
{
    char tmpl[] = "/tmp/coderag-postings-empty.XXXXXX";
    if (!mkdtemp(tmpl)) return;
    char ws[300], idx[300];
    snprintf(ws, sizeof ws, "%s/ws", tmpl);
    snprintf(idx, sizeof idx, "%s/index", tmpl);
    mkdir(ws, 0755);
    for (int pass = 0; pass < 2; pass++) {
        IdxConfig cfg = {.root = ws, .index_dir = idx, .threads = 1};
        IdxStore *st = NULL;
        CHECK_INT(idx_open(&cfg, 0, &st, NULL), CR_OK);
        if (!st) break;
        CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
        IdxHit *hits = NULL;
        size_t n = 7;
        CHECK_INT(idx_search_bm25(st, "anything", 10, &hits, &n, NULL), CR_OK);
        CHECK_INT(n, 0);
        free(hits);
        idx_close(st);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
}

/* Every section of the snapshot damaged throughout, once with a byte
 * changed every 37 (every 3 in the term text), once zeroed (a zeroed hash table or term table reads
 * as terms that are not there: only their block checks tell): the first search that reads it meets
 * the damage, the snapshot is rebuilt (a new file), and every answer is a build from the text's. */
static void test_damaged_sections(void)
{
    update_all();
    char *want = search_without_snapshot();
    char good[320], cmd[800];
    snprintf(good, sizeof good, "%s.good", snap);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", snap, good);
    CHECK_INT(system(cmd), 0);
    PostFileHeader h;
    FILE *f = fopen(snap, "rb");
    CHECK(f && fread(&h, sizeof h, 1, f) == 1);
    if (f) fclose(f);
    const uint64_t at[] = {h.off_term, h.off_str, h.off_hash, h.off[SEC_SLOTS], h.off[SEC_TCHECK]};
    const uint64_t len[] = {h.term_len, h.str_len, h.n_hash * 4, h.slot_bytes,
                            (h.n_terms + POST_TERM_BLOCK - 1) / POST_TERM_BLOCK * 12};
    for (size_t i = 0; i < 2 * sizeof at / sizeof at[0]; i++) {
        size_t sec = i / 2;
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, snap);
        CHECK_INT(system(cmd), 0);
        ino_t before = snap_inode();
        /* The term text is checked per term read (by its hash), not per
         * block: a byte every 3 lands in every term a query reads. */
        for (uint64_t k = 0; k < len[sec]; k += i % 2 ? 1 : sec == 1 ? 3 : 37)
            damage((long)(at[sec] + k), i % 2 ? "\0" : "\x5a", 1);
        char *got = search_text();
        if (strcmp(got, want) != 0) fprintf(stderr, "damaged section %zu\n", i);
        CHECK_STR(got, want);
        CHECK(snap_inode() != before);
        free(got);
    }
    free(want);
    unlink(good);
}

static IdxStore *open_budget(unsigned flags, size_t budget)
{
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 2, .postings_budget = budget};
    IdxStore *st = NULL;
    CHECK_INT(idx_open(&cfg, flags, &st, NULL), CR_OK);
    return st;
}

/* No temporary file of the postings left in the index folder. */
static int no_leftovers(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -q 'tmp$'", index_dir);
    return system(cmd) != 0;
}

/* Postings built under a budget of a few bytes (every chunk's lists
 * spilled as a run): searched while spilled (read back through the runs),
 * saved (the runs merged), updated, and checked against a build held in
 * memory: the same answers throughout. */
/* The n modules' mtimes an hour back: a file changed within two seconds
 * of its read has no trusted mtime and is read again by the next pass
 * (update.c), however fast the test runs. */
static void backdate_modules(int n)
{
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= 3600;
    t[1] = t[0];
    for (int m = 0; m < n; m++) {
        char p[512];
        snprintf(p, sizeof p, "%s/pkg/mod%d.py", root, m);
        CHECK_INT(utimensat(AT_FDCWD, p, t, 0), 0);
    }
}

static void test_spilled_build(void)
{
    backdate_modules(40);
    update_all();
    char *want = search_without_snapshot();
    char moved[320];
    snprintf(moved, sizeof moved, "%s.aside", snap);
    CHECK_INT(rename(snap, moved), 0);
    /* built from the text into runs, merged into a snapshot, which then answers */
    IdxStore *st = open_budget(0, 1);
    CHECK_INT(idx_warm(st, NULL), CR_OK);
    idx_close(st);
    CHECK(access(snap, F_OK) == 0);
    char *got = search_text();
    CHECK_STR(got, want);
    free(got);
    CHECK(verify());
    CHECK(no_leftovers());
    /* an update over the snapshot, not loaded: too few files to make it
     * stale, so the pass leaves the postings alone (the search adds the
     * file written since the snapshot) */
    write_module(3, "def zebra_crossing_tariff(x):\n    return x\n");
    st = open_budget(0, 1);
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK(st && !st->post);
    char *cold_after = search_on(st);
    idx_close(st);
    char *cold_fresh = search_without_snapshot();
    CHECK_STR(cold_after, cold_fresh);
    free(cold_after);
    free(cold_fresh);
    write_module(3, "def zebra_crossing_tariffs(x):\n    return x\n");
    /* one over the snapshot loaded under the budget: its chunks spilled,
     * too few to write a new snapshot, searched through the runs */
    st = open_budget(0, 1);
    CHECK_INT(idx_warm(st, NULL), CR_OK);
    CHECK_INT(idx_update(st, NULL, NULL, NULL, NULL), CR_OK);
    CHECK(st && st->post && st->post->n_runs > 5);
    char *after = search_on(st);
    ErrInfo e = {0};
    CHECK_INT(idx_verify(st, &e), CR_OK);
    idx_close(st);
    char *fresh = search_without_snapshot();
    CHECK_STR(after, fresh);
    CHECK(verify());
    CHECK(no_leftovers());
    write_module(3, NULL);
    update_all();
    unlink(moved);
    free(after);
    free(fresh);
    free(want);
}

/* A file's terms stemmed by a parse worker (FileTerms, index/postings/stem.c) make
 * the postings its text makes: the same terms in the same order, the same
 * frequencies per field and the same field lengths, for a term repeated in
 * a field, across fields and across chunks, and for empty fields. */
static void test_worker_terms(void)
{
    static const char *const text[3][4] = {
        {"settle ledger", "pkg mod", "settles the ledgers ledger", "ledger ledger tariff settle"},
        {"tariff", "pkg mod", "", "amount amount tariffs settle"},
        {"", "", "", ""},
    };
    IdxStore *st = fixture_open(root, index_dir, 0);
    if (!st) return;
    ErrInfo e = {0};
    Postings *a = NULL, *b = NULL;
    Stemmer *m = NULL;
    CHECK_INT(idx_postings_new(st, &a, &e), CR_OK);
    CHECK_INT(idx_postings_new(st, &b, &e), CR_OK);
    CHECK_INT(idx_stemmer_new(st, &m, &e), CR_OK);
    if (!a || !b || !m) goto out;
    FileTerms ft = {0};
    for (int c = 0; c < 3; c++)
        for (int f = 0; f < 4; f++)
            idx_fileterms_add_field(&ft, m, text[c][f]);
    CHECK(ft.ids.n > 5 && ft.ids.n < 64);
    uint32_t gid[64];
    memset(gid, 0xff, sizeof gid);
    for (int c = 0; c < 3; c++) {
        idx_postings_add_terms(a, 100 + c, 7, IDX_KIND_FUNCTION, &ft, (size_t)c, gid);
        idx_postings_add(b, 100 + c, 7, IDX_KIND_FUNCTION, text[c]);
    }
    char why[256] = "";
    CHECK(idx_postings_same(a, b, why, sizeof why));
    CHECK_INT(a->n_terms, b->n_terms);
    CHECK_INT(a->n_slots, 3);
    CHECK_INT(b->n_slots, 3);
    for (size_t s = 0; s < 3 && a->n_slots == 3 && b->n_slots == 3; s++)
        CHECK(!memcmp(a->len[s], b->len[s], sizeof a->len[s]));
    for (size_t t = 0; t < a->n_terms && t < b->n_terms; t++) {
        uint32_t na, nb;
        CHECK_STR(idx_postings_term_text(a, (uint32_t)t, &na),
                  idx_postings_term_text(b, (uint32_t)t, &nb));
        CHECK_INT(a->lists[t].n, b->lists[t].n);
        if (a->lists[t].n == b->lists[t].n)
            CHECK(!memcmp(a->lists[t].p, b->lists[t].p, a->lists[t].n * sizeof(Posting)));
    }
    /* "ledger" (stemmed) twice in chunk 0's body, once in its name */
    uint32_t ledger = UINT32_MAX;
    for (size_t t = 0; t < a->n_terms; t++) {
        uint32_t n;
        if (!strcmp(idx_postings_term_text(a, (uint32_t)t, &n), "ledger")) ledger = (uint32_t)t;
    }
    CHECK(ledger != UINT32_MAX);
    if (ledger != UINT32_MAX) {
        CHECK_INT(a->lists[ledger].n, 1);
        CHECK_INT(a->lists[ledger].p[0].tf[0], 1);
        CHECK_INT(a->lists[ledger].p[0].tf[2], 2);
        CHECK_INT(a->lists[ledger].p[0].tf[3], 2);
    }
    idx_fileterms_release(&ft);
out:
    idx_stemmer_free(m);
    idx_postings_free(a);
    idx_postings_free(b);
    idx_close(st);
}

int main(void)
{
    char tmpl[] = "/tmp/coderag-postings.XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    snprintf(root, sizeof root, "%s/ws", tmpl);
    snprintf(index_dir, sizeof index_dir, "%s/index", tmpl);
    snprintf(snap, sizeof snap, "%s/postings.bin", index_dir);
    char p[512];
    mkdir(root, 0755);
    snprintf(p, sizeof p, "%s/pkg", root);
    mkdir(p, 0755);
    for (int m = 0; m < 40; m++)
        write_module(m, NULL);
    RUN(test_list_codec);
    RUN(test_worker_terms);
    RUN(test_empty_snapshot);
    RUN(test_written_and_used);
    RUN(test_changes_since_snapshot);
    RUN(test_damaged_snapshot);
    RUN(test_foreign_snapshot);
    RUN(test_readonly_writes_nothing);
    RUN(test_truncated_while_open);
    RUN(test_damaged_sections);
    RUN(test_spilled_build);
    snprintf(p, sizeof p, "rm -rf '%s'", tmpl);
    if (system(p) != 0) fprintf(stderr, "cleanup failed\n");
    return test_summary();
}
