#include "lsp.h"
#include "lsp_int.h"

#include <jansson.h>
#include <stdio.h>

json_t *lsp_position(uint32_t line, uint32_t character)
{
    return json_pack("{s:I, s:I}", "line", (json_int_t)line, "character", (json_int_t)character);
}

json_t *lsp_range(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1)
{
    return json_pack("{s:o, s:o}", "start", lsp_position(l0, c0), "end", lsp_position(l1, c1));
}

int lsp_call_reply_failed(RpcCall *call, CrErr rc, const ErrInfo *e)
{
    if (!ws_index_unreadable(rc)) return 0;
    RpcError err = {.code = RPC_REQUEST_FAILED};
    ws_unreadable_text(rc, e, err.message, sizeof err.message);
    rpc_call_reply(call, NULL, &err);
    return 1;
}
