#include "folder.h"
#include "progress.h"
#include "server_int.h"

/* Reading a workspace's query store for the server's own use (its search
 * structures, its counts): failures are logged, never ignored. Used by the
 * worker's opening (folder.c) and a build's adoption (builder.c). */

int lsp_folder_warm(LspFolder *ws)
{
    ErrInfo e = {0};
    CrErr rc = idx_warm(ws->q, &e);
    if (rc == CR_OK) return 1;
    const char *why = e.msg[0] ? e.msg : cr_strerror(rc);
    log_msg(LOG_WARN, "loading the search structures of %s failed: %s", ws->root, why);
    lsp_srv_notice(ws->srv, NOTICE_INDEX, 2, "coderag: the index of %s could not be loaded: %s",
                   ws->root, why);
    return 0;
}

int lsp_folder_count(LspFolder *ws, IdxStatus *out)
{
    ErrInfo e = {0};
    IdxStatus got;
    CrErr rc = idx_status(ws->q, &got, &e);
    if (rc == CR_OK) {
        *out = got;
        return 1;
    }
    log_msg(LOG_WARN, "counting the index of %s failed: %s", ws->root,
            e.msg[0] ? e.msg : cr_strerror(rc));
    return 0;
}
