#include "cli.h"
#include "cli_int.h"
#include "ws.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `coderag mcp --print-config|--install|--uninstall CLIENT`: the coding
 * agents' MCP configuration, one row of the table below per client. The
 * server is started as `<this binary> mcp`; the agent starts it in the
 * project's folder and the root rule finds the workspace from there
 * (docs/mcp.md). A file is changed by writing a copy beside it and renaming
 * it over (atomic), after a copy of the old one to FILE.coderag.bak when it
 * held anything besides ours; nothing is written when the file already says
 * what we would write (idempotent). A file we cannot read as plain JSON
 * (JSONC comments, say) is never touched: the command prints the snippet to
 * add by hand and fails. docs/mcp.md, "Coding agents", cites each format. */

enum AgentFormat {
    AG_JSON, /* a JSON object; our entry at <key>.coderag */
    AG_TOML, /* a TOML file; our table [<key>.coderag] */
    AG_OWN,  /* a file of our own (YAML), written and removed whole */
};

/* Where a client's file lives: under $HOME, $XDG_CONFIG_HOME (default
 * ~/.config), $CODEX_HOME (default ~/.codex), or the workspace root. */
enum AgentBase { AB_HOME, AB_XDG, AB_CODEX, AB_ROOT };

static const struct AgentClient {
    const char *name;
    const char *title;
    enum AgentBase base;
    const char *file; /* under the base */
    enum AgentFormat format;
    const char *key;   /* the servers' map (JSON) or table (TOML) */
    int typed;         /* the entry carries "type": "stdio" */
    int command_table; /* Zed: the command as the entry's "command" with "args" beside */
    const char *scope;
} agent_clients[] = {
    {"claude-code", "Claude Code", AB_HOME, ".claude.json", AG_JSON, "mcpServers", 1, 0,
     "user scope: every project (what `claude mcp add --scope user` writes)"},
    {"codex", "Codex CLI", AB_CODEX, "config.toml", AG_TOML, "mcp_servers", 0, 0,
     "every project ($CODEX_HOME, default ~/.codex)"},
    {"cursor", "Cursor", AB_HOME, ".cursor/mcp.json", AG_JSON, "mcpServers", 0, 0,
     "global: every project"},
    {"vscode", "VS Code (Copilot agent mode)", AB_XDG, "Code/User/mcp.json", AG_JSON, "servers", 1,
     0, "the user profile's mcp.json: every workspace"},
    {"gemini", "Gemini CLI", AB_HOME, ".gemini/settings.json", AG_JSON, "mcpServers", 0, 0,
     "user settings: every project"},
    {"continue", "Continue", AB_ROOT, ".continue/mcpServers/coderag.yaml", AG_OWN, NULL, 0, 0,
     "this workspace (a block file of its own)"},
    {"zed", "Zed", AB_XDG, "zed/settings.json", AG_JSON, "context_servers", 0, 1,
     "user settings: every project"},
};
#define AGENT_COUNT (sizeof agent_clients / sizeof agent_clients[0])
#define AGENT_SERVER "coderag"

static const struct AgentClient *agent_find(const char *name)
{
    for (size_t i = 0; i < AGENT_COUNT; i++)
        if (!strcmp(agent_clients[i].name, name)) return &agent_clients[i];
    return NULL;
}

static void agent_list(FILE *f)
{
    fprintf(f, "clients:");
    for (size_t i = 0; i < AGENT_COUNT; i++)
        fprintf(f, " %s", agent_clients[i].name);
    fputc('\n', f);
}

/* The file of client c, or CR_EINVAL when its base is unknown ($HOME unset). */
static CrErr agent_path(const struct AgentClient *c, StrBuf *out, ErrInfo *e)
{
    const char *home = getenv("HOME");
    const char *v = NULL;
    switch (c->base) {
    case AB_XDG:
        v = getenv("XDG_CONFIG_HOME");
        if (v && *v == '/') {
            sb_addf(out, "%s/%s", v, c->file);
            return CR_OK;
        }
        if (!home || !*home) break;
        sb_addf(out, "%s/.config/%s", home, c->file);
        return CR_OK;
    case AB_CODEX:
        v = getenv("CODEX_HOME");
        if (v && *v == '/') {
            sb_addf(out, "%s/%s", v, c->file);
            return CR_OK;
        }
        if (!home || !*home) break;
        sb_addf(out, "%s/.codex/%s", home, c->file);
        return CR_OK;
    case AB_HOME:
        if (!home || !*home) break;
        sb_addf(out, "%s/%s", home, c->file);
        return CR_OK;
    case AB_ROOT: {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return err_set(e, CR_EIO, "getcwd: %s", strerror(errno));
        char *root = ws_find_root(cwd, cwd);
        sb_addf(out, "%s/%s", root, c->file);
        free(root);
        return CR_OK;
    }
    }
    return err_set(e, CR_EINVAL, "HOME is not set: cannot tell where %s's configuration is",
                   c->title);
}

/* The running binary's path (what the agent starts). */
static CrErr agent_binary(char *out, size_t cap, ErrInfo *e)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0) return err_set(e, CR_EIO, "cannot tell this binary's path: %s", strerror(errno));
    out[n] = '\0';
    return CR_OK;
}

/* Our entry for a JSON client. */
static json_t *agent_entry(const struct AgentClient *c, const char *bin)
{
    json_t *o = json_object();
    if (c->typed) json_object_set_new(o, "type", json_string("stdio"));
    json_object_set_new(o, "command", json_string(bin));
    json_object_set_new(o, "args", json_pack("[s]", "mcp"));
    if (c->command_table) json_object_set_new(o, "env", json_object());
    return o;
}

static void toml_string(StrBuf *sb, const char *s)
{
    sb_addc(sb, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') sb_addc(sb, '\\');
        sb_addc(sb, *s);
    }
    sb_addc(sb, '"');
}

/* The text of our part: the TOML table, the YAML file, or the JSON snippet
 * (the servers' map holding our entry alone). */
static void agent_snippet(const struct AgentClient *c, const char *bin, StrBuf *sb)
{
    if (c->format == AG_TOML) {
        sb_addf(sb, "[%s.%s]\ncommand = ", c->key, AGENT_SERVER);
        toml_string(sb, bin);
        sb_adds(sb, "\nargs = [\"mcp\"]\n");
    } else if (c->format == AG_OWN) {
        /* a YAML double-quoted scalar escapes like a JSON string */
        json_t *s = json_string(bin);
        char *q = json_dumps(s, JSON_ENCODE_ANY);
        sb_addf(sb,
                "name: coderag\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: %s\n"
                "    command: %s\n    args:\n      - mcp\n",
                AGENT_SERVER, q);
        free(q);
        json_decref(s);
    } else {
        json_t *root = json_object();
        json_t *map = json_object();
        json_object_set_new(map, AGENT_SERVER, agent_entry(c, bin));
        json_object_set_new(root, c->key, map);
        char *text = json_dumps(root, JSON_INDENT(2));
        sb_adds(sb, text);
        sb_addc(sb, '\n');
        free(text);
        json_decref(root);
    }
}

/* Writes text to path atomically (a temporary file beside it, renamed over),
 * keeping the old file's mode; creates the missing folders. */
static CrErr agent_write(const char *path, const char *text, size_t len, ErrInfo *e)
{
    StrBuf dir;
    sb_init(&dir);
    sb_adds(&dir, path);
    for (char *p = dir.buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir.buf, 0755) != 0 && errno != EEXIST) {
            CrErr rc = err_set(e, CR_EIO, "mkdir %s: %s", dir.buf, strerror(errno));
            sb_release(&dir);
            return rc;
        }
        *p = '/';
    }
    sb_release(&dir);
    struct stat st;
    mode_t mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
    StrBuf tmp;
    sb_init(&tmp);
    sb_addf(&tmp, "%s.coderag-XXXXXX", path);
    int fd = mkstemp(tmp.buf);
    if (fd < 0) {
        CrErr rc = err_set(e, CR_EIO, "cannot write beside %s: %s", path, strerror(errno));
        sb_release(&tmp);
        return rc;
    }
    int ok = fchmod(fd, mode) == 0 && file_pwrite_all(fd, text, len, 0) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp.buf, path) == 0) {
        sb_release(&tmp);
        return CR_OK;
    }
    CrErr rc = err_set(e, CR_EIO, "cannot write %s: %s", path, strerror(errno));
    unlink(tmp.buf);
    sb_release(&tmp);
    return rc;
}

/* A copy of the file as it was, to FILE.coderag.bak (atomic as well). */
static CrErr agent_backup(const char *path, const StrBuf *old, ErrInfo *e)
{
    StrBuf bak;
    sb_init(&bak);
    sb_addf(&bak, "%s.coderag.bak", path);
    CrErr rc = agent_write(bak.buf, old->buf ? old->buf : "", old->len, e);
    sb_release(&bak);
    return rc;
}

/* The TOML table [<key>.coderag] (and its sub-tables) in text: [*start,
 * *end) in bytes; 0 when absent. */
static int toml_find(const char *text, const char *key, size_t *start, size_t *end)
{
    char head[128], sub[128], quoted[128];
    snprintf(head, sizeof head, "[%s.%s]", key, AGENT_SERVER);
    snprintf(sub, sizeof sub, "[%s.%s.", key, AGENT_SERVER);
    snprintf(quoted, sizeof quoted, "[%s.\"%s\"]", key, AGENT_SERVER);
    int in = 0;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '[') {
            int ours = !strncmp(p, head, strlen(head)) || !strncmp(p, quoted, strlen(quoted));
            if (in && !ours && strncmp(p, sub, strlen(sub))) {
                *end = (size_t)(line - text);
                return 1;
            }
            if (!in && ours) {
                in = 1;
                *start = (size_t)(line - text);
            }
        }
        line += n;
    }
    if (in) *end = strlen(text);
    return in;
}

/* What the file should hold after the change: *next (NULL: remove the
 * file), *ours_only (the old file held nothing but ours: no backup). 0 when
 * nothing changes. */
static CrErr agent_edit(const struct AgentClient *c, const char *bin, int install,
                        const StrBuf *old, int exists, StrBuf *next, int *remove, int *changed,
                        int *others, ErrInfo *e)
{
    *remove = *changed = 0;
    *others = exists && old->len > 0;
    StrBuf snip;
    sb_init(&snip);
    agent_snippet(c, bin, &snip);
    CrErr rc = CR_OK;
    if (c->format == AG_OWN) {
        *others = 0; /* the whole file is ours */
        if (install) {
            *changed = !exists || old->len != snip.len || memcmp(old->buf, snip.buf, snip.len);
            sb_add(next, snip.buf, snip.len);
        } else {
            *changed = *remove = exists;
        }
    } else if (c->format == AG_TOML) {
        const char *text = old->buf ? old->buf : "";
        size_t a = 0, b = 0;
        int found = toml_find(text, c->key, &a, &b);
        int same = found && b - a >= snip.len && !memcmp(text + a, snip.buf, snip.len) &&
                   strspn(text + a + snip.len, "\n") == b - a - snip.len;
        if (install && same) goto done;
        if (!install && !found) goto done;
        sb_add(next, text, found ? a : strlen(text));
        const char *rest = found ? text + b : "";
        sb_adds(next, rest);
        /* what is left but blank lines: nothing else was there */
        size_t kept = strspn(next->buf ? next->buf : "", " \t\n");
        *others = kept < next->len;
        if (install) {
            if (next->len && next->buf[next->len - 1] != '\n') sb_addc(next, '\n');
            if (next->len) sb_addc(next, '\n');
            sb_add(next, snip.buf, snip.len);
        } else if (!*others) {
            *remove = 1;
        } else {
            /* the blank line an install put before the table */
            while (next->len > 1 && next->buf[next->len - 1] == '\n' &&
                   next->buf[next->len - 2] == '\n')
                sb_truncate(next, next->len - 1);
        }
        *changed = 1;
    } else {
        json_t *root = NULL;
        if (exists && old->len) {
            json_error_t je;
            root = json_loadb(old->buf, old->len, 0, &je);
            if (!root || !json_is_object(root)) {
                json_decref(root);
                rc =
                    err_set(e, CR_EPARSE, "not a plain JSON object (line %d: %s), so left as it is",
                            root ? 1 : je.line, root ? "not an object" : je.text);
                goto done;
            }
        } else {
            root = json_object();
        }
        json_t *map = json_object_get(root, c->key);
        if (map && !json_is_object(map)) {
            json_decref(root);
            rc = err_set(e, CR_EPARSE, "its \"%s\" is not an object; left as it is", c->key);
            goto done;
        }
        json_t *mine = agent_entry(c, bin);
        json_t *cur = map ? json_object_get(map, AGENT_SERVER) : NULL;
        if (install) {
            if (cur && json_equal(cur, mine)) {
                json_decref(mine);
                json_decref(root);
                goto done;
            }
            if (!map) {
                map = json_object();
                json_object_set_new(root, c->key, map);
            }
            json_object_set(map, AGENT_SERVER, mine);
            /* the file held nothing but ours */
            *others = json_object_size(root) > 1 || json_object_size(map) > 1;
            *others = *others && exists;
        } else {
            if (!cur) {
                json_decref(mine);
                json_decref(root);
                goto done;
            }
            json_object_del(map, AGENT_SERVER);
            if (!json_object_size(map)) json_object_del(root, c->key);
            *others = json_object_size(root) > 0;
            *remove = !*others;
        }
        json_decref(mine);
        *changed = 1;
        if (!*remove) {
            char *text = json_dumps(root, JSON_INDENT(2));
            sb_adds(next, text);
            sb_addc(next, '\n');
            free(text);
        }
        json_decref(root);
    }
done:
    sb_release(&snip);
    return rc;
}

static int agent_print(const struct AgentClient *c, const char *bin)
{
    StrBuf path, snip;
    sb_init(&path);
    sb_init(&snip);
    ErrInfo e = {0};
    CrErr rc = agent_path(c, &path, &e);
    if (rc) {
        sb_release(&path);
        return cli_fail(rc, &e);
    }
    agent_snippet(c, bin, &snip);
    printf("# %s: %s\n# %s; %s\n%s", c->title, path.buf, c->scope,
           c->format == AG_OWN ? "the whole file" : "merged into what the file holds", snip.buf);
    sb_release(&snip);
    sb_release(&path);
    return 0;
}

static int agent_change(const struct AgentClient *c, const char *bin, int install)
{
    StrBuf path, old, next;
    sb_init(&path);
    sb_init(&old);
    sb_init(&next);
    ErrInfo e = {0};
    int status = 0;
    CrErr rc = agent_path(c, &path, &e);
    if (rc) goto out;
    struct stat st;
    int exists = lstat(path.buf, &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        rc = err_set(&e, CR_EIO, "%s is not a regular file; left as it is", path.buf);
        goto out;
    }
    if (exists && (rc = sb_read_file(&old, path.buf, 64u << 20, &e))) goto out;
    /* a symlink's target is what is edited */
    char real[PATH_MAX];
    if (exists && S_ISLNK(st.st_mode)) {
        if (!realpath(path.buf, real)) {
            rc = err_set(&e, CR_EIO, "%s: %s", path.buf, strerror(errno));
            goto out;
        }
        sb_reset(&path);
        sb_adds(&path, real);
    }
    int remove, changed, others;
    rc = agent_edit(c, bin, install, &old, exists, &next, &remove, &changed, &others, &e);
    if (rc) {
        if (rc == CR_EPARSE) {
            fprintf(stderr, "coderag: %s: %s\n", path.buf, e.msg);
            fprintf(stderr, "--- add this to %s:\n", path.buf);
            StrBuf snip;
            sb_init(&snip);
            agent_snippet(c, bin, &snip);
            fputs(snip.buf, stderr);
            sb_release(&snip);
            status = 1;
            rc = CR_OK;
        }
        goto out;
    }
    if (!changed) {
        printf("%s: %s already %s\n", c->title, path.buf,
               install ? "starts coderag" : "has no coderag server");
        goto out;
    }
    if (others && (rc = agent_backup(path.buf, &old, &e))) goto out;
    if (remove) {
        if (unlink(path.buf) != 0 && errno != ENOENT) {
            rc = err_set(&e, CR_EIO, "cannot remove %s: %s", path.buf, strerror(errno));
            goto out;
        }
    } else if ((rc = agent_write(path.buf, next.buf ? next.buf : "", next.len, &e))) {
        goto out;
    }
    printf("%s: %s %s%s\n", c->title, install ? "coderag added to" : "coderag removed from",
           path.buf, others ? " (the previous file is beside it, .coderag.bak)" : "");
out:
    sb_release(&next);
    sb_release(&old);
    sb_release(&path);
    return rc ? cli_fail(rc, &e) : status;
}

int cli_mcp_agents(int argc, char **argv)
{
    if (argc < 2) return -1;
    const char *flag = argv[1];
    int print = !strcmp(flag, "--print-config");
    int install = !strcmp(flag, "--install");
    if (!print && !install && strcmp(flag, "--uninstall")) return -1;
    if (argc != 3) {
        fprintf(stderr, "usage: coderag mcp %s CLIENT\n", flag);
        agent_list(stderr);
        return 1;
    }
    const struct AgentClient *c = agent_find(argv[2]);
    if (!c) {
        fprintf(stderr, "coderag: unknown client '%s'\n", argv[2]);
        agent_list(stderr);
        return 1;
    }
    char bin[PATH_MAX];
    ErrInfo e = {0};
    CrErr rc = agent_binary(bin, sizeof bin, &e);
    if (rc) return cli_fail(rc, &e);
    return print ? agent_print(c, bin) : agent_change(c, bin, install);
}
