/* The inject engine (--engine=inject): calltrace keeps ptrace for control only (exec, clone,
 * fork, exits, signals) and records calls inside the program. Each traced function's entry is
 * patched with a jump to a trampoline (arch/x86_64/inject_tramp.h) that writes entry and exit
 * events, with rdtsc, into a per-thread ring in memory shared with calltrace; calltrace drains
 * the rings into the same recorder, through the same shadow-stack rules (engine/frames.h), as
 * the ptrace engine. No ptrace stop per call.
 *
 *   calltrace                                     program
 *   memfd ── mapped ── region: header | slot 0 | slot 1 | ...   (mapped too, via
 *                                   ctl | shadow stack | ring   /proc/CALLTRACE/fd/N)
 *   thread t <── drained events ───────────── fs:[0x80] -> its slot's ctl
 *
 * Attached (-p, attach.c), it patches with every thread stopped; detaching restores every
 * entry and hooked return address. The shadow stacks are private to the program, so a child it
 * forks after calltrace died never returns through its parent's entries.
 * What it does not do yet falls back or is said: forked children are traced by the ptrace
 * engine until they exec (one line),
 * functions it cannot patch safely are counted (-v says why), programs it cannot handle
 * (static, not glibc, C++ exceptions, backtrace(), swapcontext) are traced by the ptrace
 * engine instead. */
#ifndef CALLTRACE_INJECT_INJECT_H
#define CALLTRACE_INJECT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/session.h"
#include "symbols/elf_image.h"

#define INJECT_BUFFER_DEFAULT (8u << 20)
#define INJECT_BUFFER_MIN (64u << 10)
#define INJECT_BUFFER_MAX (1u << 30)

struct inject_engine {
    struct addr_map spaces;      /* pid -> struct inject_space */
    struct addr_map forks;       /* child pid -> struct inject_fork_copy, until it is released */
    struct addr_map shared_tls;  /* threads cloned without CLONE_SETTLS, until their first stop */
    struct addr_map ptrace_only; /* forked processes the ptrace engine traces, until they exec */
    size_t ring_size;            /* per thread, a power of two */
    uint64_t drops;              /* calls not recorded, from spaces already gone */
    uint64_t corrupt_slots;      /* rings whose indexes made no sense: no longer read */
    uint64_t tick_step;          /* ticks in a nanosecond, rounded up; 0 until needed */
    bool children_noted;
};

/* NULL and a message when out of memory. ring_size: --buffer-size, rounded up to a power of 2. */
struct inject_engine *inject_engine_new(size_t ring_size);
void inject_engine_free(struct inject_engine *e);

/* Why the inject engine cannot trace this image yet (static, not glibc, C++ exceptions,
 * backtrace, swapcontext), or NULL when it can. */
const char *inject_image_unsupported(const char *path);

/* Sets up the shared region and code in p (stopped thread via; at an exec, all its other
 * threads are gone) and patches the traced functions of image. Returns the number of functions
 * traced, or -1 (nothing patched: the caller falls back to breakpoints). */
long inject_trace_image(struct session *s, struct process *p, pid_t via,
                        const struct elf_image *image, uint64_t bias);

/* -p, once the entries are patched with every thread of p stopped: each gets its control
 * block (attach.c); via: the thread to run system calls in. */
void inject_attach_threads(struct session *s, struct process *p, pid_t via);
/* Leaving attached processes, every thread stopped and out of the injected code: entries and
 * hooked return addresses restored, no trampoline waits for calltrace any more. Returns 0, or
 * -1 (said on stderr). */
int inject_detach(struct session *s);

/* Moves every event written so far into the recorder; final: even those whose writer never
 * finished them (counted as dropped), because it will not. */
void inject_drain(struct session *s, bool final);
/* Does a traced process have rings (not every image can be injected)? */
bool inject_has_rings(const struct session *s);
/* Waits for a ptrace stop (its tid, status) while draining the rings; returns like waitpid. */
pid_t inject_wait(struct session *s, int *status);

/* A new thread's first stop: gives it a control block. */
void inject_thread_start(struct session *s, struct thread *t);
/* A new child process of parent. A forked child gets its patches out and its rings private at
 * its first stop, and is traced by the ptrace engine (or released untraced with --no-follow,
 * see inject_release_child); a vfork child's calls, made on its parent's thread control
 * block, are counted but not recorded until vfork_done; an exec gives either its own rings.
 * Returns true when the child must run untraced (a CLONE_VM process that is not a vfork). */
bool inject_on_fork(struct session *s, struct thread *parent, pid_t child, bool is_vfork,
                    bool shares_memory);
void inject_on_vfork_done(struct session *s, struct thread *parent);
/* A new thread, with the flags of its clone. */
void inject_on_clone(struct session *s, pid_t tid, unsigned long flags);
/* Before calltrace lets go of a child process: its patches out, its rings its own. */
void inject_release_child(struct session *s, struct process *p, pid_t tid);

/* Calls the trampolines could not record (ring or shadow stack full, signal handlers inside a
 * trampoline, a vfork child's). */
uint64_t inject_dropped_calls(const struct session *s);

#endif
