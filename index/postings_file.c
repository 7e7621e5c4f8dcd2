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
 * term order); the terms (PostTerm); their text; their hash table (term
 * index + 1, 0 empty, by hash64 of the text); the live slots' columns
 * (chunk id, file id, field lengths, kind); the checks of the term blocks
 * and of the hash blocks. The header carries a check of each section read
 * whole at open and is checked itself; each term block, hash block, text
 * and list is checked when read. Written in one pass over the lists
 * (memory, runs and the old snapshot merged term by term), the terms and
 * their text through two unlinked side files: a save holds no section in
 * memory but the hash table. */

#define POSTFILE_MAGIC "CRPOST\0\1"
#define POSTFILE_VERSION 4
#define POSTFILE_ENDIAN 0x01020304u

enum { SEC_CHUNK, SEC_FILE, SEC_LEN, SEC_KIND, SEC_TCHECK, SEC_HCHECK, N_READ };

typedef struct PostFileHeader {
    char magic[8];
    uint32_t version;
    uint32_t endian;
    char db_id[40];
    int64_t gen;
    uint64_t n_files; /* files rows of generation <= gen when written */
    uint64_t n_slots, n_terms, n_post, n_hash, str_len;
    double len_sum[N_FIELDS];
    uint64_t off_post, off_term, off_str, off_hash;
    uint64_t off[N_READ]; /* the sections read whole at open */
    uint64_t file_len;
    uint64_t sec_check[N_READ]; /* sec_check of each */
    uint64_t checksum;          /* hash64 of this header, this field 0 */
} PostFileHeader;

enum { PIECE = 1 << 20 };

static uint64_t fold(uint64_t sum, const void *piece, size_t n)
{
    return sum * 0x9e3779b97f4a7c15ull ^ hash64(piece, n);
}

/* A section's check: over its pieces of PIECE bytes, then its length (so
 * that a writer can compute it as it streams). */
static uint64_t sec_check(const void *data, uint64_t len)
{
    uint64_t sum = 0;
    for (uint64_t at = 0; at < len; at += PIECE)
        sum = fold(sum, (const char *)data + at, (size_t)(len - at < PIECE ? len - at : PIECE));
    return fold(sum, &len, sizeof len);
}

static uint64_t header_checksum(const PostFileHeader *h)
{
    PostFileHeader c = *h;
    c.checksum = 0;
    return hash64(&c, sizeof c);
}

static uint64_t align8(uint64_t off)
{
    return (off + 7) & ~(uint64_t)7;
}

static uint64_t sec_len(const PostFileHeader *h, int i)
{
    switch (i) {
    case SEC_CHUNK:
    case SEC_FILE:
        return h->n_slots * 8;
    case SEC_LEN:
        return h->n_slots * 4 * N_FIELDS;
    case SEC_KIND:
        return h->n_slots;
    case SEC_TCHECK:
        return (h->n_terms + POST_TERM_BLOCK - 1) / POST_TERM_BLOCK * 4;
    default:
        return (h->n_hash + POST_HASH_BLOCK - 1) / POST_HASH_BLOCK * 4;
    }
}

static void postfile_path(const IdxStore *st, char *out, size_t cap)
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
        h->endian != POSTFILE_ENDIAN || h->file_len != len || h->checksum != header_checksum(h) ||
        strncmp(h->db_id, db_id, sizeof h->db_id) || h->n_terms >= UINT32_MAX ||
        h->n_slots >= UINT32_MAX || !h->n_hash || (h->n_hash & (h->n_hash - 1)) ||
        h->n_hash <= h->n_terms || h->n_hash > ((uint64_t)1 << 40))
        return 0;
    if (!section_ok(h, h->off_post, h->n_post) ||
        !section_ok(h, h->off_term, h->n_terms * sizeof(PostTerm)) ||
        !section_ok(h, h->off_str, h->str_len) || !section_ok(h, h->off_hash, h->n_hash * 4))
        return 0;
    for (int i = 0; i < N_READ; i++)
        if (!section_ok(h, h->off[i], sec_len(h, i))) return 0;
    return 1;
}

int idx_postings_map(IdxStore *st, Postings *p, const char *db_id)
{
    char path[PATH_MAX];
    struct stat sb;
    PostFileHeader h;
    postfile_path(st, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
    if (fd < 0) return 0;
    /* The header, checked, then the sections it says an open needs: read,
     * never mapped (a mapped file truncated under the server would kill it). */
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size >= sizeof h &&
             file_pread_all(fd, &h, sizeof h, 0) && header_ok(&h, db_id, (uint64_t)sb.st_size);
    size_t n = ok ? (size_t)h.n_slots : 0;
    uint32_t *tcheck = NULL, *hcheck = NULL;
    if (ok) {
        idx_postings_add_slots(p, n);
        tcheck = xmalloc((size_t)sec_len(&h, SEC_TCHECK) + 4);
        hcheck = xmalloc((size_t)sec_len(&h, SEC_HCHECK) + 4);
        void *const dst[N_READ] = {p->chunk, p->file, p->len, p->kind, tcheck, hcheck};
        for (int i = 0; i < N_READ && ok; i++) {
            uint64_t len = sec_len(&h, i);
            ok = (!len || file_pread_all(fd, dst[i], (size_t)len, h.off[i])) &&
                 sec_check(dst[i], len) == h.sec_check[i];
        }
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
    b->tcheck = tcheck;
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

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const char *c = buf;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* A section written as it is produced, through a buffer of one piece,
 * its check (sec_check) kept as it goes. */
typedef struct Out {
    int fd;
    uint64_t at, len; /* where the section starts; bytes written */
    StrBuf buf;
    uint64_t sum;
    int err;
} Out;

static void out_start(Out *o, int fd, uint64_t at)
{
    o->fd = fd;
    o->at = at;
    o->len = 0;
    o->sum = 0;
    sb_reset(&o->buf);
}

static void out_flush(Out *o)
{
    if (!o->buf.len) return;
    o->sum = fold(o->sum, o->buf.buf, o->buf.len);
    if (!o->err && pwrite_all(o->fd, o->buf.buf, o->buf.len, o->at + o->len))
        o->err = errno ? errno : EIO;
    o->len += o->buf.len;
    sb_reset(&o->buf);
}

static void out_add(Out *o, const void *data, size_t n)
{
    const char *d = data;
    while (n) {
        size_t take = PIECE - o->buf.len < n ? PIECE - o->buf.len : n;
        sb_add(&o->buf, d, take);
        d += take;
        n -= take;
        if (o->buf.len == PIECE) out_flush(o);
    }
}

/* Ends the section: its check. */
static uint64_t out_end(Out *o)
{
    out_flush(o);
    return fold(o->sum, &o->len, sizeof o->len);
}

/* A file created and unlinked at once, beside the index. */
static int side_file(const IdxStore *st, const char *what)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/postings.%ld.%s.tmp", st->index_dir, (long)getpid(), what);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) unlink(path);
    return fd;
}

/* Copies n bytes of side file from (at 0) into o. */
static int copy_side(int from, uint64_t n, Out *o)
{
    char *buf = xmalloc(PIECE);
    int ok = 1;
    for (uint64_t at = 0; at < n && ok; at += PIECE) {
        size_t k = (size_t)(n - at < PIECE ? n - at : PIECE);
        ok = file_pread_all(from, buf, k, at);
        if (ok) out_add(o, buf, k);
    }
    free(buf);
    return ok;
}

/* One save in progress. */
typedef struct Saver {
    Postings *p;
    int fd, side_term, side_str;
    uint32_t *remap; /* slot -> live slot number, UINT32_MAX: dead */
    uint32_t live;
    Out post, terms, str;
    uint64_t n_terms;
    PostTerm block[POST_TERM_BLOCK];
    uint32_t *tcheck;
    size_t n_tcheck, cap_tcheck;
    Posting *list;
    size_t cap_list;
    StrBuf enc;
    int damaged; /* the old snapshot or a run could not be read */
} Saver;

static void saver_term(Saver *s, const PostTerm *pt)
{
    s->block[s->n_terms % POST_TERM_BLOCK] = *pt;
    out_add(&s->terms, pt, sizeof *pt);
    s->n_terms++;
    size_t in_block = s->n_terms % POST_TERM_BLOCK;
    if (in_block) return;
    ARRAY_GROW(s->tcheck, s->n_tcheck + 1, s->cap_tcheck);
    s->tcheck[s->n_tcheck++] = idx_postings_list_check(s->block, sizeof s->block);
}

/* Term t's postings from the old snapshot, the runs (their cursors at t
 * or past it) and memory, its live ones renumbered; written when any. */
static void saver_list(Saver *s, uint32_t t, RunCur *cur)
{
    Postings *p = s->p;
    size_t n = 0;
    if (t < p->base.n_terms) {
        PostTerm pt;
        if (!idx_postbase_term(&p->base, t, &pt)) {
            s->damaged = 1;
            return;
        }
        ARRAY_GROW(s->list, (size_t)pt.n + 1, s->cap_list);
        if (p->base.checked[t] == 1)
            memcpy(s->list, p->base.lists[t], pt.n * sizeof *s->list);
        else if (!idx_postbase_read_list(&p->base, &pt, s->list)) {
            s->damaged = 1;
            return;
        }
        n = pt.n;
    }
    for (size_t r = 0; r < p->n_runs; r++) {
        if (!cur[r].live || cur[r].term != t) continue;
        n = idx_runcur_take(&cur[r], &s->list, &s->cap_list, n);
        idx_runcur_next(&cur[r]);
    }
    const TermList *l = &p->lists[t];
    ARRAY_GROW(s->list, n + l->n + 1, s->cap_list);
    if (l->n) memcpy(s->list + n, l->p, l->n * sizeof *l->p);
    n += l->n;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        Posting po = s->list[i];
        if (po.slot >= p->n_slots || s->remap[po.slot] == UINT32_MAX) continue;
        po.slot = s->remap[po.slot];
        s->list[m++] = po;
    }
    if (!m) return;
    uint32_t len;
    const char *text = idx_postings_term_text(p, t, &len);
    if (!text) {
        s->damaged = 1;
        return;
    }
    sb_reset(&s->enc);
    idx_postings_encode(s->list, m, &s->enc);
    PostTerm pt = {.str_off = s->str.len + s->str.buf.len,
                   .str_hash = hash64(text, len),
                   .post_off = s->post.len + s->post.buf.len,
                   .str_len = len,
                   .n = (uint32_t)m,
                   .check = idx_postings_list_check(s->enc.buf, s->enc.len),
                   .bytes = (uint32_t)s->enc.len};
    out_add(&s->str, text, len);
    out_add(&s->post, s->enc.buf, s->enc.len);
    saver_term(s, &pt);
}

/* The hash table of the terms written (read back from their side file),
 * written at o; its block checks into *hcheck. */
static int saver_hash(Saver *s, uint64_t n_hash, Out *o, uint32_t **hcheck)
{
    uint32_t *hash = xcalloc((size_t)n_hash, sizeof *hash);
    PostTerm *buf = xmalloc(4096 * sizeof *buf);
    int ok = 1;
    for (uint64_t k = 0; k < s->n_terms && ok; k += 4096) {
        size_t m = (size_t)(s->n_terms - k < 4096 ? s->n_terms - k : 4096);
        ok = file_pread_all(s->side_term, buf, m * sizeof *buf, k * sizeof *buf);
        for (size_t j = 0; ok && j < m; j++) {
            uint64_t i = buf[j].str_hash & (n_hash - 1);
            while (hash[i])
                i = (i + 1) & (n_hash - 1);
            hash[i] = (uint32_t)(k + j) + 1;
        }
    }
    free(buf);
    uint64_t n_blocks = (n_hash + POST_HASH_BLOCK - 1) / POST_HASH_BLOCK;
    *hcheck = xmalloc((size_t)n_blocks * 4 + 4);
    for (uint64_t b = 0; b < n_blocks; b++) {
        uint64_t first = b * POST_HASH_BLOCK;
        uint64_t m = n_hash - first < POST_HASH_BLOCK ? n_hash - first : POST_HASH_BLOCK;
        (*hcheck)[b] = idx_postings_list_check(hash + first, (size_t)m * 4);
    }
    out_add(o, hash, (size_t)n_hash * 4);
    free(hash);
    return ok;
}

/* The live slots' columns, each a section read whole at open. */
static void saver_slots(Saver *s, PostFileHeader *h, uint64_t at, Out *o)
{
    Postings *p = s->p;
    for (int i = SEC_CHUNK; i <= SEC_KIND; i++) {
        h->off[i] = at = align8(at);
        out_start(o, s->fd, at);
        for (size_t k = 0; k < p->n_slots; k++) {
            if (s->remap[k] == UINT32_MAX) continue;
            if (i == SEC_CHUNK) out_add(o, &p->chunk[k], 8);
            if (i == SEC_FILE) out_add(o, &p->file[k], 8);
            if (i == SEC_KIND) out_add(o, &p->kind[k], 1);
            if (i != SEC_LEN) continue;
            out_add(o, p->len[k], sizeof p->len[k]);
            for (int f = 0; f < N_FIELDS; f++)
                h->len_sum[f] += (double)p->len[k][f];
        }
        h->sec_check[i] = out_end(o);
        at += o->len;
    }
}

/* Writes the snapshot into s->fd; 0 on success, else an errno (EIO for a
 * damaged source: s->damaged). */
static int saver_run(Saver *s, const PostingsGen *g, PostFileHeader *h)
{
    Postings *p = s->p;
    s->remap = xmalloc((p->n_slots + 1) * sizeof *s->remap);
    for (size_t i = 0; i < p->n_slots; i++)
        s->remap[i] = p->dead[i] ? UINT32_MAX : s->live++;
    memset(h, 0, sizeof *h);
    h->off_post = align8(sizeof *h);
    out_start(&s->post, s->fd, h->off_post);
    out_start(&s->terms, s->side_term, 0);
    out_start(&s->str, s->side_str, 0);
    RunCur *cur = xcalloc(p->n_runs + 1, sizeof *cur);
    for (size_t r = 0; r < p->n_runs; r++) {
        idx_runcur_open(&cur[r], p->run_fd, p->runs[r].off, p->runs[r].len);
        idx_runcur_next(&cur[r]);
    }
    for (uint32_t t = 0; t < p->n_terms && !s->damaged; t++)
        saver_list(s, t, cur);
    for (size_t r = 0; r < p->n_runs; r++) {
        if (cur[r].bad || cur[r].live) s->damaged = p->run_bad = 1;
        idx_runcur_close(&cur[r]);
    }
    free(cur);
    if (s->damaged) return EIO;
    if (s->n_terms % POST_TERM_BLOCK) {
        ARRAY_GROW(s->tcheck, s->n_tcheck + 1, s->cap_tcheck);
        s->tcheck[s->n_tcheck++] = idx_postings_list_check(
            s->block, (size_t)(s->n_terms % POST_TERM_BLOCK) * sizeof(PostTerm));
    }
    out_end(&s->post);
    out_end(&s->terms);
    out_end(&s->str);
    if (s->post.err || s->terms.err || s->str.err) return EIO;

    memcpy(h->magic, POSTFILE_MAGIC, 8);
    h->version = POSTFILE_VERSION;
    h->endian = POSTFILE_ENDIAN;
    snprintf(h->db_id, sizeof h->db_id, "%s", g->db_id);
    h->gen = g->gen;
    h->n_files = (uint64_t)g->n_files;
    h->n_slots = s->live;
    h->n_terms = s->n_terms;
    h->n_post = s->post.len;
    h->str_len = s->str.len;
    h->n_hash = 64;
    while (h->n_hash < h->n_terms * 2)
        h->n_hash *= 2;
    Out o = {0};
    sb_init(&o.buf);
    h->off_term = align8(h->off_post + h->n_post);
    out_start(&o, s->fd, h->off_term);
    int ok = copy_side(s->side_term, s->terms.len, &o);
    out_end(&o);
    h->off_str = align8(h->off_term + o.len);
    out_start(&o, s->fd, h->off_str);
    ok = ok && copy_side(s->side_str, s->str.len, &o);
    out_end(&o);
    h->off_hash = align8(h->off_str + o.len);
    out_start(&o, s->fd, h->off_hash);
    uint32_t *hcheck = NULL;
    ok = ok && saver_hash(s, h->n_hash, &o, &hcheck);
    out_end(&o);
    uint64_t at = h->off_hash + o.len;
    if (ok) saver_slots(s, h, at, &o);
    at = h->off[SEC_KIND] + o.len;
    const void *checks[2] = {s->tcheck, hcheck};
    for (int i = SEC_TCHECK; ok && i <= SEC_HCHECK; i++) {
        h->off[i] = at = align8(at);
        out_start(&o, s->fd, at);
        out_add(&o, checks[i - SEC_TCHECK], (size_t)sec_len(h, i));
        h->sec_check[i] = out_end(&o);
        at += o.len;
    }
    free(hcheck);
    int err = o.err;
    sb_release(&o.buf);
    if (!ok || err) return err ? err : EIO;
    h->file_len = at;
    h->checksum = header_checksum(h);
    return pwrite_all(s->fd, h, sizeof *h, 0) || ftruncate(s->fd, (off_t)at) ? errno : 0;
}

CrErr idx_postings_save(IdxStore *st, Postings *p, const PostingsGen *g, ErrInfo *e)
{
    CrErr rc = CR_OK;
    Saver s = {.p = p, .fd = -1};
    PostFileHeader h;
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    sb_init(&s.post.buf);
    sb_init(&s.terms.buf);
    sb_init(&s.str.buf);
    sb_init(&s.enc);
    postfile_path(st, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    s.side_term = side_file(st, "terms");
    s.side_str = side_file(st, "text");
    s.fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    int err = s.fd < 0 || s.side_term < 0 || s.side_str < 0 ? errno : saver_run(&s, g, &h);
    if (!err && fsync(s.fd) != 0) err = errno;
    if (s.damaged || p->base.bad || p->run_bad) {
        /* A damaged list of the old snapshot must not pass into a new one. */
        rc = err_set(e, CR_ECORRUPT, "the search postings snapshot is damaged");
    } else if (err) {
        rc = err_set(e, CR_EIO, "cannot write %s: %s", tmp, strerror(err));
    }
    if (s.fd >= 0) close(s.fd);
    if (s.side_term >= 0) close(s.side_term);
    if (s.side_str >= 0) close(s.side_str);
    if (!rc && rename(tmp, path) != 0)
        rc = err_set(e, CR_EIO, "cannot rename %s: %s", tmp, strerror(errno));
    if (rc) unlink(tmp);
    free(s.remap);
    free(s.tcheck);
    free(s.list);
    sb_release(&s.post.buf);
    sb_release(&s.terms.buf);
    sb_release(&s.str.buf);
    sb_release(&s.enc);
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

/* Adds the chunks of every file written after generation gen. */
static CrErr add_files_since(IdxStore *st, Postings *p, int64_t gen, ErrInfo *e)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT s.id, c.file_id, c.kind, s.name, s.path, s.doc, s.body "
                           "FROM search_text s JOIN chunks c ON c.id = s.id "
                           "WHERE c.file_id IN (SELECT id FROM files WHERE gen > ?1) ORDER BY s.id",
                           -1, &s, NULL) != SQLITE_OK)
        return idx_store_err(st, e, "load search text");
    sqlite3_bind_int64(s, 1, gen);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        const char *fields[N_FIELDS];
        for (int f = 0; f < N_FIELDS; f++)
            fields[f] = (const char *)sqlite3_column_text(s, 3 + f);
        idx_postings_add(p, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                         (IdxKind)sqlite3_column_int(s, 2), fields);
    }
    sqlite3_finalize(s);
    return step == SQLITE_DONE ? CR_OK : idx_store_err(st, e, "load search text");
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
    rc = add_files_since(st, p, p->base.have ? p->base.gen : -1, e);
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
