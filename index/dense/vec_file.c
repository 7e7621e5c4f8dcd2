/*
 * vec_file.c - saving the vector store: the whole file (temporary file,
 * fsync, rename) or, when little changed since it was written, a record
 * appended to its journal. Layout and guarantees: vecstore_int.h.
 */
#include "vecstore_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- save */

static CrErr vecstore__sync_dir(const char *path, ErrInfo *e)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    CrErr err = CR_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* some file systems refuse fsync on a directory (EINVAL): nothing to do */
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
        err = err_set(e, CR_EIO, "vectors: cannot sync directory %s: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    free(dir);
    return err;
}

/* FAISS payload, then the trailer, into the open file f (fd); *hash is
 * the payload's, *size the file's. */
static CrErr vecstore__write(const VecStore *vs, FILE *f, int fd, const char *tmp, uint64_t *hash,
                             uint64_t *size, ErrInfo *e)
{
    int rc = vs->fa->write_index(vs->index, f);
    if (rc) return vecstore_faiss_err(vs->fa, e, "write_index", rc);
    off_t plen = ftello(f);
    if (fflush(f) != 0 || plen <= 0)
        return err_set(e, CR_EIO, "vectors: cannot write %s: %s", tmp, strerror(errno));
    /* read back (never mapped) through a small buffer: pages for the
     * whole payload would be fresh ones, zeroed to be read once */
    uint64_t h;
    if (!hash64_fd(fd, (uint64_t)plen, &h))
        return err_set(e, CR_EIO, "vectors: cannot read back %s", tmp);

    unsigned char t[TRAILER_BYTES];
    memcpy(t, trailer_magic, sizeof trailer_magic);
    put_u32(t + 8, FORMAT_VERSION);
    put_u32(t + 12, (uint32_t)vs->dim);
    put_u64(t + 16, (uint64_t)vs->ids.len);
    put_u64(t + 24, (uint64_t)plen);
    put_u64(t + 32, h);
    put_u64(t + 40, hash64(t, 40));
    if (fwrite(t, 1, sizeof t, f) != sizeof t || fflush(f) != 0 || fsync(fd) != 0)
        return err_set(e, CR_EIO, "vectors: cannot write %s: %s", tmp, strerror(errno));
    *hash = h;
    *size = (uint64_t)plen + TRAILER_BYTES;
    return CR_OK;
}

/* Removes the journal, and with whole the file it belongs to. */
static CrErr vecstore__unlink(VecStore *vs, int whole, ErrInfo *e)
{
    char *lp = vecstore_log_path(vs->path);
    CrErr err = CR_OK;
    if (whole && unlink(vs->path) != 0 && errno != ENOENT)
        err = err_set(e, CR_EIO, "vectors: cannot remove %s: %s", vs->path, strerror(errno));
    else if (unlink(lp) != 0 && errno != ENOENT)
        err = err_set(e, CR_EIO, "vectors: cannot remove %s: %s", lp, strerror(errno));
    else
        err = vecstore__sync_dir(vs->path, e);
    free(lp);
    vs->base_hash = 0;
    vs->log_bytes = 0;
    vs->log_broken = 0;
    return err;
}

/* Whether the file at vs->path is still the one this store's journal
 * belongs to (another process may have rewritten it). */
static int vecstore__base_unchanged(const VecStore *vs)
{
    unsigned char t[TRAILER_BYTES];
    int fd = open(vs->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && (uint64_t)st.st_size == vs->base_bytes &&
             pread(fd, t, sizeof t, st.st_size - TRAILER_BYTES) == (ssize_t)sizeof t &&
             get_u64(t + 32) == vs->base_hash;
    close(fd);
    return ok;
}

void idx_vecstore_file_sizes(const char *path, long long *file, long long *journal)
{
    struct stat st;
    char *log = vecstore_log_path(path);
    *file = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    *journal = stat(log, &st) == 0 ? (long long)st.st_size : -1;
    free(log);
}

int idx_vecstore_changed_on_disk(const VecStore *vs)
{
    if (!vs->base_hash) return access(vs->path, F_OK) == 0;
    if (!vecstore__base_unchanged(vs)) return 1;
    char *lp = vecstore_log_path(vs->path);
    struct stat st;
    int gone = stat(lp, &st) != 0;
    free(lp);
    return gone ? vs->log_bytes != 0 : (uint64_t)st.st_size != vs->log_bytes;
}

/* Appends the pending records to the journal (*done set), or leaves
 * *done 0 when the file must be rewritten instead: there is none to
 * journal onto, too much changed, or the journal is broken or was replaced
 * elsewhere since this store read it. */
static CrErr log_append(VecStore *vs, int *done, ErrInfo *e)
{
    *done = 0;
    if (!vs->base_hash || vs->pending_lost || (vs->log_broken && vs->log_bytes) ||
        !vecstore__base_unchanged(vs))
        return CR_OK;
    char *path = vecstore_log_path(vs->path);
    CrErr err = CR_OK;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
    if (fd < 0) {
        err = err_set(e, CR_EIO, "vectors: cannot open %s: %s", path, strerror(errno));
        goto out;
    }
    unsigned char h[LOG_HEADER_BYTES];
    memcpy(h, log_magic, 8);
    put_u32(h + 8, LOG_VERSION);
    put_u32(h + 12, (uint32_t)vs->dim);
    put_u64(h + 16, vs->base_hash);
    put_u64(h + 24, hash64(h, 24));
    struct stat st;
    int unstat = fstat(fd, &st) != 0;
    if (unstat || !S_ISREG(st.st_mode)) {
        err = err_set(e, CR_EIO, "vectors: cannot use %s: %s", path,
                      unstat ? strerror(errno) : "not a regular file");
        goto out;
    }
    /* Another store (process) may have appended since this one read the
     * journal: its records are as true as ours, so ours go after them. */
    off_t at = st.st_size;
    unsigned char have[LOG_HEADER_BYTES];
    int ours = st.st_size >= LOG_HEADER_BYTES &&
               pread(fd, have, sizeof have, 0) == (ssize_t)sizeof have &&
               !memcmp(have, h, sizeof h);
    if (ours && (uint64_t)st.st_size < vs->log_bytes) goto out; /* cut short elsewhere */
    if (!ours && vs->log_bytes) goto out;                       /* replaced since it was read */
    if (!ours) {
        /* none yet, or another file's: start it */
        if (ftruncate(fd, 0) != 0 || pwrite(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
            err = err_set(e, CR_EIO, "vectors: cannot write %s: %s", path, strerror(errno));
            goto out;
        }
        at = LOG_HEADER_BYTES;
    }
    if (pwrite(fd, vs->pending.buf, vs->pending.len, at) != (ssize_t)vs->pending.len) {
        err = err_set(e, CR_EIO, "vectors: cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    /* no fsync: a record lost to a crash is repaired by the next sync */
    vs->log_bytes = (uint64_t)at + vs->pending.len;
    *done = 1;
out:
    if (fd >= 0) close(fd);
    free(path);
    return err;
}

CrErr idx_vecstore_save(VecStore *vs, ErrInfo *e)
{
    StrBuf tmp;
    FILE *f = NULL;
    CrErr err = CR_OK;
    uint64_t hash = 0, size = 0;
    if (!vs->dirty) return CR_OK;
    sb_init(&tmp);
    if (!vs->index) {
        /* dimensionless, hence empty: a discarded file must not come back */
        err = vecstore__unlink(vs, 1, e);
        goto out;
    }
    int done = 0;
    if ((err = log_append(vs, &done, e)) || done) goto out;
    sb_addf(&tmp, "%s.tmp-%ld", vs->path, (long)getpid());
    int fd = open(tmp.buf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        err = err_set(e, CR_EIO, "vectors: cannot create %s: %s", tmp.buf, strerror(errno));
        goto out;
    }
    f = fdopen(fd, "w+b");
    if (!f) {
        err = err_set(e, CR_EIO, "vectors: fdopen: %s", strerror(errno));
        close(fd);
        unlink(tmp.buf);
        goto out;
    }
    err = vecstore__write(vs, f, fd, tmp.buf, &hash, &size, e);
    int close_rc = fclose(f);
    f = NULL;
    if (!err && close_rc != 0)
        err = err_set(e, CR_EIO, "vectors: cannot write %s: %s", tmp.buf, strerror(errno));
    if (!err && rename(tmp.buf, vs->path) != 0)
        err = err_set(e, CR_EIO, "vectors: cannot rename %s to %s: %s", tmp.buf, vs->path,
                      strerror(errno));
    if (err) {
        unlink(tmp.buf);
        goto out;
    }
    /* the journal belonged to the file just replaced */
    err = vecstore__unlink(vs, 0, e);
    if (!err) {
        vs->base_hash = hash;
        vs->base_bytes = size;
    }
out:
    if (!err) {
        vs->dirty = 0;
        vs->pending_lost = 0;
        sb_release(&vs->pending);
    }
    sb_release(&tmp);
    return err;
}
