/*
 * text.c - the rows of docs and config, read without a grammar
 * (chunk_text.c): Markdown and reStructuredText in sections under their
 * headings, other text in windows.
 */
#include "lang.h"

static const char *const md__exts[] = {".md", ".markdown", NULL};
static const char *const rst__exts[] = {".rst", NULL};
static const char *const text__exts[] = {".toml", ".cfg", ".ini", ".yaml", ".yml", ".txt", NULL};

const IdxLang idx_lang_markdown = {.name = "markdown",
                                   .exts = md__exts,
                                   .fence = "markdown",
                                   .headings = IDX_HEADINGS_MARKDOWN,
                                   .is_doc = 1};
const IdxLang idx_lang_rst = {.name = "rst",
                              .exts = rst__exts,
                              .fence = "rst",
                              .headings = IDX_HEADINGS_UNDERLINED,
                              .is_doc = 1};
const IdxLang idx_lang_text = {
    .name = "text", .exts = text__exts, .is_doc = 1, .max_bytes = 128 * 1024, .fallback = 1};
