#include "postings_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The postings snapshot, <index_dir>/postings.bin: written whole to a
 * temporary file and renamed into place, and trusted only for the database
 * (db_id) and generation its header names. Every file written since that
 * generation carries a higher files.gen, so opening costs reading the
 * header and the per-slot arrays, and the re-tokenizing of what changed
 * since; the terms a question names are read then (postings_base.c).
 *
 * Layout, each section 8-aligned: the header; the postings (per term, in
 * term order); the terms (packed by blocks, idx_postterm_pack); their text; their hash table (term
 * index + 1, 0 empty, by hash64 of the text); the live slots' columns
 * (chunk id, file id and field lengths packed, idx_postslots_pack; kind); the offsets and checks of
 * the term blocks; the checks of the hash blocks. The header carries a check of each section read
 * whole at open and is checked itself; each term block, hash block, text
 * and list is checked when read. Written in one pass over the lists
 * (memory, runs and the old snapshot merged term by term), the terms and
 * their text through two unlinked side files: a save holds no section in
 * memory but the hash table. */

enum { PIECE = 1 << 20 };

uint64_t idx_postfile_fold(uint64_t sum, const void *piece, size_t n)
{
    return sum * 0x9e3779b97f4a7c15ull ^ hash64(piece, n);
}

/* A section's check: over its pieces of PIECE bytes, then its length (so
 * that a writer can compute it as it streams). */
uint64_t idx_postfile_sec_check(const void *data, uint64_t len)
{
    uint64_t sum = 0;
    for (uint64_t at = 0; at < len; at += PIECE)
        sum = idx_postfile_fold(sum, (const char *)data + at,
                                (size_t)(len - at < PIECE ? len - at : PIECE));
    return idx_postfile_fold(sum, &len, sizeof len);
}

uint64_t idx_postfile_header_check(const PostFileHeader *h)
{
    PostFileHeader c = *h;
    c.checksum = 0;
    return hash64(&c, sizeof c);
}

uint64_t idx_postfile_sec_len(const PostFileHeader *h, int i)
{
    switch (i) {
    case SEC_SLOTS:
        return h->slot_bytes;
    case SEC_KIND:
        return h->n_slots;
    case SEC_TCHECK: /* per block its offset (8 bytes), then per block its check (4) */
        return (h->n_terms + POST_TERM_BLOCK - 1) / POST_TERM_BLOCK * 12;
    default:
        return (h->n_hash + POST_HASH_BLOCK - 1) / POST_HASH_BLOCK * 4;
    }
}

void idx_postfile_path(const IdxStore *st, char *out, size_t cap)
{
    snprintf(out, cap, "%s/postings.bin", st->index_dir);
}

/* A section of n bytes at off lies within the file, past the header. */
static int section_ok(const PostFileHeader *h, uint64_t off, uint64_t n)
{
    return off >= sizeof *h && off % 8 == 0 && off <= h->file_len && n <= h->file_len - off;
}

static int header_ok(const PostFileHeader *h, const char *db_id, uint64_t len)
{
    if (memcmp(h->magic, POSTFILE_MAGIC, 8) || h->version != POSTFILE_VERSION ||
        h->endian != POSTFILE_ENDIAN || h->file_len != len ||
        h->checksum != idx_postfile_header_check(h) || strncmp(h->db_id, db_id, sizeof h->db_id) ||
        h->n_terms >= UINT32_MAX || h->n_slots >= UINT32_MAX || !h->n_hash ||
        (h->n_hash & (h->n_hash - 1)) || h->n_hash <= h->n_terms || h->n_hash > ((uint64_t)1 << 40))
        return 0;
    if (!section_ok(h, h->off_post, h->n_post) || !section_ok(h, h->off_term, h->term_len) ||
        !section_ok(h, h->off_str, h->str_len) || !section_ok(h, h->off_hash, h->n_hash * 4))
        return 0;
    for (int i = 0; i < N_READ; i++)
        if (!section_ok(h, h->off[i], idx_postfile_sec_len(h, i))) return 0;
    return 1;
}

/* Reads <index_dir>/postings.bin into p (empty, fresh from
 * idx_postings_new) when it is whole, of this database (db_id) and of this
 * format; returns 0 (p untouched) otherwise. */
static int idx_postings_map(IdxStore *st, Postings *p, const char *db_id)
{
    char path[PATH_MAX];
    struct stat sb;
    PostFileHeader h;
    idx_postfile_path(st, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
    if (fd < 0) return 0;
    /* The header, checked, then the sections it says an open needs: read,
     * never mapped (a mapped file truncated under the server would kill it). */
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size >= sizeof h &&
             file_pread_all(fd, &h, sizeof h, 0) && header_ok(&h, db_id, (uint64_t)sb.st_size);
    size_t n = ok ? (size_t)h.n_slots : 0;
    uint32_t *hcheck = NULL;
    uint64_t *tcheck = NULL; /* the block offsets, then their checks */
    if (ok) {
        idx_postings_add_slots(p, n);
        tcheck = xmalloc((size_t)idx_postfile_sec_len(&h, SEC_TCHECK) + 8);
        hcheck = xmalloc((size_t)idx_postfile_sec_len(&h, SEC_HCHECK) + 4);
        unsigned char *slots = xmalloc((size_t)h.slot_bytes + 1);
        void *const dst[N_READ] = {slots, p->kind, tcheck, hcheck};
        for (int i = 0; i < N_READ && ok; i++) {
            uint64_t len = idx_postfile_sec_len(&h, i);
            ok = (!len || file_pread_all(fd, dst[i], (size_t)len, h.off[i])) &&
                 idx_postfile_sec_check(dst[i], len) == h.sec_check[i];
        }
        ok = ok && idx_postslots_unpack(slots, (size_t)h.slot_bytes, n, p->chunk, p->file, p->len);
        free(slots);
        if (!ok) p->n_slots = 0; /* the arrays stay, empty: p as it was */
    }
    if (!ok) {
        if (sb.st_size) log_msg(LOG_INFO, "%s: not usable; rebuilding the search postings", path);
        free(tcheck);
        free(hcheck);
        close(fd);
        return 0;
    }
    PostBase *b = &p->base;
    b->have = 1;
    b->fd = fd;
    b->post_at = h.off_post;
    b->n_post = h.n_post;
    b->term_at = h.off_term;
    b->str_at = h.off_str;
    b->hash_at = h.off_hash;
    b->n_terms = (uint32_t)h.n_terms;
    b->n_hash = h.n_hash;
    b->str_len = h.str_len;
    b->term_len = h.term_len;
    b->toff = tcheck;
    b->tcheck = (uint32_t *)(tcheck + (h.n_terms + POST_TERM_BLOCK - 1) / POST_TERM_BLOCK);
    b->hcheck = hcheck;
    b->n_files = h.n_files;
    b->gen = h.gen;
    b->tblock_at = b->hblock_at = -1;
    b->checked = xcalloc(h.n_terms + 1, 1);
    b->lists = xcalloc(h.n_terms + 1, sizeof *b->lists);
    idx_postings_reserve_terms(p, h.n_terms);
    p->n_base_slots = n;
    memcpy(p->len_sum, h.len_sum, sizeof p->len_sum);
    return 1;
}

static int64_t count_files_upto(IdxStore *st, int64_t gen)
{
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM files WHERE gen <= ?1", -1, &s, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(s, 1, gen);
        if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return n;
}

static int64_t count_files_since(IdxStore *st, int64_t gen)
{
    sqlite3_stmt *s = NULL;
    int64_t n = -1;
    if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM files WHERE gen > ?1", -1, &s, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(s, 1, gen);
        if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    return n;
}

/* Tombstones the snapshot's slots whose file changed or went since it was
 * written: every file written later carries a higher generation. */
static CrErr drop_changed_files(IdxStore *st, Postings *p, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    I64Map same;
    i64map_init(&same);
    if (sqlite3_prepare_v2(st->db, "SELECT id FROM files WHERE gen <= ?1", -1, &s, NULL) !=
        SQLITE_OK)
        return idx_store_err(st, e, "load search postings");
    sqlite3_bind_int64(s, 1, p->base.gen);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
        i64map_put(&same, sqlite3_column_int64(s, 0), 1);
    sqlite3_finalize(s);
    if (step != SQLITE_DONE) {
        i64map_release(&same);
        return idx_store_err(st, e, "load search postings");
    }
    /* a file's slots are consecutive: one lookup per file, not per slot */
    int64_t last = 0;
    int last_same = 0;
    for (size_t i = 0; i < p->n_base_slots; i++) {
        if (!i || p->file[i] != last) {
            last = p->file[i];
            last_same = i64map_get(&same, last, NULL);
        }
        if (last_same) continue;
        p->dead[i] = 1;
        p->n_dead++;
        for (int f = 0; f < N_FIELDS; f++)
            p->len_sum[f] -= (double)p->len[i][f];
    }
    i64map_release(&same);
    return CR_OK;
}

CrErr idx_postings_load(IdxStore *st, int use_snapshot, Postings **out, ErrInfo *e)
{
    char db_id[40], gen_text[32];
    Postings *p = NULL;
    int own_txn = sqlite3_get_autocommit(st->db);
    CrErr rc;
    *out = NULL;
    /* One read transaction: the snapshot's complement comes from one state. */
    if (own_txn && (rc = idx_store_exec(st, "BEGIN", e))) return rc;
    if ((rc = idx_postings_new(st, &p, e))) goto out;
    if ((rc = idx_store_meta_get(st, "db_id", db_id, sizeof db_id, e)) == CR_EDB ||
        (rc = idx_store_meta_get(st, "gen", gen_text, sizeof gen_text, e)) == CR_EDB)
        goto out;
    if (use_snapshot && db_id[0] && idx_postings_map(st, p, db_id) &&
        p->base.gen > atoll(gen_text)) {
        /* A snapshot ahead of its database cannot describe it. */
        idx_postings_free(p);
        if ((rc = idx_postings_new(st, &p, e))) goto out;
    }
    /* Rows are only ever added with a higher generation: as many files up
     * to the snapshot's generation as it saw means none of them went. */
    if (p->base.have && count_files_upto(st, p->base.gen) != (int64_t)p->base.n_files &&
        (rc = drop_changed_files(st, p, e)))
        goto out;
    rc = idx_postings_add_files_since(st, p, p->base.have ? p->base.gen : -1, e);
out:
    if (own_txn) idx_store_exec(st, rc ? "ROLLBACK" : "COMMIT", NULL);
    if (rc) {
        idx_postings_free(p);
        return rc;
    }
    *out = p;
    return CR_OK;
}

int idx_postings_pass_follows(IdxStore *st, size_t n_writes)
{
    char db_id[40], path[PATH_MAX];
    struct stat sb;
    PostFileHeader h;
    if (st->post_distrust || idx_store_meta_get(st, "db_id", db_id, sizeof db_id, NULL) ||
        !db_id[0])
        return 1;
    idx_postfile_path(st, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return 1;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size >= sizeof h &&
             file_pread_all(fd, &h, sizeof h, 0) && header_ok(&h, db_id, (uint64_t)sb.st_size);
    close(fd);
    if (!ok || !h.n_files) return 1;
    /* the files written since the snapshot and by this pass, each a file's
     * slots dead and as many added, at the snapshot's slots per file:
     * idx_postings_stale's rule (files removed since are not counted) */
    int64_t since = count_files_since(st, h.gen);
    if (since < 0) return 1;
    double changed =
        2.0 * (double)(since + (int64_t)n_writes) * (double)h.n_slots / (double)h.n_files;
    return changed >= 64 && changed * 200 > (double)h.n_slots;
}

int idx_postings_stale(const Postings *p)
{
    size_t changed = p->n_slots - p->n_base_slots + p->n_dead;
    size_t live = p->n_slots - p->n_dead;
    return !p->base.have || (changed >= 64 && changed * 200 > live);
}

CrErr idx_postings_current_gen(IdxStore *st, int64_t post_version, PostingsGen *out, ErrInfo *e)
{
    char gen_text[32];
    memset(out, 0, sizeof *out);
    out->gen = -1;
    CrErr rc = idx_store_exec(st, "BEGIN", e);
    if (rc) return rc;
    if ((rc = idx_store_meta_get(st, "db_id", out->db_id, sizeof out->db_id, e)) == CR_EDB ||
        (rc = idx_store_meta_get(st, "gen", gen_text, sizeof gen_text, e)) == CR_EDB) {
        idx_store_exec(st, "ROLLBACK", NULL);
        return rc;
    }
    /* Another process's commit since the postings were loaded: they no
     * longer describe the database (the next load catches up). */
    if (idx_store_data_version(st) == post_version && out->db_id[0]) {
        out->gen = atoll(gen_text);
        out->n_files = count_files_upto(st, out->gen);
    }
    idx_store_exec(st, "COMMIT", NULL);
    return CR_OK;
}
