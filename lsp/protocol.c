#include "lsp.h"
#include "lsp_int.h"

#include <jansson.h>

json_t *lsp_position(uint32_t line, uint32_t character)
{
    return json_pack("{s:I, s:I}", "line", (json_int_t)line, "character", (json_int_t)character);
}

json_t *lsp_range(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1)
{
    return json_pack("{s:o, s:o}", "start", lsp_position(l0, c0), "end", lsp_position(l1, c1));
}
