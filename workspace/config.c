#include "ws.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { OPT_STR, OPT_LIST, OPT_SIZE, OPT_INT } OptType;

typedef struct ConfigKey {
    const char *key;  /* SPEC name */
    const char *flag; /* CLI flag without dashes */
    const char *env;
    OptType type;
    size_t offset;
    const char *metavar;
    unsigned takes; /* WsFor: the commands that take it */
    const char *help;
} ConfigKey;

#define STR_AT(c, off) ((char **)((char *)(c) + (off)))

/* The commands that take a setting: every one; those that build the index
 * (ask updates it first); those that ask the LLM. */
#define FOR_ALL (WS_FOR_INDEX | WS_FOR_ASK | WS_FOR_STATUS | WS_FOR_SERVER)
#define FOR_BUILD (WS_FOR_INDEX | WS_FOR_ASK | WS_FOR_SERVER)
#define FOR_LLM (WS_FOR_ASK | WS_FOR_SERVER)

static const ConfigKey keys[] = {
    {"root", "root", "CODERAG_ROOT", OPT_STR, offsetof(WsConfig, root), "DIR", FOR_ALL,
     "the workspace (default: the root rule from the current folder)"},
    {"indexDir", "index-dir", "CODERAG_INDEXDIR", OPT_STR, offsetof(WsConfig, index_dir), "DIR",
     FOR_ALL, "where the index lives (default: ROOT/.coderag)"},
    {"llm.url", "llm-url", "CODERAG_LLM_URL", OPT_STR, offsetof(WsConfig, llm_url), "URL",
     FOR_LLM | WS_FOR_STATUS,
     "OpenAI-compatible chat endpoint (default: none, extractive answers)"},
    {"llm.model", "llm-model", "CODERAG_LLM_MODEL", OPT_STR, offsetof(WsConfig, llm_model), "NAME",
     FOR_LLM, "the LLM's model name"},
    {"llm.apiKeyEnv", "llm-api-key-env", "CODERAG_LLM_APIKEYENV", OPT_STR,
     offsetof(WsConfig, llm_api_key_env), "VAR", FOR_LLM,
     "name of the environment variable holding its key"},
    {"embed.provider", "embed-provider", "CODERAG_EMBED_PROVIDER", OPT_STR,
     offsetof(WsConfig, embed_provider), "P", FOR_BUILD | WS_FOR_STATUS,
     "builtin (offline) or openai (an embeddings endpoint)"},
    {"embed.url", "embed-url", "CODERAG_EMBED_URL", OPT_STR, offsetof(WsConfig, embed_url), "URL",
     FOR_BUILD | WS_FOR_STATUS, "OpenAI-compatible embeddings endpoint"},
    {"embed.model", "embed-model", "CODERAG_EMBED_MODEL", OPT_STR, offsetof(WsConfig, embed_model),
     "NAME", FOR_BUILD | WS_FOR_STATUS, "the embedding model's name"},
    {"embed.apiKeyEnv", "embed-api-key-env", "CODERAG_EMBED_APIKEYENV", OPT_STR,
     offsetof(WsConfig, embed_api_key_env), "VAR", FOR_BUILD | WS_FOR_STATUS,
     "name of the environment variable holding its key"},
    {"exclude", "exclude", "CODERAG_EXCLUDE", OPT_LIST, 0, "GLOBS", FOR_BUILD,
     "comma-separated patterns to skip, on top of .gitignore"},
    {"maxFileBytes", "max-file-bytes", "CODERAG_MAXFILEBYTES", OPT_SIZE, 0, "N", FOR_BUILD,
     "skip files larger than this (default: 1 MiB)"},
    {"threads", "threads", "CODERAG_THREADS", OPT_INT, 0, "N", FOR_BUILD,
     "parse threads (default: one per core)"},
};

void ws_config_print_flags(FILE *f, unsigned mask)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (!(keys[i].takes & mask)) continue;
        char left[48];
        snprintf(left, sizeof left, "--%s %s", keys[i].flag, keys[i].metavar);
        fprintf(f, "  %-26s %s [%s]\n", left, keys[i].help, keys[i].env);
    }
}

void ws_config_init(WsConfig *c)
{
    memset(c, 0, sizeof *c);
}

void ws_config_release(WsConfig *c)
{
    if (!c) return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].type == OPT_STR) free(*STR_AT(c, keys[i].offset));
    for (size_t i = 0; i < c->n_exclude; i++)
        free(c->exclude[i]);
    free(c->exclude);
    idx_shared_unref(c->shared);
    memset(c, 0, sizeof *c);
}

void ws_config_share(WsConfig *c)
{
    if (!c->shared) c->shared = idx_shared_new();
}

void ws_config_copy(WsConfig *dst, const WsConfig *src)
{
    ws_config_init(dst);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].type == OPT_STR) {
            const char *v = *STR_AT(src, keys[i].offset);
            *STR_AT(dst, keys[i].offset) = v ? xstrdup(v) : NULL;
        }
    dst->exclude = xcalloc(src->n_exclude + 1, sizeof *dst->exclude);
    for (size_t i = 0; i < src->n_exclude; i++)
        dst->exclude[i] = xstrdup(src->exclude[i]);
    dst->n_exclude = src->n_exclude;
    dst->max_file_bytes = src->max_file_bytes;
    dst->threads = src->threads;
    dst->shared = src->shared ? idx_shared_ref(src->shared) : NULL;
}

static const ConfigKey *find_key(const char *name)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(keys[i].key, name) || !strcmp(keys[i].flag, name)) return &keys[i];
    return NULL;
}

int ws_config_is_flag(const char *flag, unsigned *takes)
{
    const ConfigKey *k = find_key(flag);
    if (takes) *takes = k ? k->takes : 0;
    return k && !strcmp(k->flag, flag);
}

static int parse_num(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < 0) return 0;
    *out = n;
    return 1;
}

CrErr ws_config_set(WsConfig *c, const char *key, const char *value, ErrInfo *e)
{
    const ConfigKey *k = find_key(key);
    long long n;
    if (!k) return err_set(e, CR_EUSAGE, "unknown setting '%s'", key);
    switch (k->type) {
    case OPT_STR:
        free(*STR_AT(c, k->offset));
        *STR_AT(c, k->offset) = value[0] ? xstrdup(value) : NULL;
        break;
    case OPT_LIST:
        for (const char *p = value; *p;) {
            size_t len = strcspn(p, ",");
            while (len && isspace((unsigned char)*p))
                p++, len--;
            size_t tl = len;
            while (tl && isspace((unsigned char)p[tl - 1]))
                tl--;
            if (tl) {
                c->exclude = xrealloc(c->exclude, (c->n_exclude + 1) * sizeof *c->exclude);
                c->exclude[c->n_exclude++] = xstrndup(p, tl);
            }
            p += len;
            if (*p == ',') p++;
        }
        break;
    case OPT_SIZE:
        if (!parse_num(value, &n))
            return err_set(e, CR_EUSAGE, "%s: not a byte count: '%s'", key, value);
        c->max_file_bytes = (size_t)n;
        break;
    case OPT_INT:
        if (!parse_num(value, &n) || n > 64)
            return err_set(e, CR_EUSAGE, "%s: not a thread count (0-64): '%s'", key, value);
        c->threads = (int)n;
        break;
    }
    return CR_OK;
}

CrErr ws_config_from_env(WsConfig *c, ErrInfo *e)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = getenv(keys[i].env);
        if (!v || !v[0]) continue;
        CrErr rc = ws_config_set(c, keys[i].key, v, e);
        if (rc) return rc;
    }
    return CR_OK;
}

void ws_config_llm(const WsConfig *c, RtvRequest *req)
{
    req->llm_url = c->llm_url;
    req->llm_model = c->llm_model;
    req->llm_api_key_env = c->llm_api_key_env;
}

void ws_config_llm_label(const WsConfig *c, StrBuf *sb)
{
    if (c->llm_url)
        http_redact_url(sb, c->llm_url);
    else
        sb_adds(sb, "none");
}

void ws_config_idx(const WsConfig *c, IdxConfig *out)
{
    memset(out, 0, sizeof *out);
    out->root = c->root ? c->root : ".";
    out->index_dir = c->index_dir;
    out->exclude = (const char *const *)c->exclude;
    out->n_exclude = c->n_exclude;
    out->max_file_bytes = c->max_file_bytes;
    out->threads = c->threads;
    out->embed_provider = c->embed_provider;
    out->embed_url = c->embed_url;
    out->embed_model = c->embed_model;
    out->embed_api_key_env = c->embed_api_key_env;
    out->shared = c->shared;
}

const char *ws_config_resolve_root(WsConfig *c)
{
    return ws_config_resolve_root_note(c, NULL);
}

const char *ws_config_resolve_root_note(WsConfig *c, StrBuf *note)
{
    if (c->root) return c->root;
    char *cwd = getcwd(NULL, 0);
    if (!cwd) return c->root = xstrdup(".");
    c->root = ws_find_root(cwd, NULL);
    if (!c->root && !c->index_dir) { /* no marker: its own index, or that of a folder above */
        c->root = ws_index_above(cwd);
        if (c->root && !strcmp(c->root, cwd)) {
            /* the folder's own index: the rule's plain answer, nothing to say */
        } else if (c->root && note)
            sb_addf(note,
                    "no project marker in %s or above it: using the index of %s (the nearest "
                    "folder above with one; --root chooses another)",
                    cwd, c->root);
    }
    if (!c->root) c->root = xstrdup(cwd);
    free(cwd);
    return c->root;
}

/* Bad entries are logged and skipped: the editor's settings must not keep
 * the server from starting. */
static void apply_json(WsConfig *cfg, json_t *obj, const char *prefix)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        char name[256], num[32];
        ErrInfo e = {0};
        snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        const char *val = NULL;
        if (json_is_object(v)) {
            apply_json(cfg, v, name);
            continue;
        }
        if (json_is_array(v)) {
            size_t i;
            json_t *item;
            json_array_foreach(v, i, item)
            {
                if (json_is_string(item) && ws_config_set(cfg, name, json_string_value(item), &e))
                    log_msg(LOG_WARN, "initializationOptions: %s", e.msg);
            }
            continue;
        }
        if (json_is_string(v)) {
            val = json_string_value(v);
        } else if (json_is_integer(v)) {
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
            val = num;
        } else if (!json_is_null(v)) {
            log_msg(LOG_WARN, "initializationOptions: %s: unsupported value ignored", name);
        }
        if (val && ws_config_set(cfg, name, val, &e))
            log_msg(LOG_WARN, "initializationOptions: %s", e.msg);
    }
}

void ws_config_from_json(WsConfig *c, const json_t *obj)
{
    if (json_is_object(obj)) apply_json(c, (json_t *)obj, "");
}
