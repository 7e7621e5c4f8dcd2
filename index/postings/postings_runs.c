/* postings_runs.c - a build's posting lists past its memory budget: every
 * list held in memory written as one run (term order) to an unlinked
 * temporary file beside the index, the memory freed. Slots only grow, so a
 * term's postings are those of the snapshot, then of each run in order,
 * then of memory, in slot order throughout; the save merges them list by
 * list (postings_file.c), and a search meanwhile reads a term back through
 * the runs' marks. A build of any size holds at most the budget in lists. */
#include "postings_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The run file, created and unlinked at once: nothing of it outlives the
 * process, whatever stops it. */
static int runs_open(Postings *p)
{
    if (p->run_fd >= 0) return 0;
    if (!p->dir) return -1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/postings.%ld.runs.tmp", p->dir, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    unlink(path);
    p->run_fd = fd;
    p->run_end = 0;
    return 0;
}

void idx_postings_spill(Postings *p)
{
    if (runs_open(p)) {
        log_msg(LOG_INFO, "search postings: no room beside the index to spill; kept in memory");
        p->budget = SIZE_MAX;
        return;
    }
    PostRun r = {.off = p->run_end};
    StrBuf out, list;
    sb_init(&out);
    sb_init(&list);
    uint64_t pos = r.off;
    size_t entries = 0;
    int bad = 0;
    for (uint32_t t = 0; t < p->n_terms && !bad; t++) {
        const TermList *l = &p->lists[t];
        if (!l->n) continue;
        if (entries++ % POST_RUN_MARK == 0) {
            ARRAY_GROW(r.mark_term, r.n_mark + 1, r.cap_mark);
            r.mark_off = xrealloc(r.mark_off, r.cap_mark * sizeof *r.mark_off);
            r.mark_term[r.n_mark] = t;
            r.mark_off[r.n_mark++] = pos + out.len;
        }
        sb_reset(&list);
        idx_postings_encode(l->p, l->n, &list);
        unsigned char h[32];
        size_t k = idx_postings_put_varint(h, t);
        k += idx_postings_put_varint(h + k, l->n);
        k += idx_postings_put_varint(h + k, list.len);
        sb_add(&out, h, k);
        sb_add(&out, list.buf, list.len);
        if (out.len >= (1u << 20)) {
            bad = !file_pwrite_all(p->run_fd, out.buf, out.len, pos);
            pos += out.len;
            sb_reset(&out);
        }
    }
    if (!bad && out.len) bad = !file_pwrite_all(p->run_fd, out.buf, out.len, pos);
    pos += out.len;
    sb_release(&out);
    sb_release(&list);
    if (bad) {
        log_msg(LOG_INFO, "search postings: cannot spill (%s); kept in memory", strerror(errno));
        free(r.mark_term);
        free(r.mark_off);
        p->budget = SIZE_MAX;
        return;
    }
    r.len = pos - r.off;
    p->run_end = pos;
    ARRAY_GROW(p->runs, p->n_runs + 1, p->cap_runs);
    p->runs[p->n_runs++] = r;
    for (uint32_t t = 0; t < p->n_terms; t++) {
        TermList *l = &p->lists[t];
        free(l->p);
        memset(l, 0, sizeof *l);
    }
    p->list_bytes = 0;
    /* The lists were many small blocks among others: give their pages back
     * (else the heap keeps its high-water mark, and the next phase of a
     * build adds to it). */
    malloc_trim(0);
}

void idx_runcur_open(RunCur *c, int fd, uint64_t off, uint64_t len)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->pos = c->at = off;
    c->end = off + len;
}

void idx_runcur_close(RunCur *c)
{
    free(c->buf);
    c->buf = NULL;
}

/* The window holds [from, from + n) of the file (n within the run). */
static int ensure(RunCur *c, uint64_t from, size_t n)
{
    if (from >= c->at && from + n <= c->at + c->len) return 1;
    size_t want = n > (1u << 18) ? n : (1u << 18);
    if (want > c->end - from) want = (size_t)(c->end - from);
    if (want > c->cap) {
        c->buf = xrealloc(c->buf, want);
        c->cap = want;
    }
    c->len = 0;
    if (!file_pread_all(c->fd, c->buf, want, from)) {
        c->bad = 1;
        return 0;
    }
    c->at = from;
    c->len = want;
    return 1;
}

int idx_runcur_next(RunCur *c)
{
    c->live = 0;
    if (c->bad || c->pos >= c->end) return 0;
    size_t head = c->end - c->pos < 32 ? (size_t)(c->end - c->pos) : 32;
    if (!ensure(c, c->pos, head)) return 0;
    const unsigned char *b = c->buf + (c->pos - c->at);
    size_t at = 0;
    uint64_t t, n, bytes;
    if (!idx_postings_varint(b, head, &at, &t) || !idx_postings_varint(b, head, &at, &n) ||
        !idx_postings_varint(b, head, &at, &bytes) || t >= UINT32_MAX || !n || n > bytes ||
        bytes > c->end - c->pos - at) {
        c->bad = 1;
        return 0;
    }
    uint64_t body = c->pos + at;
    if (!ensure(c, body, (size_t)bytes)) return 0;
    c->body = c->buf + (body - c->at);
    c->term = (uint32_t)t;
    c->n = (uint32_t)n;
    c->bytes = (uint32_t)bytes;
    c->pos = body + bytes;
    c->live = 1;
    return 1;
}

size_t idx_runcur_take(RunCur *c, Posting **buf, size_t *cap, size_t n)
{
    ARRAY_GROW(*buf, n + c->n + 1, *cap);
    if (!idx_postings_decode(c->body, c->bytes, *buf + n, c->n)) {
        c->bad = 1;
        return n;
    }
    return n + c->n;
}

size_t idx_postings_run_find(Postings *p, size_t r, uint32_t t, Posting **buf, size_t *cap,
                             size_t n)
{
    const PostRun *run = &p->runs[r];
    size_t lo = 0, hi = run->n_mark;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (run->mark_term[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return n; /* every term of the run comes after t */
    RunCur c;
    uint64_t from = run->mark_off[lo - 1];
    idx_runcur_open(&c, p->run_fd, from, run->off + run->len - from);
    while (idx_runcur_next(&c) && c.term <= t) {
        if (c.term != t) continue;
        n = idx_runcur_take(&c, buf, cap, n);
        break;
    }
    if (c.bad) p->run_bad = 1;
    idx_runcur_close(&c);
    return n;
}

void idx_postings_runs_close(Postings *p)
{
    if (p->run_fd >= 0) close(p->run_fd);
    p->run_fd = -1;
    for (size_t r = 0; r < p->n_runs; r++) {
        free(p->runs[r].mark_term);
        free(p->runs[r].mark_off);
    }
    free(p->runs);
    p->runs = NULL;
    p->n_runs = p->cap_runs = 0;
    p->run_end = 0;
}
