/* replaced by the protocol library */
int lsp__placeholder;
