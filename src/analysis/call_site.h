/* Where a call was made from (record --callsites): the source line of the call instruction
 * before a call's return address, from the line table of the image the calling process had
 * that address in. */
#ifndef CALLTRACE_ANALYSIS_CALL_SITE_H
#define CALLTRACE_ANALYSIS_CALL_SITE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/replay.h"
#include "analysis/source_file.h"

/* The line of the call that returns to ret_addr in process pid. false when the address was not
 * recorded (0), is in no image the record named (an untraced library's code), or its image has
 * no line table. */
bool call_site_line(struct source_files *sf, const struct replay *r, uint32_t pid,
                    uint64_t ret_addr, struct source_line *out);

#endif
