#include "tracer/frames.h"

#include <stdlib.h>
#include <string.h>

#include "record/format.h"

static void pop(struct shadow_stack *stack, unsigned flags, frame_end_fn end, void *ctx)
{
    const struct frame *top = &stack->frames[--stack->depth];
    end(ctx, top, top->inherited ? flags | EXIT_INHERITED : flags);
}

/* The first frame of the run frame i ends (see struct frame). */
static size_t run_start_of(const struct shadow_stack *stack, size_t i)
{
    size_t start = stack->frames[i].run_start;
    return start <= i ? start : i;
}

/* In the run [start, last] (entry_sp never rising with the index): the innermost frame whose
 * entry_sp is at least slot, or start - 1 when none is. */
static long run_last_at_or_above(const struct frame *frames, size_t start, size_t last,
                                 uint64_t slot)
{
    size_t lo = start, hi = last + 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (frames[mid].entry_sp >= slot)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

/* Index of the innermost frame in region, or -1. */
static long innermost_in_region(const struct shadow_stack *stack, uint64_t region)
{
    for (size_t top = stack->depth; top > 0; top = run_start_of(stack, top - 1))
        if (stack->frames[top - 1].region == region)
            return (long)top - 1;
    return -1;
}

long frames_innermost_at(const struct shadow_stack *stack, uint64_t slot)
{
    for (size_t top = stack->depth; top > 0;) {
        size_t start = run_start_of(stack, top - 1);
        long k = run_last_at_or_above(stack->frames, start, top - 1, slot);
        if (k >= (long)start && stack->frames[k].entry_sp == slot)
            return k;
        top = start;
    }
    return -1;
}

size_t frames_count_runs(const struct shadow_stack *stack, size_t most)
{
    size_t n = 0;
    for (size_t top = stack->depth; top > 0 && n < most; top = run_start_of(stack, top - 1))
        n++;
    return n;
}

/* Frames of another stack above the innermost frame of this one were left by a signal handler
 * that did not return normally (siglongjmp out of a handler on an alternate stack). */
static void close_other_regions(struct shadow_stack *stack, uint64_t region, frame_end_fn end,
                                void *ctx)
{
    long k = innermost_in_region(stack, region);
    if (k < 0)
        return; /* first call on this stack: a handler interrupting the frames below */
    while ((long)stack->depth - 1 > k)
        pop(stack, EXIT_UNWOUND, end, ctx);
}

static bool is_stale_for(const struct frame *top, const struct frame *call)
{
    if (top->region != call->region)
        return false;
    if (top->entry_sp < call->entry_sp)
        return true; /* its return slot is above the live stack: already gone */
    if (top->entry_sp > call->entry_sp)
        return false; /* a real caller */
    /* Same slot. A tail call reuses the caller's return address; a call made after the frame
     * was abandoned wrote a new one. A function "tail calling" itself through its entry is a
     * new call to it (a loop back to the entry, or a call after an unwind). */
    return top->ret_addr != call->ret_addr || top->func == call->func;
}

void frames_close_stale(struct shadow_stack *stack, const struct frame *call, frame_end_fn end,
                        void *ctx)
{
    close_other_regions(stack, call->region, end, ctx);
    while (stack->depth && is_stale_for(&stack->frames[stack->depth - 1], call))
        pop(stack, EXIT_UNWOUND, end, ctx);
}

int frames_enter(struct shadow_stack *stack, const struct frame *call, frame_end_fn end, void *ctx)
{
    frames_close_stale(stack, call, end, ctx);
    if (stack->depth == stack->cap) {
        size_t cap = stack->cap ? stack->cap * 2 : 64;
        struct frame *frames = reallocarray(stack->frames, cap, sizeof(*frames));
        if (!frames)
            return -1;
        stack->frames = frames;
        stack->cap = cap;
    }
    struct frame *f = &stack->frames[stack->depth];
    *f = *call;
    f->run_start = frames_run_start(stack, call->region);
    stack->depth++;
    return 0;
}

bool frames_is_reentry(const struct shadow_stack *stack, const struct frame *call)
{
    if (!stack->depth)
        return false;
    const struct frame *top = &stack->frames[stack->depth - 1];
    return top->func == call->func && top->entry_sp == call->entry_sp &&
           top->ret_addr == call->ret_addr && top->region == call->region;
}

/* Searches run by run (see struct frame) what a walk from the innermost frame down would find:
 * the first frame of that slot and return address, unless a frame past the slot on the
 * innermost frame's stack comes first. Frames of one slot on one stack are next to each other
 * and have one return address (frames_close_stale), so each run has one candidate. */
bool frames_return(struct shadow_stack *stack, uint64_t addr, uint64_t sp, frame_end_fn end,
                   void *ctx)
{
    uint64_t slot = sp - 8; /* the return popped its return address */
    if (!stack->depth)
        return false;
    uint64_t region_now = stack->frames[stack->depth - 1].region;
    long found = -1;
    for (size_t top = stack->depth; top > 0 && found < 0;) {
        size_t start = run_start_of(stack, top - 1);
        const struct frame *first = &stack->frames[start];
        long k = run_last_at_or_above(stack->frames, start, top - 1, slot);
        if (k >= (long)start && stack->frames[k].entry_sp == slot &&
            stack->frames[k].ret_addr == addr)
            found = k;
        else if (first->entry_sp > slot && first->region == region_now)
            return false; /* past the returning slot on the same stack: not one of ours */
        top = start;
    }
    if (found < 0)
        return false;
    size_t i = (size_t)found;
    /* A chain of tail calls shares the slot: the return ends its outermost frame too. */
    while (i > 0 && stack->frames[i - 1].entry_sp == slot && stack->frames[i - 1].ret_addr == addr)
        i--;
    uint64_t region = stack->frames[i].region;
    while (stack->depth > i + 1) {
        const struct frame *top = &stack->frames[stack->depth - 1];
        /* tail-called frames share the slot and end normally with it */
        bool tail = top->entry_sp == slot && top->region == region;
        pop(stack, tail ? 0 : EXIT_UNWOUND, end, ctx);
    }
    pop(stack, 0, end, ctx);
    return true;
}

void frames_close_from(struct shadow_stack *stack, size_t index, unsigned flags, frame_end_fn end,
                       void *ctx)
{
    while (stack->depth > index)
        pop(stack, flags, end, ctx);
}

void frames_close_all(struct shadow_stack *stack, unsigned flags, frame_end_fn end, void *ctx)
{
    while (stack->depth)
        pop(stack, flags, end, ctx);
}

int frames_copy_inherited(struct shadow_stack *dst, const struct shadow_stack *src)
{
    memset(dst, 0, sizeof(*dst));
    if (!src->depth)
        return 0;
    dst->frames = reallocarray(NULL, src->depth, sizeof(*dst->frames));
    if (!dst->frames)
        return -1;
    memcpy(dst->frames, src->frames, src->depth * sizeof(*dst->frames));
    for (size_t i = 0; i < src->depth; i++)
        dst->frames[i].inherited = true;
    dst->depth = dst->cap = src->depth;
    return 0;
}

void frames_free(struct shadow_stack *stack)
{
    free(stack->frames);
    memset(stack, 0, sizeof(*stack));
}
