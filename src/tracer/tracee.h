/* The tracing session: every traced process and thread, what the controller (control/) and the
 * capture backends (tracer/breakpoint/, tracer/inject/) both know of each, and where calls go.
 *
 *   session ──> processes (by pid) ──> backend: how its calls are captured
 *          │                       └─> addrspace (shared by vfork/CLONE_VM children until
 *          │                           they exec; copied on fork): breakpoints, scratch
 *          └──> threads (by tid) ──> shadow stack of open calls
 */
#ifndef CALLTRACE_TRACER_TRACEE_H
#define CALLTRACE_TRACER_TRACEE_H

#include <capstone/capstone.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "tracer/frames.h"
#include "tracer/run_stats.h"
#include "symbols/capture_plan.h"
#include "symbols/func_filter.h"
#include "record/clock.h"
#include "record/writer.h"
#include "util/addr_map.h"

struct addrspace;
struct capture_state;
struct inject_engine;
struct tracer_backend;

/* The kernel's struct sigaction for rt_sigaction(2) on x86_64. */
struct kernel_sigaction {
    uint64_t handler;
    uint64_t flags;
    uint64_t restorer;
    uint64_t mask;
};

/* What of the command's options the tracing reads (the command owns them: cmd/record_options.h). */
struct trace_options {
    bool follow_forks;
    /* --attach-breakpoints: with -p, the inject engine's fallbacks are breakpoints too */
    bool attach_breakpoints;
    const char *rank; /* MPI rank, shown in process names; NULL outside MPI */
    struct func_filter filter;
    const char *libs[FUNC_FILTER_MAX]; /* -l: globs on shared objects' names */
    size_t nlibs;
    /* -L: the program's calls into libraries; only the functions matching one of these, when
     * any */
    bool lib_calls;
    const char *lib_call_globs[FUNC_FILTER_MAX];
    size_t nlib_call_globs;
    struct capture_options capture; /* -A, -R, --string-max, --capture */
    bool quiet; /* -q: no closing line, nor notes of what falls back to breakpoints */
    /* --trace-wrappers: an image the wrapper rule passes through is traced (control/wrapper.h) */
    bool trace_wrappers;
    const char *script; /* the "#!" script calltrace was given (its path as exec'd), or NULL */
};

struct process {
    pid_t pid;
    pid_t ppid;
    int mem_fd; /* /proc/PID/mem: one pread/pwrite per access, never PEEK/POKE loops */
    struct addrspace *as;
    /* how its calls are captured: the run's backend; the breakpoints for an image the inject
     * backend cannot trace, or for a forked child of an injected process until it execs */
    const struct tracer_backend *backend;
    unsigned nthreads;
    bool exec_done;  /* the first exec happened: the image is the program, not calltrace */
    bool trap_watch; /* it has a SIGTRAP disposition of its own, see sigtrap_guard.h */
    bool unfollowed; /* --no-follow: recorded nothing, released at its first chance */
    /* forked before calltrace wrote anything into its parent (a fork under way when -p seized
     * it): none of calltrace's code, breakpoints or rings are in its memory; it gets its
     * breakpoints at its first stop (control_trace_untouched) */
    bool untouched;
    struct kernel_sigaction trap_action;
    /* the file name of the image it runs (a forked child's: its parent's), for the line that
     * says which program a wrapper exec'd */
    char image_name[64];
    /* counted in the closing line as traced by the run's engine, and by the breakpoints */
    bool counted_by_engine, counted_by_breakpoints;
};

/* The controller's bookkeeping of a thread's stops while it attaches or detaches, or while the
 * thread waits for its creator to report it. The backends never read it. */
struct thread_hold {
    bool pending_first; /* stopped before its creator reported it: waiting to be adopted */
    int pending_status;
    int status; /* a stop kept while attaching or detaching, handled afterwards */
    /* the new tid of a held clone/fork/vfork stop, read when it was seen: a system call run in
     * the thread meanwhile (to place breakpoints) replaces the kernel's copy with 0 */
    unsigned long event_msg;
    /* that clone/fork/vfork stop was held while attaching: it happened before calltrace wrote
     * into the program, so a forked child has none of it */
    bool untouched;
    bool held; /* detaching: stopped by calltrace, to be released */
};

struct thread {
    pid_t tid;
    struct process *proc;
    struct shadow_stack stack;
    bool started; /* its first stop was seen and it was resumed */
    struct thread_hold hold;
    /* it reported PTRACE_EVENT_EXIT (attached sessions ask for it): it runs no more user code,
     * and it never stops again; the leader stays a zombie as long as other threads live */
    bool exiting;
    /* its last vfork child: until that one execs or exits (its process no longer shares this
     * one's address space), this thread waits in the kernel and cannot stop */
    pid_t vfork_child;
    /* the stack mappings last seen under this thread, to compare sp only within one stack */
    uint64_t region_lo[2], region_hi[2];
    unsigned region_next;
    /* the time of its latest event recorded, when a backend's may be ahead of calltrace's
     * clock (the inject engine's, by up to its drain's allowance): calls still open end no
     * earlier, so that they hold everything recorded inside them */
    uint64_t last_ticks;
};

struct session {
    const struct trace_options *opts;
    struct recorder *rec;
    const struct clock_calibration *clock;
    /* the run's backend, given to every process it starts or attaches to, and the breakpoints,
     * which every process has (the controller's own hooks, the fallbacks): cmd/record.c */
    const struct tracer_backend *backend;
    const struct tracer_backend *breakpoints;
    /* the controller's: a thread passed a BP_HOOK breakpoint at addr (control/libraries.c) */
    void (*on_hook)(struct session *s, struct thread *t, uint64_t addr, uint64_t now);
    /* the same for a running thread t that waits in an in-process hook at addr (attached,
     * control/hook_request.c): it is stopped, served and resumed */
    void (*on_hook_request)(struct session *s, struct thread *t, uint64_t addr, uint64_t now);
    struct inject_engine *inject; /* the inject backend's state (tracer/inject/ only), or NULL */
    csh decoder; /* the machine's instruction decoder, opened by the command (cmd/record.c) */
    struct addr_map threads;   /* tid -> struct thread */
    struct addr_map processes; /* pid -> struct process */
    uint32_t next_func_id;
    uint32_t next_image_id;
    pid_t main_pid;
    int main_status; /* wait status of the first process */
    bool main_done;
    unsigned live_processes;
    volatile sig_atomic_t *stop_signal; /* set by calltrace's own signal handler */
    /* a launched program's -t: this stop signal ends the tracing with a detach, as any stop
     * does when attached, and the program runs on; 0: none */
    int leave_signal;
    bool killing;
    bool attached; /* -p: the program was running before calltrace and must outlive it */
    bool detach_failed;
    bool detaching;      /* new threads stay stopped: they are released with the others */
    uint64_t spin_ticks; /* how long to poll for the next stop before sleeping, 0: never */
    struct run_stats stats;
    struct capture_state *capture; /* NULL without -A/-R */
};

/* May calltrace plant an int3 in the processes of this run? Not in a program it attached to
 * with the inject engine, unless asked (--attach-breakpoints): an int3 kills the program with
 * SIGTRAP once calltrace is gone, and an attached program must outlive calltrace, however
 * calltrace ends (kill -9, the OOM killer). The ptrace engine is made of breakpoints: choosing
 * it is asking for them. */
static inline bool session_may_break(const struct session *s)
{
    return !s->attached || s->opts->attach_breakpoints || s->backend == s->breakpoints;
}

int session_init(struct session *s, const struct trace_options *opts, struct recorder *rec,
                 const struct clock_calibration *clock, volatile sig_atomic_t *stop_signal);
void session_free(struct session *s);

/* A new process, traced by the run's backend (s->backend) unless the caller says otherwise. */
struct process *process_new(struct session *s, pid_t pid, pid_t ppid);
void process_forget(struct session *s, struct process *p);
struct thread *thread_new(struct session *s, struct process *p, pid_t tid);
void thread_forget(struct session *s, struct thread *t);
struct thread *thread_find(struct session *s, pid_t tid);

/* What session_frame_end needs to record a frame's end. */
struct frame_end_ctx {
    struct session *s;
    struct thread *t;
    uint64_t now; /* the ticks the frame ends at */
};

/* Records the end of every open frame of t, with flags, at now. */
void thread_close_frames(struct session *s, struct thread *t, unsigned flags, uint64_t now);
/* The callback frames.c calls for each frame that ends. */
void session_frame_end(void *ctx, const struct frame *frame, unsigned flags);

#endif
