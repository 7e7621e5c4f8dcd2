/* names.c - module names, path helpers and a row's receiver words, shared
 * by the language rows and the chunker (it depends on no row). */
#include "lang.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *names__dots(const char *s, size_t n)
{
    char *m = xstrndup(s, n);
    for (char *p = m; *p; p++)
        if (*p == '/') *p = '.';
    return m;
}

char *idx_lang_module_strip_ext(const char *relpath, const char *const *dir_files)
{
    const char *slash = strrchr(relpath, '/');
    const char *base = slash ? slash + 1 : relpath;
    const char *dot = strchr(base, '.');
    size_t n = dot && dot > base ? (size_t)(dot - relpath) : strlen(relpath);
    size_t bn = n - (size_t)(base - relpath);
    /* a directory's index (mod, lib) file is the directory's module */
    for (size_t i = 0; dir_files && dir_files[i]; i++)
        if (strlen(dir_files[i]) == bn && !memcmp(base, dir_files[i], bn))
            n = slash ? (size_t)(slash - relpath) : 0;
    return names__dots(relpath, n);
}

char *idx_lang_module_keep_ext(const char *relpath)
{
    return names__dots(relpath, strlen(relpath));
}

char *idx_lang_module_dir(const char *relpath)
{
    const char *slash = strrchr(relpath, '/');
    return names__dots(relpath, slash ? (size_t)(slash - relpath) : 0);
}

char *idx_lang_dirname(const char *relpath)
{
    const char *slash = strrchr(relpath, '/');
    return xstrndup(relpath, slash ? (size_t)(slash - relpath) : 0);
}

int idx_lang_file_exists(const char *root, const char *rel)
{
    StrBuf sb;
    struct stat st;
    sb_init(&sb);
    sb_addf(&sb, "%s/%s", root, rel);
    int ok = stat(sb.buf, &st) == 0 && S_ISREG(st.st_mode);
    sb_release(&sb);
    return ok;
}

char *idx_lang_join(const char *dir, const char *spec)
{
    StrBuf in, out;
    sb_init(&in);
    sb_init(&out);
    sb_addf(&in, "./%s/%s", dir, spec); /* relative whatever spec holds */
    int ok = path_normalize(in.buf, &out);
    sb_release(&in);
    if (!ok) {
        sb_release(&out);
        return NULL;
    }
    return sb_detach(&out, NULL);
}

int idx_lang_self_word(const IdxLang *l, const char *w, size_t n)
{
    if (n == IDX_RECEIVER_LEN && !memcmp(w, IDX_RECEIVER, n)) return 1;
    for (const char *const *s = l ? l->self_words : NULL; s && *s; s++)
        if (strlen(*s) == n && !memcmp(*s, w, n)) return 1;
    return 0;
}
