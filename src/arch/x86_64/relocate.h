/* Relocation of the one instruction an int3 displaces, so it can run out of line.
 *
 *   original code                       scratch page (near the code, within +-2 GiB)
 *   addr:   cc  <- int3 over byte 0     ool:  <the instruction, re-encoded for ool>
 *           .. rest of instruction            jmp addr+len        (unless it never falls through)
 *   addr+len: next instruction  <-----------'
 *
 * After the breakpoint stop the tracer sets rip to ool (or, for instructions that only move
 * rip, straight to their target), so the breakpoint never has to be lifted and no thread can
 * run past it. */
#ifndef CALLTRACE_ARCH_X86_64_RELOCATE_H
#define CALLTRACE_ARCH_X86_64_RELOCATE_H

#include <capstone/capstone.h>
#include <stddef.h>
#include <stdint.h>

#define RELOC_MAX_CODE 64
#define X86_MAX_INSN 15

enum reloc_kind {
    RELOC_OUT_OF_LINE, /* run code[] at the out-of-line address */
    RELOC_JUMP,        /* no code needed: continue at resume (endbr64, nop, jmp rel) */
};

struct relocation {
    enum reloc_kind kind;
    uint64_t resume;
    size_t insn_len;
    size_t code_len;
    uint8_t code[RELOC_MAX_CODE];
};

/* A capstone handle in 64-bit mode with instruction details on; 0 or -1. */
int x86_decoder_open(csh *handle);
void x86_decoder_close(csh *handle);

/* Relocates the instruction at addr (its bytes in code[0..avail)) to run at ool.
 * Returns 0, or -1 with *why naming what cannot be relocated. */
int x86_relocate(csh handle, const uint8_t *code, size_t avail, uint64_t addr, uint64_t ool,
                 struct relocation *out, const char **why);

/* Relocates the whole instructions at addr that cover at least min_len bytes (a leading endbr64
 * is dropped) into out, to run at ool and continue at addr + *covered. Only the last of them may
 * branch (it is relocated as x86_relocate does); a ret or jmp ends the block early, *covered
 * then may be less than min_len. Returns 0, or -1 with *why. */
int x86_relocate_prologue(csh handle, const uint8_t *code, size_t avail, uint64_t addr,
                          size_t min_len, uint64_t ool, uint8_t *out, size_t out_max,
                          size_t *out_len, size_t *covered, const char **why);

#endif
