#include "base.h"

#include <stdio.h>

static const struct {
    const char *message;
    int exit, rpc;
} errors[] = {
#define CR_X(name, msg, exit, rpc) {msg, exit, rpc},
    CR_ERRNO_MAP(CR_X)
#undef CR_X
};

const char *cr_strerror(CrErr code)
{
    if ((unsigned)code >= CR__COUNT) return "unknown error";
    return errors[code].message;
}

int cr_exit_code(CrErr code)
{
    return (unsigned)code < CR__COUNT ? errors[code].exit : 2;
}

int cr_rpc_code(CrErr code)
{
    return (unsigned)code < CR__COUNT ? errors[code].rpc : CR_RPC_FAILED;
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
