/* dl.c - binding a table of function pointers to a library loaded with
 * dlopen (libcurl, the FAISS module): what is used rarely is loaded late. */
#include "base.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int dl_bind(void *lib, const DlSym *syms, size_t n, void *table, const char *what, char *err,
            size_t err_cap)
{
    for (size_t i = 0; i < n; i++) {
        void *f = dlsym(lib, syms[i].name);
        if (!f) {
            snprintf(err, err_cap, "%s has no %s", what, syms[i].name);
            return 0;
        }
        memcpy((char *)table + syms[i].offset, &f, sizeof f);
    }
    return 1;
}
