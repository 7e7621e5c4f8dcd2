/* c_mask.c - what the C and C++ grammars cannot read without expanding
 * macros, rewritten byte for byte in a copy of the source (IdxLang.mask):
 * every offset and line stays the source's, and names are read from the
 * source itself. */
#include "c_int.h"

#include <stdlib.h>
#include <string.h>

static int mask__ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int mask__blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* The copy, made on the first rewrite. */
static char *mask__out(char **out, const char *src, size_t len)
{
    if (!*out) {
        *out = xmalloc(len + 1);
        memcpy(*out, src, len);
        (*out)[len] = '\0';
    }
    return *out;
}

/* Where the bracket opened at src[open] closes, or len: a macro's arguments
 * hold no braces or semicolons, so one of those ends the search. */
static size_t mask__close(const char *src, size_t len, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < len; i++) {
        if (src[i] == '(') depth++;
        if (src[i] == ')' && --depth == 0) return i;
        if (src[i] == ';' || src[i] == '{' || src[i] == '}') return len;
    }
    return len;
}

/* Whether the identifier of n bytes at w is spelt as a macro (capitals,
 * digits and '_', a capital among them). */
static int mask__macro_case(const char *w, size_t n)
{
    int caps = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i] >= 'a' && w[i] <= 'z') return 0;
        caps += w[i] >= 'A' && w[i] <= 'Z';
    }
    return caps > 0;
}

/* "NAME(f, args…)" at the start of a line, followed by a body: a function
 * a macro defines (SYSCALL_DEFINE3(read, unsigned int, fd, …) {…}), which
 * the grammar reads as a statement and a block outside any function.
 * Rewritten "NAME f( args…)": a function f with NAME for its type. (With
 * the name alone, "NAME(f) {…}", the grammar already reads a function.) */
static void mask__macro_head(const char *src, size_t len, size_t at, char **out)
{
    size_t e = at;
    while (e < len && mask__ident(src[e]))
        e++;
    if (e - at < 2 || !mask__macro_case(src + at, e - at) || src[at] <= '9') return;
    size_t open = e;
    if (open >= len || src[open] != '(') return;
    size_t a = open + 1;
    while (a < len && mask__blank(src[a]))
        a++;
    size_t ae = a;
    while (ae < len && mask__ident(src[ae]))
        ae++;
    if (ae == a || src[a] <= '9') return;
    size_t comma = ae;
    while (comma < len && mask__blank(src[comma]))
        comma++;
    if (comma >= len || src[comma] != ',') return;
    size_t close = mask__close(src, len, open);
    if (close >= len) return;
    size_t b = close + 1;
    while (b < len && (mask__blank(src[b]) || src[b] == '\n'))
        b++;
    if (b >= len || src[b] != '{') return;
    char *o = mask__out(out, src, len);
    o[open] = ' ';
    o[comma] = '(';
}

/* The visual width of a line's indentation (a tab to the next multiple of 8). */
static size_t mask__indent(const char *src, size_t len, size_t line, size_t *first)
{
    size_t w = 0, i = line;
    for (; i < len && (src[i] == ' ' || src[i] == '\t'); i++)
        w = src[i] == '\t' ? (w / 8 + 1) * 8 : w + 1;
    *first = i;
    return w;
}

/* Whether the code before the line starting at line ends a statement or a
 * statement's head (';', a brace, `if (…)`, a label, `else`, a comment), or
 * is a preprocessor line: a loop may start there. */
static int mask__after_statement(const char *src, size_t line)
{
    size_t p = line;
    while (p > 0 && (mask__blank(src[p - 1]) || src[p - 1] == '\n'))
        p--;
    if (p == 0) return 1;
    size_t ls = p;
    while (ls > 0 && src[ls - 1] != '\n')
        ls--;
    while (ls < p && mask__blank(src[ls]))
        ls++;
    if (src[ls] == '#') return 1;
    char c = src[p - 1];
    if (c && strchr(";{}):", c)) return 1;
    if (c == '/' && p >= 2 && src[p - 2] == '*') return 1;
    return p >= 4 && !memcmp(src + p - 4, "else", 4) && (p == 4 || !mask__ident(src[p - 5]));
}

/* Words that open a statement or an expression with a bracket, never a loop macro. */
static int mask__reserved(const char *w, size_t n)
{
    static const char *const words[] = {"sizeof",         "typeof",        "__typeof__", "__typeof",
                                        "_Generic",       "switch",        "return",     "while",
                                        "defined",        "__attribute__", "asm",        "__asm__",
                                        "_Static_assert", "static_assert", NULL};
    for (size_t i = 0; words[i]; i++)
        if (strlen(words[i]) == n && !memcmp(words[i], w, n)) return 1;
    return 0;
}

/* An indented "name(args)" alone on its line, after a statement, over a
 * statement indented deeper: a loop a macro makes (for_each_cpu(c, m),
 * list_for_each_entry(p, h, node)) with a body of one statement, no
 * braces. The grammar, which sees a call with no ';', loses the rest of
 * the function and often of the file. Rewritten `while (args)`: the same
 * body under a loop; the arguments' calls stay calls. */
static void mask__macro_loop(const char *src, size_t len, size_t line, char **out)
{
    size_t at;
    size_t ind = mask__indent(src, len, line, &at);
    if (ind == 0 || at >= len) return;
    size_t e = at;
    while (e < len && mask__ident(src[e]))
        e++;
    if (e - at < 5 || src[at] <= '9' || mask__macro_case(src + at, e - at) ||
        mask__reserved(src + at, e - at))
        return;
    size_t open = e;
    while (open < len && mask__blank(src[open]))
        open++;
    if (open >= len || src[open] != '(') return;
    size_t close = mask__close(src, len, open);
    if (close >= len) return;
    size_t p = close + 1;
    while (p < len && mask__blank(src[p]))
        p++;
    if (p + 1 < len && src[p] == '/' && src[p + 1] == '*') {
        const char *nl = memchr(src + p, '\n', len - p);
        size_t eol = nl ? (size_t)(nl - src) : len;
        const char *end = memmem(src + p + 2, eol - p - 2, "*/", 2);
        if (!end) return;
        p = (size_t)(end - src) + 2;
        while (p < len && mask__blank(src[p]))
            p++;
    }
    if (p >= len || src[p] != '\n') return;
    size_t next = p + 1, first;
    while (next < len) {
        size_t ind2 = mask__indent(src, len, next, &first);
        if (first < len && src[first] == '\n') {
            next = first + 1;
            continue;
        }
        if (ind2 <= ind || first >= len) return;
        char c = src[first];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '*' || c == '('))
            return;
        break;
    }
    if (next >= len || !mask__after_statement(src, line)) return;
    char *o = mask__out(out, src, len);
    memcpy(o + at, "while", 5);
    memset(o + at + 5, ' ', e - at - 5);
}

/* The directive on the line starting at line ("if", "ifdef", "else",
 * "endif"...: its word's length in *n), or NULL. */
static const char *mask__directive(const char *src, size_t len, size_t line, size_t *n)
{
    size_t i = line;
    while (i < len && mask__blank(src[i]))
        i++;
    if (i >= len || src[i] != '#') return NULL;
    for (i++; i < len && mask__blank(src[i]); i++)
        ;
    size_t e = i;
    while (e < len && mask__ident(src[e]))
        e++;
    *n = e - i;
    return src + i;
}

static int mask__is(const char *w, size_t n, const char *word)
{
    return w && n == strlen(word) && !memcmp(w, word, n);
}

/* The start of the line after the one at line (len at the end). */
static size_t mask__next_line(const char *src, size_t len, size_t line)
{
    const char *nl = memchr(src + line, '\n', len - line);
    return nl ? (size_t)(nl - src) + 1 : len;
}

/* How many more `(` than `)` src[a, b) holds, strings, characters and
 * comments aside. */
static int mask__paren_depth(const char *src, size_t a, size_t b)
{
    int depth = 0;
    for (size_t i = a; i < b; i++) {
        char c = src[i];
        if (c == '"' || c == '\'') {
            for (i++; i < b && src[i] != c && src[i] != '\n'; i++)
                i += src[i] == '\\';
        } else if (c == '/' && i + 1 < b && src[i + 1] == '/') {
            while (i < b && src[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < b && src[i + 1] == '*') {
            for (i += 2; i + 1 < b && !(src[i] == '*' && src[i + 1] == '/'); i++)
                ;
            i++;
        } else {
            depth += (c == '(') - (c == ')');
        }
    }
    return depth;
}

/* An `#if` whose first branch leaves a bracket open that its other
 * branches open again (`f(a,` / `#else` / `g(b,` / `#endif` / `c);`) cuts
 * an expression the grammar cannot read (the function around it is lost):
 * the directives and the other branches are blanked, so that the first
 * branch reads on into the code after `#endif`. */
static void mask__split_if(const char *src, size_t len, size_t line, char **out)
{
    size_t n;
    const char *d = mask__directive(src, len, line, &n);
    if (!mask__is(d, n, "if") && !mask__is(d, n, "ifdef") && !mask__is(d, n, "ifndef")) return;
    size_t first = mask__next_line(src, len, line), other = 0, end = 0;
    int nest = 0;
    for (size_t l = first; l < len && !end; l = mask__next_line(src, len, l)) {
        d = mask__directive(src, len, l, &n);
        if (!d) continue;
        if (mask__is(d, n, "if") || mask__is(d, n, "ifdef") || mask__is(d, n, "ifndef"))
            nest++;
        else if (mask__is(d, n, "endif") && nest)
            nest--;
        else if (mask__is(d, n, "endif"))
            end = l;
        else if (!nest && !other && (mask__is(d, n, "else") || mask__is(d, n, "elif")))
            other = l;
    }
    if (!end || !other || mask__paren_depth(src, first, other) <= 0) return;
    size_t stop = mask__next_line(src, len, end);
    char *o = mask__out(out, src, len);
    for (size_t i = line; i < first; i++)
        if (o[i] != '\n') o[i] = ' ';
    for (size_t i = other; i < stop; i++)
        if (o[i] != '\n') o[i] = ' ';
}

char *idx_c_mask(const char *src, size_t len)
{
    char *out = NULL;
    for (size_t line = 0; line < len;) {
        if (mask__ident(src[line]))
            mask__macro_head(src, len, line, &out);
        else if (src[line] == ' ' || src[line] == '\t')
            mask__macro_loop(src, len, line, &out);
        if (src[line] == '#' || src[line] == ' ' || src[line] == '\t')
            mask__split_if(src, len, line, &out);
        const char *nl = memchr(src + line, '\n', len - line);
        line = nl ? (size_t)(nl - src) + 1 : len;
    }
    return out;
}

/* Whether the line holding src[at] is a directive or continues one (a
 * backslash ends the line before it). */
static int mask__in_directive(const char *src, size_t at)
{
    size_t b = at;
    while (b && src[b - 1] != '\n')
        b--;
    for (;;) {
        size_t p = b;
        while (p < at && mask__blank(src[p]))
            p++;
        if (src[p] == '#') return 1;
        if (!b) return 0;
        size_t e = b - 1; /* the newline ending the line above */
        while (e && (src[e - 1] == ' ' || src[e - 1] == '\t' || src[e - 1] == '\r'))
            e--;
        if (!e || src[e - 1] != '\\') return 0;
        b = e - 1;
        while (b && src[b - 1] != '\n')
            b--;
    }
}

/* Blanks an annotation macro after a function's parameter list (and its
 * qualifiers), before its body or its ';' (`void Mock::AllowLeak(const void* p)
 * GTEST_LOCK_EXCLUDED_(mu) {`, `void Add() EXCLUSIVE_LOCKS_REQUIRED(mu_);`,
 * thread-safety and attribute macros in capitals): the grammar, which does
 * not expand macros, otherwise reads the function as one named by the
 * macro. The ')' before it closes a list opened after a name that is no
 * statement word (`if (x) CHECK(y);` is a call), and neither is in a
 * directive (`#if defined(X)` over `TEST_F(A, B) {`). */
static void mask__annotations(const char *src, size_t len, char **out)
{
    static const char *const words[] = {"if", "while", "for", "switch", "catch", "return", NULL};
    static const char *const quals[] = {"const", "override", "final", "noexcept", "volatile", NULL};
    for (size_t i = 1; i + 1 < len; i++) {
        if (mask__ident(src[i - 1]) || !(src[i] >= 'A' && src[i] <= 'Z')) continue;
        size_t e = i;
        while (e < len && mask__ident(src[e]) && !(src[e] >= 'a' && src[e] <= 'z'))
            e++;
        if (e - i < 3 || (e < len && mask__ident(src[e]))) {
            i = e;
            continue;
        }
        size_t open = e;
        while (open < len && mask__blank(src[open]))
            open++;
        if (open >= len || src[open] != '(') continue;
        size_t p = i; /* the ')' before the macro, blanks, lines and qualifiers between */
        for (int more = 1; more;) {
            while (p && (mask__blank(src[p - 1]) || src[p - 1] == '\n'))
                p--;
            size_t w0 = p;
            while (w0 && mask__ident(src[w0 - 1]))
                w0--;
            more = 0;
            for (size_t k = 0; quals[k] && w0 < p; k++)
                more |= p - w0 == strlen(quals[k]) && !memcmp(src + w0, quals[k], p - w0);
            if (more) p = w0;
        }
        if (!p || src[p - 1] != ')') continue;
        int depth = 0; /* the '(' it closes, and the name before that */
        size_t q = p - 1;
        for (;; q--) {
            depth += (src[q] == ')') - (src[q] == '(');
            if (!depth || !q || src[q] == ';' || src[q] == '{' || src[q] == '}') break;
        }
        if (depth || src[q] != '(') continue;
        size_t we = q;
        while (we && mask__blank(src[we - 1]))
            we--;
        size_t w = we;
        while (w && mask__ident(src[w - 1]))
            w--;
        int word = 0;
        for (size_t k = 0; words[k]; k++)
            word |= we - w == strlen(words[k]) && !memcmp(src + w, words[k], we - w);
        if (we == w || word) continue;
        size_t close = mask__close(src, len, open);
        if (close >= len) continue;
        size_t after = close + 1;
        while (after < len && (mask__blank(src[after]) || src[after] == '\n'))
            after++;
        if (after >= len || (src[after] != '{' && src[after] != ';')) continue;
        if (mask__in_directive(src, i) || mask__in_directive(src, p - 1)) continue;
        mask__out(out, src, len);
        for (size_t k = i; k <= close; k++)
            if ((*out)[k] != '\n') (*out)[k] = ' ';
        i = close;
    }
}

/* Blanks the macro in "class|struct|union MACRO Name" where MACRO is in
 * capitals (export and visibility macros: LEVELDB_EXPORT, Q_CORE_EXPORT)
 * and Name is followed by '{', ':' or "final": the grammar, which does not
 * expand macros, otherwise reads the class as a function named Name. */
char *idx_cpp_mask(const char *src, size_t len)
{
    static const char *const keys[] = {"class", "struct", "union"};
    char *out = NULL;
    for (size_t line = 0; line < len; line = mask__next_line(src, len, line))
        if (src[line] == '#' || src[line] == ' ' || src[line] == '\t')
            mask__split_if(src, len, line, &out);
    mask__annotations(out ? out : src, len, &out);
    for (size_t i = 0; i < len; i++) {
        if (i && mask__ident(src[i - 1])) continue;
        size_t k = 0, kn = 0;
        for (; k < 3; k++) {
            kn = strlen(keys[k]);
            if (len - i > kn && !memcmp(src + i, keys[k], kn)) break;
        }
        if (k == 3 || (src[i + kn] != ' ' && src[i + kn] != '\t')) continue;
        size_t m = i + kn;
        while (m < len && (src[m] == ' ' || src[m] == '\t'))
            m++;
        size_t me = m;
        int caps = 0;
        while (me < len && mask__ident(src[me]) && !(src[me] >= 'a' && src[me] <= 'z'))
            caps += src[me++] != '_';
        if (me - m < 2 || !caps || me >= len || (src[me] != ' ' && src[me] != '\t')) continue;
        size_t nm = me;
        while (nm < len && (src[nm] == ' ' || src[nm] == '\t'))
            nm++;
        size_t ne = nm;
        while (ne < len && mask__ident(src[ne]))
            ne++;
        if (ne == nm || (src[nm] >= '0' && src[nm] <= '9')) continue;
        size_t after = ne;
        while (after < len && (src[after] == ' ' || src[after] == '\t' || src[after] == '\n'))
            after++;
        if (after >= len || !(src[after] == '{' || src[after] == ':' ||
                              (len - after >= 5 && !memcmp(src + after, "final", 5))))
            continue;
        mask__out(&out, src, len);
        memset(out + m, ' ', me - m);
        i = ne;
    }
    return out;
}
