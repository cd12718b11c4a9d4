/* UTF-8 validity for bytes a traced program controls (names, strings): every output format
 * that carries text (JSON, protobuf strings) must stay valid whatever the program did. */
#ifndef CALLTRACE_UTIL_UTF8_H
#define CALLTRACE_UTIL_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is not valid UTF-8. */
size_t utf8_valid_len(const unsigned char *s, size_t avail);
/* A NUL-terminated heap copy of bytes[0..len) in which invalid sequences became U+FFFD; its
 * length goes to *outlen when outlen is not NULL. NULL when out of memory. */
char *utf8_valid_copy(const char *bytes, size_t len, size_t *outlen);

#endif
