/* Function starts from an ELF file's .eh_frame_hdr search table (PT_GNU_EH_FRAME): every
 * function with unwind information, local ones included, which a stripped library's symbol
 * table lacks (libc's IFUNC implementations, __strlen_avx2...).
 *
 *   .eh_frame_hdr: version 1 | eh_frame_ptr enc | fde_count enc | table enc
 *                  eh_frame_ptr | fde_count | {initial_location, fde} x fde_count, sorted
 *
 * Only the encodings every x86_64 toolchain writes are read (pcrel sdata4, udata4, datarel
 * sdata4); another layout is "none found". */
#ifndef CALLTRACE_SYMBOLS_EH_FRAME_HDR_H
#define CALLTRACE_SYMBOLS_EH_FRAME_HDR_H

#include <stdint.h>

/* The link-time start addresses, sorted, in *starts (to free); returns their number, 0 when the
 * file has no table it can read, -1 out of memory. */
long eh_frame_starts(const char *path, uint64_t **starts);

#endif
