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

#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_image.h"

/* The link-time start addresses, sorted, in *starts (to free); returns their number, 0 when the
 * file has no table it can read, -1 out of memory. */
long eh_frame_starts(const char *path, uint64_t **starts);

/* image's functions (the same indexes), then one per range of its unwind table (a start up to
 * the next, within its segment) and one for each segment's code before its first start, all
 * named "": with them, a function without a symbol has an extent, and a scan of them all sees
 * every branch of the text. NULL (and *n untouched) when the file has no unwind table. The
 * names are image's: free only the array. */
struct func_symbol *eh_frame_ranges(const struct elf_image *image, size_t *n);

#endif
