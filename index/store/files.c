/* files.c - the workspace's current text: a small cache of whole files
 * (by size and mtime) and the lines of a chunk read from it, never outside
 * the root. */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The slot holding path as sb says the file is now, or NULL. */
static FileCacheEntry *cache_hit(FileCache *fc, const char *path, const struct stat *sb, int by_id)
{
    int64_t mtime = (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    for (size_t i = 0; i < FILE_CACHE_SLOTS; i++) {
        FileCacheEntry *c = &fc->v[i];
        if (c->path && !strcmp(c->path, path) && c->size == (int64_t)sb->st_size &&
            c->mtime_ns == mtime &&
            (!by_id || (c->dev == (uint64_t)sb->st_dev && c->ino == (uint64_t)sb->st_ino))) {
            c->used = fc->tick;
            return c;
        }
    }
    return NULL;
}

/* The file's current text from the cache when its size and mtime are
 * unchanged, else read afresh into the least recently used slot. Opened
 * first and then looked at (path_open_under): never outside the root, even
 * when the tree changes meanwhile. A cached file is first looked up by a
 * plain stat of its path: the same file (device and inode) of the same
 * size and mtime is the text read from under the root before, and serves
 * without the component-by-component open (a few dozen system calls). */
static CrErr cached_file(IdxStore *st, const char *path, const FileCacheEntry **out, ErrInfo *e)
{
    struct stat sb;
    FileCache *fc = &st->files;
    fc->tick++;
    StrBuf abs;
    sb_init(&abs);
    sb_addf(&abs, "%s/%s", st->root, path);
    int known = stat(abs.buf, &sb) == 0 && S_ISREG(sb.st_mode);
    sb_release(&abs);
    if (known && (*out = cache_hit(fc, path, &sb, 1)) != NULL) return CR_OK;
    int fd;
    CrErr rc = path_open_under(st->root, path, &fd);
    if (rc)
        return err_set(e, rc, "%s: %s", path,
                       rc == CR_ENOENT     ? "vanished"
                       : rc == CR_EOUTSIDE ? "resolves outside the workspace"
                                           : "not a readable regular file");
    if (fstat(fd, &sb) != 0) {
        rc = err_set(e, CR_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    FileCacheEntry *hit = cache_hit(fc, path, &sb, 0), *victim = &fc->v[0];
    if (hit) {
        hit->dev = (uint64_t)sb.st_dev;
        hit->ino = (uint64_t)sb.st_ino;
        *out = hit;
        close(fd);
        return CR_OK;
    }
    for (size_t i = 0; i < FILE_CACHE_SLOTS; i++)
        if (fc->v[i].used < victim->used) victim = &fc->v[i];
    free(victim->path);
    victim->path = NULL;
    if (!victim->text.buf) sb_init(&victim->text);
    sb_reset(&victim->text);
    rc = sb_read_fd(&victim->text, fd, path, st->max_file_bytes * 2, e);
    close(fd);
    if (rc) return rc;
    /* Line starts, '\n'-separated as Python's ast counts lines. */
    free(victim->line_off);
    victim->n_lines = (uint32_t)line_offsets(victim->text.buf, victim->text.len, &victim->line_off);
    victim->path = xstrdup(path);
    victim->size = (int64_t)sb.st_size;
    victim->mtime_ns = mtime;
    victim->dev = (uint64_t)sb.st_dev;
    victim->ino = (uint64_t)sb.st_ino;
    victim->used = fc->tick;
    *out = victim;
    return CR_OK;
}

void idx_store_file_cache_release(FileCache *fc)
{
    for (size_t i = 0; i < FILE_CACHE_SLOTS; i++) {
        free(fc->v[i].path);
        free(fc->v[i].line_off);
        sb_release(&fc->v[i].text);
    }
    memset(fc, 0, sizeof *fc);
}

CrErr idx_read_lines(IdxStore *st, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                     uint32_t *out_total, ErrInfo *e)
{
    const FileCacheEntry *f = NULL;
    CrErr rc;
    /* paths from the index are normal; callers may pass what a client sent */
    if (!path_is_normal_rel(path))
        return err_set(e, CR_EOUTSIDE, "%s: not a path inside the workspace", path);
    if ((rc = cached_file(st, path, &f, e))) return rc;
    if (out_total) *out_total = f->n_lines;
    if (start < 1 || end < start || end > f->n_lines)
        return err_set(e, CR_EINVAL, "%s: lines %u-%u outside 1-%u", path, start, end, f->n_lines);
    size_t a = f->line_off[start - 1], b = end < f->n_lines ? f->line_off[end] : f->text.len;
    sb_add(out, f->text.buf + a, b - a);
    return CR_OK;
}
