#include "tracer/frames.h"

#include <stdlib.h>
#include <string.h>

#include "record/format.h"

static void pop(struct shadow_stack *stack, unsigned flags, frame_end_fn end, void *ctx)
{
    const struct frame *top = &stack->frames[--stack->depth];
    end(ctx, top, top->inherited ? flags | EXIT_INHERITED : flags);
}

/* Index of the innermost frame in region, or -1. */
static long innermost_in_region(const struct shadow_stack *stack, uint64_t region)
{
    for (size_t i = stack->depth; i-- > 0;)
        if (stack->frames[i].region == region)
            return (long)i;
    return -1;
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
    stack->frames[stack->depth++] = *call;
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

bool frames_return(struct shadow_stack *stack, uint64_t addr, uint64_t sp, frame_end_fn end,
                   void *ctx)
{
    uint64_t slot = sp - 8; /* the return popped its return address */
    size_t i = stack->depth;
    while (i-- > 0) {
        const struct frame *f = &stack->frames[i];
        if (f->entry_sp == slot && f->ret_addr == addr)
            break;
        if (f->entry_sp > slot && f->region == stack->frames[stack->depth - 1].region)
            return false; /* past the returning slot on the same stack: not one of ours */
    }
    if (i == (size_t)-1)
        return false;
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
