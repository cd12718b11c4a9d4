/* -A/-R under the inject engine: a captured function's capture plan (symbols/capture_plan.h)
 * turned into the table its trampoline follows (layout in arch/ring_abi.h: which
 * registers, stack bytes and pointees to copy into the ring, how many bytes each may take), and
 * the ring data it wrote turned back into the REC_ARGS / REC_RETVAL record the ptrace engine
 * writes for the same call (tracer/values_record.h). Pure: no process, no I/O.
 *
 *   entry data: len | rdi..r9 | [xmm0-7] | [stack: result, bytes] | reads: result, bytes ...
 *   exit data:  len | rax rdx | [xmm0 xmm1 st(0)] | [hidden: result, bytes] | reads ...
 *   result: the bytes process_vm_readv copied, or -errno; bytes: the read's cap, padded to 8 */
#ifndef CALLTRACE_TRACER_INJECT_CAPTURE_TABLE_H
#define CALLTRACE_TRACER_INJECT_CAPTURE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/values_record.h"
#include "symbols/capture_plan.h"

/* The bytes of plan's table. */
size_t capture_table_size(const struct capture_plan *plan);
/* Fills out[0..capture_table_size) so that a record (event + data) takes at most record_max
 * bytes: the largest pointer reads are cut (their bytes then show as cut) until it does. */
void capture_table_encode(const struct capture_plan *plan, unsigned string_max, size_t record_max,
                          uint8_t *out);

/* The record of the call whose entry (exit) event carried data[0..len) under table, or -1 when
 * the data does not fit the table (a program that wrote over its ring). entry_sp: the slot of the
 * return address, where the function's stack pointer was at its entry. */
int capture_decode_args(struct values_buf *b, pid_t tid, uint32_t func,
                        const struct capture_plan *plan, const uint8_t *table, const uint8_t *data,
                        size_t len, uint64_t entry_sp, unsigned string_max);
int capture_decode_retval(struct values_buf *b, pid_t tid, uint32_t func,
                          const struct capture_plan *plan, const uint8_t *table,
                          const uint8_t *data, size_t len, unsigned string_max);

#endif
