#include "cli.h"

#include <signal.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
    /* Past a file-size limit, writes fail with EFBIG (reported as an I/O
     * error) instead of the process being killed. */
    signal(SIGXFSZ, SIG_IGN);
    /* A server with many workspace roots holds a few descriptors per root
     * (the index folder, SQLite's database, WAL and shared memory, a
     * watcher): the soft limit, often 1024, goes up to the hard one. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    return cli_main(argc, argv);
}
