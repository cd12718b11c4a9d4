#include "tracer/inject/leftovers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "arch/x86_64/inject_tramp.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "symbols/proc_maps.h"
#include "tracer/inject/space.h"
#include "tracer/scratch.h"
#include "util/log.h"

#define PAGE 4096u

/* A system call in p through thread via; -1 with errno on failure (its own or the run's). */
static int remote(struct process *p, pid_t via, long nr, const uint64_t args[6], uint64_t *result)
{
    uint64_t got = 0;
    if (remote_syscall(process_target(p, via), nr, args, &got) < 0)
        return -1;
    if (got >= (uint64_t)-4095) {
        errno = (int)-(int64_t)got;
        return -1;
    }
    if (result)
        *result = got;
    return 0;
}

static int unmap(struct process *p, pid_t via, uint64_t lo, uint64_t hi)
{
    uint64_t args[6] = {lo, hi - lo};
    if (hi <= lo || remote(p, via, SYS_munmap, args, NULL) == 0)
        return 0;
    dbg(DBG_INJECT, 1, "process %d: cannot unmap %#llx-%#llx: %s", (int)p->pid,
        (unsigned long long)lo, (unsigned long long)hi, strerror(errno));
    return -1;
}

/* Where the ranges a kept header lists start in it: after the copies of the blob. */
static size_t kept_list_off(uint64_t ncopies)
{
    return REGION_COPY + ncopies * COPY_SIZE;
}

/* The exits of the copies of the blob a header lists (the page, as read). */
static uint64_t *copy_exits(const uint8_t *page, size_t *n)
{
    uint64_t ncopies;
    memcpy(&ncopies, page + REGION_COPIES, sizeof(ncopies));
    if (ncopies > REGION_COPIES_MAX)
        ncopies = 0;
    uint64_t *v = calloc(ncopies ? 2 * ncopies : 1, sizeof(*v));
    *n = 0;
    for (uint64_t i = 0; v && i < ncopies; i++) {
        struct region_copy c;
        memcpy(&c, page + REGION_COPY + i * COPY_SIZE, sizeof(c));
        v[(*n)++] = c.base + inject_blob_exit_off;
        v[(*n)++] = c.base + inject_blob_exit_args_off;
    }
    return v;
}

/* The kept set whose header is at header in p; -1 when there is none (no mark: the header of a
 * calltrace that was killed, or no header at all). The program may have written anything
 * there: every count is checked against the page. */
static int read_kept(struct process *p, uint64_t header, struct kept_set *k)
{
    uint8_t page[PAGE];
    uint64_t mark, count, ncopies;
    if (header % PAGE || mem_read(p->mem_fd, header, page, sizeof(page)) < 0)
        return -1;
    memcpy(&mark, page + REGION_KEPT, sizeof(mark));
    memcpy(&count, page + REGION_KEPT_COUNT, sizeof(count));
    memcpy(&ncopies, page + REGION_COPIES, sizeof(ncopies));
    size_t off = kept_list_off(ncopies);
    if (mark != REGION_KEPT_MARK || ncopies > REGION_COPIES_MAX || !count ||
        count > (PAGE - off) / sizeof(struct addr_range))
        return -1;
    *k = (struct kept_set){.header = header};
    k->ranges = calloc(count, sizeof(*k->ranges));
    k->returns = copy_exits(page, &k->nreturns);
    if (!k->ranges || !k->returns) {
        free(k->ranges);
        free(k->returns);
        return -1;
    }
    memcpy(k->ranges, page + off, count * sizeof(*k->ranges));
    k->nranges = count;
    return 0;
}

void leftovers_note(struct process *p, struct inject_space *sp, uint64_t header)
{
    for (size_t i = 0; i < sp->nkept; i++)
        if (sp->kept[i].header == header)
            return;
    struct kept_set k;
    if (read_kept(p, header, &k) < 0)
        return;
    struct kept_set *more = reallocarray(sp->kept, sp->nkept + 1, sizeof(*more));
    if (!more) {
        free(k.ranges);
        free(k.returns);
        return;
    }
    sp->kept = more;
    sp->kept[sp->nkept++] = k;
    dbg(DBG_INJECT, 1, "process %d: an earlier detach kept %zu ranges (header %#llx)", (int)p->pid,
        k.nranges, (unsigned long long)header);
}

/* Every code region of calltrace's starts with a copy of the blob (after the gadget in the
 * first one), whose claim word's address is its region's header. */
void leftovers_find(struct process *p, struct inject_space *sp)
{
    struct mapping_list maps;
    if (maps_read(p->pid, &maps) < 0)
        return;
    for (size_t i = 0; i < maps.count; i++) {
        const struct mapping *m = &maps.maps[i];
        for (uint64_t at = m->start; m->exec && at <= m->start + SCRATCH_GADGET_ROOM;
             at += SCRATCH_GADGET_ROOM) {
            uint8_t head[32];
            uint64_t header;
            if (at + inject_blob_size <= m->end &&
                mem_read(p->mem_fd, at, head, sizeof(head)) == 0 &&
                memcmp(head, inject_blob, sizeof(head)) == 0 &&
                mem_read(p->mem_fd, at + inject_blob_main_ctl_off, &header, sizeof(header)) == 0)
                leftovers_note(p, sp, header);
        }
    }
    maps_free(&maps);
}

const struct kept_set *leftovers_at(const struct inject_space *sp, uint64_t addr)
{
    for (size_t i = 0; i < sp->nkept; i++)
        if (addr_in_ranges(sp->kept[i].ranges, sp->kept[i].nranges, addr))
            return &sp->kept[i];
    return NULL;
}

void leftovers_free(struct inject_space *sp)
{
    for (size_t i = 0; i < sp->nkept; i++) {
        free(sp->kept[i].ranges);
        free(sp->kept[i].returns);
    }
    free(sp->kept);
    sp->kept = NULL;
    sp->nkept = 0;
}

/* The word of a thread's control block that names its block (fs:INJECT_TCB_SLOT), or 0 (also
 * when the thread has no glibc thread control block: calltrace never wrote one there). */
static uint64_t tcb_word(struct process *p, const struct thread_stack *st)
{
    uint64_t w = 0;
    if (!is_glibc_tcb(p, st->tp) ||
        mem_read(p->mem_fd, st->tp + INJECT_TCB_SLOT, &w, sizeof(w)) < 0)
        return 0;
    return w;
}

/* The threads of hs not in keep whose word names a block in [lo, hi), or says untraced (1, when
 * untraced is set), get 0 back: what glibc left there. */
static void clear_words(struct process *p, const struct held_stacks *hs, const bool *keep,
                        uint64_t lo, uint64_t hi, bool untraced)
{
    for (size_t i = 0; i < hs->n; i++) {
        uint64_t w = tcb_word(p, &hs->v[i]), zero = 0;
        if ((keep && keep[i]) || !((w >= lo && w < hi) || (untraced && w == 1)))
            continue;
        if (mem_write(p->mem_fd, hs->v[i].tp + INJECT_TCB_SLOT, &zero, sizeof(zero)) < 0)
            dbg(DBG_INJECT, 1, "thread %d: cannot clear its thread control block's word: %s",
                (int)hs->v[i].tid, strerror(errno));
    }
}

/* The kept sets of earlier detaches that no frame uses any more go. */
static int release_earlier(struct inject_space *sp, struct process *p, const struct held_stacks *hs)
{
    int rc = 0;
    for (size_t i = 0; i < sp->nkept; i++) {
        const struct kept_set *k = &sp->kept[i];
        struct code_set set = {k->ranges, k->nranges, k->returns, k->nreturns};
        if (held_stacks_use(hs, p->mem_fd, &set, "code an earlier calltrace kept"))
            continue;
        for (size_t r = 0; r < k->nranges; r++) {
            clear_words(p, hs, NULL, k->ranges[r].lo, k->ranges[r].hi, false);
            if (unmap(p, hs->via, k->ranges[r].lo, k->ranges[r].hi) < 0)
                rc = -1;
        }
    }
    return rc;
}

/* This attachment's code: its code regions, and the hops that stayed because a thread resumes
 * on one (space_restore_patches); its returns: the exits of every copy of the blob. */
struct current_code {
    struct addr_range *ranges;
    size_t nranges;
    uint64_t *returns;
    size_t nreturns;
};

static int current_code(const struct inject_space *sp, const struct process *p,
                        const struct held_stacks *hs, struct current_code *c)
{
    size_t n = 0;
    for (const struct scratch_chunk *ch = p->as->chunks; ch; ch = ch->next)
        n++;
    c->ranges = calloc(n + sp->npatches + 1, sizeof(*c->ranges));
    c->returns = copy_exits(sp->local, &c->nreturns);
    if (!c->ranges || !c->returns)
        return -1;
    c->nranges = 0;
    for (const struct scratch_chunk *ch = p->as->chunks; ch; ch = ch->next)
        c->ranges[c->nranges++] = (struct addr_range){ch->base, ch->base + ch->size};
    for (size_t i = 0; i < sp->npatches; i++) {
        const struct inject_patch *pt = &sp->patches[i];
        struct addr_range hop = {pt->addr, pt->addr + pt->len};
        bool stayed = false;
        for (size_t t = 0; pt->hop && t < hs->n && !stayed; t++) {
            stayed = addr_in_ranges(&hop, 1, hs->v[t].pc);
            for (size_t r = 0; r < hs->v[t].nrips && !stayed; r++)
                stayed = addr_in_ranges(&hop, 1, hs->v[t].rips[r]);
        }
        if (stayed)
            c->ranges[c->nranges++] = hop;
    }
    return 0;
}

/* Replaces [at, at + len) with private memory holding data[0..dlen) at its start and
 * more[0..more_len) at more_at, the rest 0: filled elsewhere first, then moved over in one call
 * (mremap), so that a calltrace killed halfway leaves either the old pages or the new ones,
 * whole, to a frame that resumes there. */
static int privatize(struct process *p, pid_t via, uint64_t at, uint64_t len, const void *data,
                     size_t dlen, const void *more, uint64_t more_at, size_t more_len)
{
    uint64_t fresh;
    uint64_t map[6] = {
        0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, (uint64_t)-1,
        0};
    if (remote(p, via, SYS_mmap, map, &fresh) < 0)
        return -1;
    uint64_t move[6] = {fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at, 0};
    if (mem_write(p->mem_fd, fresh, data, dlen) < 0 ||
        (more_len && mem_write(p->mem_fd, fresh + more_at, more, more_len) < 0) ||
        remote(p, via, SYS_mremap, move, NULL) < 0) {
        int saved = errno;
        unmap(p, via, fresh, fresh + len);
        errno = saved;
        return -1;
    }
    return 0;
}

/* The slot whose control block ctl is, or -1. */
static int slot_named(const struct inject_space *sp, uint64_t ctl)
{
    if (ctl < sp->remote + REGION_HEADER || ctl >= sp->remote + sp->size ||
        (ctl - sp->remote - REGION_HEADER) % sp->slot_size)
        return -1;
    return (int)((ctl - sp->remote - REGION_HEADER) / sp->slot_size);
}

/* A kept slot, private: its control block as calltrace last saw it, marked given up and naming no
 * process, and its shadow stack's entries (read from the program: it is the program's memory). */
static int keep_slot(const struct inject_space *sp, struct process *p, pid_t via, int slot)
{
    uint64_t ctl = space_ctl_remote(sp, slot), shadow = ctl + CTL_SIZE, top;
    uint8_t block[CTL_SIZE];
    memcpy(block, space_ctl(sp, slot), sizeof(block));
    block[CTL_GAVE_UP] = 1;
    uint64_t nobody = NO_CONSUMER;
    memcpy(block + CTL_CONSUMER, &nobody, sizeof(nobody));
    if (mem_read(p->mem_fd, ctl + CTL_SHADOW_TOP, &top, sizeof(top)) < 0 || top < shadow ||
        top - shadow > SHADOW_SIZE)
        top = shadow;
    size_t used = top - shadow;
    uint8_t *entries = malloc(used ? used : 1);
    int rc = -1;
    if (entries && mem_read(p->mem_fd, shadow, entries, used) == 0)
        rc = privatize(p, via, ctl, sp->slot_size, block, sizeof(block), entries, CTL_SIZE, used);
    free(entries);
    return rc;
}

static int cmp_range(const void *a, const void *b)
{
    const struct addr_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A frame uses this attachment's code: the code regions, the header and the slots of the
 * threads in keep[] stay, private (the header listing them), the rest of the region goes. */
static int keep_pinned(struct inject_space *sp, struct process *p, const struct held_stacks *hs,
                       const bool *keep)
{
    size_t nchunks = 0;
    for (const struct scratch_chunk *ch = p->as->chunks; ch; ch = ch->next)
        nchunks++;
    struct addr_range *ranges = calloc(nchunks + 1 + hs->n, sizeof(*ranges));
    if (!ranges)
        return -1;
    size_t n = 0, first_slot;
    for (const struct scratch_chunk *ch = p->as->chunks; ch; ch = ch->next)
        ranges[n++] = (struct addr_range){ch->base, ch->base + ch->size};
    ranges[n++] = (struct addr_range){sp->remote, sp->remote + REGION_HEADER};
    first_slot = n;
    int rc = 0;
    for (size_t i = 0; i < hs->n; i++) {
        int slot = keep[i] ? slot_named(sp, tcb_word(p, &hs->v[i])) : -1;
        if (slot < 0)
            continue;
        uint64_t lo = space_ctl_remote(sp, slot);
        if (keep_slot(sp, p, hs->via, slot) < 0) {
            dbg(DBG_INJECT, 1, "thread %d: cannot make its control block its own: %s",
                (int)hs->v[i].tid, strerror(errno));
            rc = -1;
        }
        ranges[n++] = (struct addr_range){lo, lo + sp->slot_size};
    }
    qsort(ranges + first_slot, n - first_slot, sizeof(*ranges), cmp_range);
    uint8_t header[REGION_HEADER];
    memcpy(header, sp->local, sizeof(header));
    uint64_t ncopies, gone = 1, mark = REGION_KEPT_MARK, count = n;
    memcpy(&ncopies, header + REGION_COPIES, sizeof(ncopies));
    memcpy(header + REGION_GONE, &gone, sizeof(gone));
    if (ncopies <= REGION_COPIES_MAX &&
        kept_list_off(ncopies) + n * sizeof(*ranges) <= sizeof(header)) {
        memcpy(header + REGION_KEPT, &mark, sizeof(mark));
        memcpy(header + REGION_KEPT_COUNT, &count, sizeof(count));
        memcpy(header + kept_list_off(ncopies), ranges, n * sizeof(*ranges));
    } else {
        dbg(DBG_INJECT, 1, "process %d: too many ranges kept to list: they stay for good",
            (int)p->pid);
    }
    if (privatize(p, hs->via, sp->remote, REGION_HEADER, header, sizeof(header), NULL, 0, 0) < 0)
        rc = -1;
    uint64_t from = sp->remote + REGION_HEADER; /* the rest of the region, around the slots */
    for (size_t i = first_slot; i < n; i++) {
        if (unmap(p, hs->via, from, ranges[i].lo) < 0)
            rc = -1;
        from = ranges[i].hi;
    }
    if (unmap(p, hs->via, from, sp->remote + sp->size) < 0)
        rc = -1;
    free(ranges);
    p->as->chunks_kept = true;
    return rc;
}

int leftovers_release(struct inject_space *sp, struct process *p, const struct held_stacks *hs)
{
    if (!hs->whole || !hs->via) {
        dbg(DBG_INJECT, 1,
            "process %d: a thread could not be looked at: nothing of calltrace's is "
            "unmapped",
            (int)p->pid);
        p->as->chunks_kept = true;
        return 0;
    }
    int rc = release_earlier(sp, p, hs);
    struct current_code c = {0};
    bool *keep = calloc(hs->n ? hs->n : 1, sizeof(*keep));
    if (!keep || current_code(sp, p, hs, &c) < 0) {
        free(keep);
        free(c.ranges);
        free(c.returns);
        p->as->chunks_kept = true;
        return -1;
    }
    struct code_set set = {c.ranges, c.nranges, c.returns, c.nreturns};
    bool any = false;
    for (size_t i = 0; i < hs->n; i++) {
        struct held_stacks one = {.v = &hs->v[i], .n = 1};
        keep[i] = held_stacks_use(&one, p->mem_fd, &set, "calltrace's code");
        any |= keep[i];
    }
    clear_words(p, hs, keep, sp->remote, sp->remote + sp->size, true);
    if (any) {
        if (keep_pinned(sp, p, hs, keep) < 0)
            rc = -1;
    } else {
        if (unmap(p, hs->via, sp->remote, sp->remote + sp->size) < 0)
            rc = -1;
        if (scratch_release(p, hs->via) < 0)
            rc = -1;
    }
    free(keep);
    free(c.ranges);
    free(c.returns);
    return rc;
}
