/* The FDEs of an ELF file's .eh_frame section: one per piece of code with unwind information,
 * each with its exact extent [start, start + size). gcc and rustc write one for every function
 * (and one for each .cold part split out of one), the linker one for the PLT.
 *
 *   .eh_frame:  { length | CIE id 0 | version | augmentation "zR"... | code and data alignment
 *                 | return column | augmentation data (R: the FDEs' pointer encoding,
 *                 S: a signal frame, P: personality, L: LSDA) | instructions }      a CIE
 *               { length | CIE pointer | pc_begin | pc_range | augmentation data
 *                 | instructions }                                                  an FDE
 *               ... | length 0 (the end)
 *
 * The section comes from the file being traced, which anyone may have written: every length
 * and offset is checked, a record that does not parse ends the walk (the FDEs before it are
 * kept). Pointer encodings read: absptr, udata2/4/8, sdata2/4/8, absolute or pcrel; any other
 * FDE is left out. */
#ifndef CALLTRACE_SYMBOLS_EH_FRAME_H
#define CALLTRACE_SYMBOLS_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_extent {
    uint64_t start; /* link-time */
    uint64_t size;
    bool signal_frame; /* its CIE has the 'S' augmentation: a signal trampoline, never called */
};

/* The FDEs of the .eh_frame section whose len bytes are at data, loaded at the link-time address
 * vaddr, sorted by start (duplicates and empty ones left out) in *out (to free). Returns their
 * number, or -1 out of memory. */
long eh_frame_fdes(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_extent **out);

#endif
