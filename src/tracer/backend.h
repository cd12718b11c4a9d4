/* A capture backend: how the calls of a process are caught. The controller (control/) knows
 * processes, threads and their stops, never how calls are captured: it calls a process's
 * backend (struct process: backend) through this table, and the run's backend (struct session:
 * backend) for what concerns every process at once.
 *
 *   breakpoints (tracer/breakpoint/): an int3 at each entry and return site, one stop per event
 *   inject (tracer/inject/): patched entries write events into per-thread rings; what it cannot
 *                            patch gets breakpoints
 *
 * An operation a backend does not need is NULL (the breakpoint table sets only what it does). */
#ifndef CALLTRACE_TRACER_BACKEND_H
#define CALLTRACE_TRACER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/tracee.h"
#include "symbols/elf_image.h"

struct ptrace_stop;

/* An IFUNC's implementation, to trace under name; done once traced. */
struct ifunc_impl {
    uint64_t impl;
    char *name;
    bool done;
    bool lib_call; /* -L: its library's public function, traced at the program's boundary */
};

/* Why calls were captured but not recorded (the closing line names the cause). */
enum drop_cause {
    DROP_RING_FULL,   /* a thread's ring stayed full */
    DROP_SHADOW_FULL, /* calls nested deeper than a thread's shadow stack holds */
    DROP_VFORK,       /* a vfork child, on its parent's rings */
    DROP_UNREADABLE,  /* an event never committed (a handler left a trampoline by longjmp) */
    DROP_STOPPED,     /* events left unread: calltrace was told to stop (SIGINT, -t) */
    DROP_CAUSES,
};

/* What a new thread's first stop means for its process. */
enum start_verdict {
    START_TRACED,         /* traced as it is */
    START_TO_BREAKPOINTS, /* the breakpoints trace it from now until it execs (a forked child) */
};

/* What a new child process means for its parent's backend. */
enum fork_verdict {
    FORK_FOLLOWED, /* traced, by the parent's backend (a vfork child shares its memory) */
    FORK_UNTRACED, /* runs untraced: released at its first stop */
};

struct tracer_backend {
    const char *name;
    /* ptrace options it needs on top of the controller's, asked when attaching (-p) */
    unsigned long attach_options;
    /* single steps that always take a stopped thread out of calltrace's code, at detach */
    int detach_steps;

    /* --- one process (p, or t's), stopped thread via --- */

    /* The executable, loaded at bias: returns the number of functions traced, or -1 when this
     * backend cannot trace it (the controller gives the process to the breakpoints). */
    long (*trace_image)(struct session *s, struct process *p, pid_t via,
                        const struct elf_image *image, uint64_t bias);
    /* -l: a library's functions; returns the number traced, or -1. */
    long (*trace_library)(struct session *s, struct process *p, pid_t via,
                          const struct elf_image *image, uint64_t bias);
    /* -l: the library in [lo, hi) with function ids [func_lo, func_hi) was unloaded: whatever
     * was placed for it is forgotten, never written (its memory may belong to another). */
    void (*forget_library)(struct session *s, struct process *p, uint64_t lo, uint64_t hi,
                           uint32_t func_lo, uint32_t func_hi);
    /* -L: p's caller ranges (its addrspace's) changed. */
    void (*callers_changed)(struct session *s, struct process *p);
    /* Is addr the entry of a function this backend already traces in p under its own name? */
    bool (*patched_at)(const struct session *s, const struct process *p, uint64_t addr);
    /* -l: traces the IFUNC implementations impls[0..n) of image image_id (loaded at bias), each
     * under its IFUNC's name, marking them done. Returns the number traced. */
    long (*trace_ifuncs)(struct session *s, struct process *p, pid_t via, uint32_t image_id,
                         uint64_t bias, struct ifunc_impl *impls, size_t n);
    /* Does it need to know p's libraries even without -l (the inject backend's unwinder hooks)? */
    bool (*watches_libraries)(const struct session *s, const struct process *p);
    /* A library was loaded at bias in p (stopped thread tid). */
    void (*on_library)(struct session *s, struct process *p, pid_t tid, const char *path,
                       uint64_t bias);
    /* A BP_HOOK breakpoint at addr was hit by t at now: true when it was one of its own. */
    bool (*on_hook)(struct session *s, struct thread *t, uint64_t addr, uint64_t now);
    /* A SIGTRAP stop of t at now: returns the signal to resume t with, or -1 to leave it as it
     * is (gone). Every process has breakpoints: both tables have it. */
    int (*on_trap)(struct session *s, struct thread *t, uint64_t now);
    /* Code calltrace runs in the program (an IFUNC resolver) passed a trap at addr: where it
     * goes on, or 0 when the trap is not this backend's (remote/run.h's struct remote_traps;
     * as: the process's struct addrspace). */
    uint64_t (*trap_resume_at)(void *as, uint64_t addr);
    /* calltrace runs code of its own in p's stopped thread t (an IFUNC resolver): before it
     * (done false), and after it (done true), so that the calls that code makes are not
     * recorded as the program's. NULL: nothing to do (a breakpoint's trap records nothing
     * there, see trap_resume_at). */
    void (*own_code)(struct session *s, struct thread *t, bool done);
    /* Before a breakpoint stop of t is handled: the calls t made otherwise come first. */
    void (*before_trap)(struct session *s, struct thread *t);
    /* A breakpoint's function entered with *ret read at rsp: true (and *ret the real return
     * address) when the backend catches that call's return itself. */
    bool (*hooked_return)(const struct session *s, const struct thread *t, uint64_t rsp,
                          uint64_t *ret);
    /* A new thread's first stop. */
    enum start_verdict (*thread_start)(struct session *s, struct thread *t);
    /* t stopped at its exit (PTRACE_EVENT_EXIT: attached sessions ask for it), running no more
     * user code. */
    void (*on_thread_exit)(struct session *s, struct thread *t);
    /* A new thread of parent's process, with the flags of its clone. */
    void (*on_clone)(struct session *s, pid_t tid, unsigned long flags);
    /* A new child process of parent (pid child). */
    enum fork_verdict (*on_fork)(struct session *s, struct thread *parent, pid_t child,
                                 bool is_vfork, bool shares_memory);
    void (*on_vfork_done)(struct session *s, struct thread *parent);
    /* p leaves this backend for the breakpoints, until it execs. */
    void (*on_handover)(struct session *s, struct process *p);
    /* Before calltrace lets go of a child process (--no-follow): nothing of it left in p. */
    void (*release_child)(struct session *s, struct process *p, pid_t tid);
    /* -p, before attach_threads: is pc in code an earlier calltrace left in p (killed while
     * attached), which a thread stopped there must leave first (the controller steps it out)? */
    bool (*in_stale_code)(const struct session *s, const struct process *p, uint64_t pc);
    /* -p: p's functions are traced with every thread stopped: each thread gets what it needs. */
    void (*attach_threads)(struct session *s, struct process *p, pid_t via);

    /* --- every process at once (the run's backend) --- */

    /* The controller's wait for the next stop: false when the backend has nothing to do
     * meanwhile (the controller waits itself), else it waited, returning in *got what
     * ptrace_stop_wait returns (remote/ptrace_stop.h). */
    bool (*wait_stop)(struct session *s, struct ptrace_stop *stop, int *got);
    /* Moves every event captured so far into the recorder; final: even unfinished ones. */
    void (*drain)(struct session *s, bool final);
    /* Leaving attached processes (the threads held[0..nheld) stopped, out of calltrace's code;
     * the others exiting, or waiting for a vfork child among them): what was put in goes, and
     * what it mapped is unmapped unless a frame may still use it. 0, or -1 (said on stderr). */
    int (*detach)(struct session *s, struct thread *const *held, size_t nheld);
    /* For the closing line: calls and returns captured but not recorded. */
    uint64_t (*dropped_calls)(const struct session *s);
    uint64_t (*lost_returns)(const struct session *s);
    /* The dropped calls by cause: by[cause] for each enum drop_cause. */
    void (*drop_causes)(const struct session *s, uint64_t by[DROP_CAUSES]);
    /* Events the program wrote over its side of the tracing with, left out. */
    uint64_t (*corrupt_events)(const struct session *s);

    /* --- the controller's own watch points --- */

    /* A hook at addr in p (the dynamic linker's): the breakpoints' table plants a BP_HOOK
     * breakpoint, and s->on_hook is told when a thread stops there; the inject backend's, for a
     * program that may not get a breakpoint (session_may_break), an in-process hook, and
     * s->on_hook_request is asked when a thread passes there. */
    bool (*insert_hook)(struct session *s, struct process *p, pid_t tid, uint64_t addr);
};

#endif
