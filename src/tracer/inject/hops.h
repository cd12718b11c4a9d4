/* Hops: the 5-byte jumps a 2-byte jump reaches, in the padding between functions.
 *
 * A function too short for a 5-byte jump (or whose third byte is a branch target) gets a 2-byte
 * jmp rel8 instead, to a hop within 128 bytes, which jumps on to its stub; a branch of its body
 * back to its entry (a loop whose head is the entry) gets one to its relocated first
 * instructions. The hops go in the alignment padding after a function whose last instruction
 * never falls through (nops or int3s that nothing branches to and no function starts in), the
 * way static rewriters reach functions a jump cannot cover (E9Patch's trampoline hops):
 *
 *   F:       jmp rel8 H         <- 2 bytes over F's first instruction(s) (rest: int3)
 *            ...rest of F...
 *   G:       ...; ret
 *   H:       jmp F_stub         <- 5 bytes of G's padding
 *            nop...
 *
 * Pure bookkeeping of the room, here; patch.c finds the padding and writes the jumps. */
#ifndef CALLTRACE_TRACER_INJECT_HOPS_H
#define CALLTRACE_TRACER_INJECT_HOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOP_LEN 5   /* jmp rel32 */
#define HOP_REACH 2 /* jmp rel8 (or jcc rel8) */
#define PATCH_PAGE 4096

/* Would len bytes written at addr cross a page? No patch, hop or hook may: a SIGKILL of
 * calltrace can end a write to the program's memory between two pages (patch.c, write_pages). */
static inline bool crosses_page(uint64_t addr, size_t len)
{
    return addr / PATCH_PAGE != (addr + len - 1) / PATCH_PAGE;
}

struct hop_gap {
    uint64_t lo, hi; /* padding [lo, hi) */
    uint64_t next;   /* its first byte not yet taken */
};

struct hop_gaps {
    struct hop_gap *v;
    size_t n, cap;
};

/* Notes the padding [lo, hi); -1 when out of memory. Call hop_gaps_sort before taking. */
int hop_gaps_add(struct hop_gaps *g, uint64_t lo, uint64_t hi);
void hop_gaps_sort(struct hop_gaps *g);
/* [lo, hi) is taken by something else (a jump that covers the padding after a short function). */
void hop_gaps_reserve(struct hop_gaps *g, uint64_t lo, uint64_t hi);
/* Is a byte of [lo, hi) taken (by a hop, or reserved)? */
bool hop_gaps_taken(const struct hop_gaps *g, uint64_t lo, uint64_t hi);
/* A HOP_LEN slot that a rel8 branch whose next instruction is at next_ip reaches, within one page,
 * taken; 0 when there is none. */
uint64_t hop_take(struct hop_gaps *g, uint64_t next_ip);
void hop_gaps_free(struct hop_gaps *g);

#endif
