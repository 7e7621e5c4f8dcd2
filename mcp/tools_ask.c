#include "mcp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ask and search: both go through retrieve/'s one retrieval path, so the
 * ranking search returns is the context ask answers from. */

static json_t *item_json(const RtvItem *it, size_t rank)
{
    const IdxChunk *c = &it->chunk;
    json_t *o = json_pack("{s:i, s:o, s:i, s:i, s:o, s:s, s:f}", "rank", (int)rank, "path",
                          json_text(c->path), "startLine", (int)it->start_line, "endLine",
                          (int)it->end_line, "symbol", json_text(rtv_item_symbol(it)), "kind",
                          idx_kind_name(c->kind), "score", it->score);
    if (c->signature[0]) json_object_set_new(o, "signature", json_text(c->signature));
    if (it->start_line != c->start_line || it->end_line != c->end_line)
        json_object_set_new(o, "chunkLines",
                            json_pack("[i, i]", (int)c->start_line, (int)c->end_line));
    mcp_via_json(o, it->via);
    return o;
}

static void request_from(const McpCtx *c, json_t *args, const char *question, RtvRequest *req)
{
    rtv_request_init(req);
    ws_config_llm(c->opt->cfg, req);
    req->question = question;
    req->progress = c->progress;
    req->progress_ud = c->progress_ud;
    req->cancel = c->cancel;
    req->cancel_ud = c->cancel_ud;
    long long budget = mcp_arg_int(args, "budget", 0);
    if (budget) req->budget = (size_t)budget;
    const char *mode = mcp_arg_str(args, "mode", NULL);
    if (mode) rtv_mode_parse(mode, &req->mode);
}

/* ---------------------------------------------------------------- search */

static void run_search(const McpCtx *c, json_t *args, McpResult *r)
{
    RtvRequest req;
    RtvAnswer a = {0};
    ErrInfo e = {0};
    const char *q = mcp_arg_str(args, "query", "");
    size_t limit = (size_t)mcp_arg_int(args, "limit", 10);
    request_from(c, args, q, &req);
    CrErr rc = ws_search(c->st, &req, &a, &e);
    if (rc) {
        mcp_fail(r, "search: %s", e.msg[0] ? e.msg : cr_strerror(rc));
        return;
    }
    log_msg(LOG_DEBUG, "search: bm25 %.2f, dense %.2f, graph %.2f, pack %.2f, total %.2f ms",
            a.timings.bm25_ms, a.timings.dense_ms, a.timings.graph_ms, a.timings.pack_ms,
            a.timings.total_ms);
    json_t *res = json_array();
    size_t n = a.n_items < limit ? a.n_items : limit;
    for (size_t i = 0; i < n; i++) {
        const RtvItem *it = &a.items[i];
        json_array_append_new(res, item_json(it, i + 1));
        sb_addf(&r->text, "%zu. %s:%u-%u %s (%s, score %.3f)", i + 1, it->chunk.path,
                it->start_line, it->end_line, rtv_item_symbol(it), idx_kind_name(it->chunk.kind),
                it->score);
        if (it->chunk.signature[0]) sb_addf(&r->text, " — %s", it->chunk.signature);
        sb_addc(&r->text, '\n');
    }
    if (!n) sb_adds(&r->text, "No indexed code matched the query.\n");
    r->structured = json_pack("{s:o, s:I, s:s}", "results", res, "total", (json_int_t)a.n_items,
                              "match", rtv_match_name(a.match));
    rtv_answer_release(&a);
}

static const McpField search_fields[] = {
    {"query", MCP_T_STRING, 1, 0, RTV_MAX_QUESTION, NULL,
     "What to look for: a question, identifiers or words."},
    {"limit", MCP_T_INT, 0, 1, RTV_MAX_CANDIDATES, NULL, "Most results returned (default 10)."},
};

const McpTool mcp_tool_search = {
    "search",
    "Search code",
    "Ranked definitions (functions, methods, classes, module code) for a query, best first "
    "(rank 1 is the best): path, lines, symbol, kind, signature, score (relevance, 1.0 at "
    "most, never rising down the list) and which retrievers found each (bm25, dense, graph). "
    "The same ranking `ask` answers from; no answer text.",
    search_fields,
    sizeof search_fields / sizeof search_fields[0],
    1,
    run_search,
};

/* ---------------------------------------------------------------- ask */

static void run_ask(const McpCtx *c, json_t *args, McpResult *r)
{
    RtvRequest req;
    RtvAnswer a = {0};
    ErrInfo e = {0};
    request_from(c, args, mcp_arg_str(args, "question", ""), &req);
    CrErr rc = ws_ask(c->llm_ep, c->st, &req, &a, &e);
    if (rc) {
        mcp_fail(r, "ask: %s", e.msg[0] ? e.msg : cr_strerror(rc));
        rtv_answer_release(&a);
        return;
    }
    json_t *cites = ws_answer_citations_json(&a, ws_store_root(c->st)), *ctx = json_array();
    for (size_t i = 0; i < a.n_items; i++)
        json_array_append_new(ctx, item_json(&a.items[i], i + 1));
    r->structured =
        json_pack("{s:o, s:s, s:s, s:o, s:o, s:o}", "answer", json_text(a.answer), "mode",
                  rtv_mode_name(a.mode), "match", rtv_match_name(a.match), "citations", cites,
                  "rejected", ws_answer_rejected_json(&a), "context", ctx);
    if (a.fallback_reason)
        json_object_set_new(r->structured, "fallbackReason", json_text(a.fallback_reason));
    sb_adds(&r->text, a.answer);
    if (a.n_citations) {
        sb_adds(&r->text, "\n\nVerified citations:");
        for (size_t i = 0; i < a.n_citations; i++)
            sb_addf(&r->text, "\n- %s:%u-%u %s", a.citations[i].path, a.citations[i].start_line,
                    a.citations[i].end_line, a.citations[i].symbol);
    }
    sb_addf(&r->text, "\n(match: %s)\n", rtv_match_name(a.match));
    StrBuf note; /* an index a pass has not finished: said, in both forms */
    sb_init(&note);
    if (ws_answer_mark_partial(r->structured, c->st, &note))
        sb_addf(&r->text, "(the index is not whole, so this answer may miss code: %s)\n", note.buf);
    sb_release(&note);
    rtv_answer_release(&a);
}

static const char *const modes[] = {"auto", "extractive", "llm", NULL};

static const McpField ask_fields[] = {
    {"question", MCP_T_STRING, 1, 0, RTV_MAX_QUESTION, NULL,
     "A question about the code, in natural language."},
    {"mode", MCP_T_ENUM, 0, 0, 0, modes,
     "auto (the LLM when the server has one, else extractive), extractive, or llm."},
    {"budget", MCP_T_INT, 0, 500, 200000, NULL,
     "Characters of code context packed for the answer (default 12000)."},
};

const McpTool mcp_tool_ask = {
    "ask",
    "Ask about the code",
    "Answers a question about this repository from its indexed code: the answer (written by "
    "the configured LLM, else extractive), its citations as path:start-end with symbol, each "
    "checked against the files on disk (rejected ones listed with the reason), match "
    "(strong, weak or none: how well the code matches the question) and the context used.",
    ask_fields,
    sizeof ask_fields / sizeof ask_fields[0],
    1,
    run_ask,
};
