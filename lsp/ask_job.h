/*
 * ask_job.h - an ask (or an explanation) through the worker, the LLM pool and
 * back (handlers_ask.c decodes it, ask_run.c runs it).
 */
#ifndef CODERAG_LSP_ASK_JOB_H
#define CODERAG_LSP_ASK_JOB_H

#include "server_int.h"

/* An ask (or an explanation) through the worker, the LLM pool and back. */
typedef struct AskJob {
    Job job;
    char *question; /* req.question borrows it */
    char *uri;      /* textDocument.uri or NULL */
    int line, character;
    struct json_t *wd_token;      /* client's workDoneToken (a private copy) or NULL */
    struct json_t *partial_token; /* client's partialResultToken or NULL */
    RtvTurn *turns;               /* history; strings owned */
    size_t n_turns;
    /* coderag.explain: the definition under the cursor, resolved by the worker */
    char *explain_word, *explain_rel;
    char explain_key[17];
    char *explain_symbol;  /* qualified ("Flask.make_response") */
    int64_t explain_focus; /* a chunk of it: the whole definition leads the context */
    unsigned explain_gen;  /* 0: not an explanation */
    /* The request as decoded once (mode, budget, retrieval switches, "all":
     * the extractive answer lists every context item); the pipeline adds
     * the question, the LLM settings, its callbacks and the history. */
    RtvRequest req;
    RtvAnswer ans;
    WsAsk *ask; /* created by the first step */
    int prepared, indexing;
    int waited;     /* it waited for the first index (lsp_folder_park) */
    WsPace wd_pace; /* the LLM's tokens, reported at every door's pace */
    double partial_last_ms;
    size_t partial_sent; /* chars of text in the last partial result */
} AskJob;

AskJob *lsp_ask_job_new(LspFolder *ws, RpcCall *call);
/* Queues it: sends work-done "begin" at once, then the worker retrieves. */
void lsp_ask_queue(Server *s, AskJob *j);
/* Builder thread: where the first index stands, to every ask waiting for
 * it (lsp_folder_park) that gave a workDoneToken, at every door's pace. */
void lsp_ask_waiting_progress(LspFolder *ws, size_t done, size_t total);

#endif
