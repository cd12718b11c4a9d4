/* The shadow stack rules: returns, tail calls, longjmp, exceptions, alternate signal stacks. */
#include <stdint.h>

#include "tracer/frames.h"
#include "record/format.h"
#include "unit.h"

struct ended {
    uint32_t func[64];
    unsigned flags[64];
    int n;
};

static void on_end(void *ctx, const struct frame *f, unsigned flags)
{
    struct ended *e = ctx;
    e->func[e->n] = f->func;
    e->flags[e->n] = flags;
    e->n++;
}

#define MAIN_STACK 0x7fff00000000ull
#define ALT_STACK 0x7fff10000000ull

static void enter(struct shadow_stack *s, struct ended *e, uint32_t func, uint64_t sp, uint64_t ret,
                  uint64_t region)
{
    struct frame f = {.entry_sp = sp, .ret_addr = ret, .region = region, .func = func};
    CHECK(frames_enter(s, &f, on_end, e) == 0);
}

static void test_nested_returns(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    CHECK(!frames_return(&s, 0xa, 0x0f08, on_end, &e)); /* wrong address for that slot */
    CHECK(frames_return(&s, 0xb, 0x0f08, on_end, &e));
    CHECK(frames_return(&s, 0xa, 0x1008, on_end, &e));
    CHECK_EQ_U64(e.n, 2);
    CHECK_EQ_U64(e.func[0], 2);
    CHECK_EQ_U64(e.func[1], 1);
    CHECK_EQ_U64(e.flags[0] | e.flags[1], 0);
    CHECK_EQ_U64(s.depth, 0);
    frames_free(&s);
}

static void test_tail_call_chain_ends_together(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x1000, 0xa, MAIN_STACK); /* 1 jumps to 2 */
    enter(&s, &e, 3, 0x1000, 0xa, MAIN_STACK); /* 2 jumps to 3 */
    CHECK_EQ_U64(s.depth, 3);
    CHECK(frames_return(&s, 0xa, 0x1008, on_end, &e));
    CHECK_EQ_U64(e.n, 3);
    CHECK_EQ_U64(e.func[0], 3);
    CHECK_EQ_U64(e.func[2], 1);
    CHECK_EQ_U64(e.flags[0] | e.flags[1] | e.flags[2], 0);
    frames_free(&s);
}

static void test_longjmp_frames_are_unwound_at_next_entry(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    enter(&s, &e, 3, 0x0e00, 0xc, MAIN_STACK);
    /* longjmp back into 1, which calls 4 from a slot above the abandoned ones */
    enter(&s, &e, 4, 0x0f00, 0xd, MAIN_STACK);
    CHECK_EQ_U64(e.n, 2);
    CHECK_EQ_U64(e.func[0], 3);
    CHECK_EQ_U64(e.func[1], 2);
    CHECK_EQ_U64(e.flags[0] & e.flags[1], EXIT_UNWOUND);
    CHECK_EQ_U64(s.depth, 2);
    frames_free(&s);
}

static void test_same_function_same_slot_is_a_new_call(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    /* 2 threw; 1 caught and calls 2 again from the same site */
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    CHECK_EQ_U64(e.n, 1);
    CHECK_EQ_U64(e.flags[0], EXIT_UNWOUND);
    CHECK_EQ_U64(s.depth, 2);
    frames_free(&s);
}

static void test_handler_on_alternate_stack(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    /* a handler runs on an alternate stack at higher addresses: nothing below is abandoned */
    enter(&s, &e, 9, 0x5000, 0xe, ALT_STACK);
    CHECK_EQ_U64(e.n, 0);
    CHECK(frames_return(&s, 0xe, 0x5008, on_end, &e));
    CHECK_EQ_U64(s.depth, 2);
    /* and a handler left by siglongjmp is closed when the main stack calls again */
    enter(&s, &e, 9, 0x5000, 0xe, ALT_STACK);
    enter(&s, &e, 5, 0x0e00, 0xf, MAIN_STACK);
    CHECK_EQ_U64(e.n, 2);
    CHECK_EQ_U64(e.func[1], 9);
    CHECK_EQ_U64(e.flags[1], EXIT_UNWOUND);
    CHECK_EQ_U64(s.depth, 3);
    frames_free(&s);
}

static void test_inherited_frames_are_marked(void)
{
    struct shadow_stack parent = {0}, child;
    struct ended e = {0};
    enter(&parent, &e, 1, 0x1000, 0xa, MAIN_STACK);
    CHECK(frames_copy_inherited(&child, &parent) == 0);
    frames_close_all(&child, EXIT_UNFINISHED, on_end, &e);
    CHECK_EQ_U64(e.n, 1);
    CHECK_EQ_U64(e.flags[0], EXIT_UNFINISHED | EXIT_INHERITED);
    frames_free(&parent);
    frames_free(&child);
}

static void test_deep_recursion(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    for (uint64_t i = 0; i < 100000; i++)
        enter(&s, &e, 1, 0x10000000 - i * 32, 0xa, MAIN_STACK);
    CHECK_EQ_U64(s.depth, 100000);
    int matched = 0;
    for (uint64_t i = 100000; i-- > 0;)
        matched += frames_return(&s, 0xa, 0x10000000 - i * 32 + 8, on_end, &(struct ended){0});
    CHECK_EQ_U64(matched, 100000);
    frames_free(&s);
}

static uint64_t on_end_count;
static void count_end(void *ctx, const struct frame *f, unsigned flags)
{
    (void)ctx, (void)f, (void)flags;
    on_end_count++;
}

/* Returns and searches across stacks: each run of frames (a stack) is searched on its own,
 * and what a walk from the innermost frame down finds is what they find. */
static void test_searches_across_stacks(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    enter(&s, &e, 1, 0x1000, 0xa, MAIN_STACK);
    enter(&s, &e, 2, 0x0f00, 0xb, MAIN_STACK);
    enter(&s, &e, 3, 0x0f00, 0xb, MAIN_STACK); /* 2 tail-called 3 */
    enter(&s, &e, 9, 0x0500, 0xe, ALT_STACK);  /* a handler, on a stack below */
    enter(&s, &e, 8, 0x0400, 0xd, ALT_STACK);
    CHECK_EQ_U64(frames_count_runs(&s, 16), 2);
    CHECK_EQ_U64(frames_count_runs(&s, 1), 1);
    CHECK_EQ_U64(s.frames[4].run_start, 3);
    CHECK_EQ_U64(s.frames[2].run_start, 0);
    CHECK_EQ_U64(frames_innermost_at(&s, 0x0f00), 2);
    CHECK_EQ_U64(frames_innermost_at(&s, 0x0500), 3);
    CHECK(frames_innermost_at(&s, 0x0f08) == -1);
    CHECK(frames_innermost_at(&s, 0x6000) == -1);
    /* past the returning slot on the innermost frame's stack: not one of ours */
    CHECK(!frames_return(&s, 0xe, 0x0458, on_end, &e));
    CHECK_EQ_U64(s.depth, 5);
    /* siglongjmp out of the handler, then a return on the main stack: the chain of 2 and 3
     * ends, the handler's frames are closed as unwound */
    CHECK(frames_return(&s, 0xb, 0x0f08, on_end, &e));
    CHECK_EQ_U64(s.depth, 1);
    CHECK_EQ_U64(e.n, 4);
    CHECK_EQ_U64(e.func[0], 8);
    CHECK_EQ_U64(e.flags[0] & e.flags[1], EXIT_UNWOUND);
    CHECK_EQ_U64(e.func[2], 3);
    CHECK_EQ_U64(e.flags[2] | e.flags[3], 0);
    /* the outermost frame, found below a new run of the handler's */
    enter(&s, &e, 9, 0x0500, 0xe, ALT_STACK);
    CHECK_EQ_U64(s.frames[1].run_start, 1);
    CHECK(frames_return(&s, 0xa, 0x1008, on_end, &e));
    CHECK_EQ_U64(s.depth, 0);
    frames_free(&s);
}

/* Returns that match no open call under a deep stack, as a program that writes over its ring
 * makes: each is a search of a run, not a walk over every frame (200000 of them against
 * 200000 frames took minutes; a run's bisection takes milliseconds). */
static void test_bad_returns_cost_no_walk(void)
{
    struct shadow_stack s = {0};
    struct ended e = {0};
    for (uint64_t i = 0; i < 200000; i++)
        enter(&s, &e, 1, 0x10000000 - i * 16, 0xa, MAIN_STACK);
    for (int i = 0; i < 200000; i++) {
        CHECK(!frames_return(&s, 0xa, 0x20000000, count_end, NULL));
        CHECK(frames_innermost_at(&s, 0x20000000) == -1);
    }
    CHECK_EQ_U64(on_end_count, 0);
    CHECK_EQ_U64(s.depth, 200000);
    /* and one that does match ends the frames above it */
    CHECK(frames_return(&s, 0xa, 0x10000000 - 100 * 16 + 8, count_end, NULL));
    CHECK_EQ_U64(s.depth, 100);
    frames_free(&s);
}

int main(void)
{
    test_nested_returns();
    test_tail_call_chain_ends_together();
    test_longjmp_frames_are_unwound_at_next_entry();
    test_same_function_same_slot_is_a_new_call();
    test_handler_on_alternate_stack();
    test_inherited_frames_are_marked();
    test_deep_recursion();
    test_searches_across_stacks();
    test_bad_returns_cost_no_walk();
    return unit_finish("frames");
}
