/* UTF-8 validity for bytes a traced program controls (names, strings): every output format
 * that carries text (JSON, protobuf strings) must stay valid whatever the program did. */
#ifndef CALLTRACE_UTIL_UTF8_H
#define CALLTRACE_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not valid UTF-8. */
size_t utf8_valid_len(const unsigned char *s, size_t avail);
/* Whether the valid UTF-8 character s[0..n) is one that a terminal may act on or that reorders
 * the line it is on: a C1 control (U+0080-U+009F: some terminals take U+009B as CSI) or a
 * bidirectional formatting character (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069).
 * Text and JSON output escape them. */
bool utf8_is_control(const unsigned char *s, size_t n);
/* A NUL-terminated heap copy of bytes[0..len) in which invalid sequences became U+FFFD; its
 * length goes to *outlen when outlen is not NULL. NULL when out of memory. */
char *utf8_valid_copy(const char *bytes, size_t len, size_t *outlen);

#endif
