/* return_slots_swap (tracer/inject/return_slots.c), on this process's own memory: swaps made in their
 * turn (a later swap of a slot sees what an earlier one wrote), a slot that does not hold what
 * is expected left alone, unreadable addresses never written. */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "tracer/inject/return_slots.h"
#include "unit.h"

int main(void)
{
    int mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    CHECK(mem_fd >= 0);
    enum { EXIT_HOOK = 0xe817, RET_A = 0xa, RET_B = 0xb };
    static uint64_t stack[4] = {EXIT_HOOK, EXIT_HOOK, RET_B, 7};
    uint64_t at[4];
    for (int i = 0; i < 4; i++)
        at[i] = (uint64_t)(uintptr_t)&stack[i];
    struct slot_swap unhook[] = {
        {at[0], EXIT_HOOK, EXIT_HOOK}, /* a tail call's entry: shares its caller's slot */
        {at[0], EXIT_HOOK, RET_A},     /* the caller's: the real return address */
        {at[1], EXIT_HOOK, RET_B},
        {at[0], EXIT_HOOK, RET_B}, /* an older entry of the same slot: it holds RET_A by now */
        {at[2], EXIT_HOOK, RET_A}, /* not hooked: left alone */
        {8, EXIT_HOOK, RET_A},     /* unreadable */
    };
    CHECK_EQ_U64(return_slots_swap(getpid(), mem_fd, unhook, 6), 0); /* nothing: one unreadable */
    CHECK_EQ_U64(stack[0], EXIT_HOOK);
    CHECK_EQ_U64(return_slots_swap(getpid(), mem_fd, unhook, 5), 2);
    CHECK_EQ_U64(stack[0], RET_A);
    CHECK_EQ_U64(stack[1], RET_B);
    CHECK_EQ_U64(stack[2], RET_B);
    CHECK_EQ_U64(stack[3], 7);
    struct slot_swap rehook[] = {{at[1], RET_B, EXIT_HOOK}, {at[0], RET_A, EXIT_HOOK}};
    CHECK_EQ_U64(return_slots_swap(getpid(), mem_fd, rehook, 2), 2);
    CHECK_EQ_U64(stack[0], EXIT_HOOK);
    CHECK_EQ_U64(stack[1], EXIT_HOOK);
    CHECK_EQ_U64(return_slots_swap(getpid(), mem_fd, rehook, 0), 0);
    close(mem_fd);
    return unit_finish("return_slots");
}
