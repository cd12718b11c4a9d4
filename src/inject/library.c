/* -l under the inject engine: engine/libraries.c follows the dynamic linker for both engines and
 * asks here to trace a library's functions. Each library gets a code region of its own within a
 * jump of it, with a copy of the blob (the stubs reach it with a rel32 jump), and its entries
 * are patched like the executable's; what cannot be patched gets a breakpoint (patch.c).
 *
 *   dlopen  ──> _dl_debug_state stop ──> region near the library, blob copy, patches
 *   dlclose ──> _dl_debug_state stop ──> rings drained, patches forgotten (never written: the
 *               memory may belong to something else by now); the region stays mapped, because
 *               calls still open may return through its blob. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/inject_tramp.h"
#include "inject/inject.h"
#include "inject/patch.h"
#include "inject/space.h"
#include "probe/scratch.h"
#include "util/log.h"

#define LIB_BLOB_ROOM 1024 /* the blob's copy, then the stubs */

long inject_trace_library(struct session *s, struct process *p, pid_t via,
                          const struct elf_image *image, uint64_t bias)
{
    struct inject_space *sp = addr_map_get(&s->inject->spaces, (uint64_t)p->pid);
    if (!sp || !image->nsegments)
        return -1; /* a process the ptrace engine traces: breakpoints */
    size_t len = LIB_BLOB_ROOM + patch_code_size(image);
    uint64_t code = scratch_alloc(p, via, image->segments[0].vaddr + bias, len, len);
    if (!code) {
        err_msg("--engine=inject: process %d: no room for code near %s; its functions get "
                "breakpoints",
                (int)p->pid, image->path);
        return -1;
    }
    uint64_t *exits = reallocarray(sp->lib_blob_exits, sp->nlib_blobs + 1, sizeof(*exits));
    if (!exits)
        return -1;
    sp->lib_blob_exits = exits;
    if (inject_write_blob(p, code, sp) < 0) {
        dbg(DBG_ENGINE, 1, "%s: cannot write its code region: %s", image->path, strerror(errno));
        return -1;
    }
    exits[sp->nlib_blobs++] = code + inject_blob_exit_off;
    long n =
        patch_image(s, p, via, sp, image, bias, code + LIB_BLOB_ROOM, code + inject_blob_entry_off);
    dbg(DBG_ENGINE, 1, "%s: %ld functions traced in process %d (inject)", image->path, n,
        (int)p->pid);
    return n;
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
        if (sp->patches[i].addr == addr)
            return true;
    return false;
}
