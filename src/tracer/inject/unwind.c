/* Unwinding through hooked frames: the real return addresses are back in the stack while
 * libgcc's unwinder walks it (see unwind.h for when and why). */
#include "tracer/inject/unwind.h"

#include <stddef.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/x86_64/inject_tramp.h"
#include "arch/x86_64/machine.h"
#include "tracer/inject/entry_hook.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/return_slots.h"
#include "tracer/inject/space.h"
#include "tracer/addrspace.h"
#include "tracer/breakpoint/breakpoints.h"
#include "remote/memory.h"
#include "symbols/elf_image.h"
#include "util/log.h"

static const struct {
    const char *name;
    enum unwind_hook_kind kind;
} unwinder_entries[] = {
    {"_Unwind_RaiseException", UNWIND_HOOK_THROW}, {"_Unwind_Resume_or_Rethrow", UNWIND_HOOK_THROW},
    {"_Unwind_ForcedUnwind", UNWIND_HOOK_THROW},   {"_Unwind_Resume", UNWIND_HOOK_RESUME},
    {"_Unwind_Backtrace", UNWIND_HOOK_WALK},       {"__cxa_begin_catch", UNWIND_HOOK_CATCH},
};
#define NENTRIES (sizeof(unwinder_entries) / sizeof(*unwinder_entries))

static struct inject_space *space_of(struct session *s, pid_t pid)
{
    return s->inject ? addr_map_get(&s->inject->spaces, (uint64_t)pid) : NULL;
}

bool inject_traces(const struct session *s, const struct process *p)
{
    return s->inject && addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
}

static enum unwind_hook_kind hook_kind(const struct inject_space *sp, uint64_t addr)
{
    for (size_t i = 0; i < sp->nunwind_hooks; i++)
        if (sp->unwind_hooks[i].addr == addr)
            return sp->unwind_hooks[i].kind;
    return 0;
}

/* What an in-process hook does (arch/ring_abi.h HOOK_*) where the breakpoint of kind would
 * stop the thread: an unwinding resumed after a cleanup puts the real return addresses back as
 * one that starts does (in the program that costs nothing, and no stop can wait for a later
 * need); a stack walk cannot be hooked where it returns (that return address is the walk's
 * first frame), so its calls' returns are lost. */
static int inprocess_kind(enum unwind_hook_kind kind)
{
    return kind == UNWIND_HOOK_CATCH  ? HOOK_CATCH
           : kind == UNWIND_HOOK_WALK ? HOOK_WALK
                                      : HOOK_UNHOOK;
}

/* Attached, with no breakpoint allowed (session_may_break): the unwinder's entries get
 * in-process hooks, which work on after calltrace is gone. */
static bool add_inprocess_hook(struct session *s, struct process *p, struct inject_space *sp,
                               pid_t tid, uint64_t addr, enum unwind_hook_kind kind,
                               const char *name)
{
    if (hook_kind(sp, addr))
        return true;
    const char *why = sp->nunwind_hooks == UNWIND_HOOKS_MAX
                          ? "too many hooks"
                          : inject_hook_entry(s, p, sp, tid, addr, inprocess_kind(kind));
    if (why) {
        dbg(DBG_INJECT, 1, "process %d: cannot hook %s in the program: %s", (int)p->pid, name, why);
        return false;
    }
    sp->unwind_hooks[sp->nunwind_hooks++] = (struct unwind_hook){addr, kind};
    dbg(DBG_INJECT, 1, "process %d: %s hooked in the program", (int)p->pid, name);
    return true;
}

static bool add_hook(struct session *s, struct process *p, struct inject_space *sp, pid_t tid,
                     uint64_t addr, enum unwind_hook_kind kind)
{
    const struct breakpoint *bp = breakpoint_at(p->as, addr);
    enum unwind_hook_kind known = hook_kind(sp, addr);
    if (known && bp && (bp->kinds & BP_HOOK))
        return true;
    /* not there any more: its library was unloaded, and what is mapped there now is another */
    if ((!known && sp->nunwind_hooks == UNWIND_HOOKS_MAX) || !probe_insert_hook(s, p, tid, addr))
        return false;
    if (!known)
        sp->unwind_hooks[sp->nunwind_hooks++] = (struct unwind_hook){addr, kind};
    for (size_t i = 0; i < sp->nunwind_hooks; i++)
        if (sp->unwind_hooks[i].addr == addr)
            sp->unwind_hooks[i].kind = kind;
    return true;
}

void inject_on_library(struct session *s, struct process *p, pid_t tid, const char *path,
                       uint64_t bias)
{
    struct inject_space *sp = space_of(s, p->pid);
    if (!sp)
        return;
    const char *names[NENTRIES];
    uint64_t at[NENTRIES];
    for (size_t i = 0; i < NENTRIES; i++)
        names[i] = unwinder_entries[i].name;
    if (elf_lookup_symbols(path, names, at, NENTRIES) < 0)
        return;
    bool inprocess = !session_may_break(s);
    for (size_t i = 0; i < NENTRIES; i++) {
        if (!at[i])
            continue;
        if (inprocess) {
            if (!add_inprocess_hook(s, p, sp, tid, at[i] + bias, unwinder_entries[i].kind,
                                    names[i]))
                err_msg("warning: --engine=inject: process %d: cannot watch %s in %s: an "
                        "exception or stack walk through traced calls may fail",
                        (int)p->pid, names[i], path);
            continue;
        }
        if (unwinder_entries[i].kind == UNWIND_HOOK_RESUME) { /* see need_resume_hooks */
            if (sp->nresume_addrs < UNWIND_RESUME_MAX)
                sp->resume_addrs[sp->nresume_addrs++] = at[i] + bias;
            continue;
        }
        if (!add_hook(s, p, sp, tid, at[i] + bias, unwinder_entries[i].kind))
            err_msg("warning: --engine=inject: process %d: cannot watch %s in %s: an exception "
                    "or stack walk through traced calls may fail; use --engine=ptrace",
                    (int)p->pid, names[i], path);
        else
            dbg(DBG_INJECT, 1, "%s: %s watched", path, names[i]);
    }
}

/* The thread's shadow stack, read from the program (its private memory), and its control
 * block in the shared region. */
struct shadow_view {
    int slot;
    uint8_t *ctl;
    struct shadow_entry *base; /* a copy, to free */
    size_t depth;
    uint64_t remote; /* the shadow stack in the program: its indexes, then the entries */
    uint64_t remote_base;
};

static bool shadow_of(const struct inject_space *sp, pid_t tid, struct shadow_view *v)
{
    struct shadow_copy copy;
    int slot = space_slot_of(sp, tid);
    if (slot < 0 || space_shadow_read(sp, slot, &copy) < 0)
        return false; /* the program wrote over it: leave its stack alone */
    v->slot = slot;
    v->ctl = space_ctl(sp, slot);
    v->base = (struct shadow_entry *)copy.entries;
    v->depth = copy.depth;
    v->remote = copy.remote;
    v->remote_base = copy.base;
    return true;
}

/* The trampoline exit a shadow entry's call returns through: the -A/-R path marks its entries
 * (bit 32 of the function word) and has an exit of its own, and each library its blob. */
static uint64_t exit_of(const struct exit_set *hooks, const struct shadow_entry *e)
{
    return exit_set_exit_of(hooks, (uint32_t)e->func, (e->func >> 32) & 1);
}

/* Swaps the return address slots of the live entries (slot at or above thread_sp; their ret not a
 * trampoline exit: a tail call's entry shares its caller's slot), newest first, from the exit to
 * their real return address (unhook) or back (rehook). */
static void swap_entries(struct process *p, const struct exit_set *hooks,
                         const struct shadow_entry *base, size_t depth, uint64_t thread_sp,
                         bool unhook)
{
    struct slot_swap *swaps = malloc((depth ? depth : 1) * sizeof(*swaps));
    if (!swaps) {
        err_msg("inject engine: out of memory");
        return;
    }
    size_t n = 0;
    for (size_t i = depth; i-- > 0;) {
        const struct shadow_entry *e = &base[i];
        if (exit_set_has(hooks, e->ret) || e->slot < thread_sp)
            continue;
        uint64_t hook = exit_of(hooks, e);
        swaps[n++] = unhook ? (struct slot_swap){e->slot, hook, e->ret}
                            : (struct slot_swap){e->slot, e->ret, hook};
    }
    return_slots_swap(p->pid, p->mem_fd, swaps, n);
    free(swaps);
}

/* Every live hooked call of a thread returns to its real address. */
static void unhook_entries(struct process *p, const struct exit_set *hooks,
                           const struct shadow_entry *base, size_t depth, uint64_t thread_sp)
{
    swap_entries(p, hooks, base, depth, thread_sp, true);
}

static void unhook_returns(struct process *p, const struct inject_space *sp,
                           const struct shadow_view *v, uint64_t thread_sp)
{
    struct exit_set hooks = space_exit_set(sp);
    unhook_entries(p, &hooks, v->base, v->depth, thread_sp);
}

void inject_unhook_inherited(struct process *p, pid_t tid, const struct exit_set *hooks,
                             const void *shadow, size_t len)
{
    arch_regs regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return;
    unhook_entries(p, hooks, shadow, len / SHADOW_ENTRY_SIZE, arch_sp(&regs));
}

/* Writes the exit event of e into the stopped thread's ring, as blob_exit would have. */
static void write_exit(struct session *s, struct inject_space *sp, const struct shadow_view *v,
                       const struct shadow_entry *e, uint64_t now)
{
    struct ring_view rv = space_ring_view(sp, v->ctl);
    if (ring_is_full(&rv))
        inject_drain(s, false);
    struct inject_event ev = {
        .tsc = now, .slot = e->slot, .ret = e->ret, .func = (uint32_t)e->func | INJECT_EVENT_EXIT};
    if (!ring_append(&rv, &ev)) {
        space_store(v->ctl, CTL_DROPS, space_load(v->ctl, CTL_DROPS) + 1);
        space_store(v->ctl, CTL_DROPS_FULL, space_load(v->ctl, CTL_DROPS_FULL) + 1);
    }
}

/* The walk is over, the thread is at reached with live_sp, and the frames below live_sp are
 * gone: their entries go, without an exit, and the calls that are left return through the
 * trampoline again. Except that when reached is the return address of the outermost call gone,
 * with its stack pointer (a handler whose landing pad follows a call that never returns
 * normally, a traced function that tail-called _Unwind_Backtrace), the ptrace engine sees that
 * call return there, and so must this one. now: the stop's ticks, the exit's time. */
static void rehook_returns(struct session *s, struct process *p, struct inject_space *sp,
                           struct shadow_view *v, uint64_t live_sp, uint64_t reached, uint64_t now)
{
    size_t depth = v->depth;
    while (depth > 0 && v->base[depth - 1].slot < live_sp)
        depth--;
    if (depth != v->depth) {
        const struct shadow_entry *outermost = &v->base[depth];
        if (reached && outermost->ret == reached && outermost->slot + 8 == live_sp)
            write_exit(s, sp, v, outermost, now);
        uint64_t top = v->remote_base + depth * SHADOW_ENTRY_SIZE;
        if (mem_write(p->mem_fd, v->remote + CTL_SHADOW_TOP - CTL_SIZE, &top, sizeof(top)) < 0)
            dbg(DBG_INJECT, 1, "process %d: cannot pop unwound calls: %s", (int)p->pid,
                strerror(errno));
        v->depth = depth;
    }
    struct exit_set hooks = space_exit_set(sp);
    swap_entries(p, &hooks, v->base, depth, live_sp, false);
}

/* The exception class of libstdc++'s exceptions (the Itanium C++ ABI's __cxa_exception), and of
 * those std::rethrow_exception throws (__cxa_dependent_exception): "GNUCC++\0", "GNUCC++\1". */
#define GXX_EXCEPTION_CLASS 0x474e5543432b2b00ull
#define GXX_DEPENDENT_EXCEPTION_CLASS 0x474e5543432b2b01ull
/* Where, before the _Unwind_Exception header, the personality keeps the handler's landing pad
 * from the search phase to the cleanup phase (catchTemp, then adjustedPtr, then the header). */
#define GXX_CATCH_TEMP_OFFSET 16

/* The landing pad of the handler __cxa_begin_catch is called from, or 0 when unknown (not a C++
 * exception: a forced unwind caught by catch (...)). */
static uint64_t landing_pad(const struct process *p, uint64_t unwind_header)
{
    uint64_t cls, pad;
    if (mem_read(p->mem_fd, unwind_header, &cls, sizeof(cls)) < 0 ||
        (cls != GXX_EXCEPTION_CLASS && cls != GXX_DEPENDENT_EXCEPTION_CLASS) ||
        mem_read(p->mem_fd, unwind_header - GXX_CATCH_TEMP_OFFSET, &pad, sizeof(pad)) < 0)
        return 0;
    return pad;
}

/* _Unwind_Resume continues an unwinding after a cleanup (a destructor) ran; the return addresses
 * are still real then, unless the cleanup hooked them again: it caught an exception of its own,
 * or walked the stack. Only then does _Unwind_Resume need a stop, from then on. */
static void need_resume_hooks(struct session *s, struct process *p, struct inject_space *sp,
                              const struct shadow_view *v, pid_t tid)
{
    if (!sp->slot_unwinding[v->slot] || sp->resume_hooked)
        return;
    sp->resume_hooked = true;
    dbg(DBG_INJECT, 1,
        "process %d: a cleanup caught an exception or walked the stack: "
        "_Unwind_Resume watched from now on",
        (int)p->pid);
    for (size_t i = 0; i < sp->nresume_addrs; i++)
        if (!add_hook(s, p, sp, tid, sp->resume_addrs[i], UNWIND_HOOK_RESUME))
            err_msg("warning: --engine=inject: process %d: cannot watch _Unwind_Resume: an "
                    "exception through traced calls may fail; use --engine=ptrace",
                    (int)p->pid);
}

/* Where _Unwind_Backtrace returns to, entered with thread_sp: the real address when a traced
 * function called it by a tail call (the slot then holds blob_exit), or 0. */
static uint64_t walk_return(const struct process *p, const struct inject_space *sp,
                            const struct shadow_view *v, uint64_t thread_sp)
{
    uint64_t ret;
    if (mem_read(p->mem_fd, thread_sp, &ret, sizeof(ret)) < 0)
        return 0;
    struct exit_set hooks = space_exit_set(sp);
    for (size_t i = v->depth; exit_set_has(&hooks, ret) && i-- > 0;)
        if (v->base[i].slot == thread_sp && !exit_set_has(&hooks, v->base[i].ret))
            ret = v->base[i].ret;
    return exit_set_has(&hooks, ret) ? 0 : ret;
}

bool inject_on_hook(struct session *s, struct thread *t, uint64_t addr, uint64_t now)
{
    struct process *p = t->proc;
    struct inject_space *sp = space_of(s, p->pid);
    enum unwind_hook_kind kind = sp ? hook_kind(sp, addr) : 0;
    if (!kind)
        return false;
    arch_regs regs;
    struct shadow_view v;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0 || !shadow_of(sp, t->tid, &v))
        return true;
    switch (kind) {
    case UNWIND_HOOK_THROW:
        sp->slot_unwinding[v.slot]++;
        unhook_returns(p, sp, &v, arch_sp(&regs));
        break;
    case UNWIND_HOOK_RESUME:
        unhook_returns(p, sp, &v, arch_sp(&regs));
        break;
    case UNWIND_HOOK_WALK: {
        /* hooked again where it returns; if that cannot be, the walk stops at the first hooked
         * frame, but every traced call still returns through calltrace */
        uint64_t ret = walk_return(p, sp, &v, arch_sp(&regs));
        if (ret && add_hook(s, p, sp, t->tid, ret, UNWIND_HOOK_WALK_DONE))
            unhook_returns(p, sp, &v, arch_sp(&regs));
        else
            dbg(DBG_INJECT, 1, "process %d: cannot watch the return of _Unwind_Backtrace at %#llx",
                (int)p->pid, (unsigned long long)ret);
        break;
    }
    case UNWIND_HOOK_WALK_DONE:
        rehook_returns(s, p, sp, &v, arch_sp(&regs), addr, now);
        need_resume_hooks(s, p, sp, &v, t->tid);
        break;
    case UNWIND_HOOK_CATCH: /* its return address is in the handler's frame */
        if (sp->slot_unwinding[v.slot])
            sp->slot_unwinding[v.slot]--;
        rehook_returns(s, p, sp, &v, arch_sp(&regs) + ARCH_RETURN_ADDR_SIZE,
                       landing_pad(p, arch_int_arg(&regs, 0)), now);
        need_resume_hooks(s, p, sp, &v, t->tid);
        break;
    }
    free(v.base);
    return true;
}
