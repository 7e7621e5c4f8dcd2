#include "cli.h"

#include "ws.h"

#include <signal.h>
#include <stdlib.h>
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
    /* OpenBLAS (under FAISS, loaded on first use) starts a thread pool
     * whose threads retry a failed mmap forever: under `ulimit -v` the
     * process hung at exit waiting for them. One query at a time needs no
     * pool. The user's own setting wins. */
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    ws_process_init();
    return cli_main(argc, argv);
}
