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
 * generation carries a higher files.gen, so opening costs a map, a check
 * and the re-tokenizing of what changed since. */

#define POSTFILE_MAGIC "CRPOST\0\1"
#define POSTFILE_VERSION 3
#define POSTFILE_ENDIAN 0x01020304u

typedef struct PostFileHeader {
    char magic[8];
    uint32_t version;
    uint32_t endian;
    char db_id[40];
    int64_t gen;
    uint64_t n_files; /* files rows of generation <= gen when written */
    uint64_t n_slots, n_terms, n_post, n_hash, str_len;
    double len_sum[N_FIELDS];
    uint64_t off_chunk, off_file, off_len, off_kind, off_term, off_hash, off_str, off_post;
    uint64_t file_len;
    uint64_t checksum; /* file_checksum */
} PostFileHeader;

/* Pads body so the next section starts 8-aligned in the file; returns its offset. */
static uint64_t section_start(StrBuf *body)
{
    while ((sizeof(PostFileHeader) + body->len) % 8)
        sb_addc(body, '\0');
    return sizeof(PostFileHeader) + body->len;
}

/* Covers the header (this field 0) and every section before the postings,
 * each section by itself (so that a reader can read each straight where it
 * goes); each term's postings carry a check of their own, verified when
 * first read (idx_postings_base_list): an open reads what a question needs,
 * not all. sec[i] holds the bytes of section i (chunk, file, len, kind,
 * term, hash, str). */
enum { N_SECTIONS = 7 };
static uint64_t file_checksum(const PostFileHeader *h, const void *const sec[N_SECTIONS])
{
    PostFileHeader c = *h;
    c.checksum = 0;
    const uint64_t len[N_SECTIONS] = {h->n_slots * 8,
                                      h->n_slots * 8,
                                      h->n_slots * 4 * N_FIELDS,
                                      h->n_slots,
                                      h->n_terms * sizeof(PostTerm),
                                      h->n_hash * 4,
                                      h->str_len};
    uint64_t sum = hash64(&c, sizeof c);
    for (int i = 0; i < N_SECTIONS; i++)
        sum = sum * 0x9e3779b97f4a7c15ull ^ hash64(len[i] ? sec[i] : "", (size_t)len[i]);
    return sum;
}

static void postfile_path(const IdxStore *st, char *out, size_t cap)
{
    snprintf(out, cap, "%s/postings.bin", st->index_dir);
}

static int section_ok(const PostFileHeader *h, uint64_t off, uint64_t n, uint64_t size)
{
    return off >= sizeof *h && off % 8 == 0 && n <= (h->file_len - off) / (size ? size : 1) &&
           off + n * size <= h->file_len;
}

int idx_postings_map(IdxStore *st, Postings *p, const char *db_id)
{
    char path[PATH_MAX];
    struct stat sb;
    PostFileHeader hd;
    postfile_path(st, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
    if (fd < 0) return 0;
    size_t len = 0;
    /* The header first, then the head it describes: read, never mapped (a
     * mapped file truncated under the server would kill it). */
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
             (size_t)sb.st_size >= sizeof(PostFileHeader) && file_pread_all(fd, &hd, sizeof hd, 0);
    if (ok) len = (size_t)sb.st_size;
    const PostFileHeader *h = &hd;
    ok = ok && !memcmp(h->magic, POSTFILE_MAGIC, 8) && h->version == POSTFILE_VERSION &&
         h->endian == POSTFILE_ENDIAN && h->file_len == len &&
         !strncmp(h->db_id, db_id, sizeof h->db_id) && h->n_terms < UINT32_MAX &&
         h->n_slots < UINT32_MAX && h->n_hash && !(h->n_hash & (h->n_hash - 1)) &&
         section_ok(h, h->off_chunk, h->n_slots, 8) && section_ok(h, h->off_file, h->n_slots, 8) &&
         section_ok(h, h->off_len, h->n_slots, 4 * N_FIELDS) &&
         section_ok(h, h->off_kind, h->n_slots, 1) &&
         section_ok(h, h->off_term, h->n_terms, sizeof(PostTerm)) &&
         section_ok(h, h->off_hash, h->n_hash, 4) && section_ok(h, h->off_str, h->str_len, 1) &&
         section_ok(h, h->off_post, h->n_post, 1) && h->off_post >= sizeof *h &&
         /* the head's sections all end where the postings start */
         h->off_chunk + h->n_slots * 8 <= h->off_post &&
         h->off_file + h->n_slots * 8 <= h->off_post &&
         h->off_len + h->n_slots * 4 * N_FIELDS <= h->off_post &&
         h->off_kind + h->n_slots <= h->off_post &&
         h->off_term + h->n_terms * sizeof(PostTerm) <= h->off_post &&
         h->off_hash + h->n_hash * 4 <= h->off_post && h->off_str + h->str_len <= h->off_post;
    /* What a question reads (terms, their hash and text) is read into one
     * block kept for the store's life; the per-slot arrays straight into
     * the Postings' own. Nothing is copied twice. */
    uint64_t keep = h->off_term;
    if (h->off_hash < keep) keep = h->off_hash;
    if (h->off_str < keep) keep = h->off_str;
    size_t n = (size_t)h->n_slots;
    unsigned char *kept = NULL;
    if (ok) {
        kept = xmalloc((size_t)(h->off_post - keep) + 1);
        idx_postings_add_slots(p, n);
        ok = file_pread_all(fd, kept, (size_t)(h->off_post - keep), keep) &&
             (!n || (file_pread_all(fd, p->chunk, n * 8, h->off_chunk) &&
                     file_pread_all(fd, p->file, n * 8, h->off_file) &&
                     file_pread_all(fd, p->len, n * 4 * N_FIELDS, h->off_len) &&
                     file_pread_all(fd, p->kind, n, h->off_kind)));
        const void *sec[N_SECTIONS] = {p->chunk,
                                       p->file,
                                       p->len,
                                       p->kind,
                                       kept + (h->off_term - keep),
                                       kept + (h->off_hash - keep),
                                       kept + (h->off_str - keep)};
        ok = ok && h->checksum == file_checksum(h, sec);
        if (!ok) p->n_slots = 0; /* the arrays stay, empty: p as it was */
    }
    if (!ok) {
        if (len) log_msg(LOG_INFO, "%s: not usable; rebuilding the search postings", path);
        free(kept);
        close(fd);
        return 0;
    }
    PostBase *b = &p->base;
    b->map = kept;
    b->fd = fd;
    b->post_at = h->off_post;
    b->term = (const PostTerm *)(kept + (h->off_term - keep));
    b->n_terms = (uint32_t)h->n_terms;
    b->hash = (const uint32_t *)(kept + (h->off_hash - keep));
    b->str_len = h->str_len;
    b->n_files = h->n_files;
    b->n_hash = h->n_hash;
    b->str = (const char *)(kept + (h->off_str - keep));
    b->n_post = h->n_post;
    b->gen = h->gen;
    b->checked = xcalloc(h->n_terms + 1, 1);
    b->lists = xcalloc(h->n_terms + 1, sizeof *b->lists);
    idx_postings_reserve_terms(p, h->n_terms);
    p->n_base_slots = n;
    memcpy(p->len_sum, h->len_sum, sizeof p->len_sum);
    return 1;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *c = buf;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* What a snapshot holds, gathered before it is laid out: everything but
 * the postings themselves, which are written straight from the lists
 * (postimage__write_posts), never copied whole. */
typedef struct PostImage {
    uint32_t *remap; /* slot -> live slot number, UINT32_MAX: dead */
    uint32_t live;
    PostTerm *terms;
    uint32_t *src; /* per image term: its term id in the Postings */
    size_t n_terms, cap_terms, cap_src;
    size_t n_post;
    uint32_t *hash;
    uint64_t n_hash;
    StrBuf str;
} PostImage;

static void postimage__release(PostImage *im)
{
    free(im->remap);
    free(im->terms);
    free(im->src);
    free(im->hash);
    sb_release(&im->str);
}

/* The live postings of term t, renumbered, into *buf (grown as needed). */
static size_t live_postings(Postings *p, const PostImage *im, uint32_t t, Posting **buf,
                            size_t *cap)
{
    const TermList *l = &p->lists[t];
    uint32_t n_base;
    const Posting *bp = idx_postings_base_list(p, t, &n_base);
    size_t n = 0;
    for (uint32_t i = 0; i < n_base + l->n; i++) {
        Posting po = i < n_base ? bp[i] : l->p[i - n_base];
        if (po.slot >= p->n_slots || im->remap[po.slot] == UINT32_MAX) continue;
        po.slot = im->remap[po.slot];
        if (buf) {
            ARRAY_GROW(*buf, n + 1, *cap);
            (*buf)[n] = po;
        }
        n++;
    }
    return n;
}

/* Live slots renumbered in order (dead ones dropped); each term with live
 * postings, its text and where its postings go; the terms' hash table. */
static void postimage__collect(Postings *p, PostImage *im)
{
    char **added = idx_postings_added_terms(p);
    sb_init(&im->str);
    im->remap = xmalloc((p->n_slots + 1) * sizeof *im->remap);
    for (size_t i = 0; i < p->n_slots; i++)
        im->remap[i] = p->dead[i] ? UINT32_MAX : im->live++;
    Posting *list = NULL;
    size_t cap = 0;
    for (uint32_t t = 0; t < p->n_terms; t++) {
        size_t n = live_postings(p, im, t, &list, &cap);
        if (!n) continue;
        uint32_t len;
        const char *s = idx_postings_term_text(p, added, t, &len);
        ARRAY_GROW(im->terms, im->n_terms + 1, im->cap_terms);
        ARRAY_GROW(im->src, im->n_terms + 1, im->cap_src);
        im->src[im->n_terms] = t;
        PostTerm *pt = &im->terms[im->n_terms++];
        memset(pt, 0, sizeof *pt);
        pt->str_off = im->str.len;
        pt->str_len = len;
        pt->n = (uint32_t)n;
        pt->post_off = im->n_post;
        pt->bytes = (uint32_t)idx_postings_encode(list, n, NULL);
        im->n_post += pt->bytes;
        sb_add(&im->str, s, len);
    }
    free(added);
    free(list);
    im->n_hash = 64;
    while (im->n_hash < (uint64_t)im->n_terms * 2)
        im->n_hash *= 2;
    im->hash = xcalloc(im->n_hash, sizeof *im->hash);
    for (size_t t = 0; t < im->n_terms; t++) {
        uint64_t i =
            hash64(im->str.buf + im->terms[t].str_off, im->terms[t].str_len) & (im->n_hash - 1);
        while (im->hash[i])
            i = (i + 1) & (im->n_hash - 1);
        im->hash[i] = (uint32_t)t + 1;
    }
}

static int write_all(int fd, const void *buf, size_t n);

/* Writes every term's postings at fd's offset (off_post), one list at a
 * time through a bounded buffer, and records each list's check. */
static int postimage__write_posts(Postings *p, PostImage *im, int fd)
{
    Posting *list = NULL;
    size_t cap = 0;
    StrBuf out;
    sb_init(&out);
    int rc = 0;
    for (size_t k = 0; k < im->n_terms && !rc; k++) {
        size_t n = live_postings(p, im, im->src[k], &list, &cap);
        size_t at = out.len;
        idx_postings_encode(list, n, &out);
        im->terms[k].check = idx_postings_list_check(out.buf + at, out.len - at);
        if (out.len >= (1u << 20)) {
            rc = write_all(fd, out.buf, out.len);
            sb_reset(&out);
        }
    }
    if (!rc && out.len) rc = write_all(fd, out.buf, out.len);
    sb_release(&out);
    free(list);
    return rc;
}

/* The header and the sections before the postings, in order, each
 * 8-aligned: the live slots' columns, then the terms, their hash table,
 * their text. */
static void postimage__layout(const Postings *p, const PostImage *im, const PostingsGen *g,
                              PostFileHeader *h, StrBuf *body)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, POSTFILE_MAGIC, 8);
    h->version = POSTFILE_VERSION;
    h->endian = POSTFILE_ENDIAN;
    snprintf(h->db_id, sizeof h->db_id, "%s", g->db_id);
    h->gen = g->gen;
    h->n_files = (uint64_t)g->n_files;
    h->n_slots = im->live;
    h->n_terms = im->n_terms;
    h->n_post = im->n_post;
    h->n_hash = im->n_hash;
    h->str_len = im->str.len;
    h->off_chunk = section_start(body);
    for (size_t i = 0; i < p->n_slots; i++)
        if (im->remap[i] != UINT32_MAX) sb_add(body, &p->chunk[i], 8);
    h->off_file = section_start(body);
    for (size_t i = 0; i < p->n_slots; i++)
        if (im->remap[i] != UINT32_MAX) sb_add(body, &p->file[i], 8);
    h->off_len = section_start(body);
    for (size_t i = 0; i < p->n_slots; i++) {
        if (im->remap[i] == UINT32_MAX) continue;
        sb_add(body, p->len[i], sizeof p->len[i]);
        for (int f = 0; f < N_FIELDS; f++)
            h->len_sum[f] += (double)p->len[i][f];
    }
    h->off_kind = section_start(body);
    for (size_t i = 0; i < p->n_slots; i++)
        if (im->remap[i] != UINT32_MAX) sb_add(body, &p->kind[i], 1);
    h->off_term = section_start(body);
    sb_add(body, im->terms, im->n_terms * sizeof *im->terms);
    h->off_hash = section_start(body);
    sb_add(body, im->hash, im->n_hash * sizeof *im->hash);
    h->off_str = section_start(body);
    sb_add(body, im->str.buf, im->str.len);
    h->off_post = section_start(body);
    h->file_len = h->off_post + im->n_post;
    const uint64_t off[N_SECTIONS] = {h->off_chunk, h->off_file, h->off_len, h->off_kind,
                                      h->off_term,  h->off_hash, h->off_str};
    const void *sec[N_SECTIONS];
    for (int i = 0; i < N_SECTIONS; i++)
        sec[i] = body->buf + (off[i] - sizeof *h); /* a file offset -> its byte in body */
    h->checksum = file_checksum(h, sec);
}

CrErr idx_postings_save(IdxStore *st, Postings *p, const PostingsGen *g, ErrInfo *e)
{
    CrErr rc = CR_OK;
    PostImage im = {0};
    PostFileHeader h;
    StrBuf body;
    sb_init(&body);
    postimage__collect(p, &im);
    if (p->base.bad) {
        /* A damaged list of the old snapshot must not pass into a new one. */
        rc = err_set(e, CR_ECORRUPT, "the search postings snapshot is damaged");
        goto out;
    }
    /* Laid out once to place the postings, written, then laid out again
     * with the lists' checks (the same offsets) and written before them. */
    postimage__layout(p, &im, g, &h, &body);

    char path[PATH_MAX], tmp[PATH_MAX + 32];
    postfile_path(st, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    int bad = fd < 0 || lseek(fd, (off_t)h.off_post, SEEK_SET) != (off_t)h.off_post ||
              postimage__write_posts(p, &im, fd);
    if (!bad) {
        sb_reset(&body);
        postimage__layout(p, &im, g, &h, &body);
        bad = lseek(fd, 0, SEEK_SET) != 0 || write_all(fd, &h, sizeof h) ||
              write_all(fd, body.buf, body.len) || fsync(fd) != 0;
    }
    if (bad) {
        rc = err_set(e, CR_EIO, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd);
        unlink(tmp);
        goto out;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        rc = err_set(e, CR_EIO, "cannot rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
    }
out:
    postimage__release(&im);
    sb_release(&body);
    return rc;
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
    for (size_t i = 0; i < p->n_base_slots; i++) {
        if (i64map_get(&same, p->file[i], NULL)) continue;
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
    if (p->base.map && count_files_upto(st, p->base.gen) != (int64_t)p->base.n_files &&
        (rc = drop_changed_files(st, p, e)))
        goto out;
    rc = idx_postings_add_files_since(st, p, p->base.map ? p->base.gen : -1, e);
out:
    if (own_txn) idx_store_exec(st, rc ? "ROLLBACK" : "COMMIT", NULL);
    if (rc) {
        idx_postings_free(p);
        return rc;
    }
    *out = p;
    return CR_OK;
}

int idx_postings_stale(const Postings *p)
{
    size_t changed = p->n_slots - p->n_base_slots + p->n_dead;
    size_t live = p->n_slots - p->n_dead;
    return !p->base.map || (changed >= 64 && changed * 200 > live);
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
