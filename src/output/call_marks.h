/* How a call that did not simply return is marked in every trace format: the EXIT_* flags of
 * the record (record/format.h), by the name a viewer shows. */
#ifndef CALLTRACE_OUTPUT_CALL_MARKS_H
#define CALLTRACE_OUTPUT_CALL_MARKS_H

#include "record/format.h"

static const struct call_mark {
    unsigned flag;
    const char *name;
} call_marks[] = {
    {EXIT_UNFINISHED, "unfinished"}, /* still open when its thread or the record ended */
    {EXIT_UNWOUND, "unwound"},       /* left by longjmp or an exception */
    {EXIT_INHERITED, "inherited"},   /* a forked child's copy of its parent's open call */
};

#define CALL_MARKS (sizeof(call_marks) / sizeof(call_marks[0]))

#endif
