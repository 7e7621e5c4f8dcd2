#include "ws.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The root rule shared by the clients and the server (docs/protocol.md):
 * the nearest VCS root, else the nearest project marker, else the folder
 * the editor was opened in. An index left behind (.coderag/) is never a
 * marker. */

const char *ws_vcs_marker(size_t i)
{
    return idx_vcs_dir(i);
}

const char *ws_project_marker(size_t i)
{
    return idx_project_marker(i);
}

/* A folder holding one of the markers marker(0), marker(1)... (NULL ends). */
static int has_any(const char *dir, const char *(*marker)(size_t i))
{
    char path[PATH_MAX];
    struct stat sb;
    const char *m;
    for (size_t i = 0; (m = marker(i)) != NULL; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, m) >= (int)sizeof path) continue;
        if (stat(path, &sb) == 0) return 1;
    }
    return 0;
}

/* The nearest folder from dir up (dir included when self) holding a marker. */
static char *nearest(const char *dir, const char *(*marker)(size_t i), int self)
{
    char cur[PATH_MAX];
    if (!realpath(dir, cur)) return NULL;
    struct stat sb;
    if (stat(cur, &sb) == 0 && !S_ISDIR(sb.st_mode)) { /* a file: start at its folder */
        char *slash = strrchr(cur, '/');
        if (slash) *(slash == cur ? slash + 1 : slash) = '\0';
    }
    for (int first = 1;; first = 0) {
        if ((self || !first) && has_any(cur, marker)) return xstrdup(cur);
        char *slash = strrchr(cur, '/');
        if (!slash || (slash == cur && cur[1] == '\0')) return NULL;
        *(slash == cur ? slash + 1 : slash) = '\0';
    }
}

char *ws_find_root(const char *start, const char *fallback)
{
    char *r = nearest(start, ws_vcs_marker, 1);
    if (!r) r = nearest(start, idx_project_marker, 1); /* the languages' own */
    if (!r && fallback) r = xstrdup(fallback);
    return r;
}

/* The index marker: an index folder with its database. */
static const char *index_marker(size_t i)
{
    return i == 0 ? IDX_DIR_NAME "/" IDX_DB_NAME : NULL;
}

char *ws_index_above(const char *dir)
{
    return nearest(dir, index_marker, 1);
}

char *ws_vcs_root_above(const char *dir)
{
    return nearest(dir, ws_vcs_marker, 0);
}

int ws_skip_dir_name(const char *name)
{
    return idx_is_vcs_dir(name, strlen(name)) || !strcmp(name, IDX_DIR_NAME);
}
