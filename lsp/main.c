#include "base.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "coderag: not yet\n");
    return 2;
}
