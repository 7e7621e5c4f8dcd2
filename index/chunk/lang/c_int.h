/*
 * c_int.h - the C and C++ rows' masks (c_mask.c), for their rows (c.c).
 * Internal to index/chunk/lang.
 */
#ifndef CODERAG_C_INT_H
#define CODERAG_C_INT_H

#include "lang.h"

/* C: functions a macro defines (`SYSCALL_DEFINE3(read, …) {…}`) and loops a
 * macro makes with a body of one statement (`for_each_cpu(c, m)\n\tf(c);`). */
char *idx_c_mask(const char *src, size_t len);
/* C++: export macros between `class` and the name ("class LEVELDB_EXPORT DB {"). */
char *idx_cpp_mask(const char *src, size_t len);

#endif
