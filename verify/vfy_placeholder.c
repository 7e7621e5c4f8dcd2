/* replaced by the verification library */
int vfy__placeholder;
