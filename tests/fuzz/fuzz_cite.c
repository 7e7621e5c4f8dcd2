/*
 * fuzz_cite.c - the citation parser and checker on arbitrary answer text.
 * vfy_parse and vfy_parse_ex (both flag sets, a small max) must return
 * in-bounds, ordered, non-overlapping mentions; every mention's path goes
 * through vfy_normalize_path; vfy_check runs against a fake workspace whose
 * read_lines aborts when asked for a path that is absolute or climbs with
 * "..": a citation must never make verification read outside the root.
 */
#include "vfy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ROOT "/nonexistent-fuzz-root/ws"

static const char *const files[] = {"a.py", "pkg/b.py", "pkg/sub/__init__.py"};

static int path_is_safe(const char *p)
{
    if (!p || !*p || p[0] == '/') return 0;
    for (const char *s = p; s;) {
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
        s = slash ? slash + 1 : NULL;
    }
    return 1;
}

static int fake_indexed(void *ud, const char *path)
{
    if (!path_is_safe(path)) abort();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (strcmp(files[i], path) == 0) return 1;
    return 0;
}

static CrErr fake_read(void *ud, const char *path, uint32_t start, uint32_t end, StrBuf *out,
                       uint32_t *out_total, ErrInfo *e)
{
    if (!path_is_safe(path)) abort();
    if (!fake_indexed(ud, path)) return err_set(e, CR_ENOENT, "%s: gone", path);
    *out_total = 40;
    if (start < 1 || end > 40 || start > end) return err_set(e, CR_EINVAL, "range");
    for (uint32_t l = start; l <= end; l++)
        sb_addf(out, "line %u of %s\n", l, path);
    return CR_OK;
}

static void check_mentions(const VfyMention *m, size_t n, size_t len)
{
    size_t prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i].group_off > len || m[i].group_len > len - m[i].group_off) abort();
        if (m[i].off < m[i].group_off || m[i].off + m[i].len > m[i].group_off + m[i].group_len)
            abort();
        if (m[i].group_off < prev_end && (i == 0 || m[i].group_off != m[i - 1].group_off)) abort();
        prev_end = m[i].group_off + m[i].group_len;
        if (!m[i].path) abort();
        if (!m[i].malformed && m[i].start_line > m[i].end_line) abort();
        char *rel = NULL;
        CrErr rc = vfy_normalize_path(ROOT, m[i].path, &rel);
        if (rc == CR_OK && !path_is_safe(rel)) abort();
        free(rel);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16) return 0;
    const char *text = (const char *)data;

    VfyMention *m = NULL;
    size_t n = vfy_parse(text, size, &m);
    check_mentions(m, n, size);
    vfy_mentions_free(m, n);

    size_t stop = 0;
    m = NULL;
    n = vfy_parse_ex(text, size, VFY_PARSE_BRACKETS_ONLY, 3, &m, &stop);
    if (n > 3 + 64 || stop > size) abort(); /* a bracket's parts are never split */
    check_mentions(m, n, size);
    vfy_mentions_free(m, n);

    VfySource src = {ROOT, fake_indexed, fake_read, NULL};
    static const char ctx_text[] = "line 3 of a.py\nline 4 of a.py\n";
    VfyContextItem ctx[] = {
        {"a.py", 3, 4, "f", ctx_text, sizeof ctx_text - 1},
        {"pkg/b.py", 1, 2, NULL, "line 1 of pkg/b.py\nline 2 of pkg/b.py\n", 38},
    };
    for (int author = 0; author < 2; author++) {
        VfyResult r;
        ErrInfo e = {0};
        memset(&r, 0, sizeof r);
        CrErr rc = vfy_check(&src, text, size, ctx, 2, (VfyAuthor)author, &r, &e);
        if (rc != CR_OK) abort();
        for (size_t i = 0; i < r.n_citations; i++)
            if (!path_is_safe(r.citations[i].path)) abort();
        vfy_result_release(&r);
    }
    return 0;
}
