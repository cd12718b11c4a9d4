/* Durations for people: "812 ns", "12.345 us", "1.500 ms", "2.250 s"; and the one syntax every
 * option that takes a duration reads (-t, --min-duration, view --timeout, --from, --to). */
#ifndef CALLTRACE_UTIL_DURATION_H
#define CALLTRACE_UTIL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The longest duration an option takes: 31 days. */
#define DURATION_MAX_NS (31ull * 24 * 3600 * 1000000000)

/* What --help says a duration is. */
#define DURATION_SYNTAX "250us, 500ms, 0.5 (seconds), 2s, 1m, 1h"

/* Writes into buf (at least 16 bytes is always enough) and returns buf. */
char *duration_format(char *buf, size_t len, int64_t ns);

/* Parses a decimal number with an optional unit: ns, us, ms, s, m (minutes), h; a number
 * without a unit is seconds, as for sleep(1) and timeout(1): "250us", "1.5ms", "0.5", "2s",
 * "1m". Returns 0 and *ns (rounded to the nanosecond), or -1 when text is not such a duration
 * or is over DURATION_MAX_NS. */
int duration_parse(const char *text, uint64_t *ns);

#endif
