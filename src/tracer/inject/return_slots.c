#include "tracer/inject/return_slots.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "remote/memory.h"

/* process_vm_readv/writev take at most this many iovecs per call (UIO_MAXIOV). */
#define IOV_BATCH 1024

/* Sorts by address, and by turn within one address: each slot's swaps become a run. */
struct ordered_swap {
    struct slot_swap swap;
    size_t turn;
};

static int by_addr_then_turn(const void *a, const void *b)
{
    const struct ordered_swap *x = a, *y = b;
    if (x->swap.addr != y->swap.addr)
        return x->swap.addr < y->swap.addr ? -1 : 1;
    return x->turn < y->turn ? -1 : x->turn > y->turn;
}

/* Moves n words between words[] and the addresses addrs[] of pid; a word process_vm_* cannot
 * move (partial transfer) goes through /proc/PID/mem. Returns 0, or -1 when one cannot move. */
static int move_words(pid_t pid, int mem_fd, const uint64_t *addrs, uint64_t *words, size_t n,
                      int write)
{
    struct iovec local[IOV_BATCH], remote[IOV_BATCH];
    int rc = 0;
    for (size_t at = 0; at < n;) {
        size_t k = n - at < IOV_BATCH ? n - at : IOV_BATCH;
        for (size_t i = 0; i < k; i++) {
            local[i] = (struct iovec){&words[at + i], sizeof(uint64_t)};
            remote[i] = (struct iovec){(void *)(uintptr_t)addrs[at + i], sizeof(uint64_t)};
        }
        ssize_t done = write ? process_vm_writev(pid, local, k, remote, k, 0)
                             : process_vm_readv(pid, local, k, remote, k, 0);
        size_t whole = done > 0 ? (size_t)done / sizeof(uint64_t) : 0;
        if (whole == 0) { /* the first word cannot move that way */
            int one = write ? mem_write(mem_fd, addrs[at], &words[at], sizeof(uint64_t))
                            : mem_read(mem_fd, addrs[at], &words[at], sizeof(uint64_t));
            if (one < 0)
                rc = -1;
            whole = 1;
        }
        at += whole;
    }
    return rc;
}

size_t return_slots_swap(pid_t pid, int mem_fd, struct slot_swap *swaps, size_t n)
{
    if (!n)
        return 0;
    struct ordered_swap *order = malloc(n * sizeof(*order));
    uint64_t *addrs = malloc(n * sizeof(*addrs)), *words = malloc(n * sizeof(*words));
    size_t written = 0;
    if (!order || !addrs || !words)
        goto out;
    for (size_t i = 0; i < n; i++)
        order[i] = (struct ordered_swap){swaps[i], i};
    qsort(order, n, sizeof(*order), by_addr_then_turn);
    size_t slots = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || order[i].swap.addr != order[i - 1].swap.addr)
            addrs[slots++] = order[i].swap.addr;
    if (move_words(pid, mem_fd, addrs, words, slots, 0) < 0)
        goto out; /* a slot that cannot be read is not written either */
    size_t changed = 0;
    for (size_t i = 0, slot = 0; i < n; slot++) {
        uint64_t now = words[slot], was = now;
        for (; i < n && order[i].swap.addr == addrs[slot]; i++)
            if (now == order[i].swap.expect)
                now = order[i].swap.want;
        if (now != was) {
            addrs[changed] = addrs[slot];
            words[changed++] = now;
        }
    }
    if (move_words(pid, mem_fd, addrs, words, changed, 1) == 0)
        written = changed;
out:
    free(order);
    free(addrs);
    free(words);
    return written;
}
