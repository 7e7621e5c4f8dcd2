#include "ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Opening the store and keeping it fresh, and the index's writers: one
 * for whole passes (ws_store_pass: the CLI's pre-ask pass and `index`
 * through ws_root_open_fresh, the servers' builds, the MCP server's
 * refreshes) and one for a single file (ws_store_update_file: the
 * language server's saves and watched files). */

CrErr ws_store_open(const WsConfig *c, WsOpen how, IdxStore **out, ErrInfo *e)
{
    static const unsigned flags[] = {[WS_OPEN_READ] = IDX_OPEN_READONLY,
                                     [WS_OPEN_EXISTING] = IDX_OPEN_EXISTING,
                                     [WS_OPEN_CREATE] = 0};
    IdxConfig ic;
    ws_config_idx(c, &ic);
    *out = NULL;
    return idx_open(&ic, flags[how], out, e);
}

const char *ws_store_root(IdxStore *st)
{
    return idx_root(st);
}

void ws_process_init(void)
{
    idx_process_init();
}

int ws_schema_version(void)
{
    return idx_schema_version();
}

/* Whether another live process is in the middle of a pass over st's index;
 * then appends "process 4242 is indexing this root (11000/55405 files so
 * far): waiting for it to finish" to note. */
static int ws_store_other_writer(IdxStore *st, StrBuf *note)
{
    IdxStatus s;
    memset(&s, 0, sizeof s);
    if (idx_status_pass(st, &s, NULL) || !s.pass_total || !s.pass_pid || s.pass_pid == getpid())
        return 0;
    sb_addf(note,
            "process %d is indexing this root (%lld/%lld files so far): waiting for it to finish",
            s.pass_pid, (long long)s.pass_done, (long long)s.pass_total);
    return 1;
}

CrErr ws_store_pass(IdxStore *st, IdxProgressFn fn, void *ud,
                    void (*waiting)(void *ud, const char *msg), void *wait_ud,
                    IdxUpdateStats *stats, ErrInfo *e)
{
    IdxUpdateStats local;
    StrBuf note;
    sb_init(&note);
    if (waiting && ws_store_other_writer(st, &note)) waiting(wait_ud, note.buf);
    sb_release(&note);
    return idx_update(st, fn, ud, stats ? stats : &local, e);
}

CrErr ws_store_pass_yield(IdxStore *st, int wait_ms, void (*yield)(void *ud), void *yield_ud,
                          IdxProgressFn fn, void *ud, IdxUpdateStats *stats, ErrInfo *e)
{
    idx_set_write_wait(st, wait_ms);
    CrErr rc = ws_store_pass(st, fn, ud, NULL, NULL, stats, e);
    if (rc && wait_ms > 0 && idx_busy(st)) {
        yield(yield_ud);
        idx_set_write_wait(st, 0);
        if (e) memset(e, 0, sizeof *e);
        rc = ws_store_pass(st, fn, ud, NULL, NULL, stats, e);
    }
    return rc;
}

CrErr ws_store_update_file(IdxStore *st, const char *path, int wait_ms, int *out_busy, ErrInfo *e)
{
    idx_set_write_wait(st, wait_ms);
    CrErr rc = idx_update_file(st, path, e);
    *out_busy = rc && idx_busy(st);
    return rc;
}

int ws_update_embed_failed(CrErr rc)
{
    return rc == CR_EHTTP || rc == CR_ETIMEOUT;
}

int ws_index_unreadable(CrErr rc)
{
    return rc == CR_EDB || rc == CR_ECORRUPT || rc == CR_EIO;
}

void ws_unreadable_text(CrErr rc, const ErrInfo *e, char *buf, size_t size)
{
    snprintf(buf, size, "the index could not be read: %.400s",
             e && e->msg[0] ? e->msg : cr_strerror(rc));
}

WsChange ws_change_kind(const char *rel, int deleted)
{
    /* nothing under a VCS's metadata or an index */
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        char part[256];
        if (n < sizeof part) {
            memcpy(part, p, n);
            part[n] = '\0';
            if (p[n] == '/' && ws_skip_dir_name(part)) return WS_CHANGE_NONE;
        }
        p += n;
        while (*p == '/')
            p++;
    }
    const char *slash = strrchr(rel, '/');
    const char *name = slash ? slash + 1 : rel;
    if (!strcmp(name, ".gitignore") || (deleted && !strchr(name, '.')))
        return WS_CHANGE_RESCAN; /* rules changed, or perhaps a folder went */
    return idx_may_index_path(rel) ? WS_CHANGE_FILE : WS_CHANGE_NONE;
}
