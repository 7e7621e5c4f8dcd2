/* file.c - reading a file's bytes without mapping it: a mapped file cut
 * short by someone else kills the process (SIGBUS) when a page past the new
 * end is touched; a read just comes up short. */
#include "base.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

int file_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    char *c = buf;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 0;
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 1;
}

int file_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const char *c = buf;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return 0;
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 1;
}

/* Huge pages where the kernel offers them, then every page at once: fresh
 * pages for the 9 MB model cost a one-shot `coderag ask` ~3 ms less than
 * 4 KiB pages prefaulted by MAP_POPULATE (go-gin: 13 -> 10 ms of CPU; a
 * mapping of the file itself cost 7.7). Advice only: a kernel without
 * either gets its pages from the read. */
static void file__advise(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    (void)madvise(p, n, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
    (void)madvise(p, n, MADV_POPULATE_WRITE);
#endif
}

void *file_read_pages_at(int fd, size_t n, size_t lead)
{
    size_t len = n + lead ? n + lead : 1;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    file__advise(p, len);
    if (!file_pread_all(fd, (char *)p + lead, n, 0) || mprotect(p, len, PROT_READ) != 0) {
        munmap(p, len);
        return NULL;
    }
    return p;
}

void *file_read_pages(int fd, size_t n)
{
    return file_read_pages_at(fd, n, 0);
}
