#include "cli.h"

#include <signal.h>

int main(int argc, char **argv)
{
    /* Past a file-size limit, writes fail with EFBIG (reported as an I/O
     * error) instead of the process being killed. */
    signal(SIGXFSZ, SIG_IGN);
    return cli_main(argc, argv);
}
