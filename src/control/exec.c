/* PTRACE_EVENT_EXEC: the process has a new image. Everything known of the old one goes (its
 * threads, open calls, breakpoints); the new image gets its breakpoints before its first
 * instruction runs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <bsd/string.h>

#include "control/control.h"
#include "tracer/addrspace.h"
#include "remote/memory.h"
#include "remote/syscall.h"
#include "tracer/scratch.h"
#include "symbols/elf_image.h"
#include "symbols/proc_maps.h"
#include "control/wrapper.h"
#include "util/log.h"

/* A wrapper (env, nice, timeout, sh -c, runuser: control/wrapper.h) gets no rings and no
 * breakpoints: its process is followed, by the breakpoints that place none, to what it runs.
 * Attached, the program is what the user chose. Returns whether p's image passes through. */
static bool passes_through(struct session *s, const struct process *p,
                           const struct elf_image *image)
{
    if (s->attached)
        return false;
    struct wrapper_exec w;
    wrapper_exec_of(p->pid, &w);
    enum wrapper_verdict verdict = wrapper_verdict(image, &w, s->opts);
    wrapper_exec_free(&w);
    s->stats.wrapper_images += verdict != WRAPPER_NOT;
    if (verdict != WRAPPER_FOLLOWED)
        return false;
    s->stats.passed_images++;
    bool has_functions = elf_image_traceable(image) != 0;
    s->stats.passed_with_functions += has_functions;
    dbg(DBG_ENGINE, 1, "%s: %s in process %d: followed to what it runs", image->path,
        has_functions ? "a wrapper (its functions are unnamed, and it runs a program)"
                      : "no function to trace",
        (int)p->pid);
    return true;
}

/* The first image traced after wrappers passed through: one line says which, and what ran it
 * (p's image until this exec). */
static void note_traced(struct session *s, const struct process *p, const char *path)
{
    if (s->stats.traced_images++ == 0 && s->stats.passed_images && !s->opts->quiet)
        err_msg("tracing %s (exec'd by %s)", path, *p->image_name ? p->image_name : "a wrapper");
}

/* Which engine traced p, once per process for each, for the closing line. */
static void note_engine(struct session *s, struct process *p)
{
    if (p->backend == s->breakpoints && s->backend != s->breakpoints) {
        s->stats.processes_by_breakpoints += !p->counted_by_breakpoints;
        p->counted_by_breakpoints = true;
    } else {
        s->stats.processes_by_engine += !p->counted_by_engine;
        p->counted_by_engine = true;
    }
}

/* The name the kernel gave the process at this exec: the file name the program was run by (a
 * script's own, not its interpreter's), as the user typed it; the image's otherwise. */
static void set_image_name(struct process *p, const char *path)
{
    char comm_path[64];
    snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", (int)p->pid);
    FILE *f = fopen(comm_path, "re");
    bool named = f && fgets(p->image_name, sizeof(p->image_name), f);
    if (f)
        fclose(f);
    p->image_name[strcspn(p->image_name, "\n")] = '\0';
    if (named && *p->image_name)
        return;
    const char *slash = strrchr(path, '/');
    strlcpy(p->image_name, slash ? slash + 1 : path, sizeof(p->image_name));
}

long control_trace_executable(struct session *s, struct process *p, pid_t via, bool at_exec,
                              uint64_t now)
{
    char link[64], exe[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)p->pid);
    ssize_t n = readlink(link, exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    struct elf_image image;
    /* Open through /proc so the file running is the file read, even if renamed since. */
    if (elf_image_load(&image, link) < 0)
        return -1;
    if (n > 0) { /* record the program's path, not the /proc link it was read through */
        char *path = strdup(exe);
        if (path) {
            free(image.path);
            image.path = path;
        }
    }
    if (at_exec && passes_through(s, p, &image)) {
        set_image_name(p, image.path);
        p->backend = s->breakpoints;
        elf_image_free(&image);
        return 0;
    }
    if (at_exec)
        note_traced(s, p, image.path);
    set_image_name(p, image.path);
    if (at_exec && remote_leave_syscall(process_target(p, via)) < 0) {
        dbg(DBG_ENGINE, 1, "process %d: cannot stop it at its first instruction: %s", (int)p->pid,
            strerror(errno));
        elf_image_free(&image);
        return -1;
    }
    uint64_t bias = 0;
    if (image.pie) {
        uint64_t entry = auxv_entry(p->pid);
        bias = entry ? entry - image.entry : 0;
    }
    long traced = p->backend->trace_image(s, p, via, &image, bias);
    if (traced < 0 && p->backend != s->breakpoints && !session_may_break(s)) {
        elf_image_free(&image); /* attached: no fallback (the backend said why) */
        return -1;
    }
    if (traced < 0 && p->backend != s->breakpoints) { /* the fallback: breakpoints */
        p->backend = s->breakpoints;
        traced = p->backend->trace_image(s, p, via, &image, bias);
    }
    control_note_filter_hits(s, &image); /* -F that matched nothing: cmd/record.c */
    if (traced >= 0) {
        note_engine(s, p);
        uint64_t lo, hi;
        elf_image_exec_range(&image, bias, &lo, &hi);
        if (hi)
            control_add_caller(s, p, lo, hi);
    }
    dbg(DBG_ENGINE, 1, "%s: %ld functions traced in process %d", exe, traced, (int)p->pid);
    elf_image_free(&image);
    if (traced >= 0)
        traced += control_watch_libraries(s, p, via, at_exec, now);
    return traced;
}

long control_trace_with_breakpoints(struct session *s, struct thread *t, uint64_t now)
{
    struct process *p = t->proc;
    if (p->backend->on_handover)
        p->backend->on_handover(s, p);
    p->backend = s->breakpoints;
    control_relearn_libraries(p->as); /* what was placed for them went too: breakpoints now */
    return control_trace_executable(s, p, t->tid, false, now);
}

void control_on_exec(struct session *s, struct thread *t, uint64_t now)
{
    struct process *p = t->proc;
    if (p->unfollowed) { /* a vfork child held until now: its new image is not ours to trace */
        control_end_threads(s, p, t, now);
        addrspace_unref(p->as);
        p->as = addrspace_new();
        control_release(s, t);
        return;
    }
    unsigned long former_tid = 0;
    ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former_tid);
    /* The exec'ing thread now has the leader's tid; all the others are gone. */
    control_end_threads(s, p, t, now);
    thread_close_frames(s, t, EXIT_UNFINISHED, now);
    dbg(DBG_ENGINE, 2, "process %d: exec by thread %lu", (int)p->pid, former_tid);
    addrspace_unref(p->as);
    p->as = addrspace_new();
    if (p->mem_fd >= 0)
        close(p->mem_fd);
    p->mem_fd = mem_open(p->pid); /* the old descriptor still points at the old memory */
    if (!p->as || p->mem_fd < 0) {
        err_msg("process %d: cannot follow its exec: %s", (int)p->pid, strerror(errno));
        control_resume(t, 0);
        return;
    }
    t->region_lo[0] = t->region_hi[0] = t->region_lo[1] = t->region_hi[1] = 0;
    control_record_process(s, p, p->exec_done, now);
    if (!p->exec_done) /* calltrace's own child until now: the program starts here */
        rec_thread(s->rec, p->pid, t->tid, now);
    p->exec_done = true;
    p->backend = s->backend; /* a new image: the run's backend tries first again */
    if (control_trace_executable(s, p, p->pid, true, now) < 0 && !session_may_break(s)) {
        rec_thread_end(s->rec, p->pid, t->tid, now); /* untraced from here: let go as it is */
        p->unfollowed = true;
        control_release(s, t);
        return;
    }
    control_resume(t, 0);
}
