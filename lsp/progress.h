/*
 * progress.h - what the user is told (progress.c): notices, work-done progress
 * of builds, the LLM endpoint's changes.
 */
#ifndef CODERAG_LSP_PROGRESS_H
#define CODERAG_LSP_PROGRESS_H

#include "server_int.h"

typedef enum { PG_NONE, PG_CREATING, PG_ACTIVE, PG_DONE } PgState;

/* Work-done progress of one build. */
typedef struct Progress {
    PgState st;
    int seq;
    char token[48];
    int finished; /* the build ended while the token was being created */
    int checking; /* the index was complete: the pass checks it for changes */
    char end_msg[256];
    WsPace pace; /* reports at the pace every door keeps */
} Progress;

/* ---- progress.c */
/* Shows a message when it differs from the last one of its kind (until
 * lsp_srv_notice_clear). type: 1 error, 2 warning, 3 info. */
void lsp_srv_notice(Server *s, int kind, int type, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void lsp_srv_notice_clear(Server *s, int kind);
void lsp_progress_start(LspFolder *ws);
void lsp_progress_report(LspFolder *ws, size_t done, size_t total);
void lsp_progress_finish(LspFolder *ws, const char *msg);
/* The LLM endpoint's changes, told to the user (WsNoticeFn; ud: Server). */
void lsp_ep_notice(void *ud, int type, const char *msg);

#endif
