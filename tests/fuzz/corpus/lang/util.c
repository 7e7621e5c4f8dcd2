#include "util.h"
#include <stdio.h>

/** Adds two integers. */
int add(int a, int b)
{
    return a + b;
}

static int twice(int a)
{
    return add(a, a);
}
