/* stack_signal_rips (tracer/stack_scan.c) against the kernel's own signal frames: handlers run
 * on an alternate stack this test owns, one interrupting the other, and the rips it finds there
 * must be exactly the ones the kernel hands each handler in its ucontext. Words that are not a
 * frame (zeros, a pattern of every byte value, a frame with its code segment changed) find
 * none. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "tracer/stack_scan.h"
#include "unit.h"

#define ALT_SIZE (256u << 10)

static uint64_t *alt;
static volatile uint64_t rip_outer, rip_inner;
static uint64_t found[8];
static size_t nfound;

static void on_inner(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    rip_inner = (uint64_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    /* both frames are on the alternate stack now: the outer one above this one */
    nfound = stack_signal_rips(alt, ALT_SIZE / 8, (uint64_t)(uintptr_t)alt, found, 8);
}

static void on_outer(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    rip_outer = (uint64_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    raise(SIGUSR2);
}

static void handle(int sig, void (*fn)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

int main(void)
{
    alt = calloc(1, ALT_SIZE);
    CHECK(alt != NULL);
    stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE};
    CHECK(sigaltstack(&ss, NULL) == 0);
    handle(SIGUSR1, on_outer);
    handle(SIGUSR2, on_inner);
    raise(SIGUSR1);
    CHECK_EQ_U64(nfound, 2);
    CHECK_EQ_U64(found[0], rip_inner); /* the lower address: the newer frame */
    CHECK_EQ_U64(found[1], rip_outer);

    /* Once the handlers returned, their frames are still in the buffer: a copy of one, moved,
     * still reads as one; with another code segment, not. */
    uint64_t words[512];
    memset(words, 0, sizeof(words));
    CHECK_EQ_U64(stack_signal_rips(words, 512, 0x1000, found, 8), 0);
    for (size_t i = 0; i < sizeof(words); i++)
        ((uint8_t *)words)[i] = (uint8_t)i;
    CHECK_EQ_U64(stack_signal_rips(words, 512, 0x1000, found, 8), 0);
    size_t at = 0; /* where the outer frame's restorer address is */
    for (size_t i = 1; i + 64 <= ALT_SIZE / 8 && !at; i++)
        if (stack_signal_rips(alt + i, 64, (uint64_t)(uintptr_t)(alt + i), found, 1) == 1 &&
            found[0] == rip_outer)
            at = i;
    CHECK(at != 0);
    memset(words, 0, sizeof(words));
    memcpy(words, alt + at, 64 * sizeof(*words)); /* the frame is near the top of alt */
    uint64_t moved = 0x7f0000000000;
    for (size_t i = 0; i < 64; i++) /* its fp state pointer: as far above the copy */
        if (words[i] > (uint64_t)(uintptr_t)(alt + at) &&
            words[i] < (uint64_t)(uintptr_t)(alt + at) + 65536)
            words[i] = words[i] - (uint64_t)(uintptr_t)(alt + at) + moved;
    CHECK_EQ_U64(stack_signal_rips(words, 64, moved, found, 8), 1);
    CHECK_EQ_U64(found[0], rip_outer);
    for (size_t i = 0; i + 2 < 64; i++)
        if (words[i] == rip_outer && (words[i + 2] & 0xffff) == 0x33)
            words[i + 2] ^= 0x33 ^ 0x23; /* the cs of a 32-bit process */
    CHECK_EQ_U64(stack_signal_rips(words, 64, moved, found, 8), 0);
    free(alt);
    return unit_finish("stack_scan");
}
