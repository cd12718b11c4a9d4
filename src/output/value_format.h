/* A value as gdb's print command shows it, from its C type and the raw bytes copied at a stop:
 * 42, -1, 65 'A', true, RED, (A | B), 3.5, 0x7ffd5e3c1a40, 0x0, 0x55... "hello",
 * {x = 1, y = 2}, {1, 2, 3}. Pure: the bytes come from the record (or, later, from an
 * in-process engine), never from the traced process. */
#ifndef CALLTRACE_OUTPUT_VALUE_FORMAT_H
#define CALLTRACE_OUTPUT_VALUE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/ctype.h"

/* A growing NUL-terminated string. */
struct text {
    char *s;
    size_t len, cap;
    bool failed; /* out of memory: s holds what fitted */
};

void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void text_put(struct text *t, const char *s, size_t len);
void text_free(struct text *t);

/* Memory a pointer pointed to, copied at the stop (a CHUNK_MEM). */
struct pointee {
    uint16_t param;
    uint8_t flags; /* CHUNK_UNREADABLE, CHUNK_CUT */
    uint64_t addr;
    const uint8_t *bytes;
    size_t len;
};

struct value_ctx {
    const struct pointee *pointees;
    size_t npointees;
    uint16_t param; /* whose pointees apply: the parameter being printed, or CHUNK_RESULT */
    /* names a code or data address (NULL: none known); may be NULL */
    const char *(*symbol)(const void *arg, uint64_t addr, uint64_t *offset);
    const void *symbol_arg;
};

/* Appends the value of type t held in bytes[0..len) to out. */
void value_format(struct text *out, const struct ctype *t, const uint8_t *bytes, size_t len,
                  const struct value_ctx *ctx);

#endif
