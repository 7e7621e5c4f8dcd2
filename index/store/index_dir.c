/*
 * index_dir.c - which folder holds the index, and whether coderag may write
 * there. A folder coderag made carries a mark (MARK_NAME); coderag writes,
 * replaces and deletes files only in a marked folder, a new one, an empty
 * one, or one an older coderag made (only coderag's files, its ".gitignore"
 * of "*"). The default ".coderag" is never a symbolic link, and no index
 * folder is the workspace root or holds it. Every file of coderag's found
 * in it must be a regular file (a FIFO there would block an open). A named
 * folder that does not exist is made with its missing parents (0755, as
 * `mkdir -p`); a parent that cannot be made is named.
 */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK_NAME ".coderag-index"
#define MARK_TEXT "coderag index directory: coderag writes and deletes files here\n"

/* Names coderag writes in its folder (a name starting with one of these). */
static const char *const own_prefixes[] = {"index.db",    "postings.bin", "vectors.faiss",
                                           "update.lock", "vectors.lock", "parsing",
                                           ".gitignore",  MARK_NAME,      NULL};

static int own_name(const char *name)
{
    for (size_t i = 0; own_prefixes[i]; i++)
        if (!strncmp(name, own_prefixes[i], strlen(own_prefixes[i]))) return 1;
    return 0;
}

/* Creates name in dirfd with text unless it exists; never follows a link. */
static int write_new(int dirfd, const char *name, const char *text)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return errno == EEXIST ? 0 : -1;
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    return ok ? 0 : -1;
}

/* Whether dirfd's ".gitignore" is exactly the "*" an older coderag wrote. */
static int legacy_gitignore(int dirfd)
{
    char buf[8];
    int fd = openat(dirfd, ".gitignore", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof buf) : -1;
    close(fd);
    return n == 2 && !memcmp(buf, "*\n", 2);
}

/* Looks at every entry of the folder open on dirfd: *foreign gets the first
 * name coderag did not write (NULL: none), *odd the first of coderag's
 * names that is not a regular file, *n the number of entries; *marked
 * whether the mark is there. */
static CrErr survey(int dirfd, const char *dir, char **foreign, char **odd, size_t *n, int *marked,
                    ErrInfo *e)
{
    *foreign = *odd = NULL;
    *marked = 0;
    *n = 0;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return err_set(e, CR_EIO, "index directory %s: %s", dir, strerror(errno));
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..")) continue;
        (*n)++;
        if (!own_name(nm)) {
            if (!*foreign) *foreign = xstrdup(nm);
            continue;
        }
        struct stat st;
        if (fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone meanwhile */
        if (!S_ISREG(st.st_mode)) {
            if (!*odd) *odd = xstrdup(nm);
        } else if (!strcmp(nm, MARK_NAME)) {
            *marked = 1;
        }
    }
    closedir(d);
    return CR_OK;
}

/* Whether the folder open on dirfd is coderag's to write in; marks it so
 * when it is new, empty or an older coderag's. */
static CrErr claim(int dirfd, const char *dir, int writable, ErrInfo *e)
{
    char *foreign = NULL, *odd = NULL;
    size_t n = 0;
    int marked = 0;
    CrErr rc = survey(dirfd, dir, &foreign, &odd, &n, &marked, e);
    if (rc) return rc;
    if (odd) {
        rc = err_set(e, CR_EIO,
                     "index directory %s: '%s' is not a regular file; remove it and run "
                     "`coderag index` again",
                     dir, odd);
    } else if (writable && !marked && (foreign || (n && !legacy_gitignore(dirfd)))) {
        /* someone else's files, even under coderag's names: never replaced */
        rc = err_set(e, CR_EUSAGE,
                     "index directory %s holds files coderag did not create (%s%s%s); coderag "
                     "writes its index only into a new or empty folder, or one it made (marked "
                     "by " MARK_NAME ")",
                     dir, foreign ? "'" : "an index without the mark", foreign ? foreign : "",
                     foreign ? "'" : "");
    } else if (writable && !marked) {
        if (write_new(dirfd, MARK_NAME, MARK_TEXT) != 0 ||
            write_new(dirfd, ".gitignore", "*\n") != 0)
            rc = err_set(e, CR_EIO, "cannot write in index directory %s: %s", dir, strerror(errno));
    }
    free(foreign);
    free(odd);
    return rc;
}

/* Creates the folders above dir that are missing, as `mkdir -p` does (an
 * index folder named anywhere, like `--index-dir /tmp/a/b/c`, is made with
 * its parents); the first that cannot be made is named. */
static CrErr make_parents(const char *dir, ErrInfo *e)
{
    if (!dir[0]) return err_set(e, CR_EUSAGE, "no index directory named");
    char *p = xstrdup(dir);
    CrErr rc = CR_OK;
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        if (s[-1] == '/') continue; /* "a//b" */
        *s = '\0';
        struct stat st;
        if (mkdir(p, 0755) != 0 && (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
            rc = err_set(e, CR_EIO, "cannot create index directory %s: %s: %s", dir, p,
                         errno == EEXIST ? "not a directory" : strerror(errno));
            break;
        }
        *s = '/';
    }
    free(p);
    return rc;
}

CrErr idx_dir_claim(const char *real_root, const char *dir, int is_default, int create,
                    int writable, char **out_real, int *out_fd, ErrInfo *e)
{
    *out_real = NULL;
    *out_fd = -1;
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) /* ENOTDIR: a parent is a file */
            return err_set(e, CR_EIO, "index directory %s: %s", dir, strerror(errno));
        if (!create)
            return err_set(e, CR_ENOINDEX, "not indexed yet: run `coderag index` (no index at %s)",
                           dir);
        int made = mkdir(dir, 0755) == 0 || errno == EEXIST;
        if (!made && (errno == ENOENT || errno == ENOTDIR)) { /* a parent is missing (or a file) */
            CrErr prc = make_parents(dir, e);
            if (prc) return prc;
            made = mkdir(dir, 0755) == 0 || errno == EEXIST;
        }
        if (!made)
            return err_set(e, CR_EIO, "cannot create index directory %s: %s", dir, strerror(errno));
        if (lstat(dir, &st) != 0)
            return err_set(e, CR_EIO, "index directory %s: %s", dir, strerror(errno));
    }
    if (S_ISLNK(st.st_mode) && is_default)
        return err_set(e, CR_EIO,
                       "index directory %s is a symbolic link; coderag does not follow it (remove "
                       "it, or name a folder with --index-dir)",
                       dir);
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return err_set(e, CR_EIO, "index directory %s: %s", dir, strerror(errno));
    if (path_under(real, real_root))
        return err_set(e, CR_EUSAGE,
                       "index directory %s is the workspace root or holds it; name a folder of "
                       "its own (the default is %s/.coderag)",
                       dir, real_root);
    /* From here on the folder is the one opened, whatever the path does. */
    int dirfd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0)
        return err_set(e, CR_EIO, "index directory %s: %s", dir,
                       errno == ENOTDIR ? "not a directory" : strerror(errno));
    CrErr rc = claim(dirfd, dir, writable, e);
    if (rc) {
        close(dirfd);
        return rc;
    }
    *out_real = xstrdup(real);
    *out_fd = dirfd;
    return CR_OK;
}

/* How the files of the index folder open on fd are named: through the
 * descriptor when /proc shows it (the folder checked, whatever its path
 * becomes), else by its canonical path. */
char *idx_dir_access(int fd, const char *real)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    struct stat a, b;
    if (stat(p, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return xstrdup(p);
    log_msg(LOG_INFO, "no /proc/self/fd: the files of %s are opened by its path", real);
    return xstrdup(real);
}

int idx_index_file_open(const IdxStore *st, const char *name)
{
    StrBuf p;
    sb_init(&p);
    sb_addf(&p, "%s/%s", st->index_dir, name);
    int fd = open(p.buf, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
    sb_release(&p);
    struct stat sb;
    if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}
