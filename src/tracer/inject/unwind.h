/* Stack walks across hooked frames under the inject engine. A hooked call's return address
 * slot holds the trampoline's exit (blob_exit), which has no unwind information: an unwinder
 * reading the stack there would stop (backtrace) or call std::terminate (an exception). So
 * calltrace stops the thread, with an ordinary breakpoint of the ptrace engine, where libgcc's
 * unwinder starts a walk, puts the real return addresses back for it, and hooks the calls that
 * survive the walk again where it ends:
 *
 *   _Unwind_RaiseException, _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind
 *        ──> every live hooked slot of the thread gets its real return address
 *   _Unwind_Resume (after a cleanup) ──> the same, once a cleanup has caught an exception of its
 *        own or walked the stack (so hooked again) in the process: until then, no stop
 *   __cxa_begin_catch (the handler runs, its frame's sp = rsp + 8)
 *        ──> shadow entries below that sp were unwound: popped, no exit (the drain ends them as
 *            it ends frames longjmp abandoned, like the ptrace engine); the others hooked again
 *   _Unwind_Backtrace ──> real return addresses; a breakpoint where it returns hooks them again
 *
 * A forced unwind (pthread_cancel, pthread_exit) ends the thread: nothing to hook again. An
 * exception nobody catches ends in std::terminate. The breakpoints go in whichever loaded object
 * defines those functions (libgcc_s, libstdc++), found through the dynamic linker's list at
 * start-up and at every dlopen (control/libraries.c). Two stops per exception (throw, catch) and
 * per backtrace (call, return): the cost of a traced call does not change.
 *
 * Attached (no breakpoint allowed, session_may_break), the same entries are hooked in the
 * program itself (entry_hook.h, inject_blob_hook in arch/x86_64/inject_tramp.S), which does the
 * unhooking and rehooking above on its own, calltrace there or gone: _Unwind_Resume always
 * unhooks, and _Unwind_Backtrace, whose return cannot be hooked in the program (it is the walk's
 * first frame), pops the calls it walks through, their returns counted lost.
 *
 * Why not unwind information for blob_exit (__register_frame)? Its CFI would have to find the
 * real return address in the thread's shadow stack, which only fs:[INJECT_TCB_SLOT] leads to,
 * and a DWARF expression cannot read fs (libgcc's unwinder knows registers 0-16 only); searching
 * every thread's shadow stack from an expression would be slow and racy, and the frames would
 * have to be registered in each unwinder (libgcc_s loaded late, static copies). */
#ifndef CALLTRACE_TRACER_INJECT_UNWIND_H
#define CALLTRACE_TRACER_INJECT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct process;

#define UNWIND_HOOKS_MAX 32

#define UNWIND_RESUME_MAX 4

enum unwind_hook_kind {
    UNWIND_HOOK_THROW = 1, /* an unwinding starts: real return addresses back */
    UNWIND_HOOK_RESUME,    /* it goes on after a cleanup: the same, only if needed (unwind.c) */
    UNWIND_HOOK_CATCH,     /* a handler starts: the survivors hooked again */
    UNWIND_HOOK_WALK,      /* _Unwind_Backtrace: real return addresses until it returns */
    UNWIND_HOOK_WALK_DONE, /* where it returns to: hooked again */
};

struct unwind_hook {
    uint64_t addr;
    enum unwind_hook_kind kind;
};

/* A forked child, stopped (thread tid), leaves the inject engine: the calls it inherited from the
 * thread that forked, hooked in the parent (shadow: a copy of that thread's shadow stack, len
 * bytes), return to their real addresses, so that the child can unwind through them too. */
struct exit_set;
void inject_unhook_inherited(struct process *p, pid_t tid, const struct exit_set *hooks,
                             const void *shadow, size_t len);

#endif
