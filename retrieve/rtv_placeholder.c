/* replaced by the retrieval library */
int rtv__placeholder;
