#include "rpc.h"

#include <jansson.h>

/* The reader loop shared by the doors, and the protocols' profiles. */

const RpcProfile rpc_profile_lsp = {
    .name = "lsp",
    .cancel_method = "$/cancelRequest",
    .cancel_key = "id",
    .cancel_silent = 0,
    .exit_method = "exit",
    .object_params = 0,
    .json_flags = 0,
};

const RpcProfile rpc_profile_mcp = {
    .name = "mcp",
    .cancel_method = "notifications/cancelled",
    .cancel_key = "requestId",
    .cancel_silent = 1,
    .exit_method = NULL,
    .object_params = 1,
    .json_flags = JSON_REJECT_DUPLICATES,
};

int rpc_serve_one(Rpc *rpc, RpcTransport *t, StrBuf *body, RpcEnd *end)
{
    ErrInfo e = {0};
    RpcReadResult r = rpc_transport_read(t, body, &e);
    if (r == RPC_READ_MSG) {
        if (rpc_handle(rpc, body->buf, body->len) < 0)
            rpc_transport_reject(t, body->buf, body->len);
    } else if (r == RPC_READ_BAD) {
        log_msg(LOG_WARN, "framing error: %s", e.msg);
        rpc_framing_error(rpc, e.code == CR_ETOOBIG ? RPC_INVALID_REQUEST : RPC_PARSE_ERROR, e.msg);
    } else {
        if (e.msg[0]) log_msg(r == RPC_READ_IO ? LOG_ERROR : LOG_INFO, "input: %s", e.msg);
        log_msg(LOG_INFO, "end of input");
        *end = r == RPC_READ_IO ? RPC_END_IO : RPC_END_EOF;
        return 0;
    }
    if (rpc_exited(rpc, NULL)) {
        *end = RPC_END_EXIT;
        return 0;
    }
    if (rpc_transport_broken(t)) {
        log_msg(LOG_WARN, "the client stopped reading; leaving");
        *end = RPC_END_BROKEN;
        return 0;
    }
    return 1;
}

RpcEnd rpc_serve(Rpc *rpc, RpcTransport *t)
{
    StrBuf body;
    RpcEnd end = RPC_END_EOF;
    sb_init(&body);
    while (rpc_serve_one(rpc, t, &body, &end))
        ;
    sb_release(&body);
    return end;
}
