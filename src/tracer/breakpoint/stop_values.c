#include "tracer/breakpoint/stop_values.h"

#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracer/arg_capture.h"
#include "tracer/values_record.h"

/* One process_vm_readv of the tracee's memory: a short read keeps what it got (the end of a
 * mapping). Not /proc/PID/mem: it reads through PROT_NONE pages, which the program cannot, nor
 * can the inject engine's trampolines; both engines show what the program could read. */
static ssize_t read_tracee(void *ctx, int which, uint64_t addr, void *buf, size_t len)
{
    (void)which;
    pid_t pid = *(const pid_t *)ctx;
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t n;
    do
        n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    while (n < 0 && errno == EINTR);
    return n;
}

static bool get_fpregs(pid_t tid, arch_fpregs *fp)
{
    return ptrace(PTRACE_GETFPREGS, tid, 0, fp) == 0;
}

void capture_at_entry(struct session *s, struct thread *t, uint32_t func, const arch_regs *regs)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    if (!plan)
        return;
    static struct values_buf b; /* 64 KiB: too big for the stack, reused at every stop */
    uint64_t args[ARCH_INT_ARG_REGS];
    for (unsigned i = 0; i < ARCH_INT_ARG_REGS; i++)
        args[i] = arch_int_arg(regs, i);
    arch_fpregs fp;
    bool vec = plan->entry && plan->entry_xmm && get_fpregs(t->tid, &fp);
    struct values_regs vr = {args, vec ? arch_vector_regs(&fp) : NULL, NULL, arch_sp(regs)};
    values_build_args(&b, t->tid, func, plan, &vr, read_tracee, &t->proc->pid,
                      s->opts->capture.string_max);
    rec_frame_data(s->rec, t->tid, &b, b.used);
}

void capture_at_return(struct session *s, struct thread *t, uint32_t func, const arch_regs *regs)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    if (!plan || !plan->result)
        return;
    static struct values_buf b;
    uint64_t results[ARCH_INT_RESULT_REGS];
    for (unsigned i = 0; i < ARCH_INT_RESULT_REGS; i++)
        results[i] = arch_int_result(regs, i);
    arch_fpregs fp;
    bool fpu = plan->result_fp && get_fpregs(t->tid, &fp);
    struct values_regs vr = {results, fpu ? arch_vector_regs(&fp) : NULL,
                             fpu ? arch_x87_top(&fp) : NULL, 0};
    values_build_retval(&b, t->tid, func, plan, &vr, read_tracee, &t->proc->pid,
                        s->opts->capture.string_max);
    rec_frame_data(s->rec, t->tid, &b, b.used);
}
