/* -l and -L under the inject engine: control/libraries.c follows the dynamic linker for both
 * engines and asks here to trace a library's functions. Each library gets a code region of its own
 * within a jump of it, with a copy of the blob (the stubs reach it with a rel32 jump), and its
 * entries are patched like the executable's; what cannot be patched gets a breakpoint (patch.c).
 *
 *   dlopen  ──> _dl_debug_state stop ──> region near the library, blob copy, patches
 *   dlclose ──> _dl_debug_state stop ──> rings drained, patches forgotten (never written: the
 *               memory may belong to something else by now); the region stays mapped, because
 *               calls still open may return through its blob. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "tracer/inject/inject.h"
#include "tracer/inject/patch.h"
#include "tracer/inject/space.h"
#include "tracer/scratch.h"
#include "symbols/eh_frame_hdr.h"
#include "symbols/proc_maps.h"
#include "util/log.h"

/* A code region near the image for nfuncs functions, with its copy of the blob first
 * (BLOB_ROOM); 0 when there is none (said). */
static uint64_t code_region(const struct session *s, struct process *p, pid_t via,
                            struct inject_space *sp, const struct elf_image *image, uint64_t bias,
                            size_t nfuncs)
{
    size_t len = BLOB_ROOM + nfuncs * FUNC_CODE_SIZE;
    uint64_t code = scratch_alloc(p, via, image->segments[0].vaddr + bias, len, len);
    if (!code) {
        inject_note(s,
                    "inject engine: process %d: no room for code near %s; its functions get "
                    "breakpoints",
                    (int)p->pid, image->path);
        return 0;
    }
    if (inject_write_blob(p, code, sp) < 0) {
        dbg(DBG_INJECT, 1, "%s: cannot write its code region: %s", image->path, strerror(errno));
        return 0;
    }
    return code;
}

/* The functions patched since first_func enter the blob at code. */
static void note_blob(struct inject_space *sp, uint64_t code, uint32_t first_func, uint32_t end)
{
    if (end > first_func && space_add_blob(sp, code, first_func, end) < 0)
        err_msg("inject engine: out of memory");
}

long inject_trace_library(struct session *s, struct process *p, pid_t via,
                          const struct elf_image *image, uint64_t bias)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    if (!sp || !image->nsegments)
        return -1; /* a process the ptrace engine traces: breakpoints */
    uint64_t code = code_region(s, p, via, sp, image, bias, image->nfuncs);
    if (!code)
        return -1;
    uint32_t first_func = s->next_func_id;
    long n = patch_image(s, p, via, sp, image, bias, code + BLOB_ROOM, code);
    note_blob(sp, code, first_func, s->next_func_id);
    dbg(DBG_INJECT, 1, "%s: %ld functions traced in process %d (inject)", image->path, n,
        (int)p->pid);
    return n;
}

/* The function of image whose runtime entry is addr, with a size, or -1. */
static long symbol_at(const struct elf_image *image, uint64_t bias, uint64_t addr)
{
    for (size_t i = 0; i < image->nfuncs; i++)
        if (image->funcs[i].addr + bias == addr && image->funcs[i].size)
            return (long)i;
    return -1;
}

static bool all_have_symbols(const struct elf_image *image, uint64_t bias,
                             const struct ifunc_impl *impls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (symbol_at(image, bias, impls[i].impl) < 0)
            return false;
    return true;
}

long inject_trace_ifuncs(struct session *s, struct process *p, pid_t via, uint32_t image_id,
                         uint64_t bias, struct ifunc_impl *impls, size_t n)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    char path[PATH_MAX];
    struct elf_image image;
    /* A library's first mapping is at its bias (its first segment is linked at 0). */
    if (!sp || !n || maps_path_at(p->pid, bias, path, sizeof(path)) < 0 ||
        elf_image_load(&image, path) < 0)
        return 0;
    struct elf_image view = image; /* image, or image with its unwind ranges */
    struct func_symbol *ranges = NULL;
    if (!all_have_symbols(&image, bias, impls, n) &&
        (ranges = eh_frame_ranges(&image, &view.nfuncs)))
        view.funcs = ranges;
    struct patch_pick *picks = calloc(n, sizeof(*picks));
    size_t npicks = 0;
    for (size_t i = 0; picks && i < n; i++) {
        long at = symbol_at(&view, bias, impls[i].impl);
        if (at >= 0)
            picks[npicks++] = (struct patch_pick){(size_t)at, impls[i].name};
        else /* another library's, or one with neither a symbol nor unwind information */
            dbg(DBG_SYMBOLS, 1,
                "IFUNC %s: on a breakpoint, not patched: the extent of its implementation is "
                "not known",
                impls[i].name);
    }
    long traced = 0;
    uint64_t code = npicks ? code_region(s, p, via, sp, &view, bias, npicks) : 0;
    if (code) {
        struct patch_target target = {.p = p,
                                      .via = via,
                                      .sp = sp,
                                      .image = &view,
                                      .bias = bias,
                                      .image_id = image_id,
                                      .code = code + BLOB_ROOM,
                                      .blob = code,
                                      .first_range = ranges ? image.nfuncs : 0,
                                      .lib_calls = impls[0].lib_call};
        uint32_t first_func = s->next_func_id;
        traced = patch_functions(s, &target, picks, npicks);
        note_blob(sp, code, first_func, s->next_func_id);
        for (size_t i = 0; traced >= 0 && i < n; i++) { /* patched, or on a breakpoint */
            impls[i].done = symbol_at(&view, bias, impls[i].impl) >= 0;
            if (impls[i].done) /* as the ptrace engine says it */
                dbg(DBG_SYMBOLS, 2, "IFUNC %s: traced at %#llx", impls[i].name,
                    (unsigned long long)impls[i].impl);
            if (inject_patched_at(s, p, impls[i].impl))
                dbg(DBG_SYMBOLS, 1, "IFUNC %s: patched at %#llx", impls[i].name,
                    (unsigned long long)impls[i].impl);
        }
    }
    free(picks);
    free(ranges);
    elf_image_free(&image);
    return traced < 0 ? 0 : traced;
}

void inject_forget_library(struct session *s, struct process *p, uint64_t lo, uint64_t hi)
{
    /* The calls made before the dlclose are in the rings: recorded before their frames are
     * closed as unwound. */
    inject_drain(s, false);
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    if (sp)
        patch_forget(sp, lo, hi);
}

bool inject_patched_at(const struct session *s, const struct process *p, uint64_t addr)
{
    const struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    for (size_t i = 0; sp && i < sp->npatches; i++)
        if (sp->patches[i].entry && sp->patches[i].addr == addr)
            return true;
    return false;
}

void inject_callers_changed(struct session *s, struct process *p)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    if (!sp)
        return;
    /* The trampolines read the list as it changes (arch/ring_abi.h REGION_CALLERS): a range
     * changes emptied (hi 0) first, and the count grows last; x86 keeps stores in order, the
     * release stores keep the compiler from reordering them. */
    const struct caller_ranges *c = &p->as->callers;
    uint64_t *ranges = (uint64_t *)(sp->local + REGION_CALLER_RANGES);
    for (size_t i = 0; i < c->n; i++) {
        if (ranges[2 * i] == c->r[i].lo && ranges[2 * i + 1] == c->r[i].hi)
            continue;
        __atomic_store_n(&ranges[2 * i + 1], 0, __ATOMIC_RELEASE);
        __atomic_store_n(&ranges[2 * i], c->r[i].lo, __ATOMIC_RELEASE);
        __atomic_store_n(&ranges[2 * i + 1], c->r[i].hi, __ATOMIC_RELEASE);
    }
    __atomic_store_n((uint64_t *)(sp->local + REGION_CALLERS), (uint64_t)c->n, __ATOMIC_RELEASE);
}
