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

static const char *const vcs_markers[] = {".git", ".hg", ".svn", ".jj"};
/* The project markers, in one place: today a fixed list; the language
 * table's per-language markers (index/) are meant to be wired in here. */
static const char *const *project_markers(size_t *n)
{
    static const char *const markers[] = {"pyproject.toml", "setup.py", "setup.cfg"};
    *n = sizeof markers / sizeof markers[0];
    return markers;
}

static int has_any(const char *dir, const char *const *names, size_t n)
{
    char path[PATH_MAX];
    struct stat sb;
    for (size_t i = 0; i < n; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) continue;
        if (stat(path, &sb) == 0) return 1;
    }
    return 0;
}

/* The nearest folder from dir up (dir included when self) holding a marker. */
static char *nearest(const char *dir, const char *const *names, size_t n, int self)
{
    char cur[PATH_MAX];
    if (!realpath(dir, cur)) return NULL;
    struct stat sb;
    if (stat(cur, &sb) == 0 && !S_ISDIR(sb.st_mode)) { /* a file: start at its folder */
        char *slash = strrchr(cur, '/');
        if (slash) *(slash == cur ? slash + 1 : slash) = '\0';
    }
    for (int first = 1;; first = 0) {
        if ((self || !first) && has_any(cur, names, n)) return xstrdup(cur);
        char *slash = strrchr(cur, '/');
        if (!slash || (slash == cur && cur[1] == '\0')) return NULL;
        *(slash == cur ? slash + 1 : slash) = '\0';
    }
}

char *ws_find_root(const char *start, const char *fallback)
{
    char *r = nearest(start, vcs_markers, sizeof vcs_markers / sizeof vcs_markers[0], 1);
    if (!r) {
        size_t n;
        const char *const *markers = project_markers(&n);
        r = nearest(start, markers, n, 1);
    }
    if (!r && fallback) r = xstrdup(fallback);
    return r;
}

char *ws_vcs_root_above(const char *dir)
{
    return nearest(dir, vcs_markers, sizeof vcs_markers / sizeof vcs_markers[0], 0);
}

int ws_skip_dir_name(const char *name)
{
    for (size_t i = 0; i < sizeof vcs_markers / sizeof vcs_markers[0]; i++)
        if (!strcmp(name, vcs_markers[i])) return 1;
    return !strcmp(name, ".coderag");
}
