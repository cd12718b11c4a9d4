/* The one stop classification (every kind, from statuses built as the kernel builds them) and
 * the one wait and resume, on a child of the test's own. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/ptrace_stop.h"
#include "unit.h"

/* A ptrace event stop: SIGTRAP, with the event in bits 16-23. */
static int event_status(int sig, int event)
{
    return W_STOPCODE(sig) | (event << 16);
}

static struct ptrace_stop classify(int status)
{
    struct ptrace_stop stop;
    ptrace_stop_classify(42, status, &stop);
    CHECK_EQ_U64(stop.tid, 42);
    CHECK_EQ_U64(stop.status, status);
    return stop;
}

static void test_ends(void)
{
    struct ptrace_stop s = classify(W_EXITCODE(3, 0));
    CHECK_EQ_U64(s.kind, STOP_EXITED);
    CHECK_EQ_U64(s.code, 3);
    CHECK_EQ_U64(s.sig, 0);
    CHECK(ptrace_stop_ended(&s) && !ptrace_stop_stopped(&s));
    s = classify(W_EXITCODE(0, 0));
    CHECK_EQ_U64(s.kind, STOP_EXITED);
    CHECK_EQ_U64(s.code, 0);
    s = classify(W_EXITCODE(0, SIGKILL));
    CHECK_EQ_U64(s.kind, STOP_KILLED);
    CHECK_EQ_U64(s.sig, SIGKILL);
    CHECK(ptrace_stop_ended(&s));
    s = classify(W_EXITCODE(0, SIGSEGV) | WCOREFLAG); /* dumped core */
    CHECK_EQ_U64(s.kind, STOP_KILLED);
    CHECK_EQ_U64(s.sig, SIGSEGV);
}

static void test_signal_stops(void)
{
    struct ptrace_stop s = classify(W_STOPCODE(SIGTRAP));
    CHECK_EQ_U64(s.kind, STOP_TRAP);
    CHECK_EQ_U64(s.sig, SIGTRAP);
    CHECK_EQ_U64(s.event, 0);
    CHECK(ptrace_stop_stopped(&s) && !ptrace_stop_ended(&s));
    s = classify(W_STOPCODE(SIGUSR1));
    CHECK_EQ_U64(s.kind, STOP_SIGNAL);
    CHECK_EQ_U64(s.sig, SIGUSR1);
    /* a signal-delivery stop of SIGSTOP is a signal like any other, not yet a group stop */
    s = classify(W_STOPCODE(SIGSTOP));
    CHECK_EQ_U64(s.kind, STOP_SIGNAL);
    CHECK_EQ_U64(s.sig, SIGSTOP);
    s = classify(W_STOPCODE(SIGRTMIN + 3));
    CHECK_EQ_U64(s.kind, STOP_SIGNAL);
    CHECK_EQ_U64(s.sig, SIGRTMIN + 3);
}

static void test_events(void)
{
    static const int events[] = {PTRACE_EVENT_FORK, PTRACE_EVENT_VFORK,      PTRACE_EVENT_CLONE,
                                 PTRACE_EVENT_EXEC, PTRACE_EVENT_VFORK_DONE, PTRACE_EVENT_EXIT};
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        struct ptrace_stop s = classify(event_status(SIGTRAP, events[i]));
        CHECK_EQ_U64(s.kind, STOP_EVENT);
        CHECK_EQ_U64(s.event, events[i]);
        CHECK_EQ_U64(s.sig, SIGTRAP);
        CHECK(ptrace_stop_stopped(&s));
    }
}

static void test_event_stops(void)
{
    static const int stop_signals[] = {SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU};
    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
        struct ptrace_stop s = classify(event_status(stop_signals[i], PTRACE_EVENT_STOP));
        CHECK_EQ_U64(s.kind, STOP_GROUP);
        CHECK_EQ_U64(s.sig, stop_signals[i]);
        CHECK_EQ_U64(s.event, 0);
    }
    /* PTRACE_INTERRUPT, or a new thread's first stop */
    struct ptrace_stop s = classify(event_status(SIGTRAP, PTRACE_EVENT_STOP));
    CHECK_EQ_U64(s.kind, STOP_INTERRUPT);
    CHECK_EQ_U64(s.sig, SIGTRAP);
    CHECK(ptrace_stop_stopped(&s));
    s = classify(event_status(SIGUSR1, PTRACE_EVENT_STOP));
    CHECK_EQ_U64(s.kind, STOP_INTERRUPT);
}

static void test_continued(void)
{
    struct ptrace_stop s = classify(__W_CONTINUED);
    CHECK_EQ_U64(s.kind, STOP_CONTINUED);
    CHECK(!ptrace_stop_stopped(&s) && !ptrace_stop_ended(&s));
}

/* A traced child that stops on SIGSTOP, then on SIGTRAP, then exits 7. */
static pid_t traced_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
            _exit(1);
        raise(SIGSTOP);
        raise(SIGTRAP);
        _exit(7);
    }
    return pid;
}

static void test_wait_and_resume(void)
{
    struct ptrace_stop s;
    CHECK(ptrace_stop_wait(-1, STOP_WAIT_POLL, &s) < 0 && errno == ECHILD);
    pid_t pid = traced_child();
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    CHECK_EQ_U64(ptrace_stop_wait(pid, 0, &s), 1);
    CHECK_EQ_U64(s.tid, pid);
    CHECK_EQ_U64(s.kind, STOP_SIGNAL);
    CHECK_EQ_U64(s.sig, SIGSTOP);
    CHECK_EQ_U64(ptrace_stop_wait(pid, STOP_WAIT_POLL, &s), 0); /* still stopped: nothing new */
    CHECK_EQ_U64(ptrace_resume(pid, RESUME_CONTINUE, 0), 0);    /* SIGSTOP not delivered */
    CHECK_EQ_U64(ptrace_stop_wait(pid, 0, &s), 1);
    CHECK_EQ_U64(s.kind, STOP_TRAP);
    CHECK_EQ_U64(ptrace_resume(pid, RESUME_CONTINUE, 0), 0);
    CHECK_EQ_U64(ptrace_stop_wait(-1, 0, &s), 1);
    CHECK_EQ_U64(s.tid, pid);
    CHECK_EQ_U64(s.kind, STOP_EXITED);
    CHECK_EQ_U64(s.code, 7);
    /* gone: resuming it says so, waiting for it finds nothing */
    CHECK(ptrace_resume(pid, RESUME_CONTINUE, 0) < 0 && errno == ESRCH);
    CHECK(ptrace_stop_wait(pid, 0, &s) < 0 && errno == ECHILD);
}

int main(void)
{
    test_ends();
    test_signal_stops();
    test_events();
    test_event_stops();
    test_continued();
    test_wait_and_resume();
    return unit_finish("ptrace_stop");
}
