/*
 * enospc.c - fault injection for the protocol tests, loaded with LD_PRELOAD
 * into the real binary: while the file named by CRFAULT_ENOSPC exists,
 * every write to a file whose path starts with CRFAULT_PREFIX fails with
 * ENOSPC, as on a full disk; other writes (the protocol's pipes, the log)
 * go through. Deterministic: the test creates and removes the flag file
 * between requests. Not part of the product.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int disk_full(int fd)
{
    const char *flag = getenv("CRFAULT_ENOSPC"), *prefix = getenv("CRFAULT_PREFIX");
    if (!flag || !prefix || !*prefix || access(flag, F_OK) != 0) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return strncmp(path, prefix, strlen(prefix)) == 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t n)
{
    if (disk_full(fd)) return errno = ENOSPC, -1;
    return NEXT(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (disk_full(fd)) return errno = ENOSPC, -1;
    return NEXT(pwrite)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    if (disk_full(fd)) return errno = ENOSPC, -1;
    return NEXT(pwrite64)(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (disk_full(fd)) return errno = ENOSPC, -1;
    return NEXT(writev)(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    if (disk_full(fd)) return errno = ENOSPC, -1;
    return NEXT(pwritev)(fd, iov, cnt, off);
}
