#include "remote/ptrace_stop.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

static bool is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A stopped thread's status: the signal in bits 8-15, a ptrace event in bits 16-23. */
static void classify_stopped(int status, struct ptrace_stop *stop)
{
    stop->sig = WSTOPSIG(status);
    int event = (int)(((unsigned)status >> 16) & 0xff);
    if (event == PTRACE_EVENT_STOP)
        stop->kind = is_stop_signal(stop->sig) ? STOP_GROUP : STOP_INTERRUPT;
    else if (event != 0) {
        stop->kind = STOP_EVENT;
        stop->event = event;
    } else
        stop->kind = stop->sig == SIGTRAP ? STOP_TRAP : STOP_SIGNAL;
}

void ptrace_stop_classify(pid_t tid, int status, struct ptrace_stop *stop)
{
    *stop = (struct ptrace_stop){.tid = tid, .status = status};
    if (WIFEXITED(status)) {
        stop->kind = STOP_EXITED;
        stop->code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        stop->kind = STOP_KILLED;
        stop->sig = WTERMSIG(status);
    } else if (WIFSTOPPED(status)) {
        classify_stopped(status, stop);
    } else {
        stop->kind = STOP_CONTINUED;
    }
}

int ptrace_stop_wait(pid_t tid, unsigned flags, struct ptrace_stop *stop)
{
    int options = __WALL | (flags & STOP_WAIT_POLL ? WNOHANG : 0);
    for (;;) {
        int status;
        pid_t got = waitpid(tid, &status, options);
        if (got < 0 && errno == EINTR && !(flags & STOP_WAIT_INTERRUPTIBLE))
            continue;
        if (got <= 0)
            return got < 0 ? -1 : 0;
        ptrace_stop_classify(got, status, stop);
        return 1;
    }
}

int ptrace_resume(pid_t tid, enum resume_how how, int sig)
{
    enum __ptrace_request request = how == RESUME_STEP     ? PTRACE_SINGLESTEP
                                    : how == RESUME_LISTEN ? PTRACE_LISTEN
                                                           : PTRACE_CONT;
    long data = how == RESUME_LISTEN ? 0 : sig;
    return ptrace(request, tid, NULL, (void *)data) < 0 ? -1 : 0;
}
