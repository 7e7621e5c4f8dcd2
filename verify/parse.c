#include "vfy.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest bracket content considered; longer brackets are prose, not citations. */
#define VFY_MAX_GROUP 2048

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_quote(char c)
{
    return c == '`' || c == '"' || c == '\'';
}

/* Trims blanks and surrounding quotes/backticks from [*b, *e). */
static void trim(const char *s, size_t *b, size_t *e)
{
    for (;;) {
        while (*b < *e && is_blank(s[*b]))
            (*b)++;
        while (*e > *b && is_blank(s[*e - 1]))
            (*e)--;
        if (*e > *b && (is_quote(s[*b]) || is_quote(s[*e - 1]))) {
            if (is_quote(s[*b])) (*b)++;
            if (*e > *b && is_quote(s[*e - 1])) (*e)--;
            continue;
        }
        break;
    }
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

static int path_like(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (is_blank(s[i]) || s[i] == '[' || s[i] == ']') return 0;
    const char *scheme = memmem(s, n, "://", 3);
    if (scheme && !(scheme - s == 4 && strncasecmp(s, "file", 4) == 0)) return 0;
    return ends_with(s, n, ".py") || ends_with(s, n, ".pyi") || memchr(s, '/', n) != NULL;
}

static int parse_uint(const char *s, size_t n, size_t *i, uint32_t *out)
{
    uint64_t v = 0;
    size_t start = *i;
    if (*i < n && (s[*i] == 'L' || s[*i] == 'l')) (*i)++;
    size_t digits = *i;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        v = v * 10 + (uint64_t)(s[*i] - '0');
        if (v > UINT32_MAX) return 0;
        (*i)++;
    }
    if (*i == digits) {
        *i = start;
        return 0;
    }
    *out = (uint32_t)v;
    return 1;
}

/* "a", "a-b", "La-Lb", "a – b", "a..b". */
static int parse_lines(const char *s, size_t n, uint32_t *a, uint32_t *b)
{
    size_t i = 0;
    if (!parse_uint(s, n, &i, a)) return 0;
    while (i < n && is_blank(s[i]))
        i++;
    if (i == n) {
        *b = *a;
        return 1;
    }
    if (s[i] == '-')
        i++;
    else if (n - i >= 3 && (unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x80 &&
             ((unsigned char)s[i + 2] == 0x93 || (unsigned char)s[i + 2] == 0x94))
        i += 3;
    else if (n - i >= 2 && s[i] == '.' && s[i + 1] == '.')
        i += 2;
    else
        return 0;
    while (i < n && is_blank(s[i]))
        i++;
    if (!parse_uint(s, n, &i, b)) return 0;
    while (i < n && is_blank(s[i]))
        i++;
    return i == n && *b >= *a;
}

/* The separator between path and lines: the last ':' or '#'. */
static const char *find_sep(const char *s, size_t n)
{
    for (size_t i = n; i-- > 0;)
        if (s[i] == ':' || s[i] == '#') return s + i;
    return NULL;
}

/* Parses the bracket content text[b..e) into mentions appended to *v; returns
 * 0 (appending nothing) unless every part is a citation. */
static int parse_group(const char *text, size_t gb, size_t ge, VfyMention **v, size_t *n,
                       size_t *cap)
{
    size_t first = *n;
    const char *inherit = NULL;
    size_t inherit_len = 0;
    size_t pb = gb + 1;
    while (pb <= ge - 1) {
        size_t pe = pb;
        while (pe < ge - 1 && text[pe] != ';' && text[pe] != ',')
            pe++;
        size_t b = pb, e = pe;
        trim(text, &b, &e);
        pb = pe + 1;
        if (b == e) goto not_citation;

        VfyMention m = {.group_off = gb, .group_len = ge - gb, .off = b, .len = e - b};
        const char *sep = find_sep(text + b, e - b);
        if (sep) {
            size_t p0 = b, p1 = (size_t)(sep - text);
            trim(text, &p0, &p1);
            if (!path_like(text + p0, p1 - p0)) goto not_citation;
            size_t l0 = (size_t)(sep - text) + 1, l1 = e;
            trim(text, &l0, &l1);
            m.path = xstrndup(text + p0, p1 - p0);
            m.malformed = !parse_lines(text + l0, l1 - l0, &m.start_line, &m.end_line);
            inherit = text + p0;
            inherit_len = p1 - p0;
        } else if (inherit && parse_lines(text + b, e - b, &m.start_line, &m.end_line)) {
            m.path = xstrndup(inherit, inherit_len);
        } else {
            goto not_citation;
        }
        ARRAY_GROW(*v, *n + 1, *cap);
        (*v)[(*n)++] = m;
    }
    return 1;

not_citation:
    for (size_t i = first; i < *n; i++)
        free((*v)[i].path);
    *n = first;
    return 0;
}

size_t vfy_parse(const char *text, size_t len, VfyMention **out)
{
    VfyMention *v = NULL;
    size_t n = 0, cap = 0;
    size_t i = 0;
    while (i < len) {
        const char *lb = memchr(text + i, '[', len - i);
        if (!lb) break;
        size_t gb = (size_t)(lb - text), ge = gb + 1;
        i = gb + 1;
        if (gb > 0 && text[gb - 1] == '\\') continue;
        while (ge < len && ge - gb <= VFY_MAX_GROUP && text[ge] != ']' && text[ge] != '[' &&
               text[ge] != '\n')
            ge++;
        if (ge >= len || text[ge] != ']') continue;
        ge++; /* one past ']' */
        if (parse_group(text, gb, ge, &v, &n, &cap)) i = ge;
    }
    *out = v;
    return n;
}

void vfy_mentions_free(VfyMention *v, size_t n)
{
    if (!v) return;
    for (size_t i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

/* ---------------------------------------------------------------- paths */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes in place; returns 0 when a NUL byte would result. */
static int percent_decode(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        int hi, lo;
        if (*r == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0) {
            char c = (char)(hi * 16 + lo);
            if (c == '\0') return 0;
            *w++ = c;
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return 1;
}

/* Lexically normalises a '/'-separated path into out (no leading or trailing
 * '/', no "." or empty components). Returns 0 when ".." climbs above the
 * start of a relative path; above "/" of an absolute one it stays at "/". */
static int norm_components(const char *p, int absolute, StrBuf *out)
{
    sb_reset(out);
    while (*p) {
        while (*p == '/')
            p++;
        const char *c = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - c);
        if (n == 0 || (n == 1 && c[0] == '.')) continue;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
            if (out->len == 0) {
                if (!absolute) return 0;
                continue;
            }
            char *slash = strrchr(out->buf, '/');
            out->len = slash ? (size_t)(slash - out->buf) : 0;
            out->buf[out->len] = '\0';
            continue;
        }
        if (out->len) sb_addc(out, '/');
        sb_add(out, c, n);
    }
    return 1;
}

CrErr vfy_normalize_path(const char *root, const char *path, char **out)
{
    CrErr rc = CR_OK;
    StrBuf rootn, pathn;
    sb_init(&rootn);
    sb_init(&pathn);
    *out = NULL;

    size_t b = 0, e = strlen(path);
    trim(path, &b, &e);
    char *s = xstrndup(path + b, e - b);
    char *p = s;
    if (strncasecmp(p, "file://", 7) == 0) {
        p += 7;
        if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
        if (!percent_decode(p)) {
            rc = CR_EINVAL;
            goto out;
        }
        if (*p != '/') { /* file://otherhost/... */
            rc = CR_EOUTSIDE;
            goto out;
        }
    }
    if (*p == '\0') {
        rc = CR_EINVAL;
        goto out;
    }
    if (*p == '/') {
        norm_components(root, 1, &rootn);
        norm_components(p, 1, &pathn);
        if (pathn.len == rootn.len && memcmp(pathn.buf, rootn.buf, rootn.len) == 0) {
            rc = CR_EINVAL;
            goto out;
        }
        if (rootn.len == 0) { /* root is "/" */
            *out = sb_detach(&pathn, NULL);
            goto out;
        }
        if (pathn.len <= rootn.len || memcmp(pathn.buf, rootn.buf, rootn.len) != 0 ||
            pathn.buf[rootn.len] != '/') {
            rc = CR_EOUTSIDE;
            goto out;
        }
        *out = xstrdup(pathn.buf + rootn.len + 1);
        goto out;
    }
    if (!norm_components(p, 0, &pathn)) {
        rc = CR_EOUTSIDE;
        goto out;
    }
    if (pathn.len == 0) {
        rc = CR_EINVAL;
        goto out;
    }
    *out = sb_detach(&pathn, NULL);

out:
    free(s);
    sb_release(&rootn);
    sb_release(&pathn);
    return rc;
}
