/* postings_save.c - writing the postings snapshot (layout: postings_file.c)
 * in one pass over the lists: per term, the old snapshot's list, each
 * run's and memory's merged, its live postings renumbered and written; the
 * terms and their text through two unlinked side files copied in after
 * the postings; then the hash table and the slot columns. A save holds no
 * section in memory but the hash table (4 bytes per term, twice over). */
#include "postings_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PIECE = 1 << 20 };

static uint64_t align8(uint64_t off)
{
    return (off + 7) & ~(uint64_t)7;
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
    o->sum = idx_postfile_fold(o->sum, o->buf.buf, o->buf.len);
    if (!o->err && !file_pwrite_all(o->fd, o->buf.buf, o->buf.len, o->at + o->len))
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
    return idx_postfile_fold(o->sum, &o->len, sizeof o->len);
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
    StrBuf packed;
    uint64_t *toff; /* per block written: its offset in the term section */
    uint32_t *tcheck;
    size_t n_tcheck, cap_tcheck, cap_toff;
    Posting *list;
    size_t cap_list;
    StrBuf enc;
    int damaged; /* the old snapshot or a run could not be read */
} Saver;

/* The block of the last k terms, packed into the term section. */
static void saver_block(Saver *s, size_t k)
{
    sb_reset(&s->packed);
    idx_postterm_pack(s->block, k, &s->packed);
    ARRAY_GROW(s->toff, s->n_tcheck + 1, s->cap_toff);
    ARRAY_GROW(s->tcheck, s->n_tcheck + 1, s->cap_tcheck);
    s->toff[s->n_tcheck] = s->terms.len + s->terms.buf.len;
    s->tcheck[s->n_tcheck++] = idx_postings_list_check(s->packed.buf, s->packed.len);
    out_add(&s->terms, s->packed.buf, s->packed.len);
}

static void saver_term(Saver *s, const PostTerm *pt)
{
    s->block[s->n_terms % POST_TERM_BLOCK] = *pt;
    s->n_terms++;
    if (s->n_terms % POST_TERM_BLOCK == 0) saver_block(s, POST_TERM_BLOCK);
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
    PostTerm buf[POST_TERM_BLOCK];
    unsigned char raw[POST_TBLOCK_MAX];
    int ok = 1;
    for (size_t b = 0; b < s->n_tcheck && ok; b++) {
        uint64_t k = (uint64_t)b * POST_TERM_BLOCK;
        size_t m = (size_t)(s->n_terms - k < POST_TERM_BLOCK ? s->n_terms - k : POST_TERM_BLOCK);
        uint64_t end = b + 1 < s->n_tcheck ? s->toff[b + 1] : s->terms.len;
        size_t len = (size_t)(end - s->toff[b]);
        ok = len <= sizeof raw && file_pread_all(s->side_term, raw, len, s->toff[b]) &&
             idx_postterm_unpack(raw, len, buf, m);
        for (size_t j = 0; ok && j < m; j++) {
            uint64_t i = buf[j].str_hash & (n_hash - 1);
            while (hash[i])
                i = (i + 1) & (n_hash - 1);
            hash[i] = (uint32_t)(k + j) + 1;
        }
    }
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
    int64_t prev_chunk = 0, prev_file = 0;
    h->off[SEC_SLOTS] = at = align8(at);
    out_start(o, s->fd, at);
    for (size_t k = 0; k < p->n_slots; k++) {
        if (s->remap[k] == UINT32_MAX) continue;
        sb_reset(&s->packed);
        idx_postslots_pack(p->chunk[k], p->file[k], p->len[k], &prev_chunk, &prev_file, &s->packed);
        out_add(o, s->packed.buf, s->packed.len);
        for (int f = 0; f < N_FIELDS; f++)
            h->len_sum[f] += (double)p->len[k][f];
    }
    h->sec_check[SEC_SLOTS] = out_end(o);
    h->slot_bytes = o->len;
    at += o->len;
    h->off[SEC_KIND] = at = align8(at);
    out_start(o, s->fd, at);
    for (size_t k = 0; k < p->n_slots; k++)
        if (s->remap[k] != UINT32_MAX) out_add(o, &p->kind[k], 1);
    h->sec_check[SEC_KIND] = out_end(o);
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
    if (s->n_terms % POST_TERM_BLOCK) saver_block(s, (size_t)(s->n_terms % POST_TERM_BLOCK));
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
    h->term_len = s->terms.len;
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
    for (int i = SEC_TCHECK; ok && i <= SEC_HCHECK; i++) {
        h->off[i] = at = align8(at);
        out_start(&o, s->fd, at);
        if (i == SEC_TCHECK) {
            out_add(&o, s->toff, s->n_tcheck * 8);
            out_add(&o, s->tcheck, s->n_tcheck * 4);
        } else {
            out_add(&o, hcheck, (size_t)idx_postfile_sec_len(h, i));
        }
        h->sec_check[i] = out_end(&o);
        at += o.len;
    }
    free(hcheck);
    int err = o.err;
    sb_release(&o.buf);
    if (!ok || err) return err ? err : EIO;
    h->file_len = at;
    h->checksum = idx_postfile_header_check(h);
    return !file_pwrite_all(s->fd, h, sizeof *h, 0) || ftruncate(s->fd, (off_t)at) ? errno : 0;
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
    sb_init(&s.packed);
    idx_postfile_path(st, path, sizeof path);
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
    free(s.toff);
    sb_release(&s.packed);
    free(s.list);
    sb_release(&s.post.buf);
    sb_release(&s.terms.buf);
    sb_release(&s.str.buf);
    sb_release(&s.enc);
    return rc;
}
