#include "embed_int.h"

/* Placeholder until the offline embedder lands. */
CrErr embedder_builtin_new(const EmbedConfig *cfg, Embedder **out, ErrInfo *e)
{
    *out = NULL;
    return err_set(e, CR_EINVAL, "builtin embedder not available yet");
}
