# The tree-sitter grammars the language table's rows parse with, one line
# each (cr_grammar in cmake/grammars.cmake: NAME, npm package, exact version,
# the parser's folder in the package, optimisation level). A row names its
# grammar's function, tree_sitter_NAME. Adding a language adds its line here.
cr_grammar(python     tree-sitter-python     0.23.6 "src"            O2)
cr_grammar(c          tree-sitter-c          0.23.6 "src"            O2)
cr_grammar(cpp        tree-sitter-cpp        0.23.4 "src"            O1)
cr_grammar(go         tree-sitter-go         0.23.4 "src"            O2)
cr_grammar(rust       tree-sitter-rust       0.23.3 "src"            O2)
cr_grammar(java       tree-sitter-java       0.23.5 "src"            O2)
cr_grammar(javascript tree-sitter-javascript 0.23.1 "src"            O2)
cr_grammar(typescript tree-sitter-typescript 0.23.2 "typescript/src" O1)
cr_grammar(tsx        tree-sitter-typescript 0.23.2 "tsx/src"        O1)
