/* The controller: one loop over waitpid(__WALL) stops that follows clones, forks, execs,
 * signals and exits, records them, and resumes every thread it stopped. How calls are captured
 * is each process's backend's business (tracer/backend.h): the controller calls it through its
 * table, and never looks inside. */
#ifndef CALLTRACE_CONTROL_CONTROL_H
#define CALLTRACE_CONTROL_CONTROL_H

#include <stdbool.h>
#include <sys/types.h>

#include "tracer/backend.h"
#include "tracer/tracee.h"
#include "symbols/elf_image.h"

/* Takes over the launched, seized child pid (not yet exec'd) and traces it and everything it
 * starts until all of them have ended. */
int control_run(struct session *s, pid_t pid);

/* The stop loop, until every traced process has ended or, attached (or by s->leave_signal), a
 * stop is requested. */
int control_loop(struct session *s);

/* Attaches to every thread of pid, running, and puts the breakpoints in; on failure prints
 * why (naming the cause and the fix) and returns -1 with nothing changed in the process. */
int control_attach(struct session *s, pid_t pid);
/* Stops every thread, takes out every breakpoint, moves threads off calltrace's code, and
 * detaches: the program runs on as before. Returns 0, or -1 when a thread could not be
 * released cleanly (said on stderr). */
int control_detach(struct session *s);

/* Single-steps the stopped thread t, at most steps times, until inside(ctx, pc) is false; a
 * signal that comes meanwhile is kept in t->hold.status. 0 once out, -1 when not. The thread
 * keeps the trap flag until it is resumed or let go: see detach.c. */
int control_step_out(struct thread *t, bool (*inside)(const void *ctx, uint64_t pc),
                     const void *ctx, int steps);

/* Reads the executable p runs (/proc/PID/exe) and has p's backend trace it (or the breakpoints,
 * when it cannot), through the stopped thread via; at_exec: p has just exec'd and via still sits
 * in execve. now: the stop's ticks. Returns the number of functions traced, or -1. */
long control_trace_executable(struct session *s, struct process *p, pid_t via, bool at_exec,
                              uint64_t now);
/* p (stopped thread t) is traced by the breakpoints from now on, until it execs: its backend
 * is told, what it knew of p's libraries is forgotten, its executable traced anew. */
long control_trace_with_breakpoints(struct session *s, struct thread *t, uint64_t now);

/* -l: watches p's dynamic linker through the stopped thread via, and (attached, not at_exec)
 * traces the matching libraries already loaded. Returns the number of functions traced. */
long control_watch_libraries(struct session *s, struct process *p, pid_t via, bool at_exec,
                             uint64_t now);
/* -l: forgets which libraries p's address space has, so that the next control_watch_libraries
 * traces them all anew (a forked child handed over to the breakpoints). */
void control_relearn_libraries(struct addrspace *as);
/* -L: [lo, hi) of p is code whose calls into libraries are the program's (its executable, a -l
 * library): its backend is told. */
void control_add_caller(struct session *s, struct process *p, uint64_t lo, uint64_t hi);
/* Notes which -F/-N patterns match functions of image, for the warning about the patterns
 * that matched nothing in the whole run (-l), and a run that -F left nothing to trace. */
void control_note_filter_hits(struct session *s, const struct elf_image *image);
/* A thread passed a BP_HOOK breakpoint at addr (at now): the library list changed, or a library
 * waiting for relocation is ready (libraries.c); struct session: on_hook. */
void control_on_hook(struct session *s, struct thread *t, uint64_t addr, uint64_t now);

/* The same for a running thread t waiting in an in-process hook at addr: stopped, served,
 * resumed (hook_request.c); struct session: on_hook_request. */
void control_on_hook_request(struct session *s, struct thread *t, uint64_t addr, uint64_t now);

/* Pieces of the loop, one concern per file. */
void control_resume(struct thread *t, int sig);
/* The handlers of one stop, now its ticks. */
void control_on_exec(struct session *s, struct thread *t, uint64_t now);
void control_on_new_child(struct session *s, struct thread *parent, int event, uint64_t now);
/* The first stop of an untouched child (struct process): its executable's breakpoints. */
void control_trace_untouched(struct session *s, struct thread *t, uint64_t now);
void control_on_exit(struct session *s, struct thread *t, int status, uint64_t now);
void control_handle_stop(struct session *s, pid_t tid, int status, uint64_t now);
/* Records p's start (or, with is_exec, its new image) with its command line. */
void control_record_process(struct session *s, struct process *p, bool is_exec, uint64_t now);
/* Ends every thread of p except keep (NULL: all), closing their open calls as unfinished. */
void control_end_threads(struct session *s, struct process *p, struct thread *keep, uint64_t now);
/* t ends here, at now: its open calls unfinished, its end recorded, t forgotten. */
void control_end_thread(struct session *s, struct thread *t, uint64_t now);
/* Detaches t's process (its only thread, stopped) after removing calltrace's breakpoints. */
void control_release(struct session *s, struct thread *t);
/* Closes whatever is still open when the loop ends (calltrace is stopping). */
void control_finish(struct session *s);

#endif
