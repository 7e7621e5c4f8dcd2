/*
 * fuzz_postings.c - the search postings snapshot (index/postings/postings_file.c,
 * postings_base.c) read back from bytes that are not what was written. A
 * real snapshot of a small workspace is made once. An input is edits to
 * it: its first byte says whether the header's and the open sections'
 * checks are then made right again (odd) so that the damage reaches past
 * the open, its next four a length to cut the file to (when less than the
 * file's), then (4-byte offset, byte) pairs. A store opened read-only over
 * the result answers a few searches: never a crash, an abort or a hang,
 * and, when the checks were left as the edits made them, the answers of a
 * store without the snapshot (every damage that matters is met by a check).
 */
#include "idx.h"
#include "index/postings/postings_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base_dir[64], root[128], index_dir[128], snap[160];
static unsigned char *good;
static size_t good_len;
static char *want;

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base_dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_postings: could not remove %s\n", base_dir);
    free(good);
    free(want);
}

/* The top hits of a few searches on a read-only store, as text. */
static char *answers(void)
{
    static const char *const queries[] = {"ledger tariff", "settle_ledger", "amount", "zebra"};
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1};
    IdxStore *st = NULL;
    if (idx_open(&cfg, IDX_OPEN_READONLY, &st, NULL) != CR_OK) abort();
    StrBuf sb;
    sb_init(&sb);
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        IdxHit *hits = NULL;
        size_t n = 0;
        if (idx_search_bm25(st, queries[q], 8, &hits, &n, NULL) != CR_OK) abort();
        for (size_t i = 0; i < n; i++)
            sb_addf(&sb, "%lld:%.5f ", (long long)hits[i].chunk_id, hits[i].score);
        sb_addc(&sb, '\n');
        free(hits);
    }
    idx_close(st);
    return sb_detach(&sb, NULL);
}

static void setup(void)
{
    char p[256];
    strcpy(base_dir, "/tmp/fuzz_postings.XXXXXX");
    if (!mkdtemp(base_dir)) abort();
    snprintf(root, sizeof root, "%s/ws", base_dir);
    snprintf(index_dir, sizeof index_dir, "%s/index", base_dir);
    snprintf(snap, sizeof snap, "%s/postings.bin", index_dir);
    mkdir(root, 0755);
    for (int m = 0; m < 6; m++) {
        StrBuf sb;
        sb_init(&sb);
        for (int k = 0; k < 8; k++)
            sb_addf(&sb,
                    "def settle_ledger_%d_%d(tariff, amount):\n    \"\"\"Ledger %d.\"\"\"\n"
                    "    return tariff * amount + %d\n\n",
                    m, k, k, m);
        snprintf(p, sizeof p, "%s/mod%d.py", root, m);
        put(p, sb.buf);
        sb_release(&sb);
    }
    IdxConfig cfg = {.root = root, .index_dir = index_dir, .threads = 1};
    IdxStore *st = NULL;
    ErrInfo e = {0};
    if (idx_open(&cfg, 0, &st, &e) != CR_OK || idx_update(st, NULL, NULL, NULL, &e) != CR_OK) {
        fprintf(stderr, "fuzz_postings setup: %s\n", e.msg);
        abort();
    }
    idx_close(st);
    StrBuf sb;
    sb_init(&sb);
    if (sb_read_file(&sb, snap, (size_t)1 << 24, NULL) != CR_OK) abort();
    good_len = sb.len;
    good = (unsigned char *)sb_detach(&sb, NULL);
    unlink(snap);
    want = answers(); /* read-only: built from the text, no snapshot written */
    atexit(cleanup);
}

/* Makes the header's checks, and those of the sections an open reads
 * whole, those of the bytes as they are (when the header places them). */
static void resign(unsigned char *b, size_t len)
{
    PostFileHeader h;
    if (len < sizeof h) return;
    memcpy(&h, b, sizeof h);
    for (int i = 0; i < N_READ; i++) {
        uint64_t n = idx_postfile_sec_len(&h, i);
        if (h.off[i] <= len && n <= len - h.off[i])
            h.sec_check[i] = idx_postfile_sec_check(b + h.off[i], n);
    }
    h.checksum = idx_postfile_header_check(&h);
    memcpy(b, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!good) setup();
    if (size < 5 || size > 4096) return 0;
    unsigned char *b = malloc(good_len);
    memcpy(b, good, good_len);
    uint32_t cut;
    memcpy(&cut, data + 1, 4);
    size_t len = cut < good_len ? cut : good_len;
    for (size_t i = 5; i + 5 <= size; i += 5) {
        uint32_t off;
        memcpy(&off, data + i, 4);
        if (len) b[off % len] = data[i + 4];
    }
    int resigned = data[0] & 1;
    if (resigned) resign(b, len);
    FILE *f = fopen(snap, "wb");
    if (!f || fwrite(b, 1, len, f) != len) abort();
    fclose(f);
    free(b);
    char *got = answers();
    if (!resigned && strcmp(got, want) != 0) {
        fprintf(stderr, "fuzz_postings: answers differ from a build without the snapshot\n");
        abort();
    }
    free(got);
    return 0;
}
