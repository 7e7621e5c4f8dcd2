# cmake -DOUT=file.c -DDIR=index/chunk/lang/queries -P embed_queries.cmake
# Writes one C string constant per query file: index/chunk/lang/queries/c.scm becomes
# `const char idx_query_c[]`, so the queries live in the repository as .scm
# and need no file at run time.
file(GLOB FILES "${DIR}/*.scm")
list(SORT FILES)
set(body "/* generated from index/chunk/lang/queries by cmake/embed_queries.cmake */\n#include <stddef.h>\n")
foreach(f ${FILES})
  get_filename_component(n "${f}" NAME_WE)
  string(REPLACE "-" "_" n "${n}")
  file(READ "${f}" text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n\"\n\"" text "${text}")
  string(APPEND body "const char idx_query_${n}[] = \"${text}\";\n")
endforeach()
file(WRITE "${OUT}" "${body}")
