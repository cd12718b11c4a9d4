/* A minimal assertion kit for unit tests: each failed check prints where and why, and the test
 * exits non-zero when any failed. */
#ifndef CALLTRACE_TESTS_UNIT_H
#define CALLTRACE_TESTS_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failures;
static int unit_checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        unit_checks++;                                                                             \
        if (!(cond)) {                                                                             \
            unit_failures++;                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b);           \
        unit_checks++;                                                                             \
        if (va_ != vb_) {                                                                          \
            unit_failures++;                                                                       \
            fprintf(stderr, "%s:%d: %s == %#llx, expected %#llx\n", __FILE__, __LINE__, #a, va_,   \
                    vb_);                                                                          \
        }                                                                                          \
    } while (0)

static inline int unit_finish(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, unit_checks, unit_failures);
    return unit_failures ? 1 : 0;
}

#endif
