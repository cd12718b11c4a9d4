/* A process's or thread's state letter and flags, from /proc/PID[/task/TID]/stat. */
#ifndef CALLTRACE_UTIL_PROC_STAT_H
#define CALLTRACE_UTIL_PROC_STAT_H

#include <stdbool.h>
#include <sys/types.h>

/* The state letter (R, S, T, t, Z...) and flags of process pid (tid 0) or of its thread tid;
 * -1 when there is no such process or thread. */
int proc_stat_read(pid_t pid, pid_t tid, char *state, unsigned long *flags);

/* Is the thread stopped (a group-stop or a ptrace stop), so that it cannot run on? */
bool proc_task_stopped(pid_t pid, pid_t tid);

#endif
