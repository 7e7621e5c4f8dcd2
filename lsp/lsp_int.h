/*
 * lsp_int.h - what the lsp/ files share: configuration and command-line
 * plumbing of the subcommands (main.c, cli.c, config.c), the LSP Position
 * and Range converters (protocol.c) and the server entry point (server.c).
 */
#ifndef CODERAG_LSP_INT_H
#define CODERAG_LSP_INT_H

#include "base.h"
#include "idx.h"
#include "rpc.h"
#include "rtv.h"

#include <stddef.h>
#include <stdio.h>

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

void lsp_config_init(CrConfig *c);
void lsp_config_release(CrConfig *c);
/* A deep copy of src into dst (not initialised before). */
void lsp_config_copy(CrConfig *dst, const CrConfig *src);

/* Sets a key by its SPEC name ("llm.url", "indexDir", "exclude", ...) or
 * its CLI flag name ("llm-url", "index-dir", ...). "exclude" appends; a
 * comma-separated value appends several. CR_EUSAGE for an unknown key or a
 * bad number. */
CrErr lsp_config_set(CrConfig *c, const char *key, const char *value, ErrInfo *e);

/* Applies CODERAG_* environment variables (CODERAG_LLM_URL, CODERAG_INDEXDIR,
 * CODERAG_EXCLUDE, ...). Explicit settings made afterwards win. */
CrErr lsp_config_from_env(CrConfig *c, ErrInfo *e);

/* Whether a CLI flag (without leading dashes) is a configuration key. */
int lsp_config_is_flag(const char *flag);
/* Prints the settings as command-line flags, one line each. */
void lsp_config_print_flags(FILE *f);

/* The IdxConfig view of c (borrowing its strings). root defaults to ".". */
void lsp_config_idx(const CrConfig *c, IdxConfig *out);
/* The LLM settings of a request (endpoint, model, key variable), from the
 * configuration: the one place they are copied. Borrows from c. */
void lsp_config_llm(const CrConfig *c, RtvRequest *req);

/* Subcommands; argv[0] is the subcommand name. Return the process exit code
 * of SPEC.md: 0 ok, 1 usage, 2 index or I/O error, 3 endpoint error. */
/* The command line: dispatches argv[1] to a command (usage on stderr and
 * exit 1 for an unknown one); returns the exit status. */
int lsp_cli_main(int argc, char **argv);
/* The list of commands (exit 0 on stdout, 1 on stderr). */
int lsp_cli_usage(FILE *f);
int lsp_cli_index(int argc, char **argv);
int lsp_cli_ask(int argc, char **argv);
int lsp_cli_status(int argc, char **argv);
int lsp_cli_lsp(int argc, char **argv);
int lsp_cli_mcp(int argc, char **argv);

/* ---------------------------------------------------------------- JSON-RPC
 *
 * The transport (Content-Length framing) and the envelope are rpc/'s
 * (rpc.h), with rpc_profile_lsp. */

/* LSP Position and Range objects (0-based lines and characters). */
struct json_t *lsp_position(uint32_t line, uint32_t character);
struct json_t *lsp_range(uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1);
/* Lines a..b (1-based, inclusive) whole: from a's start to b + 1's start. */
struct json_t *lsp_lines_range(uint32_t a, uint32_t b);

/* ---------------------------------------------------------------- server */

/* Runs the language server over the two descriptors until exit or end of
 * input; cfg holds the CLI and environment settings (initializationOptions
 * are applied over a copy). Returns the process exit code: 0 after
 * shutdown + exit, 1 when the client exits or disappears without shutdown,
 * 2 when the output broke before that. */
int lsp_server_run(const CrConfig *cfg, int in_fd, int out_fd);

#endif
