/* The one wait for a ptrace stop, what that stop is, and the one way to let a thread go on.
 *
 *   waitpid(tid or -1, __WALL) ──> status ──> ptrace_stop_classify ──> struct ptrace_stop
 *
 *   kind            what happened                                  fields
 *   STOP_EXITED     the thread ended, exit(code)                   code
 *   STOP_KILLED     the thread ended, killed by a signal           sig
 *   STOP_TRAP       it stopped on SIGTRAP: a breakpoint, a step    sig = SIGTRAP
 *                   (or a SIGTRAP sent to it)
 *   STOP_SIGNAL     a signal is about to be delivered to it        sig
 *   STOP_EVENT      a ptrace event: clone, fork, vfork, exec,      event (PTRACE_EVENT_*)
 *                   exit, vfork-done
 *   STOP_GROUP      job control stopped it (PTRACE_EVENT_STOP      sig (SIGSTOP, SIGTSTP,
 *                   with a stop signal): park it with LISTEN       SIGTTIN, SIGTTOU)
 *   STOP_INTERRUPT  PTRACE_EVENT_STOP otherwise: PTRACE_INTERRUPT  sig
 *                   stopped it, or a new thread's first stop
 *   STOP_CONTINUED  SIGCONT resumed it (only waits with WCONTINUED report it; calltrace never
 *                   asks, the kind is there so that every status has one)
 *
 * calltrace never resumes with PTRACE_SYSCALL, so there are no system call stops. */
#ifndef CALLTRACE_REMOTE_PTRACE_STOP_H
#define CALLTRACE_REMOTE_PTRACE_STOP_H

#include <stdbool.h>
#include <sys/types.h>

enum stop_kind {
    STOP_EXITED,
    STOP_KILLED,
    STOP_TRAP,
    STOP_SIGNAL,
    STOP_EVENT,
    STOP_GROUP,
    STOP_INTERRUPT,
    STOP_CONTINUED,
};

struct ptrace_stop {
    pid_t tid;
    int status; /* as waitpid gave it: what a stop held for later handling keeps */
    enum stop_kind kind;
    int sig;   /* the signal (0 for STOP_EXITED and STOP_CONTINUED) */
    int code;  /* STOP_EXITED: the exit code */
    int event; /* STOP_EVENT: PTRACE_EVENT_*, else 0 */
};

/* What status (a waitpid status of thread tid) says. Pure: no system call. */
void ptrace_stop_classify(pid_t tid, int status, struct ptrace_stop *stop);

/* The thread has ended: waitpid will report nothing more of it. */
static inline bool ptrace_stop_ended(const struct ptrace_stop *stop)
{
    return stop->kind == STOP_EXITED || stop->kind == STOP_KILLED;
}

/* The thread is in a ptrace stop: it waits for a resume. */
static inline bool ptrace_stop_stopped(const struct ptrace_stop *stop)
{
    return !ptrace_stop_ended(stop) && stop->kind != STOP_CONTINUED;
}

enum stop_wait_flags {
    /* WNOHANG: return 0 at once when no thread has a stop to report */
    STOP_WAIT_POLL = 1,
    /* a signal to calltrace (EINTR) ends the wait, so that its caller sees a stop request at
     * once; without it the wait goes on */
    STOP_WAIT_INTERRUPTIBLE = 2,
};

/* Waits for the next stop of thread tid (-1: of any traced thread) and classifies it. Returns
 * 1 with *stop filled, 0 (STOP_WAIT_POLL) when there was none, -1 with errno: ECHILD (no such
 * traced thread: gone, its end reported to another wait), EINTR (STOP_WAIT_INTERRUPTIBLE). */
int ptrace_stop_wait(pid_t tid, unsigned flags, struct ptrace_stop *stop);

enum resume_how {
    RESUME_CONTINUE, /* PTRACE_CONT: run on, delivering the signal given */
    RESUME_STEP,     /* PTRACE_SINGLESTEP: one instruction, then a STOP_TRAP */
    RESUME_LISTEN,   /* PTRACE_LISTEN: a group-stopped thread stays stopped until SIGCONT, and
                      * still reports its stops */
};

/* Lets stopped thread tid go on, delivering sig (0: none; RESUME_CONTINUE and RESUME_STEP).
 * Returns 0, or -1 with errno. ESRCH means the thread vanished (killed meanwhile): that is
 * not an error to report, since its end is reported by the next wait for it; a caller that
 * runs the thread for calltrace's own purposes gives up, one that only resumes it ignores it. */
int ptrace_resume(pid_t tid, enum resume_how how, int sig);

#endif
