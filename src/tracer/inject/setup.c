/* The inject engine's life: its per-process state, and a process's set-up at exec: code
 * region, shared region, patches. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "arch/x86_64/inject_tramp.h"
#include "tracer/inject/captures.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/leftovers.h"
#include "tracer/inject/patch.h"
#include "tracer/inject/space.h"
#include "remote/memory.h"
#include "tracer/scratch.h"
#include "util/log.h"

/* The options launch.c seizes with, plus vfork-done: a vfork parent is stopped again when its
 * child no longer borrows its memory (and its thread control block). */
#define INJECT_TRACE_OPTIONS                                                                       \
    (PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |          \
     PTRACE_O_TRACEEXEC | PTRACE_O_TRACEVFORKDONE)
/* Attached (-p), the program must outlive calltrace: no PTRACE_O_EXITKILL; and exit stops, as
 * control/attach.c asks for them (this replaces the options it seized the thread with). */
#define INJECT_ATTACH_OPTIONS ((INJECT_TRACE_OPTIONS & ~PTRACE_O_EXITKILL) | PTRACE_O_TRACEEXIT)

static size_t round_pow2(size_t v)
{
    size_t r = INJECT_BUFFER_MIN;
    while (r < v && r < INJECT_BUFFER_MAX)
        r <<= 1;
    return r;
}

struct inject_engine *inject_engine_new(size_t ring_size)
{
    struct inject_engine *e = calloc(1, sizeof(*e));
    if (!e || addr_map_init(&e->spaces, 16) < 0 || addr_map_init(&e->forks, 16) < 0 ||
        addr_map_init(&e->shared_tls, 16) < 0 || addr_map_init(&e->capture_tables, 64) < 0) {
        free(e);
        return NULL;
    }
    e->ring_size = round_pow2(ring_size ? ring_size : INJECT_BUFFER_DEFAULT);
    return e;
}

void inject_engine_free(struct inject_engine *e)
{
    if (!e)
        return;
    ADDR_MAP_FOREACH(&e->spaces, slot)
    space_free(e, slot->value);
    ADDR_MAP_FOREACH(&e->forks, slot)
    inject_fork_copy_free(slot->value);
    addr_map_free(&e->spaces);
    addr_map_free(&e->forks);
    addr_map_free(&e->shared_tls);
    captures_free(e);
    free(e);
}

/* An exec replaced the image: what calltrace knew of the old one goes (its events were drained
 * before the exec stop was handled). */
void inject_note(const struct session *s, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (!s->opts->quiet)
        err_msg("%s", text);
    else
        dbg(DBG_INJECT, 1, "%s", text);
}

static void forget_space(struct inject_engine *e, pid_t pid)
{
    struct inject_space *old = addr_map_get(&e->spaces, (uint64_t)pid);
    if (!old)
        return;
    addr_map_del(&e->spaces, (uint64_t)pid);
    space_free(e, old);
}

/* The blob, with the address of the main thread's claim word filled in. */
int inject_write_blob(struct process *p, uint64_t code, const struct inject_space *sp)
{
    uint8_t buf[BLOB_ROOM];
    if (inject_blob_size + 64 > sizeof(buf))
        return -1;
    memcpy(buf, inject_blob, inject_blob_size);
    uint64_t claim = sp->remote; /* the header's first word */
    memcpy(buf + inject_blob_main_ctl_off, &claim, 8);
    return mem_write(p->mem_fd, code, buf, inject_blob_size);
}

long inject_trace_image(struct session *s, struct process *p, pid_t via,
                        const struct elf_image *image, uint64_t bias)
{
    struct inject_engine *e = s->inject;
    forget_space(e, p->pid);
    const char *why = inject_image_unsupported(image->path);
    if (why) {
        if (session_may_break(s))
            inject_note(s, "inject engine: %s: %s; it is traced by the ptrace engine", image->path,
                        why);
        else
            err_hint("--engine=ptrace or --attach-breakpoints traces it with breakpoints, which "
                     "kill the program if calltrace is killed",
                     "inject engine: process %d: %s: %s; it is not traced", (int)p->pid,
                     image->path, why);
        return -1;
    }
    if (!image->nsegments)
        return -1;
    struct stale_code stale = {0};
    if (s->attached) {
        inject_undo_stale_patches(p, &stale);
        inject_give_up_stale_blocks(s, p);
    }
    size_t len = BLOB_ROOM + patch_code_size(image);
    uint64_t code = scratch_alloc(p, via, image->segments[0].vaddr + bias, len, len);
    if (!code) {
        inject_note(s,
                    "inject engine: process %d: no room for code near %s; it is traced by the "
                    "ptrace engine",
                    (int)p->pid, image->path);
        free(stale.v);
        return -1;
    }
    struct inject_space *sp = space_new(p, via, code + BLOB_ROOM - 64, e->ring_size);
    if (!sp) {
        free(stale.v);
        return -1;
    }
    sp->stale = stale;
    if (s->attached)
        leftovers_find(p, sp);
    sp->hold_jumps = s->attached; /* until the unwinder hooks are in: inject_attach_threads */
    int main_slot = space_slot_take(sp, p->pid);
    space_slot_own(sp, main_slot, p, via);
    space_store(sp->local, 0, main_slot < 0 ? 1 : space_ctl_remote(sp, main_slot));
    if (inject_write_blob(p, code, sp) < 0 || addr_map_put(&e->spaces, (uint64_t)p->pid, sp) < 0) {
        space_free(e, sp);
        return -1;
    }
    /* a launched program that -t leaves (leave_signal) has exit stops too: see control_detach */
    unsigned long options = s->attached       ? INJECT_ATTACH_OPTIONS
                            : s->leave_signal ? INJECT_TRACE_OPTIONS | PTRACE_O_TRACEEXIT
                                              : INJECT_TRACE_OPTIONS;
    if (ptrace(PTRACE_SETOPTIONS, via, 0, options) < 0)
        dbg(DBG_INJECT, 1, "process %d: cannot ask for vfork-done stops: %s", (int)p->pid,
            strerror(errno));
    space_list_copy(sp, code, 0, UINT32_MAX);
    sp->blob_exit = code + inject_blob_exit_off;
    sp->blob_exit_args = code + inject_blob_exit_args_off;
    long n = patch_image(s, p, via, sp, image, bias, code + BLOB_ROOM, code);
    dbg(DBG_INJECT, 1, "%s: %ld functions traced in process %d (inject)", image->path, n,
        (int)p->pid);
    return n < 0 ? 0 : n;
}
