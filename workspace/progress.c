#include "ws.h"

#include <stdio.h>

/* The pace and the words of progress reports, shared by the doors: the
 * language server's work-done progress, the MCP server's
 * notifications/progress. */

void ws_pace_init(WsPace *p, double min_ms)
{
    p->min_ms = min_ms;
    p->last_ms = 0;
    p->last_step = -1;
}

int ws_pace_due(WsPace *p, size_t done, size_t total)
{
    long long step = total ? (long long)((double)done * WS_PACE_STEPS / (double)total)
                           : (long long)(done / WS_PACE_UNITS);
    if (p->last_step >= 0 && step <= p->last_step) return 0;
    double now = now_ms();
    int last = total && done >= total;
    if (p->last_step >= 0 && !last && now - p->last_ms < p->min_ms) return 0;
    p->last_step = step;
    p->last_ms = now;
    return 1;
}

void ws_progress_files(char *buf, size_t size, size_t done, size_t total)
{
    if (total)
        snprintf(buf, size, "%zu/%zu files", done, total);
    else
        snprintf(buf, size, "scanning");
}

void ws_progress_tokens(char *buf, size_t size, size_t tokens)
{
    snprintf(buf, size, "writing the answer: %zu token%s", tokens, tokens == 1 ? "" : "s");
}
