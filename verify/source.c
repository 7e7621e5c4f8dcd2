#include "vfy.h"

static int store_is_indexed(void *ud, const char *path)
{
    return idx_file_has_chunks(ud, path);
}

static CrErr store_read_lines(void *ud, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                              uint32_t *out_total, ErrInfo *e)
{
    return idx_read_lines(ud, path, start, end, out, out_total, e);
}

void vfy_source_for_store(VfySource *src, IdxStore *st)
{
    src->root = idx_root(st);
    src->is_indexed = store_is_indexed;
    src->read_lines = store_read_lines;
    src->ud = st;
}
