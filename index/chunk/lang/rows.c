/* rows.c - the rows of the language table, in detection order (an
 * extension is looked up row by row). Adding a language: its row file and
 * query here in index/chunk/lang and index/chunk/lang/queries, its grammar's
 * line in grammars.cmake, and one line below (docs/languages.md). Nothing else lives in this file:
 * a test binary links its own copy with a toy row (tests/unit/test_lang_toy.c). */
#include "lang.h"

extern const IdxLang idx_lang_python, idx_lang_c, idx_lang_cpp, idx_lang_go, idx_lang_rust,
    idx_lang_java, idx_lang_javascript, idx_lang_typescript, idx_lang_tsx, idx_lang_markdown,
    idx_lang_rst, idx_lang_text;

const IdxLang *const idx_lang_rows[] = {
    &idx_lang_python, &idx_lang_c,        &idx_lang_cpp,        &idx_lang_go,
    &idx_lang_rust,   &idx_lang_java,     &idx_lang_javascript, &idx_lang_typescript,
    &idx_lang_tsx,    &idx_lang_markdown, &idx_lang_rst,        &idx_lang_text,
};

const size_t idx_lang_n_rows = sizeof idx_lang_rows / sizeof idx_lang_rows[0];
