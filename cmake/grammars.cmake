# cr_grammar(NAME PACKAGE VERSION SUBDIR OPT): fetches the npm package
# PACKAGE@VERSION once (npm pack) into CR_GRAMMAR_DIR, checks that the parser
# in SUBDIR has ABI 13 or 14, and builds it as the static library ts_NAME at
# optimisation level OPT (the large C++/TypeScript tables build much faster at
# -O1 and parse about as fast), added to the global property CR_GRAMMAR_LIBS
# (the libraries of ts_grammars). cr_language below calls it for each row
# with a grammar.
function(cr_grammar name package version subdir opt)
  set(dir "${CR_GRAMMAR_DIR}/${package}-${version}")
  if(NOT EXISTS "${dir}/${subdir}/parser.c")
    find_program(NPM npm REQUIRED)
    set(tmp "${CR_GRAMMAR_DIR}/${package}-download")
    file(REMOVE_RECURSE "${tmp}")
    file(MAKE_DIRECTORY "${tmp}")
    message(STATUS "Fetching ${package}@${version} from the npm registry")
    execute_process(COMMAND ${NPM} pack "${package}@${version}" --silent
                    WORKING_DIRECTORY "${tmp}" RESULT_VARIABLE rc OUTPUT_QUIET)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "npm pack ${package}@${version} failed (${rc})")
    endif()
    file(ARCHIVE_EXTRACT INPUT "${tmp}/${package}-${version}.tgz" DESTINATION "${tmp}")
    file(REMOVE_RECURSE "${dir}")
    file(RENAME "${tmp}/package" "${dir}")
    file(REMOVE_RECURSE "${tmp}")
  endif()
  set(src "${dir}/${subdir}")
  file(STRINGS "${src}/parser.c" abi REGEX "^#define LANGUAGE_VERSION ")
  if(NOT abi MATCHES "LANGUAGE_VERSION 1[34]$")
    message(FATAL_ERROR "${package}@${version} (${subdir}) has grammar ABI '${abi}'; libtree-sitter 0.20 needs 13 or 14")
  endif()
  set(files "${src}/parser.c")
  if(EXISTS "${src}/scanner.c")
    list(APPEND files "${src}/scanner.c")
  endif()
  add_library(ts_${name} STATIC ${files})
  target_include_directories(ts_${name} PRIVATE "${src}")
  # The grammar's own code is third-party: no warnings, a fixed -O level even
  # in sanitized builds (instrumenting 17 MB of parse tables buys nothing).
  target_compile_options(ts_${name} PRIVATE -w -${opt} -fno-sanitize=all)
  set_target_properties(ts_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set_property(GLOBAL APPEND PROPERTY CR_GRAMMAR_LIBS ts_${name})
endfunction()

# cr_language(NAME [PACKAGE VERSION SUBDIR OPT]): a row of the language table,
# idx_lang_NAME, appended to the global property CR_LANGUAGE_ROWS (the build
# writes them, in order, as generated/lang_rows.h for index/chunk/lang/rows.c);
# with a grammar, that grammar is built too (cr_grammar). The rows are listed
# in index/chunk/lang/languages.cmake.
function(cr_language name)
  if(ARGC GREATER 1)
    cr_grammar(${name} ${ARGN})
  endif()
  set_property(GLOBAL APPEND PROPERTY CR_LANGUAGE_ROWS ${name})
endfunction()
