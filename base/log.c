#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static LogLevel threshold(void)
{
    const char *v = getenv("CODERAG_LOG");
    if (!v) return LOG_WARN;
    if (!strcmp(v, "error")) return LOG_ERROR;
    if (!strcmp(v, "info")) return LOG_INFO;
    if (!strcmp(v, "debug")) return LOG_DEBUG;
    return LOG_WARN;
}

void log_msg(LogLevel level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (level > threshold()) return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "coderag: %s: %s\n", names[level], line);
}

void utc_iso8601(int64_t unix_time, char out[32])
{
    struct tm tm;
    time_t t = (time_t)unix_time;
    if (!unix_time || !gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, 32, "never");
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
