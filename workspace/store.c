#include "ws.h"

#include <string.h>

/* Opening the store and keeping it fresh: the CLI's pre-ask pass, the MCP
 * server's watcher-driven refresh (the language server's saves and watched
 * files go through idx_update_files on its worker). */

CrErr ws_store_open(const WsConfig *c, int update, IdxProgressFn fn, void *ud,
                    IdxUpdateStats *stats, IdxStore **out, ErrInfo *e)
{
    IdxConfig ic;
    IdxUpdateStats local;
    ws_config_idx(c, &ic);
    *out = NULL;
    CrErr rc = idx_open(&ic, update ? 0 : IDX_OPEN_EXISTING, out, e);
    if (rc || !update) return rc;
    rc = idx_update(*out, fn, ud, stats ? stats : &local, e);
    if (rc) {
        idx_close(*out);
        *out = NULL;
    }
    return rc;
}

CrErr ws_refresh(IdxStore *st, WsWatch *w, IdxProgressFn fn, void *ud, ErrInfo *e)
{
    CrErr rc = CR_OK;
    for (int i = 0; i < 3 && ws_watch_changed(w); i++) {
        IdxUpdateStats stats;
        rc = idx_update(st, fn, ud, &stats, e);
        if (rc == CR_EHTTP || rc == CR_ETIMEOUT) rc = CR_OK; /* text index current; vectors later */
        if (rc) break;
        if (stats.files_changed || stats.files_removed)
            log_msg(LOG_INFO, "index updated: %zu changed, %zu removed file(s)",
                    stats.files_changed, stats.files_removed);
        if (!w) break; /* no watcher: one stat pass per call */
    }
    return rc;
}
