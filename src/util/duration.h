/* Durations for people: "812 ns", "12.345 us", "1.500 ms", "2.250 s". */
#ifndef CALLTRACE_UTIL_DURATION_H
#define CALLTRACE_UTIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Writes into buf (at least 16 bytes is always enough) and returns buf. */
char *duration_format(char *buf, size_t len, int64_t ns);

#endif
