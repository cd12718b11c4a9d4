/* The ptrace engine: one loop over waitpid(__WALL) stops that turns breakpoint hits, clones,
 * forks, execs, signals and exits into records, and resumes every thread it stopped. */
#ifndef CALLTRACE_ENGINE_ENGINE_H
#define CALLTRACE_ENGINE_ENGINE_H

#include <stdbool.h>
#include <sys/types.h>

#include "engine/session.h"

/* Takes over the launched, seized child pid (not yet exec'd) and traces it and everything it
 * starts until all of them have ended. */
int engine_run(struct session *s, pid_t pid);

/* Pieces of the loop, one concern per file. */
void engine_resume(struct thread *t, int sig);
void engine_on_exec(struct session *s, struct thread *t);
void engine_on_new_child(struct session *s, struct thread *parent, int event);
void engine_on_exit(struct session *s, struct thread *t, int status);
void engine_on_trap(struct session *s, struct thread *t);
void engine_handle_stop(struct session *s, pid_t tid, int status);
/* Records p's start (or, with is_exec, its new image) with its command line. */
void engine_record_process(struct session *s, struct process *p, bool is_exec);
/* Ends every thread of p except keep (NULL: all), closing their open calls as unfinished. */
void engine_end_threads(struct session *s, struct process *p, struct thread *keep);
/* Detaches t's process (its only thread, stopped) after removing calltrace's breakpoints. */
void engine_release(struct session *s, struct thread *t);
/* Closes whatever is still open when the loop ends (calltrace is stopping). */
void engine_finish(struct session *s);

#endif
