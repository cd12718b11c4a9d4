/* JSON string escaping for bytes that come from a traced program: any byte sequence gives a
 * valid JSON string of valid UTF-8 (invalid sequences become U+FFFD). */
#ifndef CALLTRACE_UTIL_JSON_STRING_H
#define CALLTRACE_UTIL_JSON_STRING_H

#include <stddef.h>

#include "util/outbuf.h"

/* Writes "..." with quotes. */
void json_put_string(struct outbuf *out, const char *bytes, size_t len);
/* Same into a caller buffer; returns the length the full string needs (like snprintf). */
size_t json_escape(char *dst, size_t cap, const char *bytes, size_t len);

/* A NUL-terminated heap copy of bytes[0..len) that is valid UTF-8 (invalid sequences become
 * U+FFFD), for JSON libraries that pass bytes through as they are; NULL when out of memory. */
char *json_utf8_copy(const char *bytes, size_t len);

/* A copy of JSON text as cJSON prints it (its strings hold their bytes from 0x7f up as they
 * are) that is valid UTF-8 and safe to show on a terminal: invalid UTF-8 became U+FFFD; DEL, C1
 * controls and bidirectional formatting characters \u escapes, as json_escape writes them (and
 * any C0 control but the tabs and newlines of the layout, which cJSON never leaves raw). Those
 * bytes can only be inside strings, so the JSON means the same. NULL when out of memory. */
char *json_text_safe(const char *text);

#endif
