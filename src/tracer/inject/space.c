#include "tracer/inject/space.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/x86_64/inject_tramp.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "tracer/scratch.h"
#include "util/log.h"

/* A remote system call's raw result: -4095..-1 is an errno. */
static bool remote_failed(uint64_t result)
{
    return result >= (uint64_t)-4095;
}

static int remote_call(struct process *p, pid_t via, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t *result)
{
    uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
    if (remote_syscall(process_target(p, via), nr, args, result) < 0)
        return -1;
    if (remote_failed(*result)) {
        errno = (int)-(int64_t)*result;
        return -1;
    }
    return 0;
}

/* The seals calltrace puts on the region's memfd. The program can reach the memfd (through
 * /proc/self/map_files, or /proc/CALLTRACE/fd/N when it runs as calltrace's user) and truncate
 * it: calltrace's next read of the region would be a SIGBUS. Sealed, its size cannot change
 * (the region is made whole at once, sparse, and never grows: a thread beyond its slots runs
 * untraced), and no other seal can be added (F_SEAL_WRITE would fail calltrace's own writes,
 * and punching holes, as space_free_rings does, is left allowed). */
#define REGION_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* Seals the memfd fd, then checks that it is what calltrace made: size bytes, only its seals
 * (the program could have changed it before the seals, in the program's memfd). */
static int seal_region(int fd, size_t size, const char **what)
{
    struct stat st;
    *what = "sealing the region's memfd (F_ADD_SEALS)";
    if (fcntl(fd, F_ADD_SEALS, REGION_SEALS) < 0 || fstat(fd, &st) < 0)
        return -1;
    *what = "the region's memfd, changed by the program before it was sealed";
    if ((uint64_t)st.st_size != size || fcntl(fd, F_GET_SEALS) != REGION_SEALS) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* The region is a memfd the program creates itself and calltrace takes a descriptor of with
 * pidfd_getfd, which asks for no more than the ptrace access calltrace already has: a program
 * of another user (nginx's workers run as www-data) gets it as well as one of calltrace's own.
 * The program maps it and closes its descriptor again: its file table ends as it was, and the
 * memory is charged to the program, whose memory it is. */
static int create_in_program(struct process *p, pid_t via, size_t size, uint64_t name_addr,
                             int *local_fd, uint64_t *remote, const char **what)
{
    static const char name[] = "calltrace-rings";
    uint64_t fd, ignored;
    *what = "writing into the program";
    if (mem_write(p->mem_fd, name_addr, name, sizeof(name)) < 0)
        return -1;
    *what = "memfd_create in the program";
    if (remote_call(p, via, SYS_memfd_create, name_addr, MFD_CLOEXEC | MFD_ALLOW_SEALING, 0, 0, 0,
                    0, &fd) < 0)
        return -1;
    int rc = -1, saved = 0;
    *what = "ftruncate in the program"; /* sparse: only the pages the threads touch take memory */
    if (remote_call(p, via, SYS_ftruncate, fd, size, 0, 0, 0, 0, &ignored) < 0)
        goto out;
    *what = "mmap in the program";
    if (remote_call(p, via, SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, remote) <
        0)
        goto out;
    *what = "pidfd_open";
    int pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    if (pidfd >= 0) {
        *what = "pidfd_getfd";
        *local_fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0);
        saved = errno;
        close(pidfd);
        errno = saved;
    }
    if (pidfd >= 0 && *local_fd >= 0)
        rc = seal_region(*local_fd, size, what);
    if (rc < 0) {
        saved = errno; /* pidfd_open's, pidfd_getfd's or the seals' */
        if (remote_call(p, via, SYS_munmap, *remote, size, 0, 0, 0, 0, &ignored) < 0)
            dbg(DBG_INJECT, 1, "process %d: cannot unmap a region it will not use: %s", (int)p->pid,
                strerror(errno));
        errno = saved;
    }
out:
    saved = errno;
    remote_call(p, via, SYS_close, fd, 0, 0, 0, 0, 0, &ignored);
    errno = saved;
    return rc;
}

/* Without pidfd_getfd (a kernel before 5.6, valgrind): calltrace creates the memfd and the
 * program opens it through /proc/CALLTRACE/fd/N, maps it and closes it again; a program of
 * another user may not open it (then the inject engine cannot trace it). */
static int share_from_calltrace(struct process *p, pid_t via, size_t size, uint64_t path_addr,
                                int *local_fd, uint64_t *remote, const char **what)
{
    char path[64];
    uint64_t fd, ignored;
    *what = "memfd_create";
    if ((*local_fd = memfd_create("calltrace-rings", MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
        return -1;
    *what = "ftruncate";
    int n = snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), *local_fd);
    if (ftruncate(*local_fd, (off_t)size) < 0 || seal_region(*local_fd, size, what) < 0)
        return -1;
    *what = "opening calltrace's memfd in the program";
    if (mem_write(p->mem_fd, path_addr, path, (size_t)n + 1) < 0 ||
        remote_call(p, via, SYS_openat, (uint64_t)AT_FDCWD, path_addr, O_RDWR | O_CLOEXEC, 0, 0, 0,
                    &fd) < 0)
        return -1;
    *what = "mmap in the program";
    int rc =
        remote_call(p, via, SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, remote);
    int saved = errno;
    remote_call(p, via, SYS_close, fd, 0, 0, 0, 0, 0, &ignored);
    errno = saved;
    return rc;
}

struct inject_space *space_new(struct process *p, pid_t via, uint64_t name_addr, size_t ring_size)
{
    struct inject_space *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    sp->pid = p->pid;
    sp->ring_size = ring_size;
    /* the slack: a record with data (-A/-R) that starts near the ring's end runs on past it */
    sp->slot_size = CTL_SIZE + SHADOW_SIZE + ring_size + INJECT_RECORD_MAX;
    sp->size = REGION_HEADER + REGION_SLOTS * sp->slot_size;
    sp->local = MAP_FAILED;
    sp->memfd = -1;
    const char *what;
    if (create_in_program(p, via, sp->size, name_addr, &sp->memfd, &sp->remote, &what) < 0) {
        if (errno != ENOSYS)
            goto fail;
        dbg(DBG_INJECT, 1, "process %d: %s: %s: the program opens calltrace's memfd instead",
            (int)p->pid, what, strerror(errno));
        if (sp->memfd >= 0)
            close(sp->memfd);
        sp->memfd = -1;
        if (share_from_calltrace(p, via, sp->size, name_addr, &sp->memfd, &sp->remote, &what) < 0)
            goto fail;
    }
    what = "mmap";
    sp->local = mmap(NULL, sp->size, PROT_READ | PROT_WRITE, MAP_SHARED, sp->memfd, 0);
    if (sp->local == MAP_FAILED)
        goto fail;
    sp->mem_fd = p->mem_fd;
    return sp;
fail:
    err_msg("inject engine: process %d: %s: %s", (int)p->pid, what, strerror(errno));
    if (sp->local != MAP_FAILED)
        munmap(sp->local, sp->size);
    if (sp->memfd >= 0)
        close(sp->memfd);
    free(sp);
    return NULL;
}

void space_free(struct inject_engine *e, struct inject_space *sp)
{
    for (int i = 0; i < REGION_SLOTS; i++)
        if (sp->slot_tid[i])
            space_slot_release(e, sp, i);
    munmap(sp->local, sp->size);
    close(sp->memfd);
    free(sp->patches);
    free(sp->lib_blobs);
    free(sp->stale.v);
    leftovers_free(sp);
    free(sp);
}

/* Without it, each attachment left the pages its threads had written in the program, for as
 * long as it runs (12 MB an attachment in e2e 28). The control blocks and shadow stacks stay:
 * a trampoline still running after the detach (a signal frame returning into one) reads its
 * control block, which says calltrace gave up, and its shadow stack, for the real return
 * address; what it writes into a ring then lands in a fresh zero page nobody reads. */
void space_free_rings(const struct inject_space *sp)
{
    for (int i = 0; i < REGION_SLOTS; i++) {
        off_t ring = REGION_HEADER + (off_t)i * (off_t)sp->slot_size + CTL_SIZE + SHADOW_SIZE;
        if (fallocate(sp->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, ring,
                      (off_t)(sp->slot_size - CTL_SIZE - SHADOW_SIZE)) < 0) {
            dbg(DBG_INJECT, 1, "process %d: cannot free its rings: %s", (int)sp->pid,
                strerror(errno));
            return;
        }
    }
}

int space_slot_of(const struct inject_space *sp, pid_t tid)
{
    for (int i = 0; i < REGION_SLOTS; i++)
        if (sp->slot_tid[i] == tid)
            return i;
    return -1;
}

/* The shadow stack's indexes, in the program's memory: the slot's thread is stopped. */
static int write_shadow_indexes(const struct inject_space *sp, int slot)
{
    uint64_t shadow = space_ctl_remote(sp, slot) + CTL_SIZE, indexes[3];
    indexes[(CTL_SHADOW_TOP - CTL_SIZE) / 8] = shadow + SHADOW_HEADER;
    indexes[(CTL_SHADOW_END - CTL_SIZE) / 8] = shadow + SHADOW_SIZE;
    indexes[(CTL_SHADOW_BASE - CTL_SIZE) / 8] = shadow + SHADOW_HEADER;
    if (mem_write(sp->mem_fd, shadow, indexes, sizeof(indexes)) < 0) {
        dbg(DBG_INJECT, 1, "process %d: cannot set up a shadow stack: %s", (int)sp->pid,
            strerror(errno));
        return -1;
    }
    return 0;
}

int space_slot_take(struct inject_space *sp, pid_t tid)
{
    int i = -1;
    for (int k = 0; k < REGION_SLOTS && (i < 0 || !sp->slot_private[i]); k++)
        if (!sp->slot_tid[k] && (i < 0 || sp->slot_private[k]))
            i = k;
    if (i < 0)
        return -1;
    uint8_t *ctl = space_ctl(sp, i);
    uint64_t remote = space_ctl_remote(sp, i);
    /* A slot used before goes on from where its ring was: the events of its last thread are
     * still there, and their stamps must not look like those of the next turn. */
    uint64_t pos = space_load(ctl, CTL_HEAD);
    pos = (pos + EVENT_SIZE - 1) / EVENT_SIZE * EVENT_SIZE;
    memset(ctl, 0, CTL_HOOK_ACK + 8);
    space_store(ctl, CTL_HEAD, pos);
    space_store(ctl, CTL_TAIL, pos);
    uint64_t shadow = remote + CTL_SIZE;
    space_store(ctl, CTL_LIMIT, sp->ring_size - EVENT_SIZE);
    space_store(ctl, CTL_MASK, sp->ring_size - 1);
    space_store(ctl, CTL_RING, shadow + SHADOW_SIZE);
    space_store(ctl, CTL_CONSUMER, (uint64_t)getpid());
    space_store(ctl, CTL_PID, (uint64_t)sp->pid);
    space_store(ctl, CTL_PROGRESS, sp->remote + REGION_PROGRESS);
    space_store(ctl, CTL_REGION, sp->remote);
    if (write_shadow_indexes(sp, i) < 0)
        return -1;
    sp->slot_tid[i] = tid;
    sp->slot_fs[i] = 0;
    sp->slot_lender[i] = 0;
    sp->slot_last[i] = 0;
    sp->slot_stuck_at[i] = 0;
    sp->slot_unwinding[i] = 0;
    return i;
}

void space_slot_own(struct inject_space *sp, int slot, struct process *p, pid_t via)
{
    if (slot < 0 || sp->slot_private[slot])
        return;
    uint64_t at = space_ctl_remote(sp, slot) + CTL_SIZE, got;
    if (remote_call(p, via, SYS_mmap, at, SHADOW_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, (uint64_t)-1, 0,
                    &got) < 0) {
        dbg(DBG_INJECT, 1, "process %d: cannot make a shadow stack private: %s", (int)sp->pid,
            strerror(errno));
        return;
    }
    sp->slot_private[slot] = true;
    write_shadow_indexes(sp, slot); /* the new mapping is blank */
}

void space_slot_release(struct inject_engine *e, struct inject_space *sp, int slot)
{
    const uint8_t *ctl = space_ctl(sp, slot);
    e->drops += space_count(ctl, CTL_DROPS);
    e->drops_by[DROP_RING_FULL] += space_count(ctl, CTL_DROPS_FULL);
    e->drops_by[DROP_SHADOW_FULL] += space_count(ctl, CTL_DROPS_SHADOW);
    e->drops_by[DROP_VFORK] += space_count(ctl, CTL_DROPS_VFORK);
    e->lost_returns += space_count(ctl, CTL_LOST_RETURNS);
    sp->slot_tid[slot] = 0;
    sp->slot_fs[slot] = 0;
    sp->slot_lender[slot] = 0;
}

static bool someone_at(const struct inject_patch *pt, const uint64_t *pcs, size_t npcs)
{
    for (size_t i = 0; i < npcs; i++)
        if (pcs[i] >= pt->addr && pcs[i] < pt->addr + pt->len)
            return true;
    return false;
}

int space_restore_patches(int mem_fd, const struct inject_patch *patches, size_t n,
                          const uint64_t *pcs, size_t npcs)
{
    int rc = 0;
    for (int entries = 1; entries >= 0; entries--)
        for (size_t i = n; i-- > 0;) {
            const struct inject_patch *pt = &patches[i];
            if (pt->entry != entries || (pt->hop && someone_at(pt, pcs, npcs)) ||
                mem_write(mem_fd, pt->addr, pt->orig, pt->len) == 0)
                continue;
            /* EIO: nothing mapped there any more, a library unloaded under us (its dlclose
             * not served yet): nothing to put back */
            if (errno != EIO)
                rc = -1;
        }
    return rc;
}

int space_list_copy(struct inject_space *sp, uint64_t code, uint32_t first_func, uint32_t end_func)
{
    uint64_t n = space_load(sp->local, REGION_COPIES);
    if (n >= REGION_COPIES_MAX) {
        dbg(DBG_INJECT, 1,
            "process %d: more than %d copies of the blob: an exception thrown in it through the "
            "calls of the last ones may fail",
            (int)sp->pid, REGION_COPIES_MAX);
        return -1;
    }
    struct region_copy *copy = (struct region_copy *)(sp->local + REGION_COPY) + n;
    *copy = (struct region_copy){code, first_func, end_func};
    space_store(sp->local, REGION_COPIES, n + 1); /* after the entry: the program reads it */
    return 0;
}

int space_add_blob(struct inject_space *sp, uint64_t code, uint32_t first_func, uint32_t end_func)
{
    space_list_copy(sp, code, first_func, end_func);
    struct blob_copy *more = reallocarray(sp->lib_blobs, sp->nlib_blobs + 1, sizeof(*more));
    if (!more)
        return -1;
    sp->lib_blobs = more;
    more[sp->nlib_blobs++] = (struct blob_copy){
        code + inject_blob_exit_off, code + inject_blob_exit_args_off, first_func, end_func};
    return 0;
}

int space_shadow_read(const struct inject_space *sp, int slot, struct shadow_copy *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t shadow = space_ctl_remote(sp, slot) + CTL_SIZE, indexes[3];
    if (mem_read(sp->mem_fd, shadow, indexes, sizeof(indexes)) < 0)
        return -1;
    uint64_t top = indexes[(CTL_SHADOW_TOP - CTL_SIZE) / 8];
    uint64_t base = indexes[(CTL_SHADOW_BASE - CTL_SIZE) / 8];
    if (base != shadow + SHADOW_HEADER || top < base || top - base > SHADOW_SIZE ||
        (top - base) % SHADOW_ENTRY_SIZE)
        return -1;
    out->remote = shadow;
    out->base = base;
    out->depth = (top - base) / SHADOW_ENTRY_SIZE;
    out->entries = malloc(top > base ? top - base : 1);
    if (!out->entries || (top > base && mem_read(sp->mem_fd, base, out->entries, top - base) < 0)) {
        free(out->entries);
        out->entries = NULL;
        return -1;
    }
    return 0;
}
