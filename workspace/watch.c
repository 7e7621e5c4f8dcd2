#include "ws.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* Freshness by inotify: every directory under the root is watched, so that
 * a tool call costs a non-blocking read when nothing changed instead of a
 * stat of every file. The kernel queues an event before the write that
 * caused it returns, so an agent that edits a file and then asks sees the
 * change. When watching is impossible (no inotify, too many directories for
 * the watch limit) every call is treated as stale and pays the stat pass. */

#define MAX_WATCH_DEPTH 64

struct WsWatch {
    int fd;
    char *index_real; /* realpath of the index directory: never watched */
    I64Map dirs;      /* watch descriptor -> index in paths */
    char **paths;
    size_t n_paths, cap_paths;
    int dirty;
    int blind; /* a new directory could not be watched: always stale */
};

static const unsigned MASK = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM |
                             IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

static int skip_dir(const WsWatch *w, const char *name, const char *path)
{
    if (ws_skip_dir_name(name)) return 1;
    if (!w->index_real) return 0;
    char *real = realpath(path, NULL);
    int same = real && !strcmp(real, w->index_real);
    free(real);
    return same;
}

/* Watches dir and the directories below it; 0 when the watch limit is hit. */
static int add_tree(WsWatch *w, const char *dir, int depth)
{
    int wd = inotify_add_watch(w->fd, dir, MASK);
    if (wd < 0) return errno == ENOENT || errno == EACCES || errno == ENOTDIR;
    if (!i64map_get(&w->dirs, wd, NULL)) {
        ARRAY_GROW(w->paths, w->n_paths + 1, w->cap_paths);
        w->paths[w->n_paths] = xstrdup(dir);
        i64map_put(&w->dirs, wd, (int64_t)w->n_paths++);
    }
    if (depth >= MAX_WATCH_DEPTH) return 1;
    DIR *d = opendir(dir);
    if (!d) return 1;
    struct dirent *de;
    int ok = 1;
    StrBuf p;
    sb_init(&p);
    while (ok && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        sb_reset(&p);
        sb_addf(&p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (de->d_type == DT_DIR ||
            (de->d_type == DT_UNKNOWN && lstat(p.buf, &st) == 0 && S_ISDIR(st.st_mode))) {
            if (!skip_dir(w, de->d_name, p.buf)) ok = add_tree(w, p.buf, depth + 1);
        }
    }
    closedir(d);
    sb_release(&p);
    return ok;
}

WsWatch *ws_watch_open(const char *root, const char *index_dir)
{
    WsWatch *w = xcalloc(1, sizeof *w);
    i64map_init(&w->dirs);
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (index_dir) w->index_real = realpath(index_dir, NULL);
    if (w->fd < 0 || !add_tree(w, root, 0)) {
        log_msg(LOG_WARN, "cannot watch %s (%s): every tool call re-checks the files", root,
                w->fd < 0 ? strerror(errno) : "inotify watch limit reached");
        ws_watch_close(w);
        return NULL;
    }
    log_msg(LOG_DEBUG, "watching %zu directories", w->n_paths);
    return w;
}

void ws_watch_close(WsWatch *w)
{
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    for (size_t i = 0; i < w->n_paths; i++)
        free(w->paths[i]);
    free(w->paths);
    free(w->index_real);
    i64map_release(&w->dirs);
    free(w);
}

int ws_watch_changed(WsWatch *w)
{
    if (!w) return 1;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    StrBuf p;
    sb_init(&p);
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (char *q = buf; q < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)q;
            q += sizeof *ev + ev->len;
            if (ev->mask & IN_IGNORED) continue;
            if (ev->mask & IN_Q_OVERFLOW) {
                w->dirty = 1;
                continue;
            }
            int64_t at;
            if (!i64map_get(&w->dirs, ev->wd, &at)) continue;
            const char *name = ev->len ? ev->name : "";
            if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO)) && name[0]) {
                sb_reset(&p);
                sb_addf(&p, "%s/%s", w->paths[at], name);
                if (skip_dir(w, name, p.buf)) continue;
                if (!add_tree(w, p.buf, 1)) w->blind = 1;
            } else if ((ev->mask & IN_ISDIR) && name[0] && skip_dir(w, name, "")) {
                continue;
            }
            w->dirty = 1;
        }
    }
    sb_release(&p);
    int d = w->dirty || w->blind;
    w->dirty = 0;
    return d;
}
