/*
 * vfy_int.h - what the files of verify/ share and nothing outside uses.
 */
#ifndef CODERAG_VFY_INT_H
#define CODERAG_VFY_INT_H

#include "vfy.h"

#include <string.h>

/* Byte classes of the citation parser (parse.c, parse_ref.c). */
static inline int vfy_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static inline int vfy_is_quote(char c)
{
    return c == '`' || c == '"' || c == '\'';
}

static inline int vfy_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline int vfy_is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int vfy_is_ident(char c)
{
    return vfy_is_alpha(c) || vfy_is_digit(c) || c == '_';
}

/* The bytes a bare path is made of. */
static inline int vfy_is_path_char(char c)
{
    return vfy_is_ident(c) || (c && strchr("-./~+@%=", c) != NULL);
}

/* Trims blanks and surrounding quotes/backticks from s[*b, *e). */
void vfy_trim(const char *s, size_t *b, size_t *e);

/* The lenient path test of brackets, code spans and links: no blanks,
 * brackets or control bytes, no URL scheme but file://, and '/' inside or a
 * file name with an extension (or a dot-file). */
int vfy_path_like(const char *s, size_t n);

/* A file name without extension or folder ("cli", "Makefile"): letters,
 * digits, '_' and '-', a letter first. */
int vfy_bare_name(const char *s, size_t n);

/* The pieces of a citation (parse_ref.c), read by the scanner (parse.c).
 * The stricter test of paths in prose: path_like and an absolute, ./, ../
 * or ~/ start, or an extension and either a '/' or an extension the index
 * reads. */
int vfy_file_like(const char *s, size_t n);
/* Reads LINES ("[L]A", "A-B", "A..B", "A to B", en/em dash) at s[*i]; 0 when
 * no number starts there. *bad: a number overflows or the range runs backwards. */
int vfy_scan_lines(const char *s, size_t n, size_t *i, uint32_t *a, uint32_t *b, int *bad);
/* Whether the lines that ended at t[*k] end at a word boundary ("a.py:12:5"
 * sets *bad and takes the column). */
int vfy_at_boundary(const char *t, size_t n, size_t *k, int *bad);
/* All of s[0..n) as LINES (blanks around allowed). */
int vfy_parse_lines(const char *s, size_t n, uint32_t *a, uint32_t *b);
/* The first ':' or '#' after a file:// scheme, or NULL. */
const char *vfy_find_sep(const char *s, size_t n);
/* All of s[b..e) as PATH SEP LINES; 0: not a citation. */
int vfy_split_ref(const char *s, size_t b, size_t e, size_t *pb, size_t *pe, uint32_t *a,
                  uint32_t *z, int *bad);
/* ", lines a-b", " line a", " (lines a-b)" at t[j]; *end is one past it. */
int vfy_scan_prose_lines(const char *t, size_t n, size_t j, uint32_t *a, uint32_t *b, int *bad,
                         size_t *end);

/* 1 when link text s[0..n) reads as a path or a citation by itself, so that
 * keeping it would look like a citation nobody checked. */
int vfy_label_is_ref(const char *s, size_t n);

/* 1 when rel (normalised, relative) resolves, symlinks followed, to a place
 * outside real_root (the canonical root; root is the root as given). A path
 * that does not exist is judged by its longest existing prefix, and a
 * dangling symlink by where it points. */
int vfy_leaves_root(const char *real_root, const char *root, const char *rel);

/* The answer text rebuilt around the mentions: kept[i] says whether mention
 * i passed, canon[i] is its normalised path (when kept). Appends to out. */
void vfy_rewrite(const char *text, size_t len, const VfyMention *m, size_t n_m, const int *kept,
                 char *const *canon, StrBuf *out);

#endif
