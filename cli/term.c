#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

/* Markdown as a terminal shows it, fed in pieces as an LLM streams: each
 * byte is written as soon as what it is can be told, so a streamed answer
 * appears as it arrives. What is still undecided waits in `hold`: a line's
 * first bytes (a heading's '#', a fence's backticks), a '*' that may be
 * "**", a backtick run, a backslash, a bracket that may be a citation.
 *
 * With a width, text outside code blocks is wrapped at word boundaries:
 * a word (its bytes and the escapes inside it) waits in `word` until a
 * blank, a line's end or the end of a piece says it is whole, then goes on
 * this row or the next (indented as a list item's text). A word cut by the
 * end of a piece is written at once, and its rest follows it on the row. */

enum { ST_BOLD = 1, ST_CODE = 2, ST_CITE = 4, ST_ITALIC = 8, ST_REJECTED = 16 };

#define CITE_MAX 400 /* longest "[path:range]" waited for */

struct CliTerm {
    FILE *f;
    int styles;
    char *root; /* absolute, for links; or NULL */
    StrBuf hold;
    int line_start;
    int fence;
    int heading;
    int bold;
    int italic;
    char prev;          /* the last byte of text written on this line; 0 at its start */
    size_t code_ticks;  /* inside a code span opened by this many backticks */
    int shown;          /* the style last written */
    size_t width;       /* columns to wrap words at; 0: never */
    size_t col;         /* columns written on this row */
    size_t hang;        /* a wrapped row's indent */
    size_t blanks;      /* blanks after the last word, not written yet */
    StrBuf word;        /* the word being read, not written yet */
    size_t word_cols;   /* its columns */
    char word_head[4];  /* its first characters (a list marker?) */
    int glued;          /* the last word written may go on: no break before its rest */
    int in_text;        /* between cli_term_md and cli_term_end (lists are not wrapped) */
    IdxStore *check_st; /* cli_term_set_check's, or NULL */
    const RtvRequest *check_req;
    const RtvAnswer *check_ans;
};

CliTerm *cli_term_new(FILE *f, int styles, const char *root_abs)
{
    CliTerm *t = xcalloc(1, sizeof *t);
    t->f = f;
    t->styles = styles;
    t->root = root_abs ? xstrdup(root_abs) : NULL;
    sb_init(&t->hold);
    sb_init(&t->word);
    t->line_start = 1;
    return t;
}

void cli_term_wrap(CliTerm *t, size_t width)
{
    t->width = width;
}

void cli_term_free(CliTerm *t)
{
    if (!t) return;
    sb_release(&t->hold);
    sb_release(&t->word);
    free(t->root);
    free(t);
}

int cli_term_styles_wanted(int fd_is_tty, const char *no_color, const char *term)
{
    if (!fd_is_tty) return 0;
    if (no_color && no_color[0]) return 0; /* https://no-color.org */
    return !(term && !strcmp(term, "dumb"));
}

static int wrapping(const CliTerm *t)
{
    return t->width && t->in_text && !t->fence;
}

/* A list item's marker: "-", "*", "+" or a number and a dot. */
static int list_marker(const char *h, size_t cols)
{
    if (cols == 1) return h[0] == '-' || h[0] == '*' || h[0] == '+';
    return cols >= 2 && cols <= 3 && h[0] >= '0' && h[0] <= '9' && h[cols - 1] == '.';
}

/* Writes the word read so far: on this row after the blanks before it,
 * or on the next when it would pass the width. */
static void flush_word(CliTerm *t)
{
    if (!t->word.len) return;
    int row_start = t->col == 0;
    if (t->word_cols && !t->glued && t->col > t->hang &&
        t->col + t->blanks + t->word_cols > t->width) {
        fprintf(t->f, "\n%*s", (int)t->hang, "");
        t->col = t->hang;
    } else {
        fprintf(t->f, "%*s", (int)t->blanks, "");
        t->col += t->blanks;
    }
    if (row_start) t->hang = t->blanks; /* a wrapped row keeps the line's indent */
    fwrite(t->word.buf, 1, t->word.len, t->f);
    t->col += t->word_cols;
    if (row_start || t->col == t->hang + t->word_cols) {
        if (t->word_cols <= 3 && list_marker(t->word_head, t->word_cols)) t->hang = t->col + 1;
    }
    t->blanks = 0;
    t->word_cols = 0;
    sb_reset(&t->word);
}

/* An escape sequence: inside the word being read when wrapping. */
static void esc(CliTerm *t, const char *s)
{
    if (wrapping(t))
        sb_adds(&t->word, s);
    else
        fputs(s, t->f);
}

/* Text that is shown (already made inert by put()). */
static void vis(CliTerm *t, const char *s, size_t n)
{
    if (!wrapping(t)) {
        fwrite(s, 1, n, t->f);
        for (size_t i = 0; i < n; i++)
            if (s[i] == '\n')
                t->col = 0;
            else if (((unsigned char)s[i] & 0xC0) != 0x80)
                t->col++;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') {
            flush_word(t);
            t->blanks = 0;
            fputc('\n', t->f);
            t->col = t->hang = 0;
            t->glued = 0;
        } else if (c == ' ') {
            flush_word(t);
            t->blanks++;
            t->glued = 0;
        } else {
            if ((c & 0xC0) != 0x80) {
                if (t->word_cols < sizeof t->word_head) t->word_head[t->word_cols] = (char)c;
                t->word_cols++;
            }
            sb_addc(&t->word, (char)c);
        }
    }
}

/* The end of a piece: what is read of a word is written now (a streamed
 * answer shows every piece as it comes); its rest stays on the row. */
static void flush_piece(CliTerm *t)
{
    if (!t->word.len) return;
    flush_word(t);
    t->glued = 1;
}

static void show(CliTerm *t, int want)
{
    if (!t->styles || want == t->shown) return;
    esc(t, "\x1b[0m");
    if (want & ST_BOLD) esc(t, "\x1b[1m");
    if (want & ST_ITALIC) esc(t, "\x1b[3m");
    if (want & ST_CODE) esc(t, "\x1b[36m");
    if (want & ST_CITE) esc(t, "\x1b[4;34m");
    if (want & ST_REJECTED) esc(t, "\x1b[9;31m");
    t->shown = want;
}

static int current(const CliTerm *t)
{
    return ((t->bold || t->heading) ? ST_BOLD : 0) | (t->italic ? ST_ITALIC : 0) |
           (t->code_ticks || t->fence ? ST_CODE : 0);
}

/* Text from the LLM or the index, never a command to the terminal: C0
 * controls but tab and newline, DEL and C1 controls (U+0080-U+009F) are
 * shown as U+FFFD, so that no escape sequence (a title, the clipboard, a
 * cursor move) written into a file or an answer reaches the terminal. */
static void put(CliTerm *t, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t bad = 0;
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
            bad = 1;
        else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                 (unsigned char)s[i + 1] <= 0x9f)
            bad = 2;
        if (!bad) continue;
        vis(t, s + from, i - from);
        vis(t, "\xef\xbf\xbd", 3);
        i += bad - 1;
        from = i + 1;
    }
    vis(t, s + from, n - from);
}

static void out(CliTerm *t, const char *s, size_t n)
{
    show(t, current(t));
    put(t, s, n);
    if (n) t->prev = s[n - 1];
}

void cli_term_set_check(CliTerm *t, IdxStore *st, const RtvRequest *req, const RtvAnswer *ans)
{
    t->check_st = st;
    t->check_req = req;
    t->check_ans = ans;
}

/* What a citation written in the text turned out to be. */
typedef enum { CITE_TEXT, CITE_VERIFIED, CITE_REJECTED } Cite;

/* One citation as written ("[a.py:3-5]", "[text](a.py#L3)"), checked as
 * the answer's will be: verified, rejected (*reason: a static string), or
 * no citation at all; verified when there is no check. */
static Cite check(CliTerm *t, const char *text, size_t len, const char **reason)
{
    *reason = NULL;
    if (!t->check_st) return CITE_VERIFIED;
    VfyResult vr = {0};
    Cite k = CITE_TEXT;
    if (ws_ask_check(t->check_st, t->check_req, t->check_ans, text, len, &vr, NULL)) {
        *reason = "not checked";
        return CITE_REJECTED;
    }
    if (vr.n_rejected) {
        *reason = vr.rejected[0].reason ? vr.rejected[0].reason : "rejected";
        k = CITE_REJECTED;
    } else {
        for (size_t i = 0; i < vr.n_citations; i++)
            if (!strcmp(vr.citations[i].origin, "model")) k = CITE_VERIFIED;
    }
    vfy_result_release(&vr);
    return k;
}

/* A citation that failed verification: struck out, not linked, with why
 * ("a.py:9 (rejected: out-of-range)"; in parentheses already: "(a.py#L9,
 * rejected: ...)"). */
static void rejected(CliTerm *t, const char *text, size_t len, const char *reason, int in_parens)
{
    show(t, current(t) | ST_REJECTED);
    put(t, text, len);
    show(t, current(t));
    out(t, in_parens ? ", rejected: " : " (rejected: ", 12);
    out(t, reason, strlen(reason));
    if (!in_parens) out(t, ")", 1);
}

/* An OSC 8 link's start. */
static void link_to(CliTerm *t, const char *uri)
{
    if (!uri) return;
    StrBuf e;
    sb_init(&e);
    sb_addf(&e, "\x1b]8;;%s\x1b\\", uri);
    esc(t, e.buf);
    sb_release(&e);
}

/* A file link (OSC 8) around text, where the terminal takes escapes. */
static void link_open(CliTerm *t, const char *rel)
{
    if (!t->styles || !t->root) return;
    char *uri = path_to_uri(t->root, rel);
    link_to(t, uri);
    free(uri);
}

static void link_close(CliTerm *t)
{
    if (t->styles && t->root) esc(t, "\x1b]8;;\x1b\\");
}

/* "12" or "12-30": a line range. */
static int is_range(const char *s, size_t n)
{
    int dash = 0;
    if (!n) return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-' && !dash && i > 0 && i + 1 < n) {
            dash = 1;
            continue;
        }
        if (s[i] < '0' || s[i] > '9') return 0;
    }
    return 1;
}

/* "path:12" or "path:12-30" with a path of no blanks: a citation. The
 * length of its path, or 0. */
static size_t cite_path_len(const char *s, size_t n)
{
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '[') return 0;
        if (s[i] == ':') colon = s + i;
    }
    if (!colon || colon == s) return 0;
    return is_range(colon + 1, (size_t)(s + n - colon - 1)) ? (size_t)(colon - s) : 0;
}

/* The parts of a bracket's text s[0..n), split at ',' and ';', blanks
 * trimmed: calls fn (if not NULL) on each with the path it names (a part
 * "12-30" after "a.py:3" names a.py too) and the separator before it.
 * Returns 0, having called nothing, unless every part is a citation:
 * "[a.py:3-4, 9; b.py:2]". */
typedef void (*CitePartFn)(CliTerm *t, const char *sep, size_t sep_len, const char *part,
                           size_t part_len, const char *path, size_t path_len);

static int cite_parts(CliTerm *t, const char *s, size_t n, CitePartFn fn)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *path = NULL;
        size_t path_len = 0, pb = 0, sep_from = 0;
        while (pb <= n) {
            size_t pe = pb;
            while (pe < n && s[pe] != ',' && s[pe] != ';')
                pe++;
            size_t b = pb, e = pe;
            while (b < e && (s[b] == ' ' || s[b] == '\t'))
                b++;
            while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
                e--;
            size_t plen = cite_path_len(s + b, e - b);
            if (plen) {
                path = s + b;
                path_len = plen;
            } else if (!path || !is_range(s + b, e - b)) {
                return 0;
            }
            if (pass && fn) fn(t, s + sep_from, b - sep_from, s + b, e - b, path, path_len);
            sep_from = e;
            pb = pe + 1;
        }
    }
    return 1;
}

static void newline(CliTerm *t)
{
    /* styles end with the line: an unclosed "**" must not bold the rest */
    t->bold = t->heading = t->italic = 0;
    t->prev = 0;
    if (!t->fence) t->code_ticks = 0;
    show(t, current(t));
    vis(t, "\n", 1);
    t->line_start = 1;
}

/* The start of a line: 0 to wait for more, else the bytes consumed. */
static size_t line_head(CliTerm *t, const char *s, size_t n, int final)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    if (i == n && !final) return 0; /* a heading or a fence may follow the blanks */
    size_t ticks = 0;
    while (i + ticks < n && s[i + ticks] == '`')
        ticks++;
    if (ticks >= 3 || (i + ticks == n && ticks && !final)) {
        /* a fence line: wait for its end, then show none of it */
        const char *nl = memchr(s, '\n', n);
        if (ticks < 3) return 0;
        if (!nl && !final) return 0;
        t->fence = !t->fence;
        t->line_start = 1;
        return nl ? (size_t)(nl - s) + 1 : n;
    }
    if (t->fence) { /* code: as it is, indent included */
        t->line_start = 0;
        return 0;
    }
    size_t h = 0;
    while (i + h < n && s[i + h] == '#')
        h++;
    if (h && i + h == n && !final) return 0;
    t->line_start = 0;
    if (h >= 1 && h <= 6 && i + h < n && s[i + h] == ' ') {
        t->heading = 1;
        return i + h + 1;
    }
    if (i) out(t, s, i);
    return i;
}

/* One part of a citation: linked to its file where the terminal can. */
static void cite_part(CliTerm *t, const char *sep, size_t sep_len, const char *part,
                      size_t part_len, const char *path, size_t path_len)
{
    out(t, sep, sep_len);
    if (t->check_st) {
        /* the part alone, as "[path:lines]" */
        StrBuf one;
        sb_init(&one);
        sb_addc(&one, '[');
        if (path < part || path >= part + part_len) {
            sb_add(&one, path, path_len);
            sb_addc(&one, ':');
        }
        sb_add(&one, part, part_len);
        sb_addc(&one, ']');
        const char *why;
        Cite k = check(t, one.buf, one.len, &why);
        sb_release(&one);
        if (k != CITE_VERIFIED) {
            if (k == CITE_REJECTED)
                rejected(t, part, part_len, why, 0);
            else
                out(t, part, part_len);
            return;
        }
    }
    char *rel = xstrndup(path, path_len);
    link_open(t, rel);
    show(t, current(t) | ST_CITE);
    put(t, part, part_len);
    show(t, current(t));
    link_close(t);
    free(rel);
}

/* k bytes of a run of text s[0..n) to write now: a last byte that may
 * start a C1 control (U+0080-U+009F: 0xc2, then 0x80-0x9f) waits for the
 * next, so that put() sees the two together. */
static size_t whole(const char *s, size_t k, size_t n, int final)
{
    return k == n && !final && k && (unsigned char)s[k - 1] == 0xc2 ? k - 1 : k;
}

/* "[text](target)" as "text (target)", the text linked to the target (a
 * URL, or a file under the root) where the terminal takes escapes. */
static void md_link(CliTerm *t, const char *text, size_t text_len, const char *target,
                    size_t target_len)
{
    const char *why;
    if (check(t, text - 1, target + target_len + 1 - (text - 1), &why) == CITE_REJECTED) {
        out(t, text, text_len);
        out(t, " (", 2);
        rejected(t, target, target_len, why, 1);
        out(t, ")", 1);
        return;
    }
    char *uri = NULL;
    int clean = 1;
    for (size_t i = 0; i < target_len; i++)
        if ((unsigned char)target[i] < 0x20 || target[i] == 0x7f) clean = 0;
    if (clean && (!strncmp(target, "http://", 7) || !strncmp(target, "https://", 8))) {
        uri = xstrndup(target, target_len);
    } else if (clean && t->root) {
        size_t plen = 0;
        while (plen < target_len && target[plen] != '#')
            plen++;
        char *rel = xstrndup(target, plen);
        uri = path_to_uri(t->root, rel);
        free(rel);
    }
    if (t->styles) link_to(t, uri);
    show(t, current(t) | ST_CITE);
    put(t, text, text_len);
    show(t, current(t));
    if (t->styles && uri) esc(t, "\x1b]8;;\x1b\\");
    out(t, " (", 2);
    out(t, target, target_len);
    out(t, ")", 1);
    free(uri);
}

/* One inline step: 0 to wait for more, else the bytes consumed. */
static size_t inline_step(CliTerm *t, const char *s, size_t n, int final)
{
    char c = s[0];
    if (c == '\n') {
        newline(t);
        return 1;
    }
    if (t->fence) {
        const char *nl = memchr(s, '\n', n);
        size_t k = whole(s, nl ? (size_t)(nl - s) : n, n, final);
        out(t, s, k);
        return k;
    }
    if (c == '`') {
        size_t k = 0;
        while (k < n && s[k] == '`')
            k++;
        if (k == n && !final) return 0;
        if (t->code_ticks == k) {
            t->code_ticks = 0;
        } else if (t->code_ticks) {
            out(t, s, k);
        } else {
            t->code_ticks = k;
            if (k < n && s[k] == ' ' && k > 1) k++; /* "`` x ``": padding */
        }
        return k;
    }
    if (t->code_ticks) {
        size_t k = 1;
        while (k < n && s[k] != '`' && s[k] != '\n')
            k++;
        if (k < n && s[k] == '`' && s[k - 1] == ' ' && t->code_ticks > 1) {
            /* "`` a` ``": a space before the closing run is padding */
            size_t run = 0;
            while (k + run < n && s[k + run] == '`')
                run++;
            if (k + run == n && !final) return 0;
            if (run == t->code_ticks) {
                if (k > 1) out(t, s, k - 1);
                return k;
            }
        }
        if (k == n && !final && s[k - 1] == ' ' && t->code_ticks > 1) k--; /* may be padding */
        k = whole(s, k, n, final);
        if (k) out(t, s, k);
        return k;
    }
    if (c == '*') {
        if (n < 2 && !final) return 0;
        if (n >= 2 && s[1] == '*') {
            t->bold = !t->bold;
            return 2;
        }
        /* "*a few words*": italic, opened before a word and not inside one
         * ("2*3", "a * b" stay), closed after a word */
        char next = n >= 2 ? s[1] : ' ';
        int blank_before = !t->prev || strchr(" \t([{\"'", t->prev);
        if (t->italic && !strchr(" \t", t->prev ? t->prev : ' ')) {
            t->italic = 0;
            return 1;
        }
        if (!t->italic && blank_before && !strchr(" \t\n", next)) {
            t->italic = 1;
            return 1;
        }
        out(t, s, 1);
        return 1;
    }
    if (c == '\\') {
        if (n < 2 && !final) return 0;
        if (n >= 2 && strchr("\\`*_[]{}()#+-.!|<>", s[1]) && s[1]) {
            out(t, s + 1, 1);
            return 2;
        }
        out(t, s, 1);
        return 1;
    }
    if (c == '[') {
        size_t k = 1;
        while (k < n && k < CITE_MAX && s[k] != ']' && s[k] != '\n')
            k++;
        if (k == n && k < CITE_MAX && !final) return 0;
        const char *why;
        if (k < n && s[k] == ']' && cite_parts(t, s + 1, k - 1, NULL) &&
            check(t, s, k + 1, &why) == CITE_TEXT) { /* "[x:1]" of no file: prose */
            out(t, s, k + 1);
            return k + 1;
        }
        if (k < n && s[k] == ']' && cite_parts(t, s + 1, k - 1, cite_part)) return k + 1;
        if (k < n && s[k] == ']') { /* "[text](target)": a link */
            if (k + 1 == n && !final) return 0;
            size_t m = k + 2;
            while (k + 1 < n && s[k + 1] == '(' && m < n && m - k < CITE_MAX &&
                   !strchr(") \t\n", s[m]))
                m++;
            if (k + 1 < n && s[k + 1] == '(' && m == n && m - k < CITE_MAX && !final) return 0;
            if (k + 1 < n && s[k + 1] == '(' && m < n && s[m] == ')' && m > k + 2) {
                md_link(t, s + 1, k - 1, s + k + 2, m - k - 2);
                return m + 1;
            }
        }
        out(t, s, 1);
        return 1;
    }
    size_t k = 1;
    while (k < n && !strchr("\n`*\\[", s[k]))
        k++;
    k = whole(s, k, n, final);
    out(t, s, k);
    return k;
}

static void drain(CliTerm *t, int final)
{
    size_t pos = 0;
    while (pos < t->hold.len) {
        const char *s = t->hold.buf + pos;
        size_t n = t->hold.len - pos;
        size_t k;
        if (t->line_start) {
            k = line_head(t, s, n, final);
            if (!k && t->line_start) break; /* waiting */
        } else {
            k = inline_step(t, s, n, final);
            if (!k) break;
        }
        pos += k;
    }
    sb_consume(&t->hold, pos);
}

void cli_term_md(CliTerm *t, const char *s, size_t n)
{
    t->in_text = 1;
    sb_add(&t->hold, s, n);
    drain(t, 0);
    flush_piece(t);
    fflush(t->f);
}

void cli_term_end(CliTerm *t)
{
    t->in_text = 1; /* what waited is text */
    drain(t, 1);
    if (t->hold.len) { /* what could be nothing else: as it is */
        out(t, t->hold.buf, t->hold.len);
        sb_reset(&t->hold);
    }
    t->bold = t->heading = t->fence = t->italic = 0;
    t->code_ticks = 0;
    show(t, 0);
    flush_word(t);
    t->blanks = 0;
    t->glued = t->in_text = 0;
    if (!t->line_start) fputc('\n', t->f);
    t->col = t->hang = 0;
    t->line_start = 1;
    fflush(t->f);
}

void cli_term_heading(CliTerm *t, const char *text)
{
    show(t, ST_BOLD);
    put(t, text, strlen(text));
    show(t, 0);
    fputc('\n', t->f);
}

void cli_term_location(CliTerm *t, const char *rel, const char *shown_path, uint32_t line,
                       const char *label, size_t width)
{
    char num[16];
    int n = snprintf(num, sizeof num, ":%u", line);
    size_t len = strlen(shown_path) + (size_t)n;
    fputs("  ", t->f);
    link_open(t, rel);
    show(t, ST_CITE);
    put(t, shown_path, strlen(shown_path));
    fputs(num, t->f);
    show(t, 0);
    link_close(t);
    if (label && label[0]) {
        fprintf(t->f, "%*s  ", len < width ? (int)(width - len) : 0, "");
        show(t, ST_CODE);
        put(t, label, strlen(label));
        show(t, 0);
    }
    fputc('\n', t->f);
}

void cli_term_item(CliTerm *t, const char *text, const char *note)
{
    fputs("  ", t->f);
    put(t, text, strlen(text));
    if (note && note[0]) {
        fputs("  (", t->f);
        put(t, note, strlen(note));
        fputc(')', t->f);
    }
    fputc('\n', t->f);
}
