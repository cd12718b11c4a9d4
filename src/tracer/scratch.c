#include "tracer/scratch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "arch/x86_64/machine.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "symbols/proc_maps.h"
#include "util/log.h"

#define REACH (1ull << 30) /* stay well inside rel32's 2 GiB */
#define GADGET_SIZE SCRATCH_GADGET_ROOM
_Static_assert(GADGET_SIZE >= ARCH_SYSCALL_GADGET_LEN, "the gadget fits its room");

static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

static struct scratch_chunk *map_chunk(struct process *p, pid_t tid, uint64_t near, size_t size)
{
    struct mapping_list maps;
    if (maps_read(p->pid, &maps) < 0)
        return NULL;
    uint64_t at = maps_find_gap(&maps, near, size, REACH);
    maps_free(&maps);
    if (!at) {
        dbg(DBG_PROBE, 1, "no free address range near %#llx for a scratch page",
            (unsigned long long)near);
        return NULL;
    }
    uint64_t args[6] = {at,
                        size,
                        PROT_READ | PROT_EXEC,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                        (uint64_t)-1,
                        0};
    uint64_t got;
    if (remote_syscall(process_target(p, tid), SYS_mmap, args, &got) < 0 || got != at) {
        dbg(DBG_PROBE, 1, "remote mmap at %#llx failed (%lld)", (unsigned long long)at,
            (long long)got);
        return NULL;
    }
    struct scratch_chunk *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->base = at;
    c->size = size;
    if (!p->as->syscall_gadget) {
        static const uint8_t gadget[GADGET_SIZE] = ARCH_SYSCALL_GADGET;
        if (mem_write(p->mem_fd, at, gadget, sizeof(gadget)) == 0)
            p->as->syscall_gadget = at;
        c->used = GADGET_SIZE;
    }
    c->next = p->as->chunks;
    p->as->chunks = c;
    dbg(DBG_PROBE, 2, "scratch page %#llx-%#llx in %d", (unsigned long long)at,
        (unsigned long long)(at + size), (int)p->pid);
    return c;
}

uint64_t scratch_alloc(struct process *p, pid_t tid, uint64_t near, size_t len, size_t min_chunk)
{
    struct scratch_chunk *c;
    for (c = p->as->chunks; c; c = c->next)
        if (c->size - c->used >= len && distance(c->base, near) < REACH &&
            distance(c->base + c->size, near) < REACH)
            break;
    if (!c) {
        size_t size = (len + GADGET_SIZE > min_chunk ? len + GADGET_SIZE : min_chunk);
        size = (size + 0xfff) & ~(size_t)0xfff;
        c = map_chunk(p, tid, near, size);
        if (!c)
            return 0;
    }
    uint64_t at = c->base + c->used;
    c->used += len;
    return at;
}

static int unmap_chunk(struct process *p, pid_t tid, const struct scratch_chunk *c)
{
    uint64_t args[6] = {c->base, c->size, 0, 0, 0, 0}, got = 0;
    int rc = remote_syscall(process_target(p, tid), SYS_munmap, args, &got);
    if (rc == 0 && got != 0) {
        errno = (int)-(int64_t)got;
        rc = -1;
    }
    if (rc < 0)
        dbg(DBG_PROBE, 1, "process %d: cannot unmap the scratch page %#llx: %s", (int)p->pid,
            (unsigned long long)c->base, strerror(errno));
    return rc;
}

int scratch_release(struct process *p, pid_t tid)
{
    int rc = 0;
    struct scratch_chunk *gadget = NULL;
    while (p->as->chunks) {
        struct scratch_chunk *c = p->as->chunks;
        p->as->chunks = c->next;
        bool has_gadget =
            p->as->syscall_gadget >= c->base && p->as->syscall_gadget < c->base + c->size;
        if (has_gadget) {
            gadget = c;
            continue;
        }
        if (unmap_chunk(p, tid, c) < 0)
            rc = -1;
        free(c);
    }
    if (gadget) {
        p->as->syscall_gadget = 0; /* its own munmap runs on a borrowed one */
        if (unmap_chunk(p, tid, gadget) < 0)
            rc = -1;
        free(gadget);
    }
    return rc;
}
