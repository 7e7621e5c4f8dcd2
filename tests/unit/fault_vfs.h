/*
 * fault_vfs.h - a SQLite VFS over the default one that fails on demand, for
 * tests of what the store does when the database cannot be read or written.
 *
 * fault_vfs_install() makes it the default VFS (before the store opens its
 * database). Every call into a file whose name contains "index.db" (the
 * database and its WAL: reads, writes, syncs, truncation, locks and
 * shared-memory locks) is counted; fault_vfs_arm(n, sticky) makes the n-th
 * such call from now fail with an I/O error, and with sticky every call after
 * it too, until fault_vfs_disarm(). fault_vfs.full = 1 makes every write to
 * such a file fail as on a full disk (SQLITE_FULL). Memory-mapped I/O is not offered, so
 * every page read goes through xRead.
 */
#ifndef CODERAG_FAULT_VFS_H
#define CODERAG_FAULT_VFS_H

#include <sqlite3.h>
#include <string.h>

typedef struct FaultFile {
    sqlite3_file base;
    sqlite3_file *real; /* the default VFS's file, allocated right after this */
    int watched;        /* the name contains "index.db" */
} FaultFile;

static struct {
    sqlite3_vfs vfs;
    sqlite3_vfs *real;
    long countdown; /* watched calls before the failing one; < 0: disarmed */
    int sticky;
    int failing; /* the armed call came: every later call fails (sticky) */
    long calls;  /* watched calls since the last arm */
    long injected;
    int full; /* every write to a watched file fails with SQLITE_FULL (a full disk) */
} fault_vfs;

static void fault_vfs_arm(long nth, int sticky)
{
    fault_vfs.countdown = nth;
    fault_vfs.sticky = sticky;
    fault_vfs.failing = 0;
    fault_vfs.calls = 0;
}

static void fault_vfs_disarm(void)
{
    fault_vfs.countdown = -1;
    fault_vfs.failing = 0;
}

/* Whether this call fails (code) or goes through (SQLITE_OK). */
static int fault__check(FaultFile *f, int code)
{
    if (!f->watched || fault_vfs.countdown < 0) return SQLITE_OK;
    fault_vfs.calls++;
    if (fault_vfs.failing || --fault_vfs.countdown == 0) {
        fault_vfs.failing = fault_vfs.sticky;
        if (!fault_vfs.sticky) fault_vfs.countdown = -1;
        fault_vfs.injected++;
        return code;
    }
    return SQLITE_OK;
}

#define FAULT_REAL(p) (((FaultFile *)(p))->real)

static int fault__close(sqlite3_file *p)
{
    return FAULT_REAL(p)->pMethods->xClose(FAULT_REAL(p));
}

static int fault__read(sqlite3_file *p, void *buf, int n, sqlite3_int64 off)
{
    int rc = fault__check((FaultFile *)p, SQLITE_IOERR_READ);
    return rc ? rc : FAULT_REAL(p)->pMethods->xRead(FAULT_REAL(p), buf, n, off);
}

static int fault__write(sqlite3_file *p, const void *buf, int n, sqlite3_int64 off)
{
    if (fault_vfs.full && ((FaultFile *)p)->watched) return SQLITE_FULL;
    int rc = fault__check((FaultFile *)p, SQLITE_IOERR_WRITE);
    return rc ? rc : FAULT_REAL(p)->pMethods->xWrite(FAULT_REAL(p), buf, n, off);
}

static int fault__truncate(sqlite3_file *p, sqlite3_int64 size)
{
    int rc = fault__check((FaultFile *)p, SQLITE_IOERR_TRUNCATE);
    return rc ? rc : FAULT_REAL(p)->pMethods->xTruncate(FAULT_REAL(p), size);
}

static int fault__sync(sqlite3_file *p, int flags)
{
    int rc = fault__check((FaultFile *)p, SQLITE_IOERR_FSYNC);
    return rc ? rc : FAULT_REAL(p)->pMethods->xSync(FAULT_REAL(p), flags);
}

static int fault__size(sqlite3_file *p, sqlite3_int64 *size)
{
    return FAULT_REAL(p)->pMethods->xFileSize(FAULT_REAL(p), size);
}

static int fault__lock(sqlite3_file *p, int level)
{
    int rc = fault__check((FaultFile *)p, SQLITE_IOERR_LOCK);
    return rc ? rc : FAULT_REAL(p)->pMethods->xLock(FAULT_REAL(p), level);
}

static int fault__unlock(sqlite3_file *p, int level)
{
    return FAULT_REAL(p)->pMethods->xUnlock(FAULT_REAL(p), level);
}

static int fault__reserved(sqlite3_file *p, int *out)
{
    return FAULT_REAL(p)->pMethods->xCheckReservedLock(FAULT_REAL(p), out);
}

static int fault__control(sqlite3_file *p, int op, void *arg)
{
    return FAULT_REAL(p)->pMethods->xFileControl(FAULT_REAL(p), op, arg);
}

static int fault__sector(sqlite3_file *p)
{
    return FAULT_REAL(p)->pMethods->xSectorSize(FAULT_REAL(p));
}

static int fault__device(sqlite3_file *p)
{
    return FAULT_REAL(p)->pMethods->xDeviceCharacteristics(FAULT_REAL(p));
}

static int fault__shm_map(sqlite3_file *p, int pg, int pgsz, int extend, void volatile **out)
{
    return FAULT_REAL(p)->pMethods->xShmMap(FAULT_REAL(p), pg, pgsz, extend, out);
}

static int fault__shm_lock(sqlite3_file *p, int offset, int n, int flags)
{
    if (flags & SQLITE_SHM_LOCK) {
        int rc = fault__check((FaultFile *)p, SQLITE_IOERR_LOCK);
        if (rc) return rc;
    }
    return FAULT_REAL(p)->pMethods->xShmLock(FAULT_REAL(p), offset, n, flags);
}

static void fault__shm_barrier(sqlite3_file *p)
{
    FAULT_REAL(p)->pMethods->xShmBarrier(FAULT_REAL(p));
}

static int fault__shm_unmap(sqlite3_file *p, int del)
{
    return FAULT_REAL(p)->pMethods->xShmUnmap(FAULT_REAL(p), del);
}

static const sqlite3_io_methods fault_io = {
    2, /* shared memory, no memory-mapped fetch */
    fault__close,
    fault__read,
    fault__write,
    fault__truncate,
    fault__sync,
    fault__size,
    fault__lock,
    fault__unlock,
    fault__reserved,
    fault__control,
    fault__sector,
    fault__device,
    fault__shm_map,
    fault__shm_lock,
    fault__shm_barrier,
    fault__shm_unmap,
    NULL,
    NULL,
};

static int fault__open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out)
{
    (void)vfs;
    FaultFile *f = (FaultFile *)p;
    f->real = (sqlite3_file *)(f + 1);
    f->watched = name && strstr(name, "index.db") != NULL;
    int rc = fault_vfs.real->xOpen(fault_vfs.real, name, f->real, flags, out);
    f->base.pMethods = f->real->pMethods ? &fault_io : NULL;
    return rc;
}

static int fault__delete(sqlite3_vfs *v, const char *name, int sync)
{
    (void)v;
    return fault_vfs.real->xDelete(fault_vfs.real, name, sync);
}

static int fault__access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return fault_vfs.real->xAccess(fault_vfs.real, name, flags, out);
}

static int fault__full(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return fault_vfs.real->xFullPathname(fault_vfs.real, name, n, out);
}

static int fault__random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fault_vfs.real->xRandomness(fault_vfs.real, n, out);
}

static int fault__sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return fault_vfs.real->xSleep(fault_vfs.real, us);
}

static int fault__time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return fault_vfs.real->xCurrentTime(fault_vfs.real, out);
}

static int fault__last_error(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fault_vfs.real->xGetLastError(fault_vfs.real, n, out);
}

static int fault__time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return fault_vfs.real->xCurrentTimeInt64(fault_vfs.real, out);
}

/* Registers the VFS as the default one. 0 on success. */
static int fault_vfs_install(void)
{
    sqlite3_initialize();
    fault_vfs.real = sqlite3_vfs_find(NULL);
    if (!fault_vfs.real) return -1;
    fault_vfs_disarm();
    sqlite3_vfs *v = &fault_vfs.vfs;
    v->iVersion = 2;
    v->szOsFile = (int)sizeof(FaultFile) + fault_vfs.real->szOsFile;
    v->mxPathname = fault_vfs.real->mxPathname;
    v->zName = "coderag-fault";
    v->xOpen = fault__open;
    v->xDelete = fault__delete;
    v->xAccess = fault__access;
    v->xFullPathname = fault__full;
    v->xRandomness = fault__random;
    v->xSleep = fault__sleep;
    v->xCurrentTime = fault__time;
    v->xGetLastError = fault__last_error;
    v->xCurrentTimeInt64 = fault__time64;
    return sqlite3_vfs_register(v, 1) == SQLITE_OK ? 0 : -1;
}

#endif
