/*
 * lsp_int.h - configuration and command-line plumbing shared by the
 * executable's subcommands (lsp/main.c, lsp/cli.c, lsp/config.c).
 */
#ifndef CODERAG_LSP_INT_H
#define CODERAG_LSP_INT_H

#include "base.h"
#include "idx.h"

#include <stddef.h>

/* Settings from SPEC.md's configuration table, plus index tuning. Strings
 * are owned (NULL: unset). */
typedef struct CrConfig {
    char *root;
    char *index_dir;
    char *llm_url, *llm_model, *llm_api_key_env;
    char *embed_provider, *embed_url, *embed_model, *embed_api_key_env;
    char **exclude;
    size_t n_exclude;
    size_t max_file_bytes;
    int threads;
} CrConfig;

void config_init(CrConfig *c);
void config_release(CrConfig *c);

/* Sets a key by its SPEC name ("llm.url", "indexDir", "exclude", ...) or
 * its CLI flag name ("llm-url", "index-dir", ...). "exclude" appends; a
 * comma-separated value appends several. CR_EUSAGE for an unknown key or a
 * bad number. */
CrErr config_set(CrConfig *c, const char *key, const char *value, ErrInfo *e);

/* Applies CODERAG_* environment variables (CODERAG_LLM_URL, CODERAG_INDEXDIR,
 * CODERAG_EXCLUDE, ...). Explicit settings made afterwards win. */
CrErr config_from_env(CrConfig *c, ErrInfo *e);

/* Whether a CLI flag (without leading dashes) is a configuration key. */
int config_is_flag(const char *flag);

/* The IdxConfig view of c (borrowing its strings). root defaults to ".". */
void config_idx(const CrConfig *c, IdxConfig *out);

/* Subcommands; argv[0] is the subcommand name. Return the process exit code
 * of SPEC.md: 0 ok, 1 usage, 2 index or I/O error, 3 endpoint error. */
int cli_index(int argc, char **argv);
int cli_ask(int argc, char **argv);
int cli_status(int argc, char **argv);
int cli_lsp(int argc, char **argv);

#endif
