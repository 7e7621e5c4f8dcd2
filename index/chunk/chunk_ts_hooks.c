/* chunk_ts_hooks.c - what a language row's hooks (lang.h: import, mask)
 * ask of the chunker: a node's text, a string literal's contents, an
 * import reference added to the run. */
#include "chunk_ts_int.h"

#include <stdlib.h>
#include <string.h>

char *idx_lang_node_text(const LangParse *p, TSNode n)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (b > p->len) b = p->len;
    if (a > b) a = b;
    return xstrndup(p->src + a, b - a);
}

char *idx_lang_string_text(const LangParse *p, TSNode n)
{
    char *t = idx_lang_node_text(p, n);
    size_t len = strlen(t);
    if (len >= 2 && (t[0] == '"' || t[0] == '\'' || t[0] == '`' || t[0] == '<') &&
        (t[len - 1] == '"' || t[len - 1] == '\'' || t[len - 1] == '`' || t[len - 1] == '>')) {
        memmove(t, t + 1, len - 2);
        t[len - 2] = '\0';
    }
    return t;
}

void idx_lang_add_import(LangParse *p, TSNode at, const char *module, const char *member,
                         const char *alias)
{
    TsRun *r = p->run;
    if (!module || !module[0] || !alias || !alias[0]) return;
    ChunkRef *ref = idx_emit_ref_push(&r->em, REF_IMPORT, -1, ts_node_start_point(at).row + 1);
    ref->module = xstrdup(module);
    ref->member = member ? xstrdup(member) : NULL;
    ref->alias = xstrdup(alias);
}
