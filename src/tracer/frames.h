/* Each thread's shadow stack of open calls, and the rules that keep it true to the program's
 * real stack without ever touching that stack.
 *
 * A call is pushed at its entry breakpoint with the stack pointer there (entry_sp, the slot of
 * its return address) and the return address. It is popped when a return-site breakpoint is hit
 * with the stack pointer at entry_sp + 8 (the return address popped) at that return address.
 * Everything else follows from the stack pointer:
 *   - tail call: the callee enters with the same entry_sp as the caller; both end at the one
 *     return, the callee nested in the caller;
 *   - longjmp, exceptions: frames whose slot lies below a later entry's sp were abandoned; they
 *     are closed (marked unwound) when that is first seen;
 *   - signal handlers on an alternate stack: sp comparisons are only made between frames of the
 *     same stack region (identified by the end address of its mapping).
 */
#ifndef CALLTRACE_TRACER_FRAMES_H
#define CALLTRACE_TRACER_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame {
    uint64_t entry_sp;
    uint64_t ret_addr;
    uint64_t region; /* end of the stack mapping holding entry_sp */
    uint64_t ticks;  /* when it started */
    uint32_t func;
    /* The index of the first frame of this one's run: the frames next to each other on one stack
     * (region), their entry_sp never rising from one to the next. A search for a slot or a
     * stack hops from run to run and bisects each: a thread has a run per stack it uses (its
     * own, a signal stack), so no event costs a walk over every open call. */
    uint32_t run_start;
    bool inherited; /* copied into a forked child: not a call the child made */
    bool lib_call;  /* -L: a library's function the program called: what it tail-calls is not */
};

struct shadow_stack {
    struct frame *frames;
    size_t depth;
    size_t cap;
};

/* Receives every frame that ends, innermost first, with EXIT_* flags from record/format.h. */
typedef void (*frame_end_fn)(void *ctx, const struct frame *frame, unsigned flags);

/* A call starts: closes the frames it proves abandoned, then pushes it. -1 when out of memory. */
int frames_enter(struct shadow_stack *stack, const struct frame *call, frame_end_fn end, void *ctx);
/* Only the first half of frames_enter: closes the frames call proves abandoned. */
void frames_close_stale(struct shadow_stack *stack, const struct frame *call, frame_end_fn end,
                        void *ctx);
/* Is call the same frame as the innermost one, re-entered by a jump (a loop whose head is the
 * function's first instruction) rather than by a call? */
bool frames_is_reentry(const struct shadow_stack *stack, const struct frame *call);
/* A return-site breakpoint at addr was hit with the stack pointer at sp. Returns true when it
 * ended one of the thread's calls (and every call above it). */
bool frames_return(struct shadow_stack *stack, uint64_t addr, uint64_t sp, frame_end_fn end,
                   void *ctx);
/* Closes frames index and above, innermost first (their code was unmapped under them). */
void frames_close_from(struct shadow_stack *stack, size_t index, unsigned flags, frame_end_fn end,
                       void *ctx);
/* Closes every open frame (thread or process end). */
void frames_close_all(struct shadow_stack *stack, unsigned flags, frame_end_fn end, void *ctx);
/* The innermost open call whose return address slot is slot, or -1. */
long frames_innermost_at(const struct shadow_stack *stack, uint64_t slot);
/* The runs of frames (a stack each, see struct frame) from the top down, up to most. */
size_t frames_count_runs(const struct shadow_stack *stack, size_t most);
/* The run_start a frame pushed on stack in region gets. */
static inline uint32_t frames_run_start(const struct shadow_stack *stack, uint64_t region)
{
    const struct frame *top = stack->depth ? &stack->frames[stack->depth - 1] : NULL;
    return top && top->region == region ? top->run_start : (uint32_t)stack->depth;
}
/* A copy of src with every frame marked inherited. */
int frames_copy_inherited(struct shadow_stack *dst, const struct shadow_stack *src);
void frames_free(struct shadow_stack *stack);

#endif
