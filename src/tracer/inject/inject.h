/* The inject backend (--engine=inject): calltrace keeps ptrace for control only (exec, clone,
 * fork, exits, signals) and records calls inside the program. Each traced function's entry is
 * patched with a jump to a trampoline (arch/x86_64/inject_tramp.h) that writes entry and exit
 * events, with rdtsc, into a per-thread ring in memory shared with calltrace; calltrace drains
 * the rings into the same recorder, through the same shadow-stack rules (tracer/frames.h), as
 * the breakpoint backend. No ptrace stop per call.
 *
 *   calltrace                                     program
 *   memfd ── mapped ── region: header | slot 0 | slot 1 | ...   (the program's memfd,
 *   (pidfd_getfd)                   ctl | shadow stack | ring   created and mapped there)
 *   thread t <── drained events ───────────── fs:[0x80] -> its slot's ctl
 *
 * -A/-R: captured functions enter the trampoline's args path, which copies what their
 * capture table names into the ring (tracer/inject/captures.h, tracer/inject/capture_table.h).
 *
 * -l: each library the dynamic linker maps gets a code region near it with its own copy of the
 * blob, and its entries patched (library.c); control/libraries.c follows the dynamic linker for
 * both backends.
 *
 * Attached (-p, running_threads.c), it patches with every thread stopped; detaching restores every
 * entry and hooked return address. It plants no breakpoint in a program it attached to
 * (session_may_break): what it cannot patch is left out, forked children run free, and the
 * unwinder's and the dynamic linker's entries get hooks in the program itself (entry_hook.c,
 * requests.c), which work on once calltrace is gone; attaching after a calltrace that was killed
 * puts back what that one left (stale_patches.c, running_threads.c). The shadow stacks are private
 * to the program, so a child it forks after calltrace died never returns through its parent's
 * entries.
 *
 * What it does not do falls back or is said: forked children are traced by the breakpoints
 * until they exec (one line), functions it cannot patch safely (too short, a loop head at the
 * entry, a branch into the bytes the jump covers, an unrelocatable prologue) get
 * breakpoints (-v says which and why; their stops come after the thread's ring is
 * drained, so both kinds of calls nest in one stack), IFUNC implementations without a symbol
 * too, programs it cannot handle (static, not glibc, swapcontext) are traced by the
 * breakpoint backend instead. C++ exceptions, thread cancellation and backtrace() cross hooked
 * frames with a stop where the unwinder starts and ends (tracer/inject/unwind.h). */
#ifndef CALLTRACE_TRACER_INJECT_INJECT_H
#define CALLTRACE_TRACER_INJECT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/backend.h"
#include "tracer/tracee.h"
#include "symbols/elf_image.h"

#define INJECT_BUFFER_DEFAULT (8u << 20)
#define INJECT_BUFFER_MIN (64u << 10)
#define INJECT_BUFFER_MAX (1u << 30)

struct inject_engine {
    struct addr_map spaces;     /* pid -> struct inject_space */
    struct addr_map forks;      /* child pid -> struct inject_fork_copy, until it is released */
    struct addr_map shared_tls; /* threads cloned without CLONE_SETTLS, until their first stop */
    size_t ring_size;           /* per thread, a power of two */
    uint64_t drops;             /* calls not recorded, from spaces already gone */
    uint64_t drops_by[DROP_CAUSES]; /* the same by cause, and the events calltrace could not read */
    uint64_t lost_returns;          /* returns not recorded, from spaces already gone */
    uint64_t corrupt_events;        /* events the program wrote that made no sense: left out */
    uint64_t stop_drained;          /* ticks drains took since calltrace was told to stop */
    unsigned region_reads_left;     /* /proc/PID/maps reads the drain of a ring may still make */
    uint64_t tick_step;             /* ticks in a nanosecond, rounded up; 0 until needed */
    struct addr_map capture_tables; /* func id + 1 -> its capture table (-A/-R), as placed */
    struct values_buf *values;      /* the record being decoded from a ring (-A/-R) */
    uint8_t *record;                /* a ring record with data, copied out of the ring */
    uint8_t *tail_values;           /* the return values of a chain of tail calls, until */
    size_t tail_values_len;         /* its last exit ends every call of the chain */
    size_t tail_values_cap;
    pid_t tail_values_tid;
    bool children_noted;
    bool general_drain_only; /* tests: every event through on_event, none through drain_common */
};

/* The inject backend's table (inject_backend.c); its state, struct inject_engine, is the
 * session's inject. */
extern const struct tracer_backend inject_backend;

/* NULL and a message when out of memory. ring_size: --buffer-size, rounded up to a power of 2. */
struct inject_engine *inject_engine_new(size_t ring_size);
void inject_engine_free(struct inject_engine *e);

/* Why the inject engine cannot trace this image yet (static, not glibc, swapcontext), or NULL
 * when it can. */
const char *inject_image_unsupported(const char *path);

/* Sets up the shared region and code in p (stopped thread via; at an exec, all its other
 * threads are gone) and patches the traced functions of image. Returns the number of functions
 * traced, or -1 (nothing patched: the caller falls back to breakpoints). */
long inject_trace_image(struct session *s, struct process *p, pid_t via,
                        const struct elf_image *image, uint64_t bias);

/* -l: patches the traced functions of a library (loaded at bias in p; stopped thread via), in a
 * code region near it; those it cannot patch get breakpoints. Returns the number traced, or -1
 * (nothing done: p has no rings, or no room near the library) for the caller's breakpoints. */
long inject_trace_library(struct session *s, struct process *p, pid_t via,
                          const struct elf_image *image, uint64_t bias);
/* -l: the library in [lo, hi) of p was unloaded: drains the rings, then forgets its patches. */
void inject_forget_library(struct session *s, struct process *p, uint64_t lo, uint64_t hi);
/* -l: patches, under their IFUNC's name, the implementations impls[0..n) that the symbols of the
 * library loaded at bias give an extent to (the others are left for breakpoints), as part of
 * image image_id. Returns the number traced. */
long inject_trace_ifuncs(struct session *s, struct process *p, pid_t via, uint32_t image_id,
                         uint64_t bias, struct ifunc_impl *impls, size_t n);
/* -L: writes p's caller ranges (its addrspace's) where its trampolines read them. */
void inject_callers_changed(struct session *s, struct process *p);
/* Is addr the entry of a function the inject engine patched in p? */
bool inject_patched_at(const struct session *s, const struct process *p, uint64_t addr);
/* -p, once the entries are patched with every thread of p stopped: each gets its control
 * block (attach.c); via: the thread to run system calls in. */
void inject_attach_threads(struct session *s, struct process *p, pid_t via);
bool inject_in_stale_code(const struct session *s, const struct process *p, uint64_t pc);
/* Leaving attached processes, every thread stopped (held[0..nheld)) and out of the injected
 * code: entries and hooked return addresses restored, no trampoline waits for calltrace any
 * more, and what calltrace mapped unmapped unless a frame may still use it (leftovers.h).
 * Returns 0, or -1 (said on stderr). */
int inject_detach(struct session *s, struct thread *const *held, size_t nheld);

/* Answers the requests of the in-process hooks that need calltrace (requests.c): between two
 * passes over the rings. */
void inject_serve_requests(struct session *s);
/* -l, attached: hooks the dynamic linker's _dl_debug_state at addr in the program (every thread
 * stopped, via runs system calls); a thread that passes it asks for s->on_hook_request. */
bool inject_insert_linker_hook(struct session *s, struct process *p, pid_t via, uint64_t addr);

/* Moves every event written so far into the recorder; final: even those whose writer never
 * finished them (counted as dropped), because it will not. */
void inject_drain(struct session *s, bool final);
/* Does a traced process have rings (not every image can be injected)? */
bool inject_has_rings(const struct session *s);
/* Moves t's events (t stopped: all of them) into the recorder, before a breakpoint of t is. */
void inject_drain_thread(struct session *s, struct thread *t);
/* A breakpoint's function entered with ret, read at rsp: when ret is a trampoline's exit (a tail
 * call from a patched function), sets it to the real return address and returns true: the
 * trampoline's exit event ends the call, no return site is needed. */
bool inject_hooked_return(const struct session *s, const struct thread *t, uint64_t rsp,
                          uint64_t *ret);
/* Waits for a ptrace stop while draining the rings; returns like ptrace_stop_wait. */
struct ptrace_stop;
int inject_wait(struct session *s, struct ptrace_stop *stop);

/* The code a killed calltrace left in a program: its stubs and blob copies. */
struct code_range {
    uint64_t lo, hi;
};
struct stale_code {
    struct code_range *v;
    size_t n;
};

/* Attaching: the jumps a killed calltrace left over entries (traced functions, hooks) get the
 * files' bytes back, every thread of p stopped, and the code they led to is added to *old
 * (stale_patches.c). */
void inject_undo_stale_patches(struct process *p, struct stale_code *old);
/* -p, every thread of p stopped: the control blocks an earlier calltrace (killed while attached)
 * left, which threads of p still name, are marked given up, so that a thread waiting in one for
 * room in a ring (which nobody drains now) stops waiting at its next round: stepped out of that
 * code before it gets a block of ours, instead of after up to RING_WAIT_TRIES futex waits. */
void inject_give_up_stale_blocks(struct session *s, struct process *p);
bool stale_code_has(const struct stale_code *old, uint64_t pc);
/* Where a copy of the blob (any calltrace's: it starts with the blob's bytes) starts, if addr is
 * at one of the offsets offs[0..n) into it (its entries, its exits); 0 when none is. */
uint64_t inject_blob_copy_of(const struct process *p, uint64_t addr, const size_t *offs, size_t n);
/* t stopped at its exit: its thread control block marked untraced (threads.c says why). */
void inject_on_thread_exit(struct session *s, struct thread *t);
/* A new thread's first stop: gives it a control block. A forked child's first thread gets its
 * patches out and its rings private instead: START_TO_BREAKPOINTS. */
enum start_verdict inject_thread_start(struct session *s, struct thread *t);
/* A new child process of parent. A forked child gets its patches out and its rings private at
 * its first stop, and is traced by the breakpoints (or released untraced with --no-follow,
 * see inject_release_child); a vfork child's calls, made on its parent's thread control
 * block, are counted but not recorded until vfork_done; an exec gives either its own rings.
 * FORK_UNTRACED: the child must run untraced (a CLONE_VM process that is not a vfork). */
enum fork_verdict inject_on_fork(struct session *s, struct thread *parent, pid_t child,
                                 bool is_vfork, bool shares_memory);
void inject_on_vfork_done(struct session *s, struct thread *parent);
/* A forked child (its patches out, or nothing of calltrace ever in its memory) goes to the
 * breakpoints until it execs: said once. */
void inject_on_handover(struct session *s, struct process *p);
/* A new thread, with the flags of its clone. */
void inject_on_clone(struct session *s, pid_t tid, unsigned long flags);
/* What a forked child needs from its parent's region until its first stop (threads.c). */
struct inject_fork_copy;
void inject_fork_copy_free(struct inject_fork_copy *c);

/* Before calltrace lets go of a child process: its patches out, its rings its own. */
void inject_release_child(struct session *s, struct process *p, pid_t tid);

/* Does the inject engine trace p (rather than the breakpoints)? */
bool inject_traces(const struct session *s, const struct process *p);
/* A library was loaded at bias in p (stopped thread tid): breakpoints where its unwinder starts
 * and ends a walk of the stack, if it has one (tracer/inject/unwind.h). */
void inject_on_library(struct session *s, struct process *p, pid_t tid, const char *path,
                       uint64_t bias);
/* A BP_HOOK breakpoint at addr was hit by t at now: true when it was one of inject_on_library's. */
bool inject_on_hook(struct session *s, struct thread *t, uint64_t addr, uint64_t now);

/* What goes to the breakpoints instead (everything is still traced, only slower): said on
 * stderr, but not with -q (then only with -v). */
void inject_note(const struct session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Calls the trampolines could not record (ring or shadow stack full, signal handlers inside a
 * trampoline, a vfork child's). */
uint64_t inject_dropped_calls(const struct session *s);
void inject_drop_causes(const struct session *s, uint64_t by[DROP_CAUSES]);
/* struct tracer_backend: own_code. The thread's ring is drained before; what calltrace's code
 * wrote into it is skipped after. */
void inject_own_code(struct session *s, struct thread *t, bool done);
/* Returns the trampolines could not record (ring full): their calls are in the trace, ended at
 * the next event that proves them over. */
uint64_t inject_lost_returns(const struct session *s);
/* Events the programs wrote into their rings that made no sense, left out. */
uint64_t inject_corrupt_events(const struct session *s);

#endif
