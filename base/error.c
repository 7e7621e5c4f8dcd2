#include "base.h"

#include <stdio.h>

static const char *const messages[] = {
#define CR_X(name, msg) msg,
    CR_ERRNO_MAP(CR_X)
#undef CR_X
};

const char *cr_strerror(CrErr code)
{
    if ((unsigned)code >= CR__COUNT) return "unknown error";
    return messages[code];
}

CrErr err_set(ErrInfo *e, CrErr code, const char *fmt, ...)
{
    if (!e) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}
