/* Durations for people: "812 ns", "12.345 us", "1.500 ms", "2.250 s". */
#ifndef CALLTRACE_UTIL_DURATION_H
#define CALLTRACE_UTIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Writes into buf (at least 16 bytes is always enough) and returns buf. */
char *duration_format(char *buf, size_t len, int64_t ns);

/* Parses "250ns", "50us", "1.5ms", "2s" (a unit is required: a bare number is ambiguous).
 * Returns 0 and *ns, or -1 when text is not such a duration or is over a day. */
int duration_parse(const char *text, uint64_t *ns);

#endif
