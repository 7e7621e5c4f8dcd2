/*
 * fuzz_mcp.c - the MCP server (mcp_server_run) on arbitrary input: the bytes
 * are served from a memfd as the client's stdin, with a workspace root that
 * does not exist, so tool calls are answered without touching a disk: the
 * framing, the JSON-RPC envelope, initialize's negotiation, cancellation and
 * every tool's argument checks are what runs. Properties: the server returns
 * 0; every line it writes is one JSON object with "jsonrpc":"2.0"; no
 * sanitizer report or leak.
 */
#include "mcp.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int memfd_with(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-mcp", 0);
    if (fd < 0) abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int in = memfd_with(data, size);
    int out = memfd_create("fuzz-mcp-out", 0);
    if (out < 0) abort();
    McpOptions o;
    WsConfig cfg;
    memset(&o, 0, sizeof o);
    memset(&cfg, 0, sizeof cfg);
    cfg.root = (char *)"/nonexistent/coderag-fuzz-root";
    cfg.index_dir = (char *)"/nonexistent/coderag-fuzz-root/.coderag";
    o.cfg = &cfg;
    if (mcp_server_run(&o, in, out) != 0) abort();
    off_t len = lseek(out, 0, SEEK_END);
    char *text = malloc((size_t)len + 1);
    if (!text || pread(out, text, (size_t)len, 0) != len) abort();
    text[len] = '\0';
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) abort(); /* every message ends its line */
        json_error_t je;
        json_t *msg = json_loadb(line, (size_t)(nl - line), 0, &je);
        if (!json_is_object(msg)) abort();
        json_t *v = json_object_get(msg, "jsonrpc");
        if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) abort();
        json_decref(msg);
    }
    free(text);
    close(in);
    close(out);
    return 0;
}
