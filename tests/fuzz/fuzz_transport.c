/*
 * fuzz_transport.c - Content-Length framing on arbitrary bytes. The input is
 * served from a memfd (so any size reads without a writer thread); every
 * message read is handed back once through lsp_transport_reject when it is
 * not JSON-looking, as the server does. Properties: reads end (no loop),
 * bodies are NUL-terminated and within the cap, no sanitizer report.
 */
#include "lsp/lsp_int.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int null_fd = -1;
    if (null_fd < 0) null_fd = open("/dev/null", O_WRONLY);
    int fd = memfd_create("fuzz_transport", 0);
    if (fd < 0) abort();
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) abort();
        off += (size_t)w;
    }
    lseek(fd, 0, SEEK_SET);

    LspTransport *t = lsp_transport_new(fd, null_fd);
    /* A small cap so that oversized bodies are exercised with small inputs. */
    lsp_transport_set_limits(t, 256, 50);
    StrBuf body;
    sb_init(&body);
    ErrInfo e = {0};
    int rejects = 0;
    /* Each read consumes at least one byte or ends; at most 8 rejects put
     * back at most 256 bytes each, so this is a generous bound. */
    size_t rounds = 4 * (size + 8 * 256) + 16;
    for (size_t round = 0; round < rounds; round++) {
        LspReadResult r = lsp_transport_read(t, &body, &e);
        if (r == LSP_READ_EOF || r == LSP_READ_IO) break;
        if (r == LSP_READ_MSG) {
            if (body.len > 256 || body.buf[body.len] != '\0') abort();
            if (body.len && body.buf[0] != '{' && rejects < 8) {
                rejects += lsp_transport_reject(t, body.buf, body.len);
            } else {
                lsp_transport_write(t, body.buf, body.len, &e);
            }
        }
        if (round == rounds - 1) abort(); /* the transport never reached the end */
    }
    sb_release(&body);
    lsp_transport_free(t);
    close(fd);
    return 0;
}
