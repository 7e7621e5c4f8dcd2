#include "../idx_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct DirKey {
    dev_t dev;
    ino_t ino;
} DirKey;

/* Open-addressing set of the directories entered so far. */
typedef struct DirSet {
    DirKey *keys;
    unsigned char *used;
    size_t cap, len;
} DirSet;

/* A symlinked directory, walked after the real tree so that a directory
 * reachable both ways is listed under its real path. */
typedef struct Deferred {
    char *rel;
    char *real;
    IgnoreList **stack; /* borrowed from Walk.lists */
    size_t n_stack;
} Deferred;

typedef struct Walk {
    ScanCtx ctx;
    ScanResult *out;
    IgnoreList **lists; /* every .gitignore read, owned */
    size_t n_lists, cap_lists;
    IgnoreList **stack; /* the ones in force for the current directory */
    size_t n_stack, cap_stack;
    DirSet seen;
    Deferred *deferred;
    size_t n_deferred, cap_deferred;
    StrBuf rel;  /* current path relative to the root */
    StrBuf real; /* current directory, canonical */
    char *dents; /* getdents64's buffer (SCAN_DENTS bytes), or NULL */
} Walk;

/* The bytes of directory entries one getdents64 returns at most (glibc's
 * readdir reads 32 KiB at a time too). */
#define SCAN_DENTS 32768

/* ---------------------------------------------------------------- helpers */

static void scan__push_name(StrBuf *sb, const char *name, int sep)
{
    if (sep) sb_addc(sb, '/');
    sb_adds(sb, name);
}

/* ---------------------------------------------------------------- visited set */

static size_t scan__dir_hash(DirKey k, size_t mask)
{
    uint64_t h = (uint64_t)k.ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)k.dev * 0xc2b2ae3d27d4eb4full;
    return (size_t)(h ^ (h >> 29)) & mask;
}

/* Inserts k; returns 0 when it was already present. */
static int scan__dir_insert(DirSet *s, DirKey k)
{
    if ((s->len + 1) * 2 > s->cap) {
        DirSet n = {0};
        n.cap = s->cap ? s->cap * 2 : 64;
        n.keys = xcalloc(n.cap, sizeof *n.keys);
        n.used = xcalloc(n.cap, 1);
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) scan__dir_insert(&n, s->keys[i]);
        free(s->keys);
        free(s->used);
        *s = n;
    }
    size_t mask = s->cap - 1, i = scan__dir_hash(k, mask);
    for (; s->used[i]; i = (i + 1) & mask)
        if (s->keys[i].dev == k.dev && s->keys[i].ino == k.ino) return 0;
    s->used[i] = 1;
    s->keys[i] = k;
    s->len++;
    return 1;
}

/* ---------------------------------------------------------------- walk */

static void scan__skip(Walk *w, const char *reason)
{
    ScanResult *r = w->out;
    ARRAY_GROW(r->skipped, r->n_skipped + 1, r->cap_skipped);
    r->skipped[r->n_skipped].path = xstrdup(w->rel.buf);
    r->skipped[r->n_skipped].reason = xstrdup(reason);
    r->n_skipped++;
}

static void scan__add_file(Walk *w, const struct stat *st)
{
    size_t max = w->ctx.opt->max_file_bytes;
    if (max && (uint64_t)st->st_size > max) {
        scan__skip(w, "too-large");
        return;
    }
    /* a path the system cannot name whole (root + "/" + rel past
     * PATH_MAX) cannot be read, cited or opened by a client: listed */
    if (strlen(w->ctx.root) + 1 + w->rel.len >= PATH_MAX) {
        scan__skip(w, "path-too-long");
        return;
    }
    ScanResult *r = w->out;
    ARRAY_GROW(r->files, r->n_files + 1, r->cap_files);
    ScanFile *f = &r->files[r->n_files++];
    f->path = xstrdup(w->rel.buf);
    f->size = (int64_t)st->st_size;
    f->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static void scan__walk_dir(Walk *w, int dfd);

/* Enters the directory open on fd (described by w->rel and w->real) unless
 * it was entered before; takes ownership of fd. */
static void scan__enter(Walk *w, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        scan__skip(w, "unreadable");
        return;
    }
    if (scan__dir_insert(&w->seen, (DirKey){st.st_dev, st.st_ino})) scan__walk_dir(w, fd);
    close(fd);
}

/* Where the symlink `name` in the current directory leads (caller frees),
 * or NULL with the reason recorded (nothing for a link that vanished). */
static char *scan__link_target(Walk *w, const char *name)
{
    size_t mark = w->real.len;
    scan__push_name(&w->real, name, 1);
    char *target = realpath(w->real.buf, NULL);
    int err = errno;
    sb_truncate(&w->real, mark);
    if (!target && !idx_scan_vanished(err))
        scan__skip(w, err == ELOOP ? "symlink-loop" : "unreadable");
    return target;
}

static void scan__symlink_dir(Walk *w, const char *name)
{
    char *target = scan__link_target(w, name);
    if (!target) return;
    if (!path_under(w->ctx.root, target)) {
        scan__skip(w, "outside-root");
    } else if (idx_scan_forbidden(&w->ctx, target)) {
        /* into a VCS folder or the index: never entered, not worth reporting */
    } else if (path_under(target, w->real.buf)) {
        scan__skip(w, "symlink-loop");
    } else {
        ARRAY_GROW(w->deferred, w->n_deferred + 1, w->cap_deferred);
        Deferred *d = &w->deferred[w->n_deferred++];
        d->rel = xstrdup(w->rel.buf);
        d->real = target;
        d->n_stack = w->n_stack;
        d->stack = xmalloc((w->n_stack ? w->n_stack : 1) * sizeof *d->stack);
        if (w->n_stack) memcpy(d->stack, w->stack, w->n_stack * sizeof *d->stack);
        return;
    }
    free(target);
}

static void scan__real_dir(Walk *w, int dirfd, const char *name)
{
    size_t mark = w->real.len;
    scan__push_name(&w->real, name, 1);
    if (w->ctx.index_real && !strcmp(w->real.buf, w->ctx.index_real)) goto out;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        /* ELOOP: replaced by a symlink since readdir; treat as vanished */
        if (!idx_scan_vanished(errno) && errno != ELOOP) scan__skip(w, "unreadable");
        goto out;
    }
    scan__enter(w, fd);
out:
    sb_truncate(&w->real, mark);
}

static void scan__file(Walk *w, int dirfd, const char *name, int is_link, struct stat *st,
                       int have_st)
{
    int ign = idx_scan_ignored(&w->ctx, w->stack, w->n_stack, w->rel.buf, 0);
    if (ign == 2) scan__skip(w, "ignore-too-costly");
    if (ign) return;
    if (is_link) {
        char *target = scan__link_target(w, name);
        if (!target) return;
        int outside = !path_under(w->ctx.root, target);
        int forbidden = !outside && idx_scan_forbidden(&w->ctx, target);
        free(target);
        if (outside) scan__skip(w, "outside-root");
        if (outside || forbidden) return;
    }
    if (!have_st && fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (!idx_scan_vanished(errno)) scan__skip(w, "unreadable");
        return;
    }
    if (!S_ISREG(st->st_mode)) return;
    if (!idx_scan_wanted(dirfd, name, st->st_size)) return;
    scan__add_file(w, st);
}

static void scan__entry(Walk *w, int dirfd, const char *name, unsigned char type)
{
    struct stat st;
    int have_st = 0, is_link = 0;
    size_t len = strlen(name);
    if (type == DT_UNKNOWN) {
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (!idx_scan_vanished(errno)) scan__skip(w, "unreadable");
            return;
        }
        have_st = 1;
        type = S_ISDIR(st.st_mode)   ? DT_DIR
               : S_ISREG(st.st_mode) ? DT_REG
               : S_ISLNK(st.st_mode) ? DT_LNK
                                     : DT_UNKNOWN;
    }
    if (type == DT_LNK) {
        is_link = 1;
        if (fstatat(dirfd, name, &st, 0) != 0) {
            /* a dangling link is as good as absent; a looping one is only
             * worth reporting when it would have been a source file */
            int err = errno;
            if (!idx_scan_vanished(err) && idx_scan_is_candidate(name, len) &&
                !idx_scan_ignored(&w->ctx, w->stack, w->n_stack, w->rel.buf, 0))
                scan__skip(w, err == ELOOP ? "symlink-loop" : "unreadable");
            return;
        }
        have_st = 1;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
    }
    if (type == DT_REG) {
        if (idx_scan_is_candidate(name, len)) scan__file(w, dirfd, name, is_link, &st, have_st);
    } else if (type == DT_DIR) {
        int ign = idx_scan_ignored(&w->ctx, w->stack, w->n_stack, w->rel.buf, 1);
        if (ign == 2) scan__skip(w, "ignore-too-costly");
        if (ign) return;
        if (is_link)
            scan__symlink_dir(w, name);
        else
            scan__real_dir(w, dirfd, name);
    }
}

/* A directory's entry as readdir gave it. */
typedef struct ScanEntry {
    const char *name;
    unsigned char type;
} ScanEntry;

/* Entries in the order of the paths under them: a directory's name read
 * with a '/' after it ("a-b" < "a/x", '-' < '/'), so that walking them in
 * this order lists files in strcmp order of their whole paths. An entry of
 * unknown type reads as a file: the result's final check sorts what this
 * order gets wrong. */
static int scan__entry_cmp(const void *pa, const void *pb)
{
    const ScanEntry *a = pa, *b = pb;
    const unsigned char *x = (const unsigned char *)a->name, *y = (const unsigned char *)b->name;
    while (*x && *x == *y) {
        x++;
        y++;
    }
    int cx = *x ? *x : a->type == DT_DIR ? '/' : 0;
    int cy = *y ? *y : b->type == DT_DIR ? '/' : 0;
    return cx - cy;
}

/* A directory's entries that may lead to a source, names one after
 * another ('\0' after each), and whether it holds a .gitignore. */
typedef struct Listing {
    StrBuf names;
    unsigned char *types;
    size_t n, cap;
    int has_gitignore;
} Listing;

static void scan__list_entry(Listing *l, const char *nm, unsigned char type)
{
    size_t len = strlen(nm);
    if (nm[0] == '.' && (len == 1 || (len == 2 && nm[1] == '.'))) return;
    /* a VCS folder, and any index folder (a nested project's sub/.coderag/
     * too): never a source */
    if (idx_is_vcs_dir(nm, len) || !strcmp(nm, IDX_DIR_NAME)) return;
    if (len == 10 && !memcmp(nm, ".gitignore", 10)) {
        l->has_gitignore = 1;
        return;
    }
    if (type == DT_REG && !idx_scan_is_candidate(nm, len)) return;
    ARRAY_GROW(l->types, l->n + 1, l->cap);
    l->types[l->n++] = type;
    sb_add(&l->names, nm, len + 1);
}

/* Lists the directory open on fd into l; 0 when it cannot be listed. On
 * Linux by getdents64 on fd itself: a DIR (fdopendir) costs an fstat and
 * two fcntl more a directory, 12,000 system calls on the kernel's 4,062
 * directories. A read that fails ends the listing, as it ends readdir's. */
static int scan__list(Walk *w, int fd, Listing *l)
{
#ifdef __linux__
    if (!w->dents) w->dents = xmalloc(SCAN_DENTS);
    ssize_t got;
    while ((got = getdents64(fd, w->dents, SCAN_DENTS)) > 0) {
        for (ssize_t at = 0; at < got;) {
            const struct dirent64 *de = (const struct dirent64 *)(w->dents + at);
            scan__list_entry(l, de->d_name, de->d_type);
            at += de->d_reclen;
        }
    }
    return 1;
#else
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        return 0;
    }
    const struct dirent *de;
    while ((de = readdir(d)) != NULL)
        scan__list_entry(l, de->d_name, de->d_type);
    closedir(d);
    return 1;
#endif
}

/* Lists the directory open on dfd (described by w->rel and w->real); the
 * caller closes it. */
static void scan__walk_dir(Walk *w, int dfd)
{
    /* Entries are collected first so that the directory's .gitignore,
     * wherever the listing returns it, applies to all of them. */
    Listing ls = {0};
    sb_init(&ls.names);
    int pushed = 0;
    if (!scan__list(w, dfd, &ls)) {
        scan__skip(w, "unreadable");
        sb_release(&ls.names);
        return;
    }
    size_t n = ls.n;
    if (ls.has_gitignore) {
        int refused = 0;
        IgnoreList *l = idx_scan_read_gitignore(dfd, ".gitignore", w->rel.buf, &refused);
        if (refused) {
            /* fail closed: a .gitignore that cannot be read whole may hide
             * any file here, so nothing here is indexed (listed skipped) */
            size_t at = w->rel.len;
            scan__push_name(&w->rel, ".gitignore", at > 0);
            scan__skip(w, "gitignore-unreadable");
            sb_truncate(&w->rel, at);
            n = 0;
        }
        if (l) {
            ARRAY_GROW(w->lists, w->n_lists + 1, w->cap_lists);
            w->lists[w->n_lists++] = l;
            ARRAY_GROW(w->stack, w->n_stack + 1, w->cap_stack);
            w->stack[w->n_stack++] = l;
            pushed = 1;
        }
    }
    /* in the order of their paths: the tree's files come out sorted (a
     * symlinked directory's, walked after, aside) */
    ScanEntry *ents = xmalloc((n ? n : 1) * sizeof *ents);
    const char *nm = ls.names.buf;
    for (size_t i = 0; i < n; i++, nm += strlen(nm) + 1)
        ents[i] = (ScanEntry){nm, ls.types[i]};
    qsort(ents, n, sizeof *ents, scan__entry_cmp);
    size_t mark = w->rel.len;
    for (size_t i = 0; i < n; i++) {
        scan__push_name(&w->rel, ents[i].name, mark > 0);
        scan__entry(w, dfd, ents[i].name, ents[i].type);
        sb_truncate(&w->rel, mark);
    }
    if (pushed) w->n_stack--;
    free(ents);
    free(ls.types);
    sb_release(&ls.names);
}

static int scan__deferred_cmp(const void *a, const void *b)
{
    return strcmp(((const Deferred *)a)->rel, ((const Deferred *)b)->rel);
}

static void scan__run_deferred(Walk *w)
{
    while (w->n_deferred) {
        Deferred *batch = w->deferred;
        size_t n = w->n_deferred;
        w->deferred = NULL;
        w->n_deferred = w->cap_deferred = 0;
        qsort(batch, n, sizeof *batch, scan__deferred_cmp);
        for (size_t i = 0; i < n; i++) {
            Deferred *d = &batch[i];
            sb_reset(&w->rel);
            sb_adds(&w->rel, d->rel);
            sb_reset(&w->real);
            sb_adds(&w->real, d->real);
            w->n_stack = 0;
            ARRAY_GROW(w->stack, d->n_stack, w->cap_stack);
            if (d->n_stack) memcpy(w->stack, d->stack, d->n_stack * sizeof *d->stack);
            w->n_stack = d->n_stack;
            int fd = open(d->real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (fd >= 0)
                scan__enter(w, fd);
            else if (!idx_scan_vanished(errno))
                scan__skip(w, "unreadable");
            free(d->rel);
            free(d->real);
            free(d->stack);
        }
        free(batch);
    }
}

static int scan__file_cmp(const void *a, const void *b)
{
    return strcmp(((const ScanFile *)a)->path, ((const ScanFile *)b)->path);
}

static int scan__skip_cmp(const void *a, const void *b)
{
    return strcmp(((const ScanSkip *)a)->path, ((const ScanSkip *)b)->path);
}

CrErr idx_scan_workspace(const ScanOptions *opt, ScanResult *out, ErrInfo *e)
{
    CrErr rc = CR_OK;
    int root = -1;
    Walk w;
    memset(&w, 0, sizeof w);
    memset(out, 0, sizeof *out);
    idx_scan_ctx_init(&w.ctx, opt);
    w.out = out;
    sb_init(&w.rel);
    sb_init(&w.real);
    sb_adds(&w.real, w.ctx.root);

    struct stat st;
    root = open(opt->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 || fstat(root, &st) != 0) {
        rc = err_set(e, idx_scan_vanished(errno) ? CR_ENOENT : CR_EIO, "%s: %s", opt->root,
                     strerror(errno));
        goto out;
    }
    scan__dir_insert(&w.seen, (DirKey){st.st_dev, st.st_ino});
    scan__walk_dir(&w, root);
    scan__run_deferred(&w);
    /* sorted by the walk's order but for symlinked directories and entries
     * of unknown type: sorted only when out of order */
    int sorted = 1;
    for (size_t i = 1; i < out->n_files && sorted; i++)
        sorted = strcmp(out->files[i - 1].path, out->files[i].path) < 0;
    if (!sorted) qsort(out->files, out->n_files, sizeof *out->files, scan__file_cmp);
    if (out->n_skipped) qsort(out->skipped, out->n_skipped, sizeof *out->skipped, scan__skip_cmp);
out:
    if (root >= 0) close(root);
    free(w.dents);
    for (size_t i = 0; i < w.n_lists; i++)
        idx_ignore_free(w.lists[i]);
    free(w.lists);
    free(w.stack);
    free(w.deferred);
    free(w.seen.keys);
    free(w.seen.used);
    sb_release(&w.rel);
    sb_release(&w.real);
    idx_scan_ctx_release(&w.ctx);
    if (rc) idx_scan_result_release(out);
    return rc;
}

void idx_scan_result_release(ScanResult *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n_files; i++)
        free(r->files[i].path);
    for (size_t i = 0; i < r->n_skipped; i++) {
        free(r->skipped[i].path);
        free(r->skipped[i].reason);
    }
    free(r->files);
    free(r->skipped);
    memset(r, 0, sizeof *r);
}
