/*
 * vfy_int.h - what the files of verify/ share and nothing outside uses.
 */
#ifndef CODERAG_VFY_INT_H
#define CODERAG_VFY_INT_H

#include "vfy.h"

/* Trims blanks and surrounding quotes/backticks from s[*b, *e). */
void vfy__trim(const char *s, size_t *b, size_t *e);

/* The lenient path test of brackets, code spans and links: no blanks,
 * brackets or control bytes, no URL scheme but file://, and '/' inside or a
 * ".py"/".pyi" ending. */
int vfy__path_like(const char *s, size_t n);

/* 1 when link text s[0..n) reads as a path or a citation by itself, so that
 * keeping it would look like a citation nobody checked. */
int vfy__label_is_ref(const char *s, size_t n);

/* 1 when rel (normalised, relative) resolves, symlinks followed, to a place
 * outside real_root (the canonical root; root is the root as given). A path
 * that does not exist is judged by its longest existing prefix, and a
 * dangling symlink by where it points. */
int vfy__leaves_root(const char *real_root, const char *root, const char *rel);

/* The answer text rebuilt around the mentions: kept[i] says whether mention
 * i passed, canon[i] is its normalised path (when kept). Appends to out. */
void vfy__rewrite(const char *text, size_t len, const VfyMention *m, size_t n_m, const int *kept,
                  char *const *canon, StrBuf *out);

#endif
