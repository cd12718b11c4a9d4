/* The functions of a file that has no symbol table (a stripped executable or library, and no
 * debug file found), from its unwind information: every FDE of .eh_frame (symbols/eh_frame.h)
 * that is the code of a function a call enters, with its exact extent.
 *
 * An FDE also covers code that no call enters; such an FDE is left out:
 *   - the PLT (.plt, .plt.got, .plt.sec), .init and .fini: the linker's and the C runtime's;
 *     the program's entry point (_start) and signal frames (the 'S' augmentation);
 *   - code entered in the middle of a frame ("mid-frame"): the CFA at its first instruction is
 *     not rsp+8 with the return address at CFA-8, the state the call instruction leaves. That is
 *     every .cold part that gcc split out of a function after its prologue (the hot part jumps
 *     there with its registers pushed), and hand-written code with other CFI;
 *   - the rest of gcc's .cold parts, split from a point where the function had pushed nothing:
 *     their entry state is a function's. They are code only ever jumped to (no call rel32 in
 *     the text lands on it, its address is taken nowhere: no rip-relative lea, no pointer in the
 *     data or in a relocation, no absolute 32-bit value in a non-PIE's text; a rel32 jump from
 *     other code does land on it) that also jumps into the middle of other code (back into its
 *     function), which no function does, or never leaves on its own (no ret, no tail jump: it
 *     ends in a call of abort). Code only jumped to that does return is a function reached by
 *     tail jumps alone, and traced.
 * The calls, jumps and addresses are searched as bytes at every offset, not decoded (decoding a
 * whole text costs about a second): a false match can only keep an FDE as a function. Against
 * the symbols of Debian 12's libc (its debug file), this leaves out its 92 .cold parts (86 of
 * them mid-frame) and one function, __libc_main, which is jumped to and never returns. */
#ifndef CALLTRACE_SYMBOLS_UNWIND_FUNCS_H
#define CALLTRACE_SYMBOLS_UNWIND_FUNCS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elf_image.h"

struct unwind_func {
    uint64_t addr; /* link-time */
    uint64_t size;
};

/* What was left out, for -v. */
struct unwind_census {
    size_t fdes;         /* all of them */
    size_t not_program;  /* PLT, .init, .fini, the entry point, signal frames */
    size_t mid_frame;    /* the CFA at the first instruction is not a call's */
    size_t jumped_only;  /* entered by jumps alone, and part of other code */
    size_t outside_code; /* not within an executable segment */
};

/* The functions of elf (image: its segments and entry point) from its FDEs, sorted, in *out (to
 * free). named[0..nnamed): sorted addresses that have a symbol (.dynsym), functions whatever
 * their unwind information says. Returns their number, 0 when elf has no .eh_frame, -1 out of
 * memory. */
long unwind_funcs_read(Elf *elf, const struct elf_image *image, const uint64_t *named,
                       size_t nnamed, struct unwind_func **out, struct unwind_census *census);

/* The addresses that rip-relative leas in elf's code [start, start + size) compute (what an IFUNC
 * resolver may return), searched as bytes, sorted, in *out (to free). Returns their number, or -1
 * out of memory. */
long unwind_lea_targets(Elf *elf, uint64_t start, uint64_t size, uint64_t **out);

#endif
