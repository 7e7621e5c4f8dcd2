# The language table's rows, one line each, in detection order (an extension
# is looked up row by row): cr_language in cmake/grammars.cmake. A row NAME is
# the constant idx_lang_NAME in its row file here; a row that parses with a
# tree-sitter grammar gives the grammar's npm package, exact version, the
# parser's folder in the package and its optimisation level, and names the
# grammar's function tree_sitter_NAME. Adding a language adds its line here
# (docs/languages.md, "Adding a language"); the build lists the rows for
# rows.c and links the grammars.
cr_language(python     tree-sitter-python     0.23.6 "src"            O2)
cr_language(c          tree-sitter-c          0.23.6 "src"            O2)
cr_language(cpp        tree-sitter-cpp        0.23.4 "src"            O1)
cr_language(go         tree-sitter-go         0.23.4 "src"            O2)
cr_language(rust       tree-sitter-rust       0.23.3 "src"            O2)
cr_language(java       tree-sitter-java       0.23.5 "src"            O2)
cr_language(javascript tree-sitter-javascript 0.23.1 "src"            O2)
cr_language(typescript tree-sitter-typescript 0.23.2 "typescript/src" O1)
cr_language(tsx        tree-sitter-typescript 0.23.2 "tsx/src"        O1)
cr_language(markdown)
cr_language(rst)
cr_language(text)
