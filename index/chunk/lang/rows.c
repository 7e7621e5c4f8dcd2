/* rows.c - the rows of the language table, in detection order (an
 * extension is looked up row by row). The rows are the lines of
 * languages.cmake, which the build writes as lang_rows.h, one
 * CR_ROW(NAME) each for the constant idx_lang_NAME of a row file here.
 * Adding a language: its row file and query here in index/chunk/lang and
 * index/chunk/lang/queries, and its line in languages.cmake
 * (docs/languages.md). Nothing else lives in this file: a test binary links
 * its own copy with a toy row (tests/unit/test_lang_toy.c). */
#include "lang.h"

#define CR_ROW(name) extern const IdxLang idx_lang_##name;
#include "lang_rows.h"
#undef CR_ROW

const IdxLang *const idx_lang_rows[] = {
#define CR_ROW(name) &idx_lang_##name,
#include "lang_rows.h"
#undef CR_ROW
};

const size_t idx_lang_n_rows = sizeof idx_lang_rows / sizeof idx_lang_rows[0];
