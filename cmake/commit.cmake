# Writes OUT (a header defining CODERAG_COMMIT) from the source tree SRC: its
# git HEAD, else the COMMIT file a source tarball carries (scripts/package.sh),
# else "unknown". Run at every build; OUT is rewritten only when it changes, so
# an unchanged commit recompiles nothing.
set(commit "")
if(EXISTS "${SRC}/.git")
  execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(commit "")
  endif()
endif()
if(commit STREQUAL "" AND EXISTS "${SRC}/COMMIT")
  file(STRINGS "${SRC}/COMMIT" commit LIMIT_COUNT 1)
endif()
if(commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#define CODERAG_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
