#include "tracer/arg_capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracer/values_record.h"
#include "symbols/capture_plan.h"
#include "symbols/dwarf_sig.h"
#include "util/log.h"

struct capture_state {
    struct addr_map plans; /* func id + 1 -> struct capture_plan */
    char *sigs_path;       /* the image whose DWARF is open: images come one at a time */
    struct dwarf_sigs *sigs;
    struct dwarf_sigs **old; /* earlier images' DWARF: their signatures are in plans */
    size_t nold;
};

struct capture_state *capture_state_new(void)
{
    struct capture_state *c = calloc(1, sizeof(*c));
    if (c && addr_map_init(&c->plans, 256) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

void capture_state_free(struct capture_state *c)
{
    if (!c)
        return;
    ADDR_MAP_FOREACH(&c->plans, slot)
    capture_plan_free(slot->value);
    addr_map_free(&c->plans);
    for (size_t i = 0; i < c->nold; i++)
        dwarf_sigs_close(c->old[i]);
    free(c->old);
    dwarf_sigs_close(c->sigs);
    free(c->sigs_path);
    free(c);
}

static struct dwarf_sigs *sigs_for(struct capture_state *c, const char *path)
{
    if (c->sigs_path && strcmp(c->sigs_path, path) == 0)
        return c->sigs;
    if (c->sigs) {
        struct dwarf_sigs **old = reallocarray(c->old, c->nold + 1, sizeof(*old));
        if (!old)
            return NULL;
        c->old = old;
        c->old[c->nold++] = c->sigs;
    }
    free(c->sigs_path);
    c->sigs_path = strdup(path);
    c->sigs = dwarf_sigs_open(path);
    if (!c->sigs)
        dbg(DBG_SYMBOLS, 1, "%s: no DWARF for arguments: %s", path, strerror(errno));
    return c->sigs;
}

void capture_plan_function(struct session *s, const char *image_path, uint64_t addr,
                           const char *name, uint32_t func)
{
    struct capture_state *c = s->capture;
    if (!c || !capture_selects(&s->opts->capture, name))
        return;
    struct dwarf_sigs *sigs = image_path ? sigs_for(c, image_path) : NULL;
    /* A compiler's clone (foo.isra.0, foo.constprop.1) may take other arguments than its
     * source declares: its registers are shown raw. */
    const struct func_sig *sig = sigs && !strchr(name, '.') ? dwarf_sigs_find(sigs, addr) : NULL;
    struct capture_plan *plan = capture_plan_build(&s->opts->capture, name, sig);
    if (!plan || addr_map_put(&c->plans, (uint64_t)func + 1, plan) < 0) {
        capture_plan_free(plan);
        err_msg("%s: out of memory for its arguments", name);
        return;
    }
    dbg(DBG_SYMBOLS, 2, "%s: %s arguments, %u stack bytes, %zu pointer reads", name,
        sig ? "typed" : "raw", plan->stack_bytes, plan->nreads);
}

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

const struct capture_plan *capture_plan_of(const struct session *s, uint32_t func)
{
    return s->capture ? addr_map_get(&s->capture->plans, (uint64_t)func + 1) : NULL;
}

static bool get_fpregs(pid_t tid, struct user_fpregs_struct *fp)
{
    return ptrace(PTRACE_GETFPREGS, tid, 0, fp) == 0;
}

void capture_at_entry(struct session *s, struct thread *t, uint32_t func,
                      const struct user_regs_struct *regs)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    if (!plan)
        return;
    static struct values_buf b; /* 64 KiB: too big for the stack, reused at every stop */
    uint64_t gprs[6] = {regs->rdi, regs->rsi, regs->rdx, regs->rcx, regs->r8, regs->r9};
    struct user_fpregs_struct fp;
    bool xmm = plan->entry && plan->entry_xmm && get_fpregs(t->tid, &fp);
    struct values_regs vr = {gprs, xmm ? (const uint8_t *)fp.xmm_space : NULL, NULL, regs->rsp};
    values_build_args(&b, t->tid, func, plan, &vr, read_tracee, &t->proc->pid,
                      s->opts->capture.string_max);
    rec_frame_data(s->rec, t->tid, &b, b.used);
}

void capture_at_return(struct session *s, struct thread *t, uint32_t func,
                       const struct user_regs_struct *regs)
{
    const struct capture_plan *plan = capture_plan_of(s, func);
    if (!plan || !plan->result)
        return;
    static struct values_buf b;
    uint64_t gprs[2] = {regs->rax, regs->rdx};
    struct user_fpregs_struct fp;
    bool fpu = plan->result_fp && get_fpregs(t->tid, &fp);
    struct values_regs vr = {gprs, fpu ? (const uint8_t *)fp.xmm_space : NULL,
                             fpu ? (const uint8_t *)fp.st_space : NULL, 0};
    values_build_retval(&b, t->tid, func, plan, &vr, read_tracee, &t->proc->pid,
                        s->opts->capture.string_max);
    rec_frame_data(s->rec, t->tid, &b, b.used);
}
