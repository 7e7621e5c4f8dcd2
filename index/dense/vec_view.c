/*
 * vec_view.c - a vector file read for searching only, without FAISS: the
 * flat index's rows and the id map found in the file's own bytes (FAISS's
 * serialisation of an IndexIDMap over an IndexFlatIP, checked field by
 * field) and scanned where they were read (vec_scan.c). What a one-shot
 * `coderag ask` needs: no FAISS (nor OpenBLAS) loaded, no second copy of
 * the vectors, no id set. The same rows in the same order as a VecStore
 * reads, so the same hits. A file it cannot serve (a journal to replay,
 * any other layout) is left to idx_vecstore_open.
 */
#include "vecstore_int.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct VecView {
    void *map;         /* pages holding the whole file, from byte lead on */
    size_t map_len;    /* of the pages */
    const void *bytes; /* the file's bytes */
    size_t size;
    const float *rows;        /* count * dim, in the file */
    const unsigned char *ids; /* count little-endian i64, in the file (maybe unaligned) */
    uint64_t count;
    int dim;
    struct stat base; /* the file as read */
};

/* FAISS's index header (write_index_header): d, ntotal, two dummies,
 * is_trained, metric_type (and metric_arg past METRIC_L2). */
enum { FAISS_HEADER = 4 + 4 + 8 + 8 + 8 + 1 + 4, FAISS_METRIC_IP = 0 };

/* The rows start this far into the file: after the two headers and the
 * count of floats. The file is read that many bytes past a page's start
 * modulo 8, so that they are aligned where they land. */
enum { ROWS_AT = 2 * FAISS_HEADER + 8, VIEW_LEAD = (8 - ROWS_AT % 8) % 8 };

/* Whether p[at..) starts an index header of fourcc tag, dim and count. */
static int faiss_header(const unsigned char *p, size_t len, size_t at, const char tag[4],
                        uint32_t dim, uint64_t count)
{
    if (len < FAISS_HEADER || at > len - FAISS_HEADER) return 0;
    const unsigned char *h = p + at;
    return !memcmp(h, tag, 4) && get_u32(h + 4) == dim && get_u64(h + 8) == count && h[32] == 1 &&
           get_u32(h + 33) == FAISS_METRIC_IP;
}

/* Finds the rows and ids in the payload p[0..plen): "IxMp" header,
 * "IxFI" header, u64 floats, the floats, u64 ids, the ids, nothing else. */
static int view__parse(VecView *v, const unsigned char *p, uint64_t plen)
{
    uint64_t n = v->count, d = (uint64_t)v->dim;
    size_t at = 0;
    if (!faiss_header(p, plen, at, "IxMp", (uint32_t)d, n)) return 0;
    at += FAISS_HEADER;
    if (!faiss_header(p, plen, at, "IxFI", (uint32_t)d, n)) return 0;
    at += FAISS_HEADER;
    uint64_t need = (uint64_t)ROWS_AT + n * d * 4 + 8 + n * 8;
    if (need != plen || get_u64(p + at) != n * d) return 0;
    at += 8;
    v->rows = (const float *)(const void *)(p + at);
    at += n * d * 4;
    if (get_u64(p + at) != n) return 0;
    v->ids = p + at + 8;
    return ((uintptr_t)v->rows % sizeof(float)) == 0;
}

int idx_vecview_open(const char *path, VecView **out)
{
    *out = NULL;
    /* a journal with records: FAISS's store replays it */
    char *lp = vecstore_log_path(path);
    struct stat ls;
    int journal = stat(lp, &ls) == 0 && ls.st_size > LOG_HEADER_BYTES;
    free(lp);
    if (journal) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
    if (fd < 0) return 0;
    VecView *v = xcalloc(1, sizeof *v);
    uint32_t dim = 0;
    uint64_t plen = 0;
    int ok =
        fstat(fd, &v->base) == 0 && S_ISREG(v->base.st_mode) && v->base.st_size > TRAILER_BYTES;
    if (ok) {
        /* read, not mapped: a file cut short meanwhile is a short read,
         * never a SIGBUS */
        v->size = (size_t)v->base.st_size;
        v->map = file_read_pages_at(fd, v->size, VIEW_LEAD);
        v->map_len = v->size + VIEW_LEAD ? v->size + VIEW_LEAD : 1;
        v->bytes = v->map ? (const char *)v->map + VIEW_LEAD : NULL;
    }
    close(fd);
    ok = ok && v->map &&
         vecstore_check_trailer(0, v->bytes, v->size, &dim, &v->count, &plen, NULL) == CR_OK;
    v->dim = (int)dim;
    if (!ok || !view__parse(v, v->bytes, plen)) {
        idx_vecview_close(v);
        return 0;
    }
    *out = v;
    return 1;
}

void idx_vecview_close(VecView *v)
{
    if (!v) return;
    if (v->map) munmap(v->map, v->map_len);
    free(v);
}

int idx_vecview_dim(const VecView *v)
{
    return v->dim;
}

int64_t idx_vecview_count(const VecView *v)
{
    return (int64_t)v->count;
}

int idx_vecview_changed_on_disk(const VecView *v, const char *path)
{
    struct stat st;
    char *lp = vecstore_log_path(path);
    struct stat ls;
    int journal = stat(lp, &ls) == 0 && ls.st_size > LOG_HEADER_BYTES;
    free(lp);
    return journal || stat(path, &st) != 0 || st.st_dev != v->base.st_dev ||
           st.st_ino != v->base.st_ino || st.st_size != v->base.st_size ||
           st.st_mtim.tv_sec != v->base.st_mtim.tv_sec ||
           st.st_mtim.tv_nsec != v->base.st_mtim.tv_nsec;
}

CrErr idx_vecview_search(const VecView *v, const float *query, size_t k, int64_t *out_ids,
                         float *out_scores, size_t *n_out, ErrInfo *e)
{
    size_t rows = (size_t)v->count;
    *n_out = 0;
    for (int i = 0; i < v->dim; i++)
        if (!isfinite(query[i]))
            return err_set(e, CR_EINVAL, "vectors: non-finite query component");
    if (!k || !rows) return CR_OK;
    size_t *at = xmalloc((k < rows ? k : rows) * sizeof *at + 1);
    size_t got = idx_vec_scan(v->rows, rows, v->dim, query, k, at, out_scores);
    for (size_t i = 0; i < got; i++)
        out_ids[i] = (int64_t)get_u64(v->ids + at[i] * 8);
    free(at);
    *n_out = got;
    return CR_OK;
}
