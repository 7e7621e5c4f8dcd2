#include "../idx_int.h"

#include <stdlib.h>
#include <string.h>

enum {
    PAT_NEGATE = 1,   /* "!pat" */
    PAT_DIRONLY = 2,  /* "pat/" */
    PAT_BASENAME = 4, /* no slash: matches the last component at any depth */
};

typedef struct IgnorePat {
    char *text; /* without "!", leading "/" and trailing "/"; escapes kept */
    unsigned flags;
} IgnorePat;

struct IgnoreList {
    char *base; /* "" or "a/b" */
    size_t base_len;
    IgnorePat *pats;
    size_t n, cap;
};

/* Results of ignore__wild, as git's wildmatch: the aborts let a failed star
 * stop its callers from retrying positions that cannot succeed, which keeps
 * patterns with many stars linear-ish instead of exponential. */
enum { WM_NOMATCH = 0, WM_MATCH = 1, WM_ABORT_ALL = -1, WM_ABORT_TO_STARSTAR = -2 };

/* POSIX class membership in the C locale; -1 for an unknown class name. */
static int ignore__class_member(const char *name, size_t len, unsigned char c)
{
#define CLS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
    if (CLS("alnum"))
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (CLS("alpha")) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (CLS("blank")) return c == ' ' || c == '\t';
    if (CLS("cntrl")) return c < 32 || c == 127;
    if (CLS("digit")) return c >= '0' && c <= '9';
    if (CLS("graph")) return c > 32 && c < 127;
    if (CLS("lower")) return c >= 'a' && c <= 'z';
    if (CLS("print")) return c >= 32 && c < 127;
    if (CLS("punct"))
        return c > 32 && c < 127 &&
               !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
    if (CLS("space")) return c == ' ' || (c >= '\t' && c <= '\r');
    if (CLS("upper")) return c >= 'A' && c <= 'Z';
    if (CLS("xdigit"))
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
#undef CLS
    return -1;
}

/* Matches a bracket expression at *pp (just past '[') against c; advances
 * *pp past the closing ']'. Returns WM_MATCH, WM_NOMATCH or WM_ABORT_ALL for
 * a malformed class (git treats those as matching nothing). */
static int ignore__bracket(const unsigned char **pp, unsigned char c)
{
    const unsigned char *p = *pp;
    int negated = 0, matched = 0;
    unsigned prev = 0;
    if (*p == '!' || *p == '^') {
        negated = 1;
        p++;
    }
    for (int first = 1;; first = 0, p++) {
        unsigned char pc = *p;
        if (!pc) return WM_ABORT_ALL;
        if (pc == ']' && !first) break;
        if (pc == '\\') {
            pc = *++p;
            if (!pc) return WM_ABORT_ALL;
            if (pc == c) matched = 1;
            prev = pc;
        } else if (pc == '-' && prev && p[1] && p[1] != ']') {
            unsigned char hi = *++p;
            if (hi == '\\') {
                hi = *++p;
                if (!hi) return WM_ABORT_ALL;
            }
            if (c >= prev && c <= hi) matched = 1;
            prev = 0;
        } else if (pc == '[' && p[1] == ':') {
            const unsigned char *name = p + 2, *end = name;
            while (*end && *end != ']')
                end++;
            if (!*end) return WM_ABORT_ALL;
            if (end - name < 1 || end[-1] != ':') {
                /* "[:" without ":]": a literal '[' */
                if (c == '[') matched = 1;
                prev = '[';
                continue;
            }
            int r = ignore__class_member((const char *)name, (size_t)(end - 1 - name), c);
            if (r < 0) return WM_ABORT_ALL;
            if (r) matched = 1;
            p = end;
            prev = 0;
        } else {
            if (pc == c) matched = 1;
            prev = pc;
        }
    }
    *pp = p;
    return matched != negated && c != '/' ? WM_MATCH : WM_NOMATCH;
}

/* Steps one match of one pattern may take (docs/hardening.md, per-pattern
 * bounds): a pattern past it is taken as matching when it excludes and as
 * not matching when it includes again ("!pat"): fail closed, never index
 * what a costly pattern may have meant to hide. */
#define IGNORE_MAX_STEPS 200000

/* gitignore wildcard matching with pathname semantics: '*', '?' and classes
 * never match '/'; "**" between slashes (or at an end) spans directories.
 * *steps counts down the budget; WM_ABORT_ALL with *steps < 0 when spent. */
static int ignore__wild(const unsigned char *start, const unsigned char *p, const unsigned char *t,
                        long *steps)
{
    if (--*steps < 0) return WM_ABORT_ALL;
    for (; *p; p++, t++) {
        unsigned char pc = *p;
        if (!*t && pc != '*') return WM_ABORT_ALL;
        switch (pc) {
        case '\\':
            pc = *++p;
            if (!pc || *t != pc) return WM_NOMATCH;
            break;
        case '?':
            if (*t == '/') return WM_NOMATCH;
            break;
        case '[': {
            p++;
            int r = ignore__bracket(&p, *t);
            if (r != WM_MATCH) return r;
            break;
        }
        case '*': {
            const unsigned char *run = p;
            while (p[1] == '*')
                p++;
            int dbl = p > run && (run == start || run[-1] == '/') && (p[1] == '\0' || p[1] == '/');
            if (dbl && p[1] == '\0') return WM_MATCH;
            if (dbl) {
                /* "**" + "/": zero directories, or any run ending before a '/' */
                if (ignore__wild(start, p + 2, t, steps) == WM_MATCH) return WM_MATCH;
                for (;; t++) {
                    int r = ignore__wild(start, p + 1, t, steps);
                    if (r == WM_MATCH || r == WM_ABORT_ALL || *steps < 0) return r;
                    if (!*t) return WM_ABORT_ALL;
                }
            }
            if (p[1] == '\0') return strchr((const char *)t, '/') ? WM_ABORT_TO_STARSTAR : WM_MATCH;
            for (;; t++) {
                int r = ignore__wild(start, p + 1, t, steps);
                if (r != WM_NOMATCH || *steps < 0) return r;
                if (!*t) return WM_ABORT_ALL;
                if (*t == '/') return WM_ABORT_TO_STARSTAR;
            }
        }
        default:
            if (*t != pc) return WM_NOMATCH;
            break;
        }
    }
    return *t ? WM_NOMATCH : WM_MATCH;
}

/* 1 when pat matches text, 0 when not, -1 when the step budget ran out. */
static int ignore__matches(const char *pat, const char *text)
{
    const unsigned char *p = (const unsigned char *)pat;
    long steps = IGNORE_MAX_STEPS;
    int r = ignore__wild(p, p, (const unsigned char *)text, &steps);
    return steps < 0 ? -1 : r == WM_MATCH;
}

/* "**" "/" "**" "/" matches what one "**" "/" matches: runs of them are
 * cut to one at parse (a line of them repeated is otherwise exponential). */
static size_t ignore__collapse(char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        int at_start = o == 0 || s[o - 1] == '/';
        if (at_start && i + 3 <= len && !memcmp(s + i, "**/", 3) && o >= 3 &&
            !memcmp(s + o - 3, "**/", 3) && (o == 3 || s[o - 4] == '/')) {
            i += 3;
            continue;
        }
        s[o++] = s[i++];
    }
    s[o] = '\0';
    return o;
}

/* Removes trailing spaces that are not escaped with a backslash. */
static size_t ignore__trim(const char *s, size_t len)
{
    size_t keep = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\' && i + 1 < len) {
            i++;
            keep = i + 1;
        } else if (s[i] != ' ') {
            keep = i + 1;
        }
    }
    return keep;
}

static void ignore__add_line(IgnoreList *l, const char *s, size_t len)
{
    if (len && s[len - 1] == '\r') len--;
    if (!len || s[0] == '#') return;
    len = ignore__trim(s, len);
    unsigned flags = 0;
    if (len && s[0] == '!') {
        flags |= PAT_NEGATE;
        s++;
        len--;
    }
    if (len && s[len - 1] == '/') {
        flags |= PAT_DIRONLY;
        len--;
    }
    if (!len) return;
    if (!memchr(s, '/', len)) flags |= PAT_BASENAME;
    if (s[0] == '/') {
        s++;
        len--;
        if (!len) return;
    }
    ARRAY_GROW(l->pats, l->n + 1, l->cap);
    l->pats[l->n].text = xstrndup(s, len);
    ignore__collapse(l->pats[l->n].text, len);
    l->pats[l->n].flags = flags;
    l->n++;
}

IgnoreList *idx_ignore_parse(const char *base, const char *text, size_t len)
{
    IgnoreList *l = xcalloc(1, sizeof *l);
    size_t blen = base ? strlen(base) : 0;
    while (blen && base[blen - 1] == '/')
        blen--;
    l->base = xstrndup(blen ? base : "", blen);
    l->base_len = blen;
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
        text += 3;
        len -= 3;
    }
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        ignore__add_line(l, p, (size_t)(eol - p));
        p = nl ? nl + 1 : end;
    }
    return l;
}

void idx_ignore_free(IgnoreList *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++)
        free(l->pats[i].text);
    free(l->pats);
    free(l->base);
    free(l);
}

IgnoreVerdict idx_ignore_match(const IgnoreList *l, const char *relpath, int is_dir)
{
    if (!l || !l->n) return IGNORE_NONE;
    const char *sub = relpath;
    if (l->base_len) {
        if (strncmp(relpath, l->base, l->base_len) != 0 || relpath[l->base_len] != '/')
            return IGNORE_NONE;
        sub = relpath + l->base_len + 1;
    }
    const char *slash = strrchr(sub, '/');
    const char *name = slash ? slash + 1 : sub;
    for (size_t i = l->n; i-- > 0;) {
        const IgnorePat *pat = &l->pats[i];
        if ((pat->flags & PAT_DIRONLY) && !is_dir) continue;
        int m = ignore__matches(pat->text, pat->flags & PAT_BASENAME ? name : sub);
        if (m < 0 && !(pat->flags & PAT_NEGATE)) return IGNORE_COSTLY; /* fail closed */
        if (m <= 0) continue;
        return pat->flags & PAT_NEGATE ? IGNORE_INCLUDE : IGNORE_EXCLUDE;
    }
    return IGNORE_NONE;
}
